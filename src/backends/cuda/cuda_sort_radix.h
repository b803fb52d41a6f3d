// The long-row half of sort_rows (cuda_sort_radix.cu): rows longer than one block's sort,
// sorted with CUB's device radix sorts.
#pragma once

#include <cstdint>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {

// sort_rows' contract (cuda_sort_rows.h), for rows of more than kBlockSortMax elements.
void radix_sort_rows(const Tensor& in, bool descending, int64_t out_cols, const Tensor& values,
                     const Tensor& indices, const int64_t* source);

}  // namespace tensorlet::cuda

// Sorting the rows of a [rows, n] tensor on CUDA (cuda_sort.cu), shared by sort, topk and
// kthvalue.
#pragma once

#include <cstdint>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {

// Rows of at most this many elements are sorted by one block each, in shared memory.
inline constexpr int64_t kBlockSortMax = 4096;

// in: contiguous [rows, n] (rows, n >= 1). Writes the first out_cols (<= n) elements of each
// sorted row (order_key's order, descending: inverted; ties by position) into values and
// indices, contiguous [rows, out_cols]. source (int64 [rows, n]) may be null; when given, an
// index is source's entry at the sorted position instead of the position (topk sorts its
// selected elements this way). Enqueued on the current stream; no host wait.
void sort_rows(const Tensor& in, bool descending, int64_t out_cols, const Tensor& values,
               const Tensor& indices, const int64_t* source);

}  // namespace tensorlet::cuda

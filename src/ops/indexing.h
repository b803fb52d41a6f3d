// Indexing: nonzero, masked_select, index_select, gather.
#pragma once

#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Indices of non-zero elements as [n, ndim] int64 in row-major order (synchronizes).
Tensor nonzero(const Tensor& a);
// The same as one 1-D int64 tensor per dim.
std::vector<Tensor> nonzero_tuple(const Tensor& a);
// Elements of a where the bool mask (broadcast together with a) is true, as a 1-D tensor.
Tensor masked_select(const Tensor& a, const Tensor& mask);
// Entries of a along dim at the given 1-D int32/int64 indices.
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
// out[i][j][k] = a[i][index[i][j][k]][k] for dim = 1 (and likewise for other dims).
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);

}  // namespace tensorlet

// The scatter family, with torch's signatures and semantics: scatter, scatter_add, scatter_reduce,
// index_add, index_copy, index_fill and masked_scatter. Each returns a new tensor; the Tensor
// methods of the same names (tensor/tensor.h) have in-place forms (x.scatter_(...)).
#pragma once

#include <string_view>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// out = self, then out[i][index[i][j][k]][k] = src[i][j][k] for dim = 1 (likewise for other
// dims). index int64 or int32 of self's rank, index.size(d) <= src.size(d) for every d and
// <= self.size(d) for d != dim, values in [0, self.size(dim)) (no negative indices, as torch).
// src has self's dtype; a value is converted to it (refused if out of range). Which of several
// values sent to one element wins is unspecified.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
// As scatter, adding every value sent to an element (integers wrap, bool is "or").
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// As scatter_add with reduce "sum", "prod", "mean", "amax" or "amin"; include_self = false leaves
// self's value out of the elements that receive any (those start from the op's identity). "mean"
// divides by the number of values (+1 with include_self), floor division for integers; amax/amin
// propagate NaN. Another reduce string is a tl::Error.
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);

// out = self, then out.select(dim, index[i]) += alpha * source.select(dim, i). index 1-D (or
// 0-dim) int64/int32 of source.size(dim) values in [0, self.size(dim)); source has self's dtype
// and shape except at dim. alpha must be an integer for integer tensors, bool for bool ones.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
// out.select(dim, index[i]) = source.select(dim, i); index int64 only, as torch.
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// out.select(dim, index[i]) = value; index int64 only, values in [-size, size) (a negative one
// counts from the end, as torch's index_fill).
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);

// self (broadcast with the bool mask) with the elements where mask is true replaced, in row-major
// order, by source's first elements (source in row-major order, self's dtype; it must have at
// least as many elements as mask has true values).
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

}  // namespace tensorlet

// Ordering ops of issue 14: sort, argsort, topk, kthvalue (torch semantics).
#pragma once

#include <cstdint>

#include "tensorlet/core/tensor.h"

namespace tensorlet {

// torch.sort: the elements along dim in ascending order (descending: largest first) and their
// int64 positions along dim; every dtype (bool: false < true). NaN sorts above everything, as
// torch: last ascending, first descending. Our sort is always stable (equal elements keep their
// order, also when descending), so `stable` changes nothing; torch without stable=true may order
// ties otherwise. A 0-dim tensor gives itself and index 0. auto [v, i] = tl::sort(x, 1);
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
// torch.argsort: sort(...).indices.
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
// torch.topk: the k largest (largest = false: smallest) elements along dim and their positions,
// largest first when sorted (else in an unspecified order). NaN counts as the largest value.
// 0 <= k <= size of dim (a 0-dim tensor has size 1), else IndexError. Every dtype but bool
// (DTypeError, as torch, whose topk and kthvalue kernels are not built for it).
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                   bool sorted = true);
// torch.kthvalue: the k-th smallest (1-based) element along dim and its position; keepdim
// keeps dim with size 1. 1 <= k <= size of dim, else IndexError; bool refused as by topk.
ValuesIndices kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);

}  // namespace tensorlet

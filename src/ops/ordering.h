// Ordering ops of issue 14: sort, argsort, topk, kthvalue; unique, unique_consecutive, bincount,
// searchsorted, histc (torch semantics).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tensorlet/tensor/tensor.h"

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

// torch.unique: the distinct elements of x (flattened), ascending in sort's order (NaN last).
// return_inverse: for each element of x, the position of its value in values (int64, x's shape);
// return_counts: how often each value occurs (int64). Not asked for, they are undefined tensors.
// NaN: each NaN is a value of its own (NaN != NaN), as torch's CPU and CUDA kernels compare them:
// [nan, 1, nan] gives values [1, nan, nan] and counts [1, 1, 1]. -0.0 and 0.0 are one value (the
// element first in x's order is the one kept). sorted = false sorts too: torch leaves that order
// unspecified, and ascending is one valid order. Every dtype.
// dim given: the distinct slices x.select(dim, i), ordered lexicographically (element keys as
// sort's), values keeping x's other dims; inverse [x.size(dim)], counts [number of slices]; a
// slice holding a NaN is distinct from every other. As torch, a zero-size dim is allowed only
// when it is x's only zero-size dim (ShapeError otherwise) and a 0-dim x has no dim (IndexError).
UniqueResult unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
                    bool return_counts = false, std::optional<int64_t> dim = std::nullopt);
// torch.unique_consecutive: as unique, but only runs of equal neighbours collapse (in x's order,
// no sorting): [1, 1, 2, 1] gives [1, 2, 1] with counts [2, 1, 1].
UniqueResult unique_consecutive(const Tensor& x, bool return_inverse = false,
                                bool return_counts = false,
                                std::optional<int64_t> dim = std::nullopt);

// torch.bincount: how often each value 0, 1, ... occurs in a 1-D tensor of non-negative integers
// (uint8, int8, int16, int32, int64; a negative value is an IndexError, bool and floats a
// DTypeError), as int64, over max(max(x) + 1, minlength) bins. With weights (1-D, x's length)
// each occurrence adds its weight instead: float32 weights give float32 bins, any other dtype
// float64 (torch converts them to double). As torch, an empty x gives int64 zeros of minlength,
// weights or not. Finding max(x) waits for the device once.
Tensor bincount(const Tensor& x, const Tensor& weights = {}, int64_t minlength = 0);

// torch.searchsorted: for each value, the position in the innermost dim of sorted_sequence at
// which it would be inserted to keep it sorted: the first boundary >= value (right or side
// "right": the first > value). sorted_sequence is 1-D (every value searches it) or has values'
// leading dims (row r of values searches row r). sorter (int64, sorted_sequence's shape) gives
// each row's ascending order when the sequence itself is not sorted. The two promote to a common
// dtype (torch.result_type), which may not be bool. Results have values' shape, int64 or
// (out_int32) int32. NaN follows torch's bisection: a NaN value lands at the row's length.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false,
                    bool right = false, std::string_view side = "", const Tensor& sorter = {});
// A number as the value: needs a 1-D sorted_sequence; gives a 0-dim result.
Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool out_int32 = false,
                    bool right = false, std::string_view side = "", const Tensor& sorter = {});

// torch.histc: counts of x's elements in `bins` equal-width bins over [min, max], in x's dtype
// (floating only: DTypeError otherwise). min == max takes the data's min and max (then an empty
// range widens by 1 on each side); elements outside the range and NaN are ignored; max falls in
// the last bin. A NaN or infinite range (from the data too) and min > max are errors, as torch.
Tensor histc(const Tensor& x, int64_t bins = 100, Scalar min = 0, Scalar max = 0);

}  // namespace tensorlet

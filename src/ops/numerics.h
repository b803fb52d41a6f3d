// Numerics of issue 14: softmax / log_softmax, logsumexp, variance / standard deviation, norms,
// NaN-skipping sums and means, counts of non-zeros, and medians.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "tensorlet/tensor/dim_list.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// torch.softmax / torch.log_softmax along dim (a 0-dim tensor takes 0 and -1). Floating inputs
// only, unless `dtype` (floating) is given: the input is then converted to it first, as torch.
// float16/bfloat16 compute in float32 and round once. A row of -inf (or with a +inf or a NaN)
// gives NaN, as torch.
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

// torch.logsumexp: log(sum(exp(x))) over dims, computed around the max (a slice of -inf gives
// -inf, one with +inf gives +inf). Integer and bool inputs give float32, as torch 2.x.
Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim = false);

// torch.var / torch.std: sum((x - mean)^2) / max(0, N - correction) over dims (empty: all), in
// two passes (mean first). Floating inputs only; float16/bfloat16 accumulate in float32. One
// element with correction 1 gives NaN, as torch.
Tensor var(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, const DimList& dims = {}, double correction = 1, bool keepdim = false);
// torch.var_mean / torch.std_mean: auto [v, m] = tl::var_mean(x, 1).
std::pair<Tensor, Tensor> var_mean(const Tensor& x, const DimList& dims = {}, double correction = 1,
                                   bool keepdim = false);
std::pair<Tensor, Tensor> std_mean(const Tensor& x, const DimList& dims = {}, double correction = 1,
                                   bool keepdim = false);

// torch.norm / torch.linalg.vector_norm over dims (empty: all) of a floating tensor: p = 2
// (sqrt of the sum of squares, unscaled as torch), 1, inf (max |x|), -inf (min |x|), 0 (the count
// of non-zeros, NaN included), any other p: sum(|x|^p)^(1/p). float16/bfloat16 compute in float32
// and round once. p < 0 and inf over an empty dim are refused (no identity), as torch.
Tensor norm(const Tensor& x, double p = 2, const DimList& dims = {}, bool keepdim = false);
// p = "fro": the 2-norm over the dims (the only string accepted).
Tensor norm(const Tensor& x, std::string_view p, const DimList& dims = {}, bool keepdim = false);

// torch.count_nonzero: int64 counts of elements that are not zero (NaN counts) over dims.
Tensor count_nonzero(const Tensor& x, const DimList& dims = {});
// torch.nansum: sum with NaN taken as 0; integer and bool inputs give their sum (int64).
Tensor nansum(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
// torch.nanmean: nansum / the count of non-NaN elements (all NaN: NaN); floating inputs only.
Tensor nanmean(const Tensor& x, const DimList& dims = {}, bool keepdim = false);

// torch.median(x): the lower median of all elements (rank (n - 1) / 2), 0-dim; NaN when any
// element is NaN or x is empty, as torch. Not for bool.
Tensor median(const Tensor& x);
// torch.median(x, dim): the lower median along dim and its int64 position: auto [v, i] =
// tl::median(x, 1). Equal values rank by position (torch's CPU rule, here on every device); a
// slice with a NaN gives NaN and the position of its first NaN.
ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim = false);

}  // namespace tensorlet

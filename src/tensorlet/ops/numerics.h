// Numerics of issue 14: softmax / log_softmax, logsumexp, and variance / standard deviation.
#pragma once

#include <optional>
#include <utility>

#include "tensorlet/core/dim_list.h"
#include "tensorlet/core/tensor.h"

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

}  // namespace tensorlet

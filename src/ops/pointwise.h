// Pointwise ops with parameters, as torch: lerp, isclose, nan_to_num (allclose: tensor/tensor.h).
#pragma once

#include <optional>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// start + weight * (end - start), computed as torch does (exact at weight 0 and 1). start, end and
// a tensor weight must have one floating dtype; the three broadcast.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);

// |a - b| <= atol + rtol * |b| elementwise (bool), a and b of one dtype, broadcast; equal values
// (infinities included) are close, NaNs only with equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);

// NaN, +inf and -inf replaced by nan, posinf and neginf (defaults: 0, the dtype's largest and
// lowest finite values). Integer and bool tensors come back as a copy, as torch.
Tensor nan_to_num(const Tensor& a, std::optional<double> nan = 0.0,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

}  // namespace tensorlet

// cross_entropy with class-index targets as one kernel each way (Backend::cross_entropy_forward
// and _backward): the per-row losses that nn::functional::cross_entropy then reduces.
#pragma once

#include <cstdint>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn::functional {

// Per row of x [rows, C] with target [rows] (int64, checked by the caller): the smoothed,
// weighted loss (0 where ignored), differentiable in x, and the row's weight w_t (0 where
// ignored; no gradient), both [rows] in float32 (float64 for float64 x). weight: undefined or
// [C] of x's dtype, not requiring grad. Targets out of range on a device raise at the next wait.
struct RowLosses {
  Tensor loss, weight;
};
RowLosses fused_cross_entropy_rows(const Tensor& x, const Tensor& target, const Tensor& weight,
                                   int64_t ignore_index, double label_smoothing);

}  // namespace tensorlet::nn::functional

// batch_norm in training mode as one fused kernel each way where the backend has one
// (Backend::batch_norm_forward / _backward), else nothing: the caller runs its composite.
#pragma once

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn::functional {

// x [N, C, ...] normalized with its batch statistics per channel, then scaled by weight and
// shifted by bias (each undefined or [C]); running_mean / running_var (undefined or [C]) updated
// in place with momentum. Recorded as one node (BatchNormBackward0) when x, weight or bias
// requires grad. Undefined when x's backend has no fused batch norm for these operands (dtypes,
// layouts) or x is empty; the caller has checked the shapes and that a channel holds 2 values.
Tensor fused_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                        const Tensor& weight, const Tensor& bias, double momentum, double eps);

}  // namespace tensorlet::nn::functional

// tl::conv2d: 2-D convolution (cross-correlation, as torch.nn.functional.conv2d) of [N, C, H, W]
// or unbatched [C, H, W] input, on every device, differentiable in input, weight and bias.
#pragma once

#include <cstdint>

#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// The cross-correlation of input with weight [O, C / groups, kH, kW], plus bias [O] if defined.
// stride, padding and dilation: one value for both dims or (H, W). Output [N, O, H_out, W_out] with
// H_out = (H + 2 padding - dilation (kH - 1) - 1) / stride + 1. Computed as im2col (one
// index_select gathering every window) and one batched matmul per group, so its gradients are those
// ops'. Throws ShapeError (dims, a channel count that does not match weight and groups, a kernel
// that does not fit), DTypeError (non-floating or mixed dtypes), DeviceError, each naming
// tl::conv2d.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
              int64_t groups = 1);

}  // namespace tensorlet

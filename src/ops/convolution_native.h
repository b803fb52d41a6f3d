// tl::conv2d on a backend's own convolution (CUDA: cuDNN), when it has one (internal).
#pragma once

#include "tensorlet/backends/math/convolution_args.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::detail {

// y = conv2d(x, weight) without bias, of shape y_shape, on x's backend, recorded as one node
// (ConvolutionBackward0) when an input requires grad; undefined when the backend has no
// convolution for these operands (tl::conv2d then runs its im2col path). x [N, C, H, W] and
// weight already checked.
Tensor native_conv2d(const Tensor& x, const Tensor& weight, const Conv2dArgs& args,
                     const Shape& y_shape);

// The im2col gradients of conv2d as recorded ops (differentiable again): of the input from the
// output's gradient g and the weight, and of the weight from g and the input.
Tensor conv2d_input_grad(const Tensor& g, const Tensor& weight, const Conv2dArgs& args,
                         const Shape& x_shape, DType dtype);
Tensor conv2d_weight_grad(const Tensor& g, const Tensor& x, const Conv2dArgs& args,
                          const Shape& w_shape);

}  // namespace tensorlet::detail

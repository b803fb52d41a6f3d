// The unary ops' gradients as one kernel each (Backend::unary_backward), for the derivative
// formulas of derivatives_elementwise.cpp when the backward itself needs no graph.
#pragma once

#include "tensorlet/backends/math/unary_backward_ops.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// grad * op'(x) for y = op(x), one pass over grad and `saved` (x or y, as backward_saved(op)
// says): op has a backward kernel (has_backward_kernel); grad and saved of one floating dtype, one
// shape and one device, any strides. Records nothing: the result has no grad_fn.
Tensor unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved);
// The same into `out`, contiguous, of grad's dtype, shape and device (tests poison it first).
void unary_backward_out(UnaryOp op, const Tensor& grad, const Tensor& saved, const Tensor& out);

}  // namespace tensorlet::autograd

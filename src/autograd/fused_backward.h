// The unary ops' gradients, and the binary ops' whose formula is more than one op, as one kernel
// each (Backend::unary_backward, Backend::binary_backward), for the derivative formulas of
// derivatives_elementwise.cpp when the backward itself needs no graph.
#pragma once

#include "tensorlet/backends/math/binary_backward_ops.h"
#include "tensorlet/backends/math/unary_backward_ops.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// grad * op'(x) for y = op(x), one pass over grad and `saved` (x or y, as backward_saved(op)
// says): op has a backward kernel (has_backward_kernel); grad and saved of one floating dtype, one
// shape and one device, any strides. Records nothing: the result has no grad_fn.
Tensor unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved);
// The same into `out`, contiguous, of grad's dtype, shape and device (tests poison it first).
void unary_backward_out(UnaryOp op, const Tensor& grad, const Tensor& saved, const Tensor& out);

// grad * d op(a, b) / d a (or / d b, as `which` says), one pass over grad, a and b: the three of
// one floating dtype and device, a and b broadcastable to grad's shape, any strides. The result
// has grad's shape (reduce_to brings it to the operand's); it records nothing.
Tensor binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b);
// The same into `out`, contiguous, of grad's dtype, shape and device (tests poison it first).
void binary_backward_out(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b,
                         const Tensor& out);

}  // namespace tensorlet::autograd

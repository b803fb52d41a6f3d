// Checks and dispatch of the fused unary and binary gradients (fused_backward.h).
#include "tensorlet/autograd/fused_backward.h"

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::autograd {

namespace {

constexpr const char* kName = "tl::autograd::unary_backward";

// The profiler's name of op's gradient kernel, "tl::sigmoid_backward" (torch's aten::*_backward).
constexpr const char* backward_name(UnaryOp op) {
  switch (op) {
#define TL_BACKWARD_NAME(e, name, rule, dtypes, Fn) \
  case UnaryOp::e:                                  \
    return "tl::" #name "_backward";
    TL_UNARY_OPS(TL_BACKWARD_NAME)
#undef TL_BACKWARD_NAME
  }
  return kName;
}

void check_operands(UnaryOp op, const Tensor& grad, const Tensor& saved, const Tensor& out) {
  check_defined(grad, kName);
  check_defined(saved, kName);
  check_defined(out, kName);
  if (!has_backward_kernel(op)) fail<Error>(kName, unary_op_name(op), " has no backward kernel");
  if (!is_floating_point(grad.dtype()))
    fail<DTypeError>(kName, "expected a floating point gradient, got dtype ", grad.dtype());
  if (saved.dtype() != grad.dtype() || out.dtype() != grad.dtype())
    fail<DTypeError>(kName, "expected grad, saved and out of one dtype, got ", grad.dtype(), ", ",
                     saved.dtype(), " and ", out.dtype());
  if (saved.shape() != grad.shape() || out.shape() != grad.shape())
    fail<ShapeError>(kName, "expected grad, saved and out of one shape, got ", grad.shape(), ", ",
                     saved.shape(), " and ", out.shape());
  if (saved.device() != grad.device() || out.device() != grad.device())
    fail<DeviceError>(kName, "expected grad, saved and out on one device, got ", grad.device(),
                      ", ", saved.device(), " and ", out.device());
  if (!out.is_contiguous()) fail<Error>(kName, "expected a contiguous out");
}

}  // namespace

void unary_backward_out(UnaryOp op, const Tensor& grad, const Tensor& saved, const Tensor& out) {
  profiler::OpScope scope(backward_name(op));
  scope.inputs({&grad, &saved});
  check_operands(op, grad, saved, out);
  if (out.numel() > 0) backend_for(out.device()).unary_backward(op, grad, saved, out);
}

void binary_backward_out(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b,
                         const Tensor& out) {
  constexpr const char* name = "tl::autograd::binary_backward";
  profiler::OpScope scope(binary_gradient_name(which));
  scope.inputs({&grad, &a, &b});
  for (const Tensor* t : {&grad, &a, &b, &out}) check_defined(*t, name);
  if (!is_floating_point(grad.dtype()))
    fail<DTypeError>(name, "expected a floating point gradient, got dtype ", grad.dtype());
  for (const Tensor* t : {&a, &b, &out}) {
    if (t->dtype() != grad.dtype())
      fail<DTypeError>(name, "expected grad, a, b and out of one dtype, got ", grad.dtype(),
                       " and ", t->dtype());
    if (t->device() != grad.device())
      fail<DeviceError>(name, "expected grad, a, b and out on one device, got ", grad.device(),
                        " and ", t->device());
  }
  if (out.shape() != grad.shape())
    fail<ShapeError>(name, "expected out of the gradient's shape ", grad.shape(), ", got ",
                     out.shape());
  if (!out.is_contiguous()) fail<Error>(name, "expected a contiguous out");
  for (const Tensor* t : {&a, &b})
    if (!broadcasts_to(t->shape(), grad.shape()))
      fail<ShapeError>(name, "operand of shape ", t->shape(),
                       " does not broadcast to the gradient's shape ", grad.shape());
  const Tensor a_full = a.expand(grad.shape()), b_full = b.expand(grad.shape());
  if (out.numel() > 0) backend_for(out.device()).binary_backward(which, grad, a_full, b_full, out);
}

Tensor binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b) {
  check_defined(grad, "tl::autograd::binary_backward");
  Tensor out = make_tensor(grad.shape(), grad.dtype(), grad.device());
  binary_backward_out(which, grad, a, b, out);
  return out;
}

Tensor unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved) {
  check_defined(grad, kName);
  Tensor out = make_tensor(grad.shape(), grad.dtype(), grad.device());
  unary_backward_out(op, grad, saved, out);
  return out;
}

}  // namespace tensorlet::autograd

// Derivative of a backend's own 2-D convolution (ops/convolution_native.h): its two backward
// passes, or the im2col formulas as recorded ops when the backward must be differentiable.
#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/convolution_native.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::autograd {

namespace {

Conv2dArgs args_of(const FormulaNode& n) {
  const std::vector<int64_t>& v = n.ints;
  return {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, v[6]};
}

// Saved: x [N, C, H, W] and w [O, C / groups, kH, kW].
TensorList conv2d_formula(const FormulaNode& n, const Tensor& grad) {
  const Conv2dArgs a = args_of(n);
  const Tensor x = n.saved(0), w = n.saved(1);
  const Tensor g = grad.dtype() == x.dtype() ? grad : grad.to(x.dtype());
  const bool differentiable =
      GradMode::is_enabled() && (requires_grad(g) || requires_grad(x) || requires_grad(w));
  Backend& backend = backend_for(x.device());
  const bool native = !differentiable && g.device() == x.device();
  const Tensor gs = native ? g.contiguous() : Tensor();
  Tensor dx, dw;
  if (n.needs_grad(0)) {
    if (native) {
      dx = make_tensor(x.shape(), x.dtype(), x.device());
      if (!backend.conv2d_backward_input(gs, w.contiguous(), a, dx)) dx = Tensor();
    }
    if (!dx.defined()) dx = tensorlet::detail::conv2d_input_grad(g, w, a, x.shape(), x.dtype());
  }
  if (n.needs_grad(1)) {
    if (native) {
      dw = make_tensor(w.shape(), w.dtype(), w.device());
      if (!backend.conv2d_backward_weight(x.contiguous(), gs, a, dw)) dw = Tensor();
    }
    if (!dw.defined()) dw = tensorlet::detail::conv2d_weight_grad(g, x, a, w.shape());
  }
  return {dx, dw};
}

}  // namespace

void record_conv2d(const Tensor& x, const Tensor& w, const Conv2dArgs& args, const Tensor& y) {
  auto node = record_node("ConvolutionBackward0", conv2d_formula, {&x, &w}, y);
  node->ints = {args.stride[0],   args.stride[1],   args.padding[0], args.padding[1],
                args.dilation[0], args.dilation[1], args.groups};
  node->save(x);
  node->save(w);
}

}  // namespace tensorlet::autograd

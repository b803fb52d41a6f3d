// Derivative of the fused batch norm (nn/fused_batch_norm.h): one backward kernel, or the same
// formula as recorded ops when the backward itself must be differentiable (create_graph).
#include <vector>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::autograd {

namespace {

BatchNormArgs args_of(const FormulaNode& n) {
  return {n.ints[0], n.ints[1], n.ints[2], n.reals[0], n.reals[1]};
}

// dx, dweight, dbias as ops on x itself (batch statistics recomputed), differentiable in g, x and
// weight: dx = w invstd (g - mean(g) - xhat mean(g xhat)) per channel.
TensorList composite_gradients(const FormulaNode& n, const Tensor& g, const Tensor& x,
                               const Tensor& weight, const BatchNormArgs& a) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  std::vector<int64_t> row(static_cast<size_t>(x.dim()), 1);
  row[1] = a.channels;
  const Tensor mu = mean(x, dims, true);
  const Tensor centred = x - mu;
  const Tensor inv = rsqrt(mean(centred * centred, dims, true) + a.eps);
  const Tensor xhat = centred * inv;
  Tensor dx, dw, db;
  if (n.needs_grad(0)) {
    const Tensor gw = weight.defined() ? g * weight.view(row) : g;
    dx = inv * (gw - mean(gw, dims, true) - xhat * mean(gw * xhat, dims, true));
  }
  if (n.needs_grad(1)) dw = sum(g * xhat, dims);
  if (n.needs_grad(2)) db = sum(g, dims);
  return {dx, dw, db};
}

// Saved: x, then weight when there is one (ints[3]), mean and invstd.
TensorList batch_norm_formula(const FormulaNode& n, const Tensor& grad) {
  const BatchNormArgs a = args_of(n);
  const bool has_weight = n.ints[3] != 0;
  const Tensor x = n.saved(0);
  const Tensor weight = has_weight ? n.saved(1) : Tensor();
  const Tensor mean = n.saved(has_weight ? 2 : 1), invstd = n.saved(has_weight ? 3 : 2);
  const Tensor g = grad.dtype() == x.dtype() ? grad : grad.to(x.dtype());
  const bool differentiable =
      GradMode::is_enabled() &&
      (requires_grad(g) || requires_grad(x) || (weight.defined() && requires_grad(weight)));
  if (differentiable || g.device() != x.device()) return composite_gradients(n, g, x, weight, a);
  const DType param = weight.defined() ? weight.dtype() : x.dtype();
  const Tensor dx = n.needs_grad(0) ? make_tensor(x.shape(), x.dtype(), x.device()) : Tensor();
  const Shape channels({a.channels});
  const Tensor dw = n.needs_grad(1) ? make_tensor(channels, param, x.device()) : Tensor();
  const Tensor db = n.needs_grad(2) ? make_tensor(channels, param, x.device()) : Tensor();
  backend_for(x.device())
      .batch_norm_backward(g.contiguous(), x.contiguous(), weight, mean, invstd, a, dx, dw, db);
  return {dx, dw, db};
}

}  // namespace

void record_batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       const Tensor& mean, const Tensor& invstd, const BatchNormArgs& args,
                       const Tensor& y) {
  auto node =
      record_node("NativeBatchNormBackward0", batch_norm_formula,
                  {&x, weight.defined() ? &weight : nullptr, bias.defined() ? &bias : nullptr}, y);
  node->ints = {args.n, args.channels, args.inner, weight.defined() ? 1 : 0};
  node->reals = {args.momentum, args.eps};
  node->save(x);
  if (weight.defined()) node->save(weight);
  node->save(mean);
  node->save(invstd);
}

}  // namespace tensorlet::autograd

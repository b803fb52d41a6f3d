// Derivative of the fused cross entropy (nn/fused_cross_entropy.h): one backward kernel, or the
// same formula as recorded ops when the backward itself must be differentiable (create_graph).
#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::autograd {

namespace {

CrossEntropyArgs args_of(const FormulaNode& n) {
  return {n.ints[0], n.ints[1], n.ints[2], n.reals[0]};
}

// dx = g ((1 - e) w_t (softmax(x) - onehot(t)) + e / C (W softmax(x) - w)) as ops, differentiable
// in g and x (backends/math/cross_entropy_ops.h has the derivation).
Tensor composite_gradient(const Tensor& g, const Tensor& x, const Tensor& target,
                          const Tensor& weight, const CrossEntropyArgs& a) {
  const DType acc = g.dtype();
  const Tensor p = softmax(x.to(acc), 1);
  const Tensor counts = logical_and(ne(target, a.ignore_index),
                                    logical_and(ge(target, int64_t{0}), lt(target, a.classes)));
  const Tensor safe = where(counts, target, int64_t{0});
  const Tensor w = weight.defined() ? weight.to(acc) : Tensor();
  Tensor w_t = counts.to(acc);
  if (w.defined()) w_t = w_t * index_select(w, 0, safe);
  const Tensor hit = g * w_t * (1 - a.smoothing);
  const Tensor onehot = eq(arange(a.classes, TensorOptions(kInt64).device(x.device())).unsqueeze(0),
                           safe.unsqueeze(1))
                            .to(acc);
  Tensor dx = p * hit.unsqueeze(1) - onehot * hit.unsqueeze(1);
  if (a.smoothing > 0) {
    const Tensor spread = g * counts.to(acc) * (a.smoothing / static_cast<double>(a.classes));
    const Tensor total = w.defined() ? sum(w)
                                     : full({}, static_cast<double>(a.classes),
                                            TensorOptions(acc).device(x.device()));
    dx = dx + p * (spread * total).unsqueeze(1) -
         (w.defined() ? spread.unsqueeze(1) * w.unsqueeze(0) : spread.unsqueeze(1));
  }
  return dx.to(x.dtype());
}

// Saved: x, target, lse, then weight and weight_total when given (ints[3], ints[4] say which).
TensorList cross_entropy_formula(const FormulaNode& n, const Tensor& g) {
  const CrossEntropyArgs a = args_of(n);
  const Tensor x = n.saved(0), target = n.saved(1), lse = n.saved(2);
  const Tensor weight = n.ints[3] ? n.saved(3) : Tensor();
  const Tensor total = n.ints[4] ? n.saved(4) : Tensor();
  const bool differentiable = GradMode::is_enabled() && (requires_grad(g) || requires_grad(x));
  if (differentiable || g.dtype() != lse.dtype() || g.device() != x.device())
    return {composite_gradient(g.to(lse.dtype()), x, target, weight, a)};
  const Tensor xs = x.contiguous();
  const Tensor dx = make_tensor(xs.shape(), xs.dtype(), xs.device());
  if (dx.numel() > 0)
    backend_for(x.device())
        .cross_entropy_backward(g.contiguous(), xs, target, weight, total, lse, a, dx);
  return {dx};
}

}  // namespace

void record_cross_entropy(const Tensor& x, const Tensor& target, const Tensor& weight,
                          const Tensor& weight_total, const Tensor& lse,
                          const CrossEntropyArgs& args, const Tensor& out) {
  auto node = record_node("CrossEntropyLossBackward0", cross_entropy_formula, {&x}, out);
  node->ints = {args.rows, args.classes, args.ignore_index, weight.defined() ? 1 : 0,
                weight_total.defined() ? 1 : 0};
  node->reals = {args.smoothing};
  node->save(x);
  node->save(target);
  node->save(lse);
  if (weight.defined()) node->save(weight);
  if (weight_total.defined()) node->save(weight_total);
}

}  // namespace tensorlet::autograd

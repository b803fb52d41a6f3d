// Derivatives of addmm and baddbmm (torch's AddmmBackward0 / BaddbmmBackward0): the input's
// gradient is beta * g summed back to its broadcast shape, the factors' alpha * the products of g
// with the other factor transposed.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/linalg.h"

namespace tensorlet::autograd {

namespace {

Tensor scaled(const Tensor& t, double factor) { return factor == 1 ? t : mul(t, factor); }

// reals: {beta, alpha}; ints: {batched, a stored transposed, b stored transposed}. A factor
// stored transposed (linear's w.t()) gets its gradient in its own layout (is_transposed_matrix).
TensorList addmm_formula(const FormulaNode& n, const Tensor& g) {
  const double beta = n.reals[0], alpha = n.reals[1];
  const bool batched = n.ints[0] != 0;
  TensorList d(3);
  if (n.needs_grad(0)) d[0] = reduce_to(scaled(g, beta), n.input(0));
  if (n.needs_grad(1)) {
    const Tensor b = n.saved(1);
    const Tensor da = batched     ? bmm(g, b.transpose(-1, -2))
                      : n.ints[1] ? mm(b, g.t()).t()
                                  : mm(g, b.t());
    d[1] = reduce_to(scaled(da, alpha), n.input(1));
  }
  if (n.needs_grad(2)) {
    const Tensor a = n.saved(0);
    const Tensor db = batched     ? bmm(a.transpose(-1, -2), g)
                      : n.ints[2] ? mm(g.t(), a).t()
                                  : mm(a.t(), g);
    d[2] = reduce_to(scaled(db, alpha), n.input(2));
  }
  return d;
}

}  // namespace

void record_addmm(bool batched, const Tensor& input, const Tensor& a, const Tensor& b, double beta,
                  double alpha, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node(batched ? "BaddbmmBackward0" : "AddmmBackward0", addmm_formula,
                          {&input, &a, &b}, out);
  node->ints = {batched ? 1 : 0, !batched && is_transposed_matrix(a) ? 1 : 0,
                !batched && is_transposed_matrix(b) ? 1 : 0};
  node->reals = {beta, alpha};
  // Each factor's gradient reads the other one only.
  node->save(node->needs_grad(2) ? a : Tensor());
  node->save(node->needs_grad(1) ? b : Tensor());
}

}  // namespace tensorlet::autograd

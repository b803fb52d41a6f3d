// Derivatives of lerp, nan_to_num, clamp with tensor bounds and the diagonal ops (diagonal, diag,
// diag_embed), with PyTorch's formulas and node names.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/shape_ops.h"

namespace tensorlet::autograd {

namespace {

// lerp: start gets g (1 - w), end g w, a weight tensor g (end - start). saved: {start, end,
// weight}; reals: {weight} for a number.
TensorList lerp_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor w = n.saved(2);
  const Tensor wg = w.defined() ? mul(g, w) : mul(g, n.reals[0]);
  TensorList d(3);
  if (n.needs_grad(0)) d[0] = reduce_to(sub(g, wg), n.input(0));
  if (n.needs_grad(1)) d[1] = reduce_to(wg, n.input(1));
  if (n.needs_grad(2)) d[2] = reduce_to(mul(g, sub(n.saved(1), n.saved(0))), n.input(2));
  return d;
}

// nan_to_num: the gradient passes where x was finite (a replaced value is a constant).
TensorList nan_to_num_formula(const FormulaNode& n, const Tensor& g) {
  return {reduce_to(where(isfinite(n.saved(0)), g, 0.0), n.input(0))};
}

// clamp with tensor bounds (torch's clamp_backward_min_max): x where lo <= x <= hi, lo where
// x < lo < hi, hi where x > hi or hi < lo. saved: {x, lo, hi} (a missing bound undefined).
TensorList clamp_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor x = n.saved(0), lo = n.saved(1), hi = n.saved(2);
  TensorList d(3);
  if (n.needs_grad(0)) {
    Tensor keep;
    if (lo.defined()) keep = ge(x, lo);
    if (hi.defined()) keep = keep.defined() ? logical_and(keep, le(x, hi)) : le(x, hi);
    d[0] = reduce_to(where(keep, g, 0.0), n.input(0));
  }
  if (n.needs_grad(1)) {
    Tensor pick = lt(x, lo);
    if (hi.defined()) pick = logical_and(pick, lt(lo, hi));
    d[1] = reduce_to(where(pick, g, 0.0), n.input(1));
  }
  if (n.needs_grad(2)) {
    Tensor pick = gt(x, hi);
    if (lo.defined()) pick = logical_or(pick, lt(hi, lo));
    d[2] = reduce_to(where(pick, g, 0.0), n.input(2));
  }
  return d;
}

// diagonal: g on the diagonal of zeros of x's shape; diag_embed / diag of a vector: the diagonal
// of g. ints: {kind (0 diagonal, 1 embed), offset, dim1, dim2}.
TensorList diagonal_formula(const FormulaNode& n, const Tensor& g) {
  const InputMeta& x = n.input(0);
  if (n.ints[0] == 1)
    return {
        reduce_to(diagonal(g, n.ints[1], n.ints[2], n.ints[3]).contiguous().reshape(x.shape), x)};
  const Tensor r = embed_in_zeros(
      g, x.shape, [&](const Tensor& t) { return diagonal(t, n.ints[1], n.ints[2], n.ints[3]); });
  return {reduce_to(r, x)};
}

}  // namespace

void record_lerp(const Tensor& start, const Tensor& end, const Tensor* weight, double w,
                 const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node(weight ? "LerpBackward1" : "LerpBackward0", lerp_formula,
                          {&start, &end, weight}, out);
  node->reals = {w};
  const bool weight_grad = weight && node->needs_grad(2);
  node->save(weight_grad ? start : Tensor());
  node->save(weight_grad ? end : Tensor());
  node->save(weight ? *weight : Tensor());
}

void record_nan_to_num(const Tensor& x, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("NanToNumBackward0", nan_to_num_formula, {&x}, out);
  node->save(x);
}

void record_clamp_tensors(const Tensor& x, const Tensor* lo, const Tensor* hi, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("ClampBackward0", clamp_formula, {&x, lo, hi}, out);
  node->save(x);
  node->save(lo ? *lo : Tensor());
  node->save(hi ? *hi : Tensor());
}

void record_diagonal(bool embed, const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2,
                     const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node =
      record_node(embed ? "DiagEmbedBackward0" : "DiagonalBackward0", diagonal_formula, {&x}, out);
  node->ints = {embed ? 1 : 0, offset, dim1, dim2};
}

}  // namespace tensorlet::autograd

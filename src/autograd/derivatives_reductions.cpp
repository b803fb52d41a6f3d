// Derivatives of the reductions beyond sum/mean/amax (logsumexp, var/std, norm, prod) and of
// cumprod, with PyTorch's formulas and node names; written with public ops so that they run on any
// device and differentiate again under create_graph.
#include <cmath>
#include <limits>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/reduce_mask.h"
#include "tensorlet/ops/scan.h"
#include "tensorlet/ops/scatter.h"
#include "tensorlet/ops/shape_ops.h"

namespace tensorlet::autograd {

namespace {

// The node's reduced dims (ints[1..], a 0/1 mask over x's dims) as a dim list.
std::vector<int64_t> mask_dims(const FormulaNode& n) {
  std::vector<int64_t> dims;
  for (size_t d = 1; d < n.ints.size(); ++d)
    if (n.ints[d]) dims.push_back(static_cast<int64_t>(d - 1));
  return dims;
}

// A reduction's result (or its gradient) with the reduced dims put back as size 1 (ints[0]:
// keepdim), so that it broadcasts against the input.
Tensor kept(const FormulaNode& n, const Tensor& t) {
  Tensor r = t;
  if (!n.ints[0])
    for (int64_t d : mask_dims(n)) r = r.unsqueeze(d);
  return r;
}

// Records keepdim and the reduced-dim mask in ints (ints[0], ints[1..]).
void save_dims(FormulaNode& node, const Tensor& x, const DimList& dims, bool keepdim,
               const char* op) {
  node.ints = {keepdim ? 1 : 0};
  for (bool m : reduce_mask(x, dims, op)) node.ints.push_back(m ? 1 : 0);
}

Tensor as_input(const Tensor& t, const InputMeta& x) {
  Tensor r = t.shape() == x.shape ? t : t.expand(x.shape);
  return r.dtype() == x.dtype ? r : r.to(x.dtype);
}

// logsumexp: g * exp(x - result), the softmax of x over the dims.
TensorList logsumexp_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor x = n.saved(0), y = kept(n, n.saved(1));
  return {as_input(mul(kept(n, g), exp(sub(x, y))), n.input(0))};
}

// var: g * 2 (x - mean) / (N - correction); std: the same of g / (2 std), which is 0 where std is
// 0 (torch's choice: a constant slice gets no gradient rather than NaN). reals: {N - correction}.
TensorList var_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor x = n.saved(0);
  const std::vector<int64_t> dims = mask_dims(n);
  Tensor gk = kept(n, g);
  if (n.reals[1] != 0) {  // std: y is saved
    const Tensor y = kept(n, n.saved(1));
    gk = where(eq(y, 0.0), 0.0, div(gk, mul(y, 2.0)));
  }
  const Tensor centered = sub(x, mean(x, dims, true));
  return {as_input(mul(gk, mul(centered, 2.0 / n.reals[0])), n.input(0))};
}

// norm (torch's linalg_vector_norm_backward): p = 0 none; 1: sgn(x) g; inf / -inf: sgn(x) g shared
// among the elements whose |x| is the norm; else x |x|^(p-2) g / norm^(p-1), 0 where the norm is 0
// (so the zero vector's 2-norm has gradient 0, not NaN). reals: {p}.
TensorList norm_formula(const FormulaNode& n, const Tensor& g) {
  const double p = n.reals[0];
  const Tensor x = n.saved(0);
  const Tensor gk = kept(n, g);
  if (p == 0) return {zeros(n.input(0).shape, TensorOptions(n.input(0).dtype).device(g.device()))};
  if (p == 1) return {as_input(mul(sign(x), gk), n.input(0))};
  const Tensor y = kept(n, n.saved(1));
  if (std::isinf(p)) {
    const Tensor hit = eq(abs(x), y).to(g.dtype());
    return {as_input(mul(sign(x), mul(hit, div(gk, sum(hit, mask_dims(n), true)))), n.input(0))};
  }
  const Tensor scale = where(eq(y, 0.0), 0.0, div(gk, p == 2 ? y : pow(y, p - 1)));
  const Tensor scaled_x =
      p == 2 ? x : (p < 2 ? mul(sign(x), pow(abs(x), p - 1)) : mul(x, pow(abs(x), p - 2)));
  return {as_input(mul(scaled_x, scale), n.input(0))};
}

// Products of x along its last dim excluding each element itself: the exclusive cumulative
// products from the left and from the right, multiplied. No division, so zeros are exact (the
// role of torch's prod_safe_zeros_backward).
Tensor products_of_others(const Tensor& x) {
  const int64_t k = x.shape()[x.dim() - 1];
  Shape one = x.shape();
  one[one.size() - 1] = 1;
  const Tensor ones_col = ones(one, TensorOptions(x.dtype()).device(x.device()));
  const Tensor left = cumprod(cat({ones_col, x.narrow(-1, 0, k - 1)}, -1), -1);
  const Tensor right =
      flip(cumprod(flip(cat({x.narrow(-1, 1, k - 1), ones_col}, -1), {-1}), -1), {-1});
  return mul(left, right);
}

// prod over the dims: g times the product of the other elements of each slice. The reduced dims
// are moved last and flattened into one, whose exclusive products are taken.
TensorList prod_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor x = n.saved(0);
  const InputMeta& in = n.input(0);
  if (x.numel() == 0 || x.dim() == 0) return {as_input(kept(n, g), in)};
  std::vector<int64_t> order, inverse(x.dim());
  Shape rows;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!n.ints[d + 1]) {
      order.push_back(d);
      rows.push_back(x.shape()[d]);
    }
  for (int64_t d : mask_dims(n)) order.push_back(d);
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
  const Tensor moved = x.permute(order);
  Shape flat = rows;
  flat.push_back(-1);
  const Tensor others = products_of_others(moved.reshape(flat)).reshape(moved.shape());
  return {as_input(mul(kept(n, g), others.permute(inverse)), in)};
}

// The reversed cumulative sum along dim: element i gets the sum of elements i.. (flipped, so
// that nothing cancels).
Tensor reverse_cumsum(const Tensor& t, int64_t dim) {
  return flip(cumsum(flip(t, {dim}), dim), {dim});
}

// cumprod (torch's cumprod_backward, without its host sync): before the first zero of a slice,
// sum_{j>=i} g_j y_j / x_i; at the first zero, the same sum over the cumprod with that zero taken
// as 1; after it, 0 (every later output holds the zero as a factor).
TensorList cumprod_formula(const FormulaNode& n, const Tensor& g) {
  const int64_t dim = n.ints[0];
  const Tensor x = n.saved(0), y = n.saved(1);
  if (x.numel() == 0) return {as_input(g, n.input(0))};
  const Tensor is_zero = eq(x, 0.0);
  const Tensor zeros_so_far = cumsum(is_zero, dim);
  const Tensor before = eq(zeros_so_far, 0);
  const Tensor first_zero = logical_and(is_zero, eq(zeros_so_far, 1));
  const Tensor safe_x = where(before, x, 1.0);
  const Tensor dx_before = div(reverse_cumsum(mul(g, y), dim), safe_x);
  const Tensor y_one = cumprod(where(first_zero, 1.0, x), dim);
  const Tensor dx_zero = reverse_cumsum(mul(g, y_one), dim);
  return {as_input(where(before, dx_before, where(first_zero, dx_zero, 0.0)), n.input(0))};
}

// Values picked from x along dim at indices: the gradient goes back to those positions (added,
// for cummax/cummin whose indices repeat). ints: {dim, keepdim, x is 0-dim}.
TensorList selection_formula(const FormulaNode& n, const Tensor& g) {
  const InputMeta& in = n.input(0);
  if (n.ints[2]) return {as_input(g.reshape({}), in)};
  const int64_t dim = n.ints[0];
  Tensor index = n.saved(0), gk = g;
  if (!n.ints[1]) {
    index = index.unsqueeze(dim);
    gk = gk.unsqueeze(dim);
  }
  const Tensor zero = zeros(in.shape, TensorOptions(g.dtype()).device(g.device()));
  return {as_input(scatter_add(zero, dim, index, gk), in)};
}

}  // namespace

void record_logsumexp(const Tensor& x, const DimList& dims, bool keepdim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("LogsumexpBackward0", logsumexp_formula, {&x}, out);
  save_dims(*node, x, dims, keepdim, "tl::logsumexp");
  node->save(x);
  node->save(out, true);
}

void record_var(bool take_sqrt, const Tensor& x, const DimList& dims, double correction,
                bool keepdim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node(take_sqrt ? "StdBackward0" : "VarBackward0", var_formula, {&x}, out);
  save_dims(*node, x, dims, keepdim, take_sqrt ? "tl::std" : "tl::var");
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (node->ints[d + 1]) count *= x.shape()[d];
  node->reals = {static_cast<double>(count) - correction, take_sqrt ? 1.0 : 0.0};
  node->save(x);
  node->save(take_sqrt ? out : Tensor(), true);
}

void record_norm(const Tensor& x, double p, const DimList& dims, bool keepdim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("LinalgVectorNormBackward0", norm_formula, {&x}, out);
  save_dims(*node, x, dims, keepdim, "tl::norm");
  node->reals = {p};
  node->save(x);
  node->save(out, true);
}

void record_prod(const Tensor& x, const DimList& dims, bool keepdim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node =
      record_node(dims.empty() ? "ProdBackward0" : "ProdBackward1", prod_formula, {&x}, out);
  save_dims(*node, x, dims, keepdim, "tl::prod");
  node->save(x);
}

void record_cumprod(const Tensor& x, int64_t dim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("CumprodBackward0", cumprod_formula, {&x}, out);
  node->ints = {dim};
  node->save(x);
  node->save(out, true);
}

void record_selection(const char* name, const Tensor& x, int64_t dim, const Tensor& indices,
                      bool keepdim, const Tensor& values) {
  if (!is_floating_point(values.dtype())) return;
  auto node = record_node(name, selection_formula, {&x}, values);
  node->ints = {dim, keepdim ? 1 : 0, x.dim() == 0 ? 1 : 0};
  node->save(indices);
}

}  // namespace tensorlet::autograd

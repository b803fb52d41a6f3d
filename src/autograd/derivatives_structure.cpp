// Derivatives of sum / mean, matmul, the view and shape ops, and to(): one formula each, with
// PyTorch's node names. A reduction's gradient is a broadcast view of the incoming one, never a
// materialized copy.
#include <algorithm>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/scan.h"
#include "tensorlet/ops/scatter.h"

namespace tensorlet::autograd {

namespace {

// The reduced dims of x (ints), normalized and sorted; all of them when the list was empty.
std::vector<int64_t> reduced_dims(const Tensor& x, const DimList& dims) {
  std::vector<int64_t> out;
  // Dim 0 or -1 of a 0-d tensor is the tensor itself: no dim to put back.
  if (x.dim() == 0) return out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(d < 0 ? d + x.dim() : d);
  std::sort(out.begin(), out.end());
  return out;
}

TensorList reduction_formula(const FormulaNode& n, const Tensor& g) {
  const InputMeta& x = n.input(0);
  const auto kind = static_cast<Reduction>(n.ints[1]);
  Tensor r = g;
  std::vector<int64_t> dims(n.ints.begin() + 2, n.ints.end());
  if (!n.ints[0])  // keepdim false: put the reduced dims back as size 1
    for (int64_t d : dims) r = r.unsqueeze(d);
  if (kind == Reduction::Mean) r = div(r, n.reals[0]);  // the count of reduced elements
  if (kind == Reduction::Extreme) {
    // Shared evenly among the elements equal to the extreme.
    Tensor y = n.saved(1);
    if (!n.ints[0])
      for (int64_t d : dims) y = y.unsqueeze(d);
    const Tensor hit = eq(n.saved(0), y).to(g.dtype());
    r = div(mul(hit, r), sum(hit, dims, true));
  }
  r = r.expand(x.shape);
  if (r.dtype() != x.dtype) r = r.to(x.dtype);
  return {r};
}

// cumsum: each input element feeds every later output, so its gradient is the reversed
// cumulative sum of g: total - cumsum(g) + g.
TensorList cumsum_formula(const FormulaNode& n, const Tensor& g) {
  const int64_t dim = n.ints[0];
  return {reduce_to(add(sub(sum(g, dim, true), cumsum(g, dim)), g), n.input(0))};
}

TensorList matmul_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor a = n.saved(0), b = n.saved(1);
  const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
  if (a_vec && b_vec)
    return {n.needs_grad(0) ? reduce_to(mul(g, b), n.input(0)) : Tensor(),
            n.needs_grad(1) ? reduce_to(mul(g, a), n.input(1)) : Tensor()};
  // As matrices: a vector a is a row [1, k], a vector b a column [k, 1].
  const Tensor a2 = a_vec ? a.unsqueeze(0) : a, b2 = b_vec ? b.unsqueeze(-1) : b;
  Tensor g2 = a_vec ? g.unsqueeze(-2) : g;
  if (b_vec) g2 = g2.unsqueeze(-1);
  // A matrix stored transposed keeps its layout (is_transposed_matrix).
  const bool matrices = a2.dim() == 2 && b2.dim() == 2;
  Tensor da, db;
  if (n.needs_grad(0)) {
    if (matrices && is_transposed_matrix(a2))
      da = matmul(b2, g2.transpose(-1, -2)).transpose(-1, -2);
    else
      da = matmul(g2, b2.transpose(-1, -2));
    if (a_vec) da = da.squeeze(-2);
    da = reduce_to(da, n.input(0));
  }
  if (n.needs_grad(1)) {
    if (matrices && is_transposed_matrix(b2))
      db = matmul(g2.transpose(-1, -2), a2).transpose(-1, -2);
    else
      db = matmul(a2.transpose(-1, -2), g2);
    if (b_vec) db = db.squeeze(-1);
    db = reduce_to(db, n.input(1));
  }
  return {da, db};
}

const char* matmul_node_name(const Tensor& a, const Tensor& b) {
  if (a.dim() == 1 && b.dim() == 1) return "DotBackward0";
  if (a.dim() == 2 && b.dim() == 1) return "MvBackward0";
  if (a.dim() == 2 && b.dim() == 2) return "MmBackward0";
  if (a.dim() == 3 && b.dim() == 3) return "BmmBackward0";
  return "MatmulBackward0";
}

TensorList view_formula(const FormulaNode& n, const Tensor& g) {
  const InputMeta& x = n.input(0);
  switch (static_cast<ViewKind>(n.ints[0])) {
    case ViewKind::Reshape:
    case ViewKind::View:
    case ViewKind::Squeeze:
      return {g.reshape(x.shape)};
    case ViewKind::Transpose:
      return {g.transpose(n.ints[1], n.ints[2])};
    case ViewKind::T:
      return {g.t()};
    case ViewKind::Permute: {
      std::vector<int64_t> inverse(n.ints.size() - 1);
      for (size_t i = 1; i < n.ints.size(); ++i) inverse[n.ints[i]] = static_cast<int64_t>(i - 1);
      return {g.permute(inverse)};
    }
    case ViewKind::Unsqueeze:
      return {g.squeeze(n.ints[1])};
    case ViewKind::Expand:
      return {reduce_to(g, x)};
    case ViewKind::Select:
    case ViewKind::Slice: {
      // Zeros with the selected part of x's shape filled from g.
      const int64_t dim = n.ints[1], start = n.ints[2], step = n.ints[3];
      Tensor r;
      if (static_cast<ViewKind>(n.ints[0]) == ViewKind::Select)
        r = embed_in_zeros(g, x.shape, [&](const Tensor& t) { return t.select(dim, start); });
      else if (g.shape()[dim] > 0)
        r = embed_in_zeros(g, x.shape, [&](const Tensor& t) {
          return t.slice(dim, start, start + (g.shape()[dim] - 1) * step + 1, step);
        });
      else
        r = zeros(x.shape, TensorOptions(g.dtype()).device(g.device()));
      return {r.dtype() == x.dtype ? r : r.to(x.dtype)};
    }
    case ViewKind::AsStrided:
      break;
  }
  return {};
}

const char* view_node_name(ViewKind kind) {
  switch (kind) {
    case ViewKind::Reshape:
    case ViewKind::View:
      return "ViewBackward0";
    case ViewKind::Transpose:
      return "TransposeBackward0";
    case ViewKind::Permute:
      return "PermuteBackward0";
    case ViewKind::Unsqueeze:
      return "UnsqueezeBackward0";
    case ViewKind::Squeeze:
      return "SqueezeBackward0";
    case ViewKind::Expand:
      return "ExpandBackward0";
    case ViewKind::T:
      return "TBackward0";
    case ViewKind::Select:
      return "SelectBackward0";
    case ViewKind::Slice:
      return "SliceBackward0";
    case ViewKind::AsStrided:
      return "AsStridedBackward0";
  }
  return "ViewBackward0";
}

// softmax: dx = y (g - sum(g y)); log_softmax: dx = g - exp(y) sum(g), along the dim.
TensorList softmax_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor y = n.saved(0);
  const int64_t dim = n.ints[0];
  Tensor dx = n.ints[1] ? sub(g, mul(exp(y), sum(g, dim, true)))
                        : mul(y, sub(g, sum(mul(g, y), dim, true)));
  return {reduce_to(dx, n.input(0))};
}

// clamp: where the value was inside the bounds (out == a; NaN gets none, as torch's >= and <=).
TensorList clamp_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor inside = eq(n.saved(1), n.saved(0));
  return {reduce_to(where(inside, g, 0.0), n.input(0))};
}

// gather / index_select: the gradient is added back at the indices it was read from.
TensorList index_formula(const FormulaNode& n, const Tensor& g) {
  const InputMeta& x = n.input(0);
  const Tensor index = n.saved(0);
  const Tensor zero = zeros(x.shape, TensorOptions(g.dtype()).device(g.device()));
  const Tensor dx =
      n.ints[1] ? scatter_add(zero, n.ints[0], index, g) : index_add(zero, n.ints[0], index, g);
  return {reduce_to(dx, x)};
}

// where: the gradient goes to a where cond holds, to b elsewhere.
TensorList where_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor cond = n.saved(0);
  TensorList d(2);
  if (n.needs_grad(0)) d[0] = reduce_to(where(cond, g, 0.0), n.input(0));
  if (n.needs_grad(1)) d[1] = reduce_to(where(cond, 0.0, g), n.input(1));
  return d;
}

// cat: each input's slice of the gradient along the dim (an empty legacy [0] input gets none).
TensorList cat_formula(const FormulaNode& n, const Tensor& g) {
  const int64_t dim = n.ints[0];
  TensorList d(n.ints.size() - 1);
  int64_t offset = 0;
  for (size_t i = 0; i + 1 < n.ints.size(); ++i) {
    const int64_t size = n.ints[i + 1];
    if (size < 0) continue;  // skipped input
    if (n.needs_grad(i)) d[i] = reduce_to(g.narrow(dim, offset, size), n.input(i));
    offset += size;
  }
  return d;
}

TensorList to_formula(const FormulaNode& n, const Tensor& g) { return {reduce_to(g, n.input(0))}; }

}  // namespace

void record_reduction(Reduction kind, const Tensor& x, const DimList& dims, bool keepdim,
                      const Tensor& out, const char* given_name) {
  if (!is_floating_point(out.dtype())) return;
  const bool all = dims.empty();
  const char* name = given_name                ? given_name
                     : kind == Reduction::Mean ? (all ? "MeanBackward0" : "MeanBackward1")
                     : kind == Reduction::Sum  ? (all ? "SumBackward0" : "SumBackward1")
                                               : "AmaxBackward0";
  auto node = record_node(name, reduction_formula, {&x}, out);
  if (kind == Reduction::Extreme) {
    node->save(x);
    node->save(out, true);
  }
  const std::vector<int64_t> reduced = reduced_dims(x, dims);
  int64_t count = 1;
  for (int64_t d : reduced) count *= x.shape()[d];
  node->ints = {keepdim ? 1 : 0, static_cast<int64_t>(kind)};
  node->ints.insert(node->ints.end(), reduced.begin(), reduced.end());
  node->reals = {static_cast<double>(count)};
}

void record_clamp(const Tensor& a, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("ClampBackward1", clamp_formula, {&a}, out);
  node->save(a);
  node->save(out, true);
}

void record_index(bool gather, const Tensor& x, int64_t dim, const Tensor& index,
                  const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node =
      record_node(gather ? "GatherBackward0" : "IndexSelectBackward0", index_formula, {&x}, out);
  node->ints = {dim, gather ? 1 : 0};
  node->save(index);
}

void record_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("WhereBackward0", where_formula,
                          {a.defined() ? &a : nullptr, b.defined() ? &b : nullptr}, out);
  node->save(cond);
}

void record_cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  auto node = record_node("CatBackward0", cat_formula, inputs, out);
  node->ints = {dim};
  // A legacy empty [0] input (skipped by cat) gets no gradient: size -1.
  for (const Tensor& t : tensors)
    node->ints.push_back(t.dim() == 1 && t.numel() == 0 && out.dim() != 1 ? -1 : t.shape()[dim]);
}

void record_softmax(bool log, const Tensor& x, int64_t dim, const Tensor& out) {
  auto node =
      record_node(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", softmax_formula, {&x}, out);
  node->ints = {dim, log ? 1 : 0};
  node->save(out, true);
}

void record_cumsum(const Tensor& x, int64_t dim, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("CumsumBackward0", cumsum_formula, {&x}, out);
  node->ints = {dim};
}

void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node(matmul_node_name(a, b), matmul_formula, {&a, &b}, out);
  node->save(a);
  node->save(b);
}

void record_view(ViewKind kind, const Tensor& x, const Tensor& out, int64_t d0, int64_t d1,
                 int64_t d2, const std::vector<int64_t>& dims) {
  if (!is_floating_point(out.dtype())) return;
  if (kind == ViewKind::AsStrided) no_derivative("tl::as_strided");
  auto node = record_node(view_node_name(kind), view_formula, {&x}, out);
  // A view (not a reshape that copied) remembers its base, for an in-place op on it later.
  if (out.storage() == x.storage()) {
    const AutogradMeta* xm = meta_of(x);
    register_view(out, xm && xm->view_base ? xm->view_base : x.impl_ptr());
  }
  node->ints = {static_cast<int64_t>(kind), d0, d1, d2};
  if (kind == ViewKind::Permute) {
    node->ints.resize(1);
    for (int64_t d : dims) node->ints.push_back(d < 0 ? d + x.dim() : d);
  }
}

namespace {
// The views' hook (tensor/autograd_hooks.h), set as the library loads.
void record_view_hook(ViewKind kind, const Tensor& x, const Tensor& out, int64_t d0, int64_t d1,
                      int64_t d2, const std::vector<int64_t>& dims) {
  if (!should_record({&x})) return;
  t_view_history = true;
  try {
    record_view(kind, x, out, d0, d1, d2, dims);
  } catch (...) {
    t_view_history = false;
    throw;
  }
  t_view_history = false;
}
[[maybe_unused]] const bool g_view_hook_set = (detail::g_record_view = record_view_hook, true);
}  // namespace

void record_to(const Tensor& x, const Tensor& out, const char* name) {
  if (!is_floating_point(out.dtype())) return;  // to an integer dtype: no gradient, as torch
  record_node(name, to_formula, {&x}, out);
}

}  // namespace tensorlet::autograd

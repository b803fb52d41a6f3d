// Derivatives of the indexing and scatter ops (take / advanced index, put, index_put, the scatter
// family, index_add / index_copy / index_fill, masked_fill / masked_select / masked_scatter), with
// PyTorch's formulas and node names. Each forward runs below autograd (its copy of self and the
// kernel writing into it record nothing) and records one node here.
#include <algorithm>
#include <string_view>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/advanced_index.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/scatter.h"
#include "tensorlet/tensor/broadcast.h"

namespace tensorlet::autograd {

namespace {

Tensor zeros_of(const InputMeta& m, const Tensor& like) {
  return zeros(m.shape, TensorOptions(like.dtype()).device(like.device()));
}

// A gradient of `part`'s shape for an input of shape m.shape that `part` covers from its start in
// every dim (gather's index may be smaller than src): zero padded.
Tensor padded(const Tensor& part, const InputMeta& m) {
  if (part.shape() == m.shape) return reduce_to(part, m);
  const Tensor r = embed_in_zeros(part, m.shape, [&](const Tensor& t) {
    Tensor view = t;
    for (int64_t d = 0; d < part.dim(); ++d) view = view.narrow(d, 0, part.shape()[d]);
    return view;
  });
  return reduce_to(r, m);
}

// ---- take, advanced index, put ---------------------------------------------------------------

// take / index: the gradient is added back at the flat positions read (repeats accumulate).
TensorList take_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor flat = n.saved(0);
  return {reduce_to(put(zeros_of(n.input(0), g), flat, g.reshape(flat.shape()), true), n.input(0))};
}

// put: self keeps the gradient except where it was overwritten (all of it with accumulate);
// source gets the gradient at the positions it was written to.
TensorList put_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor index = n.saved(0);
  const bool accumulate = n.ints[0] != 0;
  TensorList d(2);
  if (n.needs_grad(0))
    d[0] = accumulate
               ? g
               : put(g, index, zeros(index.shape(), TensorOptions(g.dtype()).device(g.device())),
                     false);
  if (n.needs_grad(1)) d[1] = reduce_to(take(g, index).reshape(n.input(1).shape), n.input(1));
  return d;
}

// ---- the scatter family ----------------------------------------------------------------------

enum class Scatter : int64_t { Assign, AssignValue, Add, Sum, Mean, Amax, Amin };

// ints: {kind, dim, include_self}; saved: {index, self, src, result} (the last three for amax /
// amin and mean only).
TensorList scatter_formula(const FormulaNode& n, const Tensor& g) {
  const auto kind = static_cast<Scatter>(n.ints[0]);
  const int64_t dim = n.ints[1];
  const bool include_self = n.ints[2] != 0;
  const Tensor index = n.saved(0);
  TensorList d(2);
  if (index.numel() == 0) {
    // Nothing was scattered (the forward checks nothing about an empty index, as torch's): the
    // result is self, and src got no gradient.
    if (n.needs_grad(0)) d[0] = reduce_to(g, n.input(0));
    if (n.needs_grad(1)) d[1] = zeros_of(n.input(1), g);
    return d;
  }
  switch (kind) {
    case Scatter::Assign:
    case Scatter::AssignValue:
      if (n.needs_grad(0)) d[0] = reduce_to(scatter(g, dim, index, 0.0), n.input(0));
      if (kind == Scatter::Assign && n.needs_grad(1))
        d[1] = padded(gather(g, dim, index), n.input(1));
      return d;
    case Scatter::Add:
    case Scatter::Sum:
      if (n.needs_grad(0))
        d[0] = reduce_to(include_self ? g : scatter(g, dim, index, 0.0), n.input(0));
      if (n.needs_grad(1)) d[1] = padded(gather(g, dim, index), n.input(1));
      return d;
    case Scatter::Mean: {
      // Each element's gradient divided by the count of values averaged into it.
      const TensorOptions options = TensorOptions(g.dtype()).device(g.device());
      Tensor count =
          include_self ? ones(n.input(0).shape, options) : zeros(n.input(0).shape, options);
      count = scatter_add(count, dim, index, ones(index.shape(), options));
      const Tensor shared = div(g, where(eq(count, 0.0), 1.0, count));
      if (n.needs_grad(0))
        d[0] = reduce_to(include_self ? shared : scatter(shared, dim, index, 0.0), n.input(0));
      if (n.needs_grad(1)) d[1] = padded(gather(shared, dim, index), n.input(1));
      return d;
    }
    case Scatter::Amax:
    case Scatter::Amin: {
      // Shared evenly among self and the values equal to the result (torch's formula).
      const Tensor self = n.saved(1), src = n.saved(2), result = n.saved(3);
      const Tensor src_part = src.shape() == index.shape() ? src : [&] {
        Tensor v = src;
        for (int64_t k = 0; k < index.dim(); ++k) v = v.narrow(k, 0, index.shape()[k]);
        return v;
      }();
      Tensor self_is = eq(self, result).to(g.dtype());
      if (!include_self) self_is = scatter(self_is, dim, index, 0.0);
      const Tensor src_is = eq(src_part, gather(result, dim, index)).to(g.dtype());
      const Tensor count = scatter_add(self_is, dim, index, src_is);
      const Tensor shared = div(g, count);
      if (n.needs_grad(0)) d[0] = reduce_to(mul(self_is, shared), n.input(0));
      if (n.needs_grad(1)) d[1] = padded(mul(src_is, gather(shared, dim, index)), n.input(1));
      return d;
    }
  }
  return d;
}

const char* scatter_node_name(Scatter kind) {
  switch (kind) {
    case Scatter::Assign:
      return "ScatterBackward0";
    case Scatter::AssignValue:
      return "ScatterBackward1";
    case Scatter::Add:
      return "ScatterAddBackward0";
    default:
      return "ScatterReduceBackward0";
  }
}

// ---- index_add / index_copy / index_fill -----------------------------------------------------

// ints: {kind (0 add, 1 copy, 2 fill), dim}; reals: {alpha}; saved: {index}.
TensorList index_add_formula(const FormulaNode& n, const Tensor& g) {
  const int64_t kind = n.ints[0], dim = n.ints[1];
  const Tensor index = n.saved(0);
  TensorList d(2);
  if (n.needs_grad(0)) d[0] = reduce_to(kind == 0 ? g : index_fill(g, dim, index, 0.0), n.input(0));
  if (kind != 2 && n.needs_grad(1)) {
    Tensor s = index_select(g, dim, index);
    if (kind == 0 && n.reals[0] != 1) s = mul(s, n.reals[0]);
    d[1] = reduce_to(s.reshape(n.input(1).shape), n.input(1));
  }
  return d;
}

// ---- masks -----------------------------------------------------------------------------------

// ints: {kind (0 masked_fill, 1 masked_scatter, 2 masked_select)}; saved: {mask}.
TensorList mask_formula(const FormulaNode& n, const Tensor& g) {
  const Tensor mask = n.saved(0);
  TensorList d(2);
  switch (n.ints[0]) {
    case 0:  // masked_fill: the value's gradient is the masked part's sum
      if (n.needs_grad(0)) d[0] = reduce_to(where(mask, 0.0, g), n.input(0));
      if (n.needs_grad(1)) d[1] = reduce_to(sum(where(mask, g, 0.0)), n.input(1));
      break;
    case 1: {  // masked_scatter: source's first elements went to the true places in order
      if (n.needs_grad(0)) d[0] = reduce_to(where(mask, 0.0, g), n.input(0));
      if (n.needs_grad(1)) {
        const InputMeta& src = n.input(1);
        Tensor picked = masked_select(g, mask);
        const int64_t rest = src.shape.numel() - picked.numel();
        if (rest > 0)
          picked = cat({picked, zeros({rest}, TensorOptions(g.dtype()).device(g.device()))});
        d[1] = reduce_to(picked.reshape(src.shape), src);
      }
      break;
    }
    default: {  // masked_select: the selected elements back at the true places
      const InputMeta& x = n.input(0);
      const Shape shape = broadcast_shapes(x.shape, mask.shape(), "tl::masked_select");
      const Tensor zero = zeros(shape, TensorOptions(g.dtype()).device(g.device()));
      d[0] = reduce_to(masked_scatter(zero, mask.expand(shape), g), x);
      break;
    }
  }
  return d;
}

// ---- index_put -------------------------------------------------------------------------------

// index_put keeps its items (index tensors, slices) for backward, which FormulaNode's ints do not
// hold: a node of its own.
class IndexPutNode final : public Node {
 public:
  IndexPutNode(std::vector<TensorIndex> items, bool accumulate, InputMeta self, InputMeta values)
      : items_(std::move(items)), accumulate_(accumulate), self_(self), values_(values) {}
  std::string name() const override { return "IndexPutBackward0"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& g = grads[0];
    TensorList d(next_edges().size());
    if (next_edges()[0].is_valid())
      d[0] = reduce_to(accumulate_ ? g : index_put(g, items_, Scalar(0.0), false), self_);
    if (d.size() > 1 && next_edges()[1].is_valid()) {
      // The values were broadcast to the indexed shape after their leading 1s were dropped.
      Shape kept;
      int64_t lead = 0;
      while (lead < values_.shape.size() && values_.shape[lead] == 1) ++lead;
      for (int64_t k = lead; k < values_.shape.size(); ++k) kept.push_back(values_.shape[k]);
      const Tensor picked = index(g, items_);
      d[1] = reduce_to(
          reduce_to(picked, InputMeta{kept, values_.dtype, values_.device}).reshape(values_.shape),
          values_);
    }
    return d;
  }
  void release_variables() override { items_.clear(); }

 private:
  std::vector<TensorIndex> items_;
  bool accumulate_;
  InputMeta self_, values_;
};

}  // namespace

void record_take(bool advanced_index, const Tensor& x, const Tensor& flat, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node =
      record_node(advanced_index ? "IndexBackward0" : "TakeBackward0", take_formula, {&x}, out);
  node->save(flat);
}

void record_put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate,
                const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto node = record_node("PutBackward0", put_formula, {&self, &source}, out);
  node->ints = {accumulate ? 1 : 0};
  node->save(index);
}

void record_scatter(const char* reduce, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor* src, bool include_self, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  const std::string_view r = reduce;
  Scatter kind = !src          ? Scatter::AssignValue
                 : r == ""     ? Scatter::Assign
                 : r == "add"  ? Scatter::Add
                 : r == "sum"  ? Scatter::Sum
                 : r == "mean" ? Scatter::Mean
                 : r == "amax" ? Scatter::Amax
                 : r == "amin"
                     ? Scatter::Amin
                     : (no_derivative("tl::scatter_reduce (reduce \"prod\")"), Scatter::Sum);
  auto node = record_node(scatter_node_name(kind), scatter_formula, {&self, src}, out);
  node->ints = {static_cast<int64_t>(kind), dim < 0 ? dim + std::max<int64_t>(self.dim(), 1) : dim,
                include_self ? 1 : 0};
  node->save(index);
  if (kind == Scatter::Amax || kind == Scatter::Amin) {
    node->save(self);
    node->save(*src);
    node->save(out, true);
  }
}

void record_index_add(int kind, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor* source, double alpha, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  static const char* const names[] = {"IndexAddBackward0", "IndexCopyBackward0",
                                      "IndexFillBackward0"};
  auto node = record_node(names[kind], index_add_formula, {&self, source}, out);
  node->ints = {kind, dim < 0 ? dim + std::max<int64_t>(self.dim(), 1) : dim};
  node->reals = {alpha};
  node->save(index);
}

void record_masked(int kind, const Tensor& self, const Tensor& mask, const Tensor* other,
                   const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  static const char* const names[] = {"MaskedFillBackward0", "MaskedScatterBackward0",
                                      "MaskedSelectBackward0"};
  const char* name = kind == 0 && other ? "MaskedFillBackward1" : names[kind];
  auto node = record_node(name, mask_formula, {&self, other}, out);
  node->ints = {kind};
  node->save(mask);
}

void record_index_put(const Tensor& self, const std::vector<TensorIndex>& items,
                      const Tensor* values, bool accumulate, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  auto meta = [](const Tensor* t) {
    return t ? InputMeta{t->shape(), t->dtype(), t->device()} : InputMeta{};
  };
  auto node = std::make_shared<IndexPutNode>(items, accumulate, meta(&self), meta(values));
  std::vector<Edge> edges{gradient_edge(self)};
  if (values) edges.push_back(gradient_edge(*values));
  node->set_next_edges(std::move(edges));
  set_history(out, node);
}

}  // namespace tensorlet::autograd

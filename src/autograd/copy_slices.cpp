// CopySlices (torch's name): the base's node after an in-place op on one of its views.
#include "tensorlet/autograd/copy_slices.h"

#include <utility>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/advanced_index.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::autograd {

CopySlices::CopySlices(InputMeta base, ViewGeometry view, std::shared_ptr<Node> fn,
                       std::vector<bool> self_slots, const Edge& base_edge)
    : base_(std::move(base)),
      view_(std::move(view)),
      fn_(std::move(fn)),
      self_slots_(std::move(self_slots)) {
  // fn_ also runs on its own when a second derivative reaches the view's saved output through
  // it: its saved tensors stay until the backward ends (and this node, which frees them, too).
  set_release_at_end();
  if (fn_) fn_->set_release_at_end();
  std::vector<Edge> edges{base_edge};
  if (fn_)
    for (size_t k = 0; k < fn_->next_edges().size(); ++k)
      if (!self_slots_[k]) edges.push_back(fn_->next_edges()[k]);
  set_next_edges(std::move(edges));
}

// The op's gradient of the view's part `slice`: {the view's own gradient (undefined when fn_
// gives none), the other inputs' gradients in next_edges order}.
std::pair<Tensor, TensorList> CopySlices::through_fn(const Tensor& slice) const {
  TensorList others;
  Tensor self_grad;
  if (!fn_) return {self_grad, others};
  TensorList r = fn_->apply({slice});
  for (size_t k = 0; k < r.size(); ++k) {
    if (!self_slots_[k]) {
      others.push_back(std::move(r[k]));
      continue;
    }
    if (r[k].defined()) self_grad = self_grad.defined() ? add(self_grad, r[k]) : r[k];
  }
  return {self_grad, others};
}

TensorList CopySlices::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  if (GradMode::is_enabled()) return recorded(g);
  // The base's gradient, with the view's part replaced by what the op's backward makes of it.
  Tensor result = g.is_contiguous() ? g.clone() : g.contiguous();
  Tensor slice = make_view(result, view_.shape, view_.strides, result.offset() + view_.offset);
  auto [self_grad, others] = through_fn(slice.clone());
  if (self_grad.defined())
    slice.copy_(self_grad);
  else
    slice.fill_(0);  // the view was overwritten with values that need no gradient from it
  TensorList out{result};
  for (Tensor& o : others) out.push_back(std::move(o));
  return out;
}

// create_graph: the same with recorded ops, the view's part read with take and written with an
// out-of-place put at its flat positions in the (contiguous) base, so a second backward goes
// through both.
TensorList CopySlices::recorded(const Tensor& g) const {
  const Tensor all =
      arange(base_.shape.numel(), TensorOptions(kInt64).device(g.device())).view(base_.shape);
  const Tensor positions =
      make_view(all, view_.shape, view_.strides, all.offset() + view_.offset).contiguous();
  auto [self_grad, others] = through_fn(take(g, positions));
  if (!self_grad.defined())
    self_grad = zeros(view_.shape, TensorOptions(g.dtype()).device(g.device()));
  TensorList out{put(g, positions, self_grad)};
  for (Tensor& o : others) out.push_back(std::move(o));
  return out;
}

namespace {

// A view of the base at a fixed geometry: ints {ndim, shape..., strides..., offset}.
TensorList as_strided_view_formula(const FormulaNode& n, const Tensor& g) {
  const auto nd = static_cast<size_t>(n.ints[0]);
  const Shape shape(std::vector<int64_t>(n.ints.begin() + 1, n.ints.begin() + 1 + nd));
  const Shape strides(std::vector<int64_t>(n.ints.begin() + 1 + nd, n.ints.begin() + 1 + 2 * nd));
  const int64_t offset = n.ints[1 + 2 * nd];
  return {embed_in_zeros(g, n.input(0).shape, [&](const Tensor& t) {
    return make_view(t, shape, strides, t.offset() + offset);
  })};
}

}  // namespace

void rebase_view(Tensor& self, const Tensor& base, const std::shared_ptr<Node>& fn,
                 const Edge& self_edge) {
  const ViewGeometry view{self.shape(), self.strides(), self.offset() - base.offset()};
  std::vector<bool> self_slots;
  if (fn)
    for (const Edge& e : fn->next_edges())
      self_slots.push_back(self_edge.is_valid() && e.function == self_edge.function &&
                           e.input_nr == self_edge.input_nr);
  auto copy_slices =
      std::make_shared<CopySlices>(InputMeta{base.shape(), base.dtype(), base.device()}, view, fn,
                                   std::move(self_slots), gradient_edge(base));
  AutogradMeta& bm = meta_for(base);
  if (bm.retains_grad && bm.grad_fn) bm.grad_fn->forget_retained(&base.impl());
  set_history(base, copy_slices);
  if (bm.retains_grad) copy_slices->retain_output(bm.output_nr, base.impl_ptr());

  refresh_view_history(self);
}

void refresh_view_history(const Tensor& view) {
  AutogradMeta& m = meta_for(view);
  const Tensor base(m.view_base);
  auto node = std::make_shared<FormulaNode>("AsStridedBackward0", as_strided_view_formula);
  node->add_input(&base);
  node->set_next_edges({gradient_edge(base)});
  node->ints.push_back(view.dim());
  for (int64_t d : view.shape()) node->ints.push_back(d);
  for (int64_t s : view.strides()) node->ints.push_back(s);
  node->ints.push_back(view.offset() - base.offset());
  if (m.retains_grad && m.grad_fn) m.grad_fn->forget_retained(&view.impl());
  t_view_history = true;  // not the enclosing op's node
  set_history(view, node);
  t_view_history = false;
  m.view_version = view.storage()->version();
  if (m.retains_grad) node->retain_output(m.output_nr, view.impl_ptr());
}

}  // namespace tensorlet::autograd

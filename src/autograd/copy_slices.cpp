// CopySlices (torch's name): the base's node after an in-place op on one of its views.
#include "tensorlet/autograd/copy_slices.h"

#include <utility>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/engine.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/ops/elementwise.h"

namespace tensorlet::autograd {

CopySlices::CopySlices(InputMeta base, ViewGeometry view, std::shared_ptr<Node> fn,
                       std::vector<bool> self_slots, const Edge& base_edge)
    : base_(std::move(base)),
      view_(std::move(view)),
      fn_(std::move(fn)),
      self_slots_(std::move(self_slots)) {
  std::vector<Edge> edges{base_edge};
  if (fn_)
    for (size_t k = 0; k < fn_->next_edges().size(); ++k)
      if (!self_slots_[k]) edges.push_back(fn_->next_edges()[k]);
  set_next_edges(std::move(edges));
}

TensorList CopySlices::apply(TensorList&& grads) {
  if (GradMode::is_enabled())
    fail<Error>(current_backward_api(),
                "create_graph through an in-place op on a view (CopySlices) is not supported "
                "yet: write the view's values out of place (e.g. with cat) to differentiate twice");
  // The base's gradient, with the view's part replaced by what the op's backward makes of it.
  const Tensor& g = grads[0];
  Tensor result = g.is_contiguous() ? g.clone() : g.contiguous();
  Tensor slice = make_view(result, view_.shape, view_.strides, result.offset() + view_.offset);
  TensorList out{result};
  if (!fn_) {  // the view was overwritten with values that need no gradient
    slice.fill_(0);
    return out;
  }
  TensorList r = fn_->apply({slice.clone()});
  Tensor self_grad;
  for (size_t k = 0; k < r.size(); ++k) {
    if (!self_slots_[k]) {
      out.push_back(std::move(r[k]));
      continue;
    }
    if (r[k].defined()) self_grad = self_grad.defined() ? add(self_grad, r[k]) : r[k];
  }
  if (self_grad.defined())
    slice.copy_(self_grad);
  else
    slice.fill_(0);
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

// In-place writes: the version counter, torch's leaf rule, and the differentiable in-place path.
#include "tensorlet/autograd/inplace.h"

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/copy_slices.h"
#include "tensorlet/tensor/inference_mode.h"

namespace tensorlet::autograd {

void check_inplace(const char* op, const Tensor& self,
                   std::initializer_list<const Tensor*> others) {
  bool involved = requires_grad(self);
  for (const Tensor* t : others) involved |= t && requires_grad(*t);
  if (involved && GradMode::is_enabled()) {
    if (requires_grad(self)) {
      if (self.is_leaf())
        fail<Error>(op,
                    "a leaf Variable that requires grad is being used in an in-place operation.");
      fail<Error>(op,
                  "this in-place op has no derivative yet and its tensor is part of an autograd "
                  "graph; use the out-of-place op");
    }
    for (const Tensor* t : others)
      if (t && requires_grad(*t))
        fail<Error>(op,
                    "this in-place op has no derivative yet and reads a tensor that requires "
                    "grad; use the out-of-place op");
  }
  if (self.is_inference() && !InferenceMode::is_enabled())
    fail<Error>(op,
                "Inplace update to inference tensor outside InferenceMode is not allowed. You can "
                "make a clone to get a normal tensor before doing inplace update.");
  self.storage()->bump_version();
}

namespace {

// A view that knows its base: an in-place write to it rebases the base.
const AutogradMeta* rebased_view_meta(const Tensor& self) {
  const AutogradMeta* m = meta_of(self);
  return m && m->view_base ? m : nullptr;
}

}  // namespace

void check_inplace_differentiable(const char* op, const Tensor& self) {
  if (requires_grad(self) && self.is_leaf())
    fail<Error>(op, "a leaf Variable that requires grad is being used in an in-place operation.");
  // A view: its base is rebased (CopySlices), and every other view of the base makes its
  // history again from the base's when next used (the storage's version tells it the memory
  // changed). A base kept in a layout other than contiguous is not handled yet.
  if (const AutogradMeta* m = rebased_view_meta(self)) {
    const Tensor base(m->view_base);
    if (base.is_leaf() && requires_grad(base))
      fail<Error>(op,
                  "a view of a leaf Variable that requires grad is being used in an in-place "
                  "operation.");
    if (base.is_contiguous()) return;
  }
  // Another impl on the same storage: the base's own views make their history again from the
  // base's when next used (the version tells them); any other one (a detach()ed alias, a view of
  // a non-contiguous base, an output saved for backward) would not see this write.
  const long sharers = self.impl().storage.use_count() - 1;
  if (sharers == 0) return;
  if (!rebased_view_meta(self) && self.is_contiguous() &&
      static_cast<size_t>(sharers) == live_views_of(self))
    return;
  fail<Error>(op,
              "an in-place op that autograd records on a tensor sharing its memory with another "
              "that is not its differentiable view (a detach()ed alias, a view of a "
              "non-contiguous base, or an output saved for backward) is not supported yet: write "
              "it out of place (y = y + ...) or on a clone()");
}

void commit_inplace(Tensor& self, const Tensor& result) {
  const std::shared_ptr<Node> node = result.grad_fn();
  const Edge self_edge = gradient_edge(self);
  const Storage* own = self.storage().get();
  // The node read self's old value: keep a copy of it (recorded, so it keeps self's history for a
  // create_graph backward) before the write below changes it.
  if (node && node->saves(own)) node->rebind_saved(own, self.clone());
  {
    NoGradGuard below;
    self.copy_(result);
  }
  if (const AutogradMeta* m = rebased_view_meta(self)) {
    rebase_view(self, Tensor(m->view_base), node, self_edge);
    return;
  }
  if (!node) {
    end_history(self);
    return;
  }
  // A saved output stays in result's memory (not rebound to self): a later in-place write to self
  // then leaves it intact, and self shares its memory with nothing.
  AutogradMeta& m = meta_for(self);
  if (m.retains_grad && m.grad_fn) m.grad_fn->forget_retained(&self.impl());
  m.grad_fn = node;
  m.output_nr = result.output_nr();
  m.requires_grad = false;
  if (m.retains_grad) node->retain_output(m.output_nr, self.impl_ptr());
}

void commit_written(Tensor& self, const std::shared_ptr<Node>& node, const Edge& self_edge) {
  if (const AutogradMeta* m = rebased_view_meta(self)) {
    rebase_view(self, Tensor(m->view_base), node, self_edge);
    return;
  }
  if (!node) end_history(self);
}

void end_history(Tensor& self) {
  AutogradMeta* m = meta_of(self);
  if (!m || !m->grad_fn) return;
  if (m->retains_grad) m->grad_fn->forget_retained(&self.impl());
  m->grad_fn.reset();
  m->output_nr = 0;
  m->retains_grad = false;
}

}  // namespace tensorlet::autograd

// An in-place op on a view rebases the view's base, as torch's CopySlices: the base's gradient
// passes through unchanged outside the view, and inside it goes through the op's backward.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tensorlet/autograd/node.h"

namespace tensorlet::autograd {

// The geometry of a view inside its (contiguous) base's memory.
struct ViewGeometry {
  Shape shape, strides;
  int64_t offset = 0;  // from the base's first element
};

// The base's new grad_fn after `fn` (the recorded out-of-place op, null where the written values
// need no gradient) wrote a view of it. next_edges: the base's previous history, then fn's edges
// other than the view's own (`self_slots`: which of fn's inputs were the view).
class CopySlices final : public Node {
 public:
  CopySlices(InputMeta base, ViewGeometry view, std::shared_ptr<Node> fn,
             std::vector<bool> self_slots, const Edge& base_edge);
  std::string name() const override { return "CopySlices"; }
  TensorList apply(TensorList&& grads) override;
  void release_variables() override {
    if (fn_) fn_->release_variables();
  }

 private:
  std::pair<Tensor, TensorList> through_fn(const Tensor& slice) const;
  TensorList recorded(const Tensor& g) const;

  InputMeta base_;
  ViewGeometry view_;
  std::shared_ptr<Node> fn_;
  std::vector<bool> self_slots_;
};

// Rebases after an in-place op wrote `self`, a view of `base` (commit_inplace's view case):
// `fn` is the node of the out-of-place result (or null), `self_edge` self's gradient edge before
// the write. The base gets a CopySlices, self an AsStridedBackward0 of the rebased base.
void rebase_view(Tensor& self, const Tensor& base, const std::shared_ptr<Node>& fn,
                 const Edge& self_edge);

}  // namespace tensorlet::autograd

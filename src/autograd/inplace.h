// In-place writes and autograd: the check every in-place write passes (ops/out_arg.h's
// check_writable calls it), and the differentiable form of the in-place ops that have one.
#pragma once

#include <initializer_list>

#include "tensorlet/autograd/node.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// `self` is about to be written in place by `op` (reading `others`), outside the differentiable
// path below: a leaf that requires grad is an Error in grad mode (torch's rule), and so is a write
// into or from a tensor in a graph, for the in-place ops without a derivative. Bumps self's
// version counter.
void check_inplace(const char* op, const Tensor& self,
                   std::initializer_list<const Tensor*> others = {});

// The in-place ops with a derivative (add_, mul_, the unary ones, copy_, ...) take this path when
// autograd records them (grad mode on, self or an operand requires grad):
//   1. check_inplace_differentiable(op, self) before anything changes: torch's leaf rule, and a
//      refusal when self shares its memory with another tensor whose history would not see the
//      write, except a view whose contiguous base is the only other tensor on that memory;
//   2. the op computed out of place, recorded as usual (`result`);
//   3. commit_inplace(self, result): result's values written into self, and self takes result's
//      history (torch rebases self's grad_fn the same way); a view's base is rebased instead
//      (autograd/copy_slices.h: the base's node becomes CopySlices, the view an
//      AsStridedBackward0 of it). What result's node saved of self's old value is kept (a
//      clone); a saved output stays in result's memory.
void check_inplace_differentiable(const char* op, const Tensor& self);
void commit_inplace(Tensor& self, const Tensor& result);
// self was written by copy_ or fill_, which set its history themselves: `node` the node of the
// values written (null: they need no gradient), `self_edge` self's gradient edge before the
// write. A view's base is rebased; otherwise, without a node, self's history ends.
void commit_written(Tensor& self, const std::shared_ptr<Node>& node, const Edge& self_edge);
// self was overwritten with values that do not depend on any tensor that requires grad (fill_,
// zero_, copy_ from a constant): its history ends there.
void end_history(Tensor& self);

}  // namespace tensorlet::autograd

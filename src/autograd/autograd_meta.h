// A tensor's autograd state, and the helpers op front-ends use to record their node.
#pragma once

#include <initializer_list>
#include <memory>
#include <mutex>
#include <vector>

#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/autograd/hooks.h"
#include "tensorlet/autograd/node.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

struct AutogradMeta {
  bool requires_grad = false;  // a leaf's flag; a non-leaf requires grad through its grad_fn
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;         // null for a leaf
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad, while a graph holds it
  uint32_t output_nr = 0;                // which output of grad_fn
  std::shared_ptr<HookList> hooks;       // register_hook's (a non-leaf's grad_fn shares them)
  std::shared_ptr<HookList> post_accumulate_hooks;  // a leaf's, run after grad() was updated
  // A differentiable view's base (the tensor owning the memory, never itself a view): an in-place
  // op on the view rebases the base's history (autograd/copy_slices.h).
  std::shared_ptr<TensorImpl> view_base;
  // The storage version grad_fn was made at: after a write into the base's memory (through the
  // base or another view) the view's history is made again from the base's (as torch's).
  uint32_t view_version = 0;
  // A base's differentiable views, alive or expired (pruned as the list grows): a write to the
  // base is allowed when every other tensor on its memory is one of them (autograd/inplace.cpp).
  std::vector<std::weak_ptr<TensorImpl>> views;
  size_t views_prune_at = 8;
  // Guards a leaf's accumulator and grad(): backwards on several threads may share a leaf.
  std::mutex mutex;
};

inline AutogradMeta* meta_of(const Tensor& t) {
  return t.defined() ? t.impl().autograd.get() : nullptr;
}
// The tensor's state, made on first use.
AutogradMeta& meta_for(const Tensor& t);

inline bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_of(t);
  return m && (m->requires_grad || m->grad_fn);
}

// True when an op with these inputs records a node: grad mode is on and one of them requires
// grad. The common case (no input was ever seen by autograd) is a load per input.
inline bool should_record(std::initializer_list<const Tensor*> inputs) {
  // The pointers first: grad mode is thread-local, which costs a call in a shared library.
  for (const Tensor* t : inputs)
    if (t && requires_grad(*t)) return GradMode::is_enabled();
  return false;
}

inline bool any_requires_grad(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors)
    if (requires_grad(t)) return GradMode::is_enabled();
  return false;
}

// Makes `view` (on base's memory) a differentiable view of `base`, the root base: it remembers
// the base, and the base lists it.
void register_view(const Tensor& view, const std::shared_ptr<TensorImpl>& base);
// How many tensors of base's registered views are alive on base's memory.
size_t live_views_of(const Tensor& base);

// A view whose base's memory was written since its history was made gets a new one: an
// AsStridedBackward0 of the base's current history (autograd/copy_slices.cpp).
void refresh_view_history(const Tensor& view);
inline void refresh_if_stale(AutogradMeta& m, const Tensor& t) {
  if (m.view_base && m.view_version != t.storage()->version()) refresh_view_history(t);
}

// Where a gradient for `t` goes: its grad_fn's input, its leaf accumulator, or nowhere.
Edge gradient_edge(const Tensor& t);
// The edges of a node's inputs, in order (a null pointer: an input that is not a tensor).
std::vector<Edge> collect_next_edges(std::initializer_list<const Tensor*> inputs);
// Set while a view (made outside any op scope) records its node: set_history then leaves the
// profiler's enclosing op untagged, since that op did not make the node.
inline thread_local bool t_view_history = false;

// Makes `output` the next output of `node`: its grad_fn, output_nr and the node's metadata.
void set_history(const Tensor& output, const std::shared_ptr<Node>& node);

}  // namespace tensorlet::autograd

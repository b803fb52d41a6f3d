// Custom Functions: the context's bookkeeping, the outputs' history (torch's _wrap_outputs) and
// the node running the user's backward.
#include "tensorlet/autograd/function.h"

#include <cxxabi.h>

#include <cstdlib>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/engine.h"
#include "tensorlet/ops/factories.h"

namespace tensorlet::autograd {

namespace {

const char* const kApply = "tl::autograd::Function::apply";

bool contains(const std::unordered_set<const TensorImpl*>& set, const Tensor& t) {
  return t.defined() && set.count(&t.impl()) != 0;
}

}  // namespace

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_inputs_.clear();
  for (const Tensor& t : inputs)
    if (t.defined()) dirty_inputs_.insert(&t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.clear();
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(&t.impl());
}

const std::unordered_set<const TensorImpl*>& AutogradContext::get_and_bump_dirty() const {
  // forward may have written through a raw kernel, which no version counter saw.
  for (const TensorImpl* impl : dirty_inputs_) impl->storage->bump_version();
  return dirty_inputs_;
}

variable_list AutogradContext::get_saved_variables() const {
  if (has_freed_buffers_)
    fail<Error>(current_backward_api(),
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call backward() or autograd::grad(). Specify "
                "retain_graph=true if you need to backward through the graph a second time");
  variable_list saved;
  const std::shared_ptr<Node> node = grad_fn_.lock();
  if (!node) return saved;  // nothing recorded: nothing was saved
  saved.reserve(saved_variables_.size());
  for (const SavedVariable& s : saved_variables_) saved.push_back(s.unpack(*node));
  return saved;
}

bool AutogradContext::needs_input_grad(size_t index) const {
  const std::shared_ptr<Node> node = grad_fn_.lock();
  if (!node || index >= node->next_edges().size()) return false;
  return node->next_edges()[index].is_valid();
}

bool FunctionNode::begin(const variable_list& inputs) {
  if (!any_requires_grad(inputs)) return false;
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
  set_next_edges(std::move(edges));
  ctx.grad_fn_ = shared_from_this();
  return true;
}

variable_list FunctionNode::finish(bool recording, const variable_list& inputs,
                                   variable_list outputs) {
  std::unordered_set<const TensorImpl*> input_impls;
  for (const Tensor& t : inputs) input_impls.insert(&t.impl());
  const auto& dirty = ctx.get_and_bump_dirty();
  for (const TensorImpl* d : dirty) {
    bool returned = false;
    for (const Tensor& out : outputs) returned |= out.defined() && &out.impl() == d;
    if (!returned)
      fail<Error>(kApply, name_,
                  ": a tensor marked dirty (mark_dirty) must be returned as an output of forward");
  }
  for (Tensor& out : outputs) {
    const bool is_input = contains(input_impls, out);
    const bool is_modified = contains(dirty, out);
    if (!recording) {
      // An input handed back unchanged comes out as an alias (a new tensor), as torch's.
      if (is_input && !is_modified) out = out.detach();
      continue;
    }
    if (!out.defined()) {
      add_input_metadata(InputMeta{});
      continue;
    }
    const bool differentiable =
        !contains(ctx.non_differentiable_, out) && is_floating_point(out.dtype());
    if (!differentiable) {
      add_input_metadata(out);  // its gradient slot (zeros when materialized)
      if (is_input && !is_modified)
        out = out.detach();
      else if (!is_input && meta_of(out))
        out.detach_();
      continue;
    }
    if (is_modified) {
      AutogradMeta* m = meta_of(out);
      if (out.requires_grad() && out.is_leaf())
        fail<Error>(kApply, name_,
                    ": a leaf Variable that requires grad has been used in an in-place operation.");
      // Without view tracking another alias of the memory would keep a stale graph: refused
      // until in-place ops on graph tensors are differentiable.
      if (out.requires_grad() && out.storage().use_count() > 1)
        fail<Error>(kApply, name_,
                    ": an input marked dirty shares its memory with another tensor (a view, or a "
                    "tensor saved for backward); in-place writes to such tensors are not "
                    "differentiable yet: clone() it first");
      if (m) {
        m->grad = Tensor();  // torch resets the grad and hooks of a rebased tensor
        m->hooks.reset();
        m->retains_grad = false;
      }
      set_history(out, shared_from_this());
    } else if (is_input) {
      Tensor alias = out.detach();
      set_history(alias, shared_from_this());
      out = std::move(alias);
    } else {
      set_history(out, shared_from_this());
    }
  }
  if (recording) {
    for (const Tensor& t : ctx.to_save_) {
      if (!t.defined()) {
        ctx.saved_variables_.emplace_back();
        continue;
      }
      // An output is saved without its history (the node would own itself).
      ctx.saved_variables_.emplace_back(t, t.grad_fn().get() == this,
                                        "tl::autograd::AutogradContext::save_for_backward");
    }
  }
  ctx.to_save_.clear();
  return outputs;
}

TensorList FunctionNode::apply(TensorList&& grads) {
  std::lock_guard<std::mutex> lock(mutex_);
  variable_list backward_inputs;
  backward_inputs.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined() || !ctx.materialize_grads_) {
      backward_inputs.push_back(std::move(grads[i]));
      continue;
    }
    const InputMeta& m = input_meta(i);
    backward_inputs.push_back(zeros(m.shape, TensorOptions(m.dtype).device(m.device)));
  }
  variable_list outputs = backward_(&ctx, std::move(backward_inputs));
  const size_t num_args = is_variable_input.size();
  const size_t num_tensors = next_edges().size();
  // Extra trailing undefined gradients are fine, as in LibTorch.
  if (outputs.size() > num_args) {
    bool all_undefined = true;
    for (size_t i = num_args; i < outputs.size(); ++i) all_undefined &= !outputs[i].defined();
    if (all_undefined) outputs.resize(num_args);
  }
  if (outputs.size() == num_args) {
    TensorList results;
    results.reserve(num_tensors);
    for (size_t i = 0; i < num_args; ++i) {
      if (is_variable_input[i]) {
        results.push_back(std::move(outputs[i]));
      } else if (outputs[i].defined()) {
        fail<Error>(current_backward_api(), "function ", name_,
                    " returned a gradient that is defined at position ", i + 1,
                    ", but the corresponding forward input was not a Variable");
      }
    }
    return results;
  }
  if (outputs.size() == num_tensors) return outputs;
  if (num_tensors == num_args)
    fail<Error>(current_backward_api(), "function ", name_,
                " returned an incorrect number of gradients (expected ", num_args, ", got ",
                outputs.size(), ")");
  fail<Error>(current_backward_api(), "function ", name_,
              " returned an incorrect number of gradients (expected ", num_args,
              ", one per forward argument, or ", num_tensors, ", one per tensor argument; got ",
              outputs.size(), ")");
}

void FunctionNode::release_variables() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (SavedVariable& s : ctx.saved_variables_) s.reset();
  ctx.has_freed_buffers_ = true;
}

namespace detail {

std::string function_node_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string full = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  // The last component outside template arguments: "(anonymous namespace)::Add2" -> "Add2".
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    if (full[i] == '<') ++depth;
    if (full[i] == '>') --depth;
    if (depth == 0 && full.compare(i, 2, "::") == 0) start = i + 2;
  }
  return full.substr(start) + "Backward";
}

}  // namespace detail

}  // namespace tensorlet::autograd

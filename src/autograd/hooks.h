// Tensor hooks: the lists register_hook and register_post_accumulate_grad_hook add to, and running
// them (a replacement gradient must keep the gradient's shape, dtype and device).
#pragma once

#include <functional>
#include <vector>

#include "tensorlet/tensor/hook_handle.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// One tensor's hooks in registration order. A removed hook leaves an empty slot, so the positions
// LibTorch's remove_hook(pos) takes stay valid.
struct HookList {
  std::vector<std::function<Tensor(const Tensor&)>> hooks;
};

// Appends fn to *list (made on first use) and returns its handle.
HookHandle add_hook(std::shared_ptr<HookList>& list, std::function<Tensor(const Tensor&)> fn);

// grad through each hook in order, each seeing the previous one's replacement. `api`: the backward
// call running them, named in the errors.
Tensor run_gradient_hooks(const HookList& list, Tensor grad, const char* api);

// A leaf's post-accumulate hooks, each given the leaf (its grad() already updated).
void run_post_accumulate_hooks(const HookList& list, const Tensor& leaf);

}  // namespace tensorlet::autograd

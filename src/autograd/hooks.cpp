// Tensor hooks: registration slots, removal, and the checked run of a gradient's hooks.
#include "tensorlet/autograd/hooks.h"

#include <utility>

namespace tensorlet::autograd {

void HookHandle::remove() {
  if (std::shared_ptr<HookList> list = list_.lock())
    if (index_ < list->hooks.size()) list->hooks[index_] = nullptr;
}

HookHandle add_hook(std::shared_ptr<HookList>& list, std::function<Tensor(const Tensor&)> fn) {
  if (!list) list = std::make_shared<HookList>();
  list->hooks.push_back(std::move(fn));
  return HookHandle(list, static_cast<unsigned>(list->hooks.size() - 1));
}

namespace {

// torch's check_variable_result: a hook may replace the gradient's values, never its metadata.
void check_replacement(const Tensor& grad, const Tensor& result, size_t i, const char* api) {
  if (result.shape() != grad.shape())
    fail<ShapeError>(
        api, "hook ", i,
        " (tl::Tensor::register_hook) has changed the size of value: ", "it returned shape ",
        result.shape(), " for a gradient of shape ", grad.shape());
  if (result.dtype() != grad.dtype())
    fail<DTypeError>(api, "hook ", i,
                     " (tl::Tensor::register_hook) has changed the type of value: ", "it returned ",
                     result.dtype(), " for a ", grad.dtype(), " gradient");
  if (result.device() != grad.device())
    fail<DeviceError>(api, "hook ", i,
                      " (tl::Tensor::register_hook) has changed the device of value: it returned ",
                      "a tensor on ", result.device(), " for a gradient on ", grad.device());
}

}  // namespace

Tensor run_gradient_hooks(const HookList& list, Tensor grad, const char* api) {
  // By index, through a copy: a hook may register another one, which can move the vector.
  for (size_t i = 0; i < list.hooks.size(); ++i) {
    if (!list.hooks[i]) continue;
    const std::function<Tensor(const Tensor&)> hook = list.hooks[i];
    Tensor result = hook(grad);
    if (!result.defined()) continue;
    check_replacement(grad, result, i, api);
    grad = std::move(result);
  }
  return grad;
}

void run_post_accumulate_hooks(const HookList& list, const Tensor& leaf) {
  for (size_t i = 0; i < list.hooks.size(); ++i) {
    if (!list.hooks[i]) continue;
    const std::function<Tensor(const Tensor&)> hook = list.hooks[i];
    hook(leaf);
  }
}

}  // namespace tensorlet::autograd

// InferenceMode's guard and the count of guards alive that Storage checks first.
#include "tensorlet/tensor/inference_mode.h"

namespace tensorlet {

namespace autograd::detail {
std::atomic<int> g_inference_guards{0};
}  // namespace autograd::detail

InferenceMode::InferenceMode(bool enabled)
    : enabled_(enabled),
      previous_mode_(autograd::detail::t_inference_mode),
      previous_grad_(GradMode::is_enabled()) {
  if (enabled_) autograd::detail::g_inference_guards.fetch_add(1, std::memory_order_relaxed);
  autograd::detail::t_inference_mode = enabled;
  GradMode::set_enabled(!enabled);
}

InferenceMode::~InferenceMode() {
  autograd::detail::t_inference_mode = previous_mode_;
  GradMode::set_enabled(previous_grad_);
  if (enabled_) autograd::detail::g_inference_guards.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace tensorlet

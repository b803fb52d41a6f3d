// InferenceMode (c10::InferenceMode): a scope with grad mode off whose new tensors are inference
// tensors, which may never be saved for backward nor written outside the mode.
#pragma once

#include <atomic>

#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet {

namespace autograd::detail {
inline thread_local bool t_inference_mode = false;
// How many InferenceMode guards that turned the mode on are alive, on any thread. While none is,
// a new Storage learns that it is not an inference tensor's from this one relaxed load, without
// the thread-local read (a call in a shared library) on every allocation.
extern std::atomic<int> g_inference_guards;

// True when memory allocated now belongs to inference tensors.
inline bool allocating_inference_tensor() {
  return g_inference_guards.load(std::memory_order_relaxed) != 0 && t_inference_mode;
}
}  // namespace autograd::detail

// RAII, thread-local, as torch's: InferenceMode guard; turns grad mode off (and InferenceMode
// guard(false) inside one turns it back on); both come back when the guard ends. Tensors
// allocated inside are inference tensors (Tensor::is_inference): views of them are too, while a
// view of a normal tensor made inside stays normal. Outside the mode an inference tensor cannot
// be saved for backward (an op that records and must save it raises), written in place, or be
// made to require grad.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;

  static bool is_enabled() { return autograd::detail::t_inference_mode; }

 private:
  bool enabled_;
  bool previous_mode_;
  bool previous_grad_;
};

}  // namespace tensorlet

// Grad mode: whether ops record a graph on this thread (torch's GradMode), and its guards.
#pragma once

namespace tensorlet {

namespace autograd::detail {
inline thread_local bool t_grad_enabled = true;
}  // namespace autograd::detail

// torch::GradMode: thread-local, on by default.
struct GradMode {
  static bool is_enabled() { return autograd::detail::t_grad_enabled; }
  static void set_enabled(bool enabled) { autograd::detail::t_grad_enabled = enabled; }
};

// Sets grad mode for a scope and restores it after (torch::AutoGradMode).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : previous_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(previous_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

// No graph is recorded in its scope: nothing is saved and no node is made (torch::NoGradGuard).
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace tensorlet

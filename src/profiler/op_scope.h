// OpScope: the profiler hook every op opens; costs one relaxed atomic load when no profiler runs.
#pragma once

#include <atomic>

namespace tensorlet::profiler {

namespace detail {
extern std::atomic<bool> g_recording;
// The innermost op the thread is in, for error messages of asynchronous backends (CUDA).
inline thread_local const char* t_current_op = nullptr;
// The outermost op the thread is in (the one the user called), valid while t_current_op is set.
inline thread_local const char* t_outer_op = nullptr;
void op_begin(const char* name);
void op_end();
}  // namespace detail

class OpScope {
 public:
  explicit OpScope(const char* name)
      : previous_op_(detail::t_current_op),
        active_(detail::g_recording.load(std::memory_order_relaxed)) {
    if (previous_op_ == nullptr) detail::t_outer_op = name;
    detail::t_current_op = name;
    if (active_) detail::op_begin(name);
  }
  ~OpScope() {
    if (active_) detail::op_end();
    detail::t_current_op = previous_op_;
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  const char* previous_op_;
  bool active_;
};

// The innermost op the calling thread is in (nullptr outside ops).
inline const char* current_op() { return detail::t_current_op; }
// The op the user called (outermost on this thread), nullptr outside ops: errors name this one, so
// tl::zeros reports "[tl::zeros]" rather than the tl::empty it calls.
inline const char* user_op() { return detail::t_current_op ? detail::t_outer_op : nullptr; }

}  // namespace tensorlet::profiler

// OpScope: the profiler hook every op opens; costs one relaxed atomic load when no profiler runs.
#pragma once

#include <atomic>

namespace tensorlet::profiler {

namespace detail {
extern std::atomic<bool> g_recording;
void op_begin(const char* name);
void op_end();
}  // namespace detail

class OpScope {
 public:
  explicit OpScope(const char* name)
      : active_(detail::g_recording.load(std::memory_order_relaxed)) {
    if (active_) detail::op_begin(name);
  }
  ~OpScope() {
    if (active_) detail::op_end();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  bool active_;
};

}  // namespace tensorlet::profiler

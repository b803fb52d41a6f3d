// OpScope: the profiler hook every op opens; costs one relaxed atomic load when no profiler runs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace tensorlet {

class Tensor;
class Device;

namespace profiler {

namespace detail {
// True while some Profile is started anywhere; each thread then finds out whether it records.
extern std::atomic<bool> g_recording;
// The innermost op the thread is in, for error messages of asynchronous backends (CUDA).
inline thread_local const char* t_current_op = nullptr;
// The outermost op the thread is in (the one the user called), valid while t_current_op is set.
inline thread_local const char* t_outer_op = nullptr;
// Opens a recorded op scope; returns what it did (ScopeState bits, recorder.h), 0 when this
// thread does not record (then no op_end follows). op_end gets the bits back, so it undoes what
// was pushed (NVTX range, CUPTI id) even when the recording stopped in between.
uint8_t op_begin(const char* name);
void op_end(uint8_t state);
// record_shapes / with_flops for the innermost open scope (ignored when the option is off).
// A null entry stands for a non-tensor argument.
void op_inputs(std::initializer_list<const Tensor*> inputs);
void op_inputs(const Tensor* tensors, size_t count);
void op_flops(int64_t flops);
// Autograd: the innermost open scope made the backward node `sequence_nr` (a forward op), or runs
// it (backward: the engine's evaluate_function scope); the chrome trace links the two.
void op_sequence_nr(int64_t sequence_nr, bool backward);
// The innermost open scope runs work on `device` without tensor inputs (a graph replay): the
// CUDA-event fallback then times it.
void op_device(const Device& device);
// profile_memory: Storage reports each allocation (+bytes) and free (-bytes).
void memory_event(int64_t bytes, Device device);
}  // namespace detail

class OpScope {
 public:
  explicit OpScope(const char* name)
      : previous_op_(detail::t_current_op),
        state_(detail::g_recording.load(std::memory_order_relaxed) ? detail::op_begin(name) : 0) {
    if (previous_op_ == nullptr) detail::t_outer_op = name;
    detail::t_current_op = name;
  }
  ~OpScope() {
    if (state_ != 0) detail::op_end(state_);
    detail::t_current_op = previous_op_;
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  // True when this op is being recorded: guard any work done only for the profiler.
  bool active() const { return state_ != 0; }
  // Input shapes for record_shapes: scope.inputs({&a, &b}); nullptr for a non-tensor argument.
  void inputs(std::initializer_list<const Tensor*> tensors) const {
    if (state_ != 0) detail::op_inputs(tensors);
  }
  // A list argument (cat, stack): one shape per tensor.
  template <class Container>
  void inputs_of(const Container& tensors) const {
    if (state_ != 0) detail::op_inputs(tensors.data(), tensors.size());
  }
  // Work on a device that no tensor input names (a graph replay), for the CUDA-event fallback.
  void on_device(const Device& device) const {
    if (state_ != 0) detail::op_device(device);
  }
  // Floating-point operations for with_flops (matmul family).
  void flops(int64_t count) const {
    if (state_ != 0) detail::op_flops(count);
  }

 private:
  const char* previous_op_;
  uint8_t state_;  // op_begin's bits; 0: not recorded
};

// The innermost op the calling thread is in (nullptr outside ops).
inline const char* current_op() { return detail::t_current_op; }
// The op the user called (outermost on this thread), nullptr outside ops: errors name this one, so
// tl::zeros reports "[tl::zeros]" rather than the tl::empty it calls.
inline const char* user_op() { return detail::t_current_op ? detail::t_outer_op : nullptr; }
// The op to name in an error raised on this thread: the user's op, or `fallback` (the public
// function raising it) when the error comes from outside any op scope.
inline const char* user_op_or(const char* fallback) {
  const char* op = user_op();
  return op ? op : fallback;
}

}  // namespace profiler
}  // namespace tensorlet

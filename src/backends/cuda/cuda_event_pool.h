// The backend's one pool of CUDA events (timing off) that order work across streams and devices:
// copies, the caching device allocator and the pinned host allocator all take from it.
#pragma once

#include <cuda_runtime.h>

namespace tensorlet::cuda {

// An event of `device`, which must be current: from the device's pool, created when it is empty
// (creating one costs microseconds, too much per copy).
cudaEvent_t take_pooled_event(int device);
// The same, for code that must not throw (deallocation): nullptr when no event can be created.
cudaEvent_t try_take_pooled_event(int device) noexcept;
// Returns an event to its device's pool. Reusing it right after cudaStreamWaitEvent is safe: the
// wait captured the state it had when it was called.
void give_back_pooled_event(int device, cudaEvent_t event) noexcept;

// A pooled event of `device` for one scope.
class ScopedEvent {
 public:
  explicit ScopedEvent(int device) : device_(device), event_(take_pooled_event(device)) {}
  ~ScopedEvent() { give_back_pooled_event(device_, event_); }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  int device_;
  cudaEvent_t event_;
};

}  // namespace tensorlet::cuda

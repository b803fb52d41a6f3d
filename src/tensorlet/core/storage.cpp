// Storage allocation through the device's registered allocator, reported to the profiler.
#include "tensorlet/core/storage.h"

#include "tensorlet/core/op_scope.h"

namespace tensorlet {

Storage::Storage(size_t nbytes, Device device, bool pinned)
    : nbytes_(nbytes),
      device_(device),
      allocator_(pinned && device.is_cpu() ? &pinned_host_allocator() : &allocator_for(device)),
      pinned_(pinned && device.is_cpu()) {
  data_ = allocator_->allocate(nbytes);
  // Reported after the allocation succeeded, so a failed one records nothing.
  if (profiler::detail::g_recording.load(std::memory_order_relaxed))
    profiler::detail::memory_event(static_cast<int64_t>(nbytes_), device_);
}

Storage::~Storage() {
  if (profiler::detail::g_recording.load(std::memory_order_relaxed))
    profiler::detail::memory_event(-static_cast<int64_t>(nbytes_), device_);
  allocator_->deallocate(data_, nbytes_);
}

}  // namespace tensorlet

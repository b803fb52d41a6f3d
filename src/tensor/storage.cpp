// Storage allocation through the device's registered allocator, reported to the profiler; external
// memory handed back through its owner's release function.
#include "tensorlet/tensor/storage.h"

#include "tensorlet/tensor/inference_mode.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {

Storage::Storage(size_t nbytes, Device device, bool pinned)
    : nbytes_(nbytes),
      device_(device),
      allocator_(pinned && device.is_cpu() ? &pinned_host_allocator() : &allocator_for(device)),
      pinned_(pinned && device.is_cpu()) {
  // Set only when some InferenceMode is alive: the common path is one load and a branch.
  if (autograd::detail::allocating_inference_tensor()) inference_ = true;
  data_ = allocator_->allocate(nbytes);
  // Reported after the allocation succeeded, so a failed one records nothing.
  if (profiler::detail::g_recording.load(std::memory_order_relaxed))
    profiler::detail::memory_event(static_cast<int64_t>(nbytes_), device_);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> release)
    : data_(data),
      nbytes_(nbytes),
      device_(device),
      allocator_(&allocator_for(device)),
      external_(true),
      release_(std::move(release)) {
  if (autograd::detail::allocating_inference_tensor()) inference_ = true;
}

Storage::~Storage() {
  if (external_) {
    // Not the profiler's memory: it saw no allocation. The owner gets it back only after the
    // device is done with it.
    allocator_->wait_for_pending_work();
    if (release_) release_(data_);
    return;
  }
  if (profiler::detail::g_recording.load(std::memory_order_relaxed))
    profiler::detail::memory_event(-static_cast<int64_t>(nbytes_), device_);
  allocator_->deallocate(data_, nbytes_);
}

}  // namespace tensorlet

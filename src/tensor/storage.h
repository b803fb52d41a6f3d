// Storage: a refcounted block of device memory that tensors (and their views) share: memory the
// device's allocator gave, or memory of someone else's (from_blob, DLPack, a mapped file).
#pragma once

#include <cstddef>
#include <atomic>
#include <functional>
#include <memory>

#include "tensorlet/tensor/allocator.h"
#include "tensorlet/tensor/device.h"

namespace tensorlet {

class Storage {
 public:
  // Allocates nbytes on `device` from that device's backend allocator; `pinned` (CPU only) takes
  // page-locked host memory, which asynchronous device copies need.
  Storage(size_t nbytes, Device device, bool pinned = false);
  // Wraps nbytes at `data` on `device` without owning them: `release` (may be empty) runs once,
  // when the last tensor using them is gone and the work enqueued on `device` so far has finished
  // (a GPU kernel still reading them must not see them freed). DeviceError when `device`'s
  // backend is not built in.
  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool pinned() const { return pinned_; }
  // True for memory the library did not allocate.
  bool external() const { return external_; }
  // True for memory made inside InferenceMode: its tensors (and their views) are inference
  // tensors (Tensor::is_inference).
  bool inference() const { return inference_; }
  // Counts in-place writes (every view of the storage shares it), so that autograd can tell a
  // tensor saved for backward was modified after it was saved (torch's version counter).
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;
  bool pinned_ = false;
  bool external_ = false;
  bool inference_ = false;
  std::atomic<uint32_t> version_{0};
  std::function<void(void*)> release_;
};

}  // namespace tensorlet

// Storage: a refcounted block of device memory that tensors (and their views) share.
#pragma once

#include <cstddef>
#include <memory>

#include "tensorlet/core/allocator.h"
#include "tensorlet/core/device.h"

namespace tensorlet {

class Storage {
 public:
  // Allocates nbytes on `device` from that device's backend allocator; `pinned` (CPU only) takes
  // page-locked host memory, which asynchronous device copies need.
  Storage(size_t nbytes, Device device, bool pinned = false);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool pinned() const { return pinned_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;
  bool pinned_ = false;
};

}  // namespace tensorlet

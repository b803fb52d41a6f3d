// Allocator: how a device hands out raw memory; each backend owns one per device and registers
// it here by device type, so the data model allocates without knowing any backend.
#pragma once

#include <cstddef>

#include "tensorlet/core/device.h"

namespace tensorlet {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for nbytes (nbytes may be 0); throws OutOfMemoryError on failure.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
};

// Registered by a backend when the library loads (backends/backend.cpp's register_backend).
using AllocatorGetter = Allocator& (*)(Device device);
using HostAllocatorGetter = Allocator& (*)();
void register_allocator(DeviceType type, AllocatorGetter get);
// Page-locked host memory, for non-blocking copies: a capability of an accelerator's backend.
void register_pinned_host_allocator(HostAllocatorGetter get);

// The allocator of a device; DeviceError (naming the user's op) when its backend is not built in.
Allocator& allocator_for(Device device);
// The registered page-locked host allocator; DeviceError when no backend offers one.
Allocator& pinned_host_allocator();

}  // namespace tensorlet

// Allocator: how a device hands out raw memory; each backend owns one per device and registers
// it here by device type, so the data model allocates without knowing any backend.
#pragma once

#include <cstddef>

#include "tensorlet/tensor/device.h"

namespace tensorlet {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for nbytes (nbytes may be 0); throws OutOfMemoryError on failure.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  // Waits for the work enqueued on this device so far (nothing on the CPU), before memory the
  // library does not own goes back to its owner; must not throw.
  virtual void wait_for_pending_work() noexcept {}
};

// Where a pointer's memory lives, as far as an accelerator's runtime can tell (CUDA's
// cudaPointerGetAttributes): memory given to the library from outside (from_blob, DLPack) is
// checked against the device it is said to be on, so a host pointer is never handed to a kernel.
struct MemoryPlace {
  enum class Kind { Unknown, Host, Device, Managed } kind = Kind::Unknown;
  int device = -1;  // the GPU of Kind::Device memory
};
using PointerLocator = MemoryPlace (*)(const void* ptr);

// Registered by a backend when the library loads (backends/backend.cpp's register_backend).
using AllocatorGetter = Allocator& (*)(Device device);
using HostAllocatorGetter = Allocator& (*)();
void register_allocator(DeviceType type, AllocatorGetter get);
// Page-locked host memory, for non-blocking copies: a capability of an accelerator's backend.
void register_pinned_host_allocator(HostAllocatorGetter get);
void register_pointer_locator(PointerLocator locate);

// The allocator of a device; DeviceError (naming the user's op) when its backend is not built in.
Allocator& allocator_for(Device device);
// The registered page-locked host allocator; DeviceError when no backend offers one.
Allocator& pinned_host_allocator();
// The registered locator's answer; Kind::Unknown when no backend registered one (a CPU-only
// build, where every pointer is host memory).
MemoryPlace locate_pointer(const void* ptr);

}  // namespace tensorlet

// The allocator registry: one getter per device type, filled by the backends as they load.
#include "tensorlet/tensor/allocator.h"

#include <array>

#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {
namespace {

// Function-local statics: a backend may register before this file's globals are initialised.
std::array<AllocatorGetter, kNumDeviceTypes>& allocators() {
  static std::array<AllocatorGetter, kNumDeviceTypes> table{};
  return table;
}
HostAllocatorGetter& pinned_getter() {
  static HostAllocatorGetter get = nullptr;
  return get;
}

PointerLocator& locator() {
  static PointerLocator locate = nullptr;
  return locate;
}

}  // namespace

void register_allocator(DeviceType type, AllocatorGetter get) {
  allocators()[static_cast<size_t>(type)] = get;
}

void register_pinned_host_allocator(HostAllocatorGetter get) { pinned_getter() = get; }

void register_pointer_locator(PointerLocator locate) { locator() = locate; }

MemoryPlace locate_pointer(const void* ptr) {
  PointerLocator locate = locator();
  return locate != nullptr ? locate(ptr) : MemoryPlace{};
}

Allocator& allocator_for(Device device) {
  AllocatorGetter get = allocators()[static_cast<size_t>(device.type())];
  // Named after the user's op (tl::zeros, tl::to, ...): an allocator means nothing to them.
  if (get == nullptr)
    fail<DeviceError>(profiler::user_op_or("tl::empty"), "device ", device,
                      " requested, but tensorlet was built without ",
                      device_type_display_name(device.type()));
  return get(device);
}

Allocator& pinned_host_allocator() {
  HostAllocatorGetter get = pinned_getter();
  if (get == nullptr)
    fail<DeviceError>(profiler::user_op_or("tl::pin_memory"),
                      "pinned host memory needs an accelerator backend (this build has none)");
  return get();
}

}  // namespace tensorlet

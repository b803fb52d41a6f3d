// The CPU backend instance, registered for DeviceType::CPU as the library loads.
#include "tensorlet/backends/cpu/cpu_backend.h"

#include "tensorlet/backends/cpu/host_allocator.h"

namespace tensorlet {
namespace cpu {

namespace {

Backend& instance() {
  static CpuBackend backend;
  return backend;
}
Allocator& allocator(Device) { return host_allocator(); }

[[maybe_unused]] const bool registered = register_backend({DeviceType::CPU, &instance, &allocator});

}  // namespace
}  // namespace cpu

}  // namespace tensorlet

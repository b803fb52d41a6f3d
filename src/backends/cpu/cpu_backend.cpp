// The CPU backend instance.
#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/host_allocator.h"

namespace tensorlet {
namespace cpu {

Allocator& CpuBackend::allocator(Device) { return host_allocator(); }

}  // namespace cpu

Backend& cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}

}  // namespace tensorlet

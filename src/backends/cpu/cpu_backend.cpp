// The CPU backend instance and its host allocator.
#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <new>

#include "tensor/error.h"

namespace tensorlet {
namespace cpu {
namespace {

// 64-byte aligned host memory, so contiguous loops vectorize without peeling.
class HostAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    void* p = nullptr;
    if (posix_memalign(&p, 64, nbytes ? nbytes : 1) != 0)
      fail<OutOfMemoryError>("tl::cpu::allocate", "could not allocate ", nbytes,
                             " bytes of host memory");
    return p;
  }
  void deallocate(void* ptr, size_t) override { std::free(ptr); }
};

}  // namespace

Allocator& CpuBackend::allocator(Device) {
  static HostAllocator host;
  return host;
}

}  // namespace cpu

Backend& cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}

}  // namespace tensorlet

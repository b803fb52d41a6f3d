// A child process for the CUDA runtime suite: launches a kernel that writes through a bad pointer
// with tl::cuda::launch and prints the tl::CudaError that reports it. A fault ends the CUDA
// context of its process, so test_cuda_runtime.cpp runs this in a process of its own.
//   cuda_fault_child blocking   (with TL_LAUNCH_BLOCKING=1) the launch itself must throw
//   cuda_fault_child deferred   the next synchronizing call must throw
// Prints "CudaError: <message>" and exits 0 when the error came as a tl::CudaError.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <tensorlet/tensorlet_cuda.h>

namespace {

__global__ void write_through(float* p, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < n) p[i * 1024] = 1.0f;
}

}  // namespace

int main(int argc, char** argv) {
  const bool deferred = argc > 1 && std::strcmp(argv[1], "deferred") == 0;
  if (!tl::cuda::is_available()) {
    std::puts("skipped: no CUDA device");
    return 0;
  }
  try {
    tl::Tensor t = tl::ones({4}, tl::Device::cuda(0));
    tl::cuda::DeviceGuard on(0);
    // An address no allocation has: the kernel faults with an illegal address.
    float* bad = reinterpret_cast<float*>(uintptr_t{0x100});
    tl::cuda::launch("tl_test::bad_write", write_through, dim3(1), dim3(32), 0, bad, 32);
    if (deferred) (void)t.cpu();
    std::puts("no error was reported");
    return 1;
  } catch (const tl::CudaError& e) {
    std::printf("CudaError: %s\n", e.what());
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::printf("another error: %s\n", e.what());
    return 2;
  }
}

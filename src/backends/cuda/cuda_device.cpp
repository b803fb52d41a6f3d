// tl::cuda device queries through the CUDA runtime (built with the CUDA backend).
#include <cuda_runtime.h>

#include "backends/cuda/cuda.h"

namespace tensorlet::cuda {

bool is_built() { return true; }

int device_count() {
  // Counted once, as the driver's device list does not change while a process runs. No driver or
  // no GPU is a normal answer here (0), so the error is consumed rather than reported.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

bool is_available() { return device_count() > 0; }

}  // namespace tensorlet::cuda

// A trivial kernel that proves nvcc builds device code for the configured GPU architectures.
// Nothing calls it yet; the CUDA issue replaces it with the backend's real kernels.
#include <cuda_runtime.h>

namespace tensorlet::cuda::detail {

__global__ void probe_kernel(int* out, int value) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = value;
}

// Runs the probe on the current device; returns `value` when the device ran it, -1 on any error.
int run_probe(int value) {
  int* device_out = nullptr;
  if (cudaMalloc(&device_out, sizeof(int)) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  int host_out = -1;
  probe_kernel<<<1, 32>>>(device_out, value);
  if (cudaGetLastError() != cudaSuccess ||
      cudaMemcpy(&host_out, device_out, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
    (void)cudaGetLastError();
    host_out = -1;
  }
  cudaFree(device_out);
  return host_out;
}

}  // namespace tensorlet::cuda::detail

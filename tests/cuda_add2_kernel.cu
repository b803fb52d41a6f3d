// The custom_kernel notebook's add2 kernel (c = a + b into a preallocated c), for the custom
// autograd Function test (test_autograd_function.cpp; CUDA builds only).
#include <tensorlet/tensorlet_cuda.h>

namespace {

__global__ void add2_kernel(float* c, const float* a, const float* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}

}  // namespace

namespace tl_test {

// c, a, b: contiguous float32 tensors of one shape on one CUDA device.
void add2_cuda(tensorlet::Tensor& c, const tensorlet::Tensor& a, const tensorlet::Tensor& b) {
  const int n = static_cast<int>(a.numel());
  tensorlet::cuda::DeviceGuard on(a.device().index());
  tensorlet::cuda::launch("add2", add2_kernel, dim3((n + 1023) / 1024), dim3(1024), 0,
                          c.data<float>(), a.data<float>(), b.data<float>(), n);
}

}  // namespace tl_test

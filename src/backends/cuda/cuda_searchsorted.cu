// searchsorted on CUDA: one thread per value, each a bisection of its row of boundaries
// (searchsorted_position, the CPU's code), on the current stream.
#include <cuda_runtime.h>

#include <cstdint>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/bucket_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T, typename O>
__global__ void searchsorted_kernel(const T* __restrict__ boundaries, const T* __restrict__ values,
                                    const int64_t* __restrict__ sorter, int64_t n, int64_t inner,
                                    int64_t len, bool right, O* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / inner;
    out[i] = static_cast<O>(searchsorted_position<T>(
        boundaries + r * len, sorter ? sorter + r * len : nullptr, len, values[i], right));
  }
}

}  // namespace

void searchsorted(const Tensor& boundaries, const Tensor& values, const Tensor& sorter, bool right,
                  const Tensor& out) {
  cudaStream_t s = current_stream_handle(values.device().index());
  const int64_t len = boundaries.shape()[1], inner = values.shape()[1], n = values.numel();
  const int64_t* sort = sorter.defined() ? static_cast<const int64_t*>(sorter.data_ptr()) : nullptr;
  dispatch_dtype<kNumericDTypes>(values.dtype(), [&]<typename T>() {
    const T* b = static_cast<const T*>(boundaries.data_ptr());
    const T* v = static_cast<const T*>(values.data_ptr());
    if (out.dtype() == kInt32)
      searchsorted_kernel<T, int32_t><<<grid_for(n, kThreads), kThreads, 0, s>>>(
          b, v, sort, n, inner, len, right, static_cast<int32_t*>(out.data_ptr()));
    else
      searchsorted_kernel<T, int64_t><<<grid_for(n, kThreads), kThreads, 0, s>>>(
          b, v, sort, n, inner, len, right, static_cast<int64_t*>(out.data_ptr()));
    check_launch(s, "searchsorted_kernel");
  });
}

}  // namespace tensorlet::cuda

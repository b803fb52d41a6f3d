// Inverse-CDF sampling on CUDA (multinomial with replacement): a thread per sample runs the
// CPU's binary search (backends/math/cdf_search.h) in its row of the cumulative weights.
#include <cstdint>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/math/cdf_search.h"

namespace tensorlet::cuda {
namespace {

__global__ void cdf_search_kernel(const double* cdf, const double* u, int64_t* out, int64_t total,
                                  int64_t n, int64_t samples) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride)
    out[i] = math::cdf_search(cdf + (i / samples) * n, n, u[i]);
}

}  // namespace

void sample_from_cdf(const Tensor& cdf, const Tensor& u, const Tensor& out) {
  const int64_t total = out.numel();
  if (total == 0) return;
  cudaStream_t s = current_stream_handle(out.device().index());
  cdf_search_kernel<<<grid_for(total, kElementwiseThreads), kElementwiseThreads, 0, s>>>(
      static_cast<const double*>(cdf.data_ptr()), static_cast<const double*>(u.data_ptr()),
      static_cast<int64_t*>(out.data_ptr()), total, cdf.size(1), u.size(1));
  check_launch(s, "cdf_search_kernel");
}

}  // namespace tensorlet::cuda

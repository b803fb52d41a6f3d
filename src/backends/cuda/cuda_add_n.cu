// CUDA's add_n: up to kAddNInputs contiguous summands per launch, each step rounded to the dtype
// as a chain of adds rounds it; longer lists go on from the partial sum in out.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {
namespace {

constexpr int kAddNInputs = 16;
constexpr int kAddNThreads = 256;

// Passed by value: the pointers sit in the kernel's parameter space, no upload.
template <typename T>
struct AddNArgs {
  const T* in[kAddNInputs];
  T* out;
  int count;
  int64_t n;
};

template <typename T>
__global__ void add_n_kernel(AddNArgs<T> a) {
  using C = compute_t<T>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += stride) {
    T acc = a.in[0][i];
    for (int k = 1; k < a.count; ++k)
      acc = static_cast<T>(static_cast<C>(acc) + static_cast<C>(a.in[k][i]));
    a.out[i] = acc;
  }
}

}  // namespace

void add_n(const std::vector<Tensor>& in, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const cudaStream_t stream = current_stream_handle(out.device().index());
  dispatch_dtype<kFloatingDTypes>(
      out.dtype(),
      [&]<typename T>() {
        AddNArgs<T> args{};
        args.out = static_cast<T*>(out.data_ptr());
        args.n = n;
        // The first launch sums in[0..15]; each later one adds up to 15 more to out.
        size_t next = 0;
        while (next < in.size()) {
          int count = 0;
          if (next > 0) args.in[count++] = args.out;
          while (count < kAddNInputs && next < in.size())
            args.in[count++] = static_cast<const T*>(in[next++].data_ptr());
          args.count = count;
          add_n_kernel<T><<<grid_for(n, kAddNThreads), kAddNThreads, 0, stream>>>(args);
          check_launch(stream, "add_n_kernel");
        }
      },
      "tl::add_n");
}

}  // namespace tensorlet::cuda

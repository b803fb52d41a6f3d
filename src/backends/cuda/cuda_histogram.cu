// bincount and histc on CUDA: one pass of atomic adds into the bins, privatized in each block's
// shared memory when the bins fit there (a block then adds each non-zero bin to global memory
// once), else straight into global memory. histc counts in 64-bit integers and converts once.
// Everything runs on the current stream; the bins are zeroed before the pass.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/bucket_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

constexpr int kThreads = 256;
// Bins up to this many bytes are privatized in shared memory (the default dynamic limit).
constexpr int64_t kSharedBinBytes = 48 * 1024;
// A block privatizing the bins pays to zero and flush them: a few blocks per SM are enough.
constexpr unsigned kMaxBlocks = 1024;

using Count = unsigned long long;  // atomicAdd's 64-bit integer type

// Adds weight_of(i) to bin bin_of(i) for every i < n with a bin (>= 0).
template <typename Acc, typename BinOf, typename WeightOf>
__global__ void histogram_kernel(int64_t n, BinOf bin_of, WeightOf weight_of, Acc* __restrict__ out,
                                 int64_t bins, bool privatize) {
  extern __shared__ Count shared_raw[];  // 8-byte aligned for every Acc
  Acc* local = reinterpret_cast<Acc*>(shared_raw);
  if (privatize) {
    for (int64_t b = threadIdx.x; b < bins; b += blockDim.x) local[b] = Acc(0);
    __syncthreads();
  }
  Acc* target = privatize ? local : out;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = bin_of(i);
    if (b >= 0) atomicAdd(target + b, weight_of(i));
  }
  if (privatize) {
    __syncthreads();
    for (int64_t b = threadIdx.x; b < bins; b += blockDim.x)
      if (local[b] != Acc(0)) atomicAdd(out + b, local[b]);
  }
}

template <typename Acc, typename BinOf, typename WeightOf>
void launch_histogram(int64_t n, BinOf bin_of, WeightOf weight_of, Acc* out, int64_t bins,
                      cudaStream_t s) {
  const int64_t bytes = bins * static_cast<int64_t>(sizeof(Acc));
  const bool privatize = bytes <= kSharedBinBytes;
  const unsigned grid = std::min(grid_for(n, kThreads), kMaxBlocks);
  histogram_kernel<Acc><<<grid, kThreads, privatize ? static_cast<size_t>(bytes) : 0, s>>>(
      n, bin_of, weight_of, out, bins, privatize);
  check_launch(s, "histogram_kernel");
}

// bincount: the bin is the value itself (checked in range by the front-end).
template <typename I>
struct ValueBin {
  const I* x;
  __device__ int64_t operator()(int64_t i) const { return static_cast<int64_t>(x[i]); }
};

template <typename Acc>
struct One {
  __device__ Acc operator()(int64_t) const { return Acc(1); }
};

template <typename W>
struct Weight {
  const W* w;
  __device__ W operator()(int64_t i) const { return w[i]; }
};

template <typename T>
struct HistcBin {
  const T* x;
  T lo, hi;
  int64_t bins;
  __device__ int64_t operator()(int64_t i) const { return histc_bin<T>(x[i], lo, hi, bins); }
};

template <typename T>
__global__ void counts_to_kernel(const Count* __restrict__ counts, int64_t bins,
                                 T* __restrict__ out) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < bins;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[b] = T(static_cast<compute_t<T>>(counts[b]));
}

template <typename I>
void bincount_typed(const Tensor& in, const Tensor& weights, const Tensor& out, cudaStream_t s) {
  const I* x = static_cast<const I*>(in.data_ptr());
  const int64_t n = in.numel(), bins = out.numel();
  const ValueBin<I> bin{x};
  if (!weights.defined()) {
    launch_histogram<Count>(n, bin, One<Count>{}, static_cast<Count*>(out.data_ptr()), bins, s);
  } else if (out.dtype() == kFloat32) {
    launch_histogram<float>(n, bin, Weight<float>{static_cast<const float*>(weights.data_ptr())},
                            static_cast<float*>(out.data_ptr()), bins, s);
  } else {
    launch_histogram<double>(n, bin, Weight<double>{static_cast<const double*>(weights.data_ptr())},
                             static_cast<double*>(out.data_ptr()), bins, s);
  }
}

}  // namespace

void bincount(const Tensor& in, const Tensor& weights, const Tensor& out) {
  cudaStream_t s = current_stream_handle(in.device().index());
  if (in.dtype() == kInt32)
    bincount_typed<int32_t>(in, weights, out, s);
  else
    bincount_typed<int64_t>(in, weights, out, s);
}

void histc(const Tensor& in, double lo, double hi, const Tensor& out) {
  const Device device = in.device();
  cudaStream_t s = current_stream_handle(device.index());
  const int64_t bins = out.numel();
  Tensor counts = make_tensor({bins}, kInt64, device);
  Count* c = static_cast<Count*>(counts.data_ptr());
  TL_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<size_t>(bins) * sizeof(Count), s));
  dispatch_dtype<kFloatingDTypes>(in.dtype(), [&]<typename T>() {
    const HistcBin<T> bin{static_cast<const T*>(in.data_ptr()), T(lo), T(hi), bins};
    launch_histogram<Count>(in.numel(), bin, One<Count>{}, c, bins, s);
    counts_to_kernel<T>
        <<<grid_for(bins, kThreads), kThreads, 0, s>>>(c, bins, static_cast<T*>(out.data_ptr()));
    check_launch(s, "counts_to_kernel");
  });
}

}  // namespace tensorlet::cuda

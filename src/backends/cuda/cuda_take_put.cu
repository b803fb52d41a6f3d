// take and put on CUDA: a thread per index element, the strided tensor addressed by unravelling a
// row-major position over its (coalesced) dims; put's accumulate adds with the scatter family's
// atomics (cuda_atomics.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_atomics.cuh"
#include "tensorlet/backends/cuda/cuda_index_common.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

constexpr int kThreads = 256;

// The tensor addressed by row-major position: its dims coalesced (a contiguous tensor is one dim
// of stride 1) and its element count, for the wrap of negative positions.
struct FlatTensor {
  StridedIndexer<1> ix;
  int64_t numel;
};

FlatTensor flat_tensor(const Tensor& t) {
  return FlatTensor{make_indexer<1>(t.shape(), {&t}), t.numel()};
}

template <typename IndexT>
__device__ __forceinline__ int64_t flat_offset(const FlatTensor& t, int64_t flat) {
  if (flat < 0) flat += t.numel;
  if (t.ix.ndim == 1) return flat * t.ix.strides[0][0];
  return element_offset(t.ix, static_cast<IndexT>(flat));
}

// ix: operand 0 = out, 1 = index, over out's shape.
template <typename T, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    take_kernel(T* __restrict__ out, const T* __restrict__ in, const int64_t* __restrict__ index,
                const __grid_constant__ StridedIndexer<2> ix,
                const __grid_constant__ FlatTensor src, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[2];
    ix.offsets(static_cast<IndexT>(i), off);
    out[off[0]] = in[flat_offset<IndexT>(src, index[off[1]])];
  }
}

// ix: operand 0 = index, 1 = values, over index's shape. T: the element type (Accumulate) or the
// unsigned type of its size (plain stores move bits).
template <typename T, typename IndexT, bool Accumulate>
__global__ void __launch_bounds__(kThreads)
    put_kernel(T* __restrict__ self, const int64_t* __restrict__ index,
               const T* __restrict__ values, const __grid_constant__ StridedIndexer<2> ix,
               const __grid_constant__ FlatTensor dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[2];
    ix.offsets(static_cast<IndexT>(i), off);
    T* slot = self + flat_offset<IndexT>(dst, index[off[0]]);
    if constexpr (Accumulate) {
      combine_into<ScatterOp::Add, T>(slot, static_cast<compute_t<T>>(values[off[1]]));
    } else {
      *slot = values[off[1]];
    }
  }
}

// 32-bit index math when both the loop and the addressed tensor fit.
bool use_32bit(int64_t n, int64_t numel) {
  return n < kMax32BitElements && numel < kMax32BitElements;
}

}  // namespace

void take(const Tensor& in, const Tensor& index, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const StridedIndexer<2> ix = make_indexer<2>(out.shape(), {&out, &index});
  const FlatTensor src = flat_tensor(in);
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  cudaStream_t s = current_stream_handle(out.device().index());
  const unsigned grid = grid_for(n, kThreads);
  dispatch_bits(in.element_size(), [&]<typename T>() {
    T* dst = static_cast<T*>(out.data_ptr());
    const T* from = static_cast<const T*>(in.data_ptr());
    if (use_32bit(n, in.numel())) {
      take_kernel<T, uint32_t><<<grid, kThreads, 0, s>>>(dst, from, idx, ix, src, n);
    } else {
      take_kernel<T, uint64_t><<<grid, kThreads, 0, s>>>(dst, from, idx, ix, src, n);
    }
    check_launch(s, "take_kernel");
  });
}

void put(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate) {
  const int64_t n = index.numel();
  if (n == 0) return;
  const StridedIndexer<2> ix = make_indexer<2>(index.shape(), {&index, &values});
  const FlatTensor dst = flat_tensor(self);
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  cudaStream_t s = current_stream_handle(self.device().index());
  const unsigned grid = grid_for(n, kThreads);
  const bool narrow = use_32bit(n, self.numel());
  auto launch = [&]<typename T, bool Accumulate>() {
    T* to = static_cast<T*>(self.data_ptr());
    const T* from = static_cast<const T*>(values.data_ptr());
    if (narrow) {
      put_kernel<T, uint32_t, Accumulate><<<grid, kThreads, 0, s>>>(to, idx, from, ix, dst, n);
    } else {
      put_kernel<T, uint64_t, Accumulate><<<grid, kThreads, 0, s>>>(to, idx, from, ix, dst, n);
    }
    check_launch(s, "put_kernel");
  };
  if (accumulate) {
    dispatch_dtype<kAllDTypes>(
        self.dtype(), [&]<typename T>() { launch.template operator()<T, true>(); }, "tl::put_");
  } else {
    dispatch_bits(self.element_size(),
                  [&]<typename T>() { launch.template operator()<T, false>(); });
  }
}

}  // namespace tensorlet::cuda

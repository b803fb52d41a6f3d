// Device-side helpers the CUDA kernels share: a strided indexer that maps a row-major linear index
// of the output to element offsets of every operand (dims coalesced on the host first), the dtype
// dispatch for .cu files, and the launch shape of elementwise kernels.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "tensorlet/backends/coalesce.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/shape.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {

// The largest block of the elementwise kernels (their launch bounds).
constexpr int kElementwiseThreads = 256;

// Threads per block of the elementwise kernels: 128. Blocks of 256 left float32 sin on 512^3 at
// 0.977 of the copy on an H200 where 128 read 1.00 (scratch sweep, same run, 2026-11-28; PyTorch's
// elementwise kernels use 128 too). TL_CUDA_ELEMENTWISE_THREADS (64, 128 or 256) measures the
// others in one binary (bench_cuda G4, G9).
inline int elementwise_threads() {
  static const int threads = [] {
    const char* v = std::getenv("TL_CUDA_ELEMENTWISE_THREADS");
    const int n = v ? std::atoi(v) : 128;
    return n == 64 || n == 256 ? n : 128;
  }();
  return threads;
}

// Offsets (in elements) of N operands for a row-major linear index over a common shape. Operand 0
// is usually the output. Built on the host by make_indexer, passed to kernels by value.
template <int N>
struct StridedIndexer {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];

  // IndexT: uint32_t when the element count fits (32-bit division is much cheaper on the GPU).
  template <typename IndexT>
  __device__ __forceinline__ void offsets(IndexT linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const IndexT size = static_cast<IndexT>(sizes[d]);
      const IndexT i = linear % size;
      linear /= size;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += static_cast<int64_t>(i) * strides[k][d];
    }
  }
};

// An indexer over `shape` for tensors that each broadcast to it (stride 0 in broadcast dims; a
// null tensor, a value the kernel gets as a parameter, has stride 0 everywhere). Size-1 dims are
// dropped and dims that are contiguous in every operand merged, so a contiguous operand set
// becomes one dim.
template <int N>
StridedIndexer<N> make_indexer(const Shape& shape, const std::array<const Tensor*, N>& tensors) {
  StridedIndexer<N> ix;
  int64_t st[N][kMaxDims];
  const int64_t nd = shape.size();
  for (int k = 0; k < N; ++k) {
    if (!tensors[k]) {
      for (int64_t d = 0; d < nd; ++d) st[k][d] = 0;
      continue;
    }
    const Tensor& t = *tensors[k];
    const int64_t lead = nd - t.dim();  // missing leading dims broadcast
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t td = d - lead;
      st[k][d] = (td < 0 || t.shape()[td] == 1) ? 0 : t.strides()[td];
    }
  }
  ix.ndim = coalesce_dims<N>(nd, shape.data(), st, ix.sizes, ix.strides);
  return ix;
}

// True when the indexer is one dim with unit strides for every operand (or a single element):
// the kernel may index all operands with the linear index directly.
template <int N>
bool is_contiguous_run(const StridedIndexer<N>& ix) {
  if (ix.ndim == 0) return true;
  if (ix.ndim != 1) return false;
  for (int k = 0; k < N; ++k)
    if (ix.strides[k][0] != 1) return false;
  return true;
}

// Typed base pointer of a tensor (storage + offset), for kernel arguments.
template <typename T>
T* typed_ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

}  // namespace tensorlet::cuda

// Helpers the indexing (cuda_index.cu) and joining (cuda_cat.cu) kernels share: division by a
// launch-time constant as a multiply and shift, indexers built from raw sizes and strides, and the
// dispatch on element size for kernels that only move bits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {

// n / divisor for any 32-bit n, with a divisor fixed on the host: a multiply-high, an add and a
// shift instead of the ~20 instructions of an integer division (the round-up method of Granlund
// and Montgomery; the add is done in 64 bits, so every 32-bit n is exact).
struct FastDiv {
  uint32_t divisor = 1, magic = 1, shift = 0;

  FastDiv() = default;
  explicit FastDiv(uint32_t d) : divisor(d) {
    shift = d <= 1 ? 0 : 32 - __builtin_clz(d - 1);  // smallest shift with 2^shift >= d
    // (2^shift - d) < 2^31, so the product fits in 64 bits; the quotient fits in 32.
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const {
    return static_cast<uint32_t>((static_cast<uint64_t>(__umulhi(n, magic)) + n) >> shift);
  }
};

// make_indexer's coalescing for operands given as raw strides over `sizes` (views that exist only
// as strides, such as a zero stride along the indexed dim, need no Tensor and no allocation).
template <int N>
StridedIndexer<N> make_indexer_raw(int64_t nd, const int64_t* sizes,
                                   const int64_t (&strides)[N][kMaxDims]) {
  StridedIndexer<N> ix;
  ix.ndim = coalesce_dims<N>(nd, sizes, strides, ix.sizes, ix.strides);
  return ix;
}

// The element offset of linear index i of a one-operand indexer.
template <typename IndexT>
__device__ __forceinline__ int64_t element_offset(const StridedIndexer<1>& ix, IndexT i) {
  int64_t off[1];
  ix.offsets(i, off);
  return off[0];
}

// Indices below this bound take 32-bit index math (with room for a tile past the end).
constexpr int64_t kMax32BitElements = int64_t{1} << 31;

}  // namespace tensorlet::cuda

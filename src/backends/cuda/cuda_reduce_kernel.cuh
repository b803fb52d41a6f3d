// The one reduction kernel of cuda_reduce.cu. A problem is [kept] x [reduced] with any strides;
// a block is a (x, y) grid of threads where one axis walks outputs and the other splits each
// output's reduced range into lanes, chosen on the host so that a warp reads adjacent memory:
//  - inner (x lanes share an output): reduced elements are the close ones (sum over the last dim,
//    or of everything); unit-stride rows are read with 16-byte loads;
//  - outer (y lanes share an output): outputs are the close ones (sum over dim 0 of [N, M]), so
//    the x threads of a warp read adjacent outputs of one reduced row.
// Lanes fold into per-thread accumulators, then a fixed tree (shuffles, shared memory) combines
// them. A big reduction with few outputs also splits its reduced range over blockIdx.y: each slice
// writes a partial accumulator, and the last slice to finish (counted by an arrival counter per
// output block) folds them all in slice order with the op's Partial. Which block is last varies;
// what it computes does not, so results are the same on every run and need one launch, not two.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_reduce_ops.cuh"
#include "tensorlet/tensor/shape.h"

// The fold helpers are also compiled for the host (tests emulate the kernel there), where GCC
// would warn about an unknown #pragma unroll.
#ifdef __CUDA_ARCH__
#define TL_REDUCE_UNROLL _Pragma("unroll")
#else
#define TL_REDUCE_UNROLL
#endif

namespace tensorlet::cuda::reduction {

// Threads per block at most; the shared-memory tree holds one accumulator per thread.
constexpr int kMaxThreads = 512;

// A coalesced list of (size, stride) dims, outermost first, strides in elements.
struct Dims {
  int n;
  int64_t size[kMaxDims];
  int64_t stride[kMaxDims];
};

// Everything a launch needs, passed by value as a __grid_constant__ (read in place, not copied).
struct ReducePlan {
  Dims kept;  // one output per element; row-major order is out's order
  Dims red;   // row-major positions are what arg reductions report
  int64_t n_out, n_red;
  int64_t chunk;        // reduced positions per blockIdx.y slice
  double mean_divisor;  // > 0: the sum is divided by it (mean)
  bool inner;           // threadIdx.x lanes share an output (else threadIdx.y lanes)
  bool vector;          // the reduced positions are one unit-stride run: 16-byte loads
  bool to_partial;      // write one accumulator per (slice, output) instead of out
};

// The element offset of a row-major linear index over dims (32-bit division when it fits, which
// is several times cheaper on the GPU).
__host__ __device__ __forceinline__ int64_t offset_of(const Dims& d, int64_t linear) {
  int64_t offset = 0;
  for (int i = d.n - 1; i > 0; --i) {
    const int64_t size = d.size[i];
    int64_t q;
    if (((static_cast<uint64_t>(linear) | static_cast<uint64_t>(size)) >> 32) == 0)
      q = static_cast<uint32_t>(linear) / static_cast<uint32_t>(size);
    else
      q = linear / size;
    offset += (linear - q * size) * d.stride[i];
    linear = q;
  }
  if (d.n > 0) offset += linear * d.stride[0];
  return offset;
}

template <typename V>
__device__ __forceinline__ V shfl_down(unsigned mask, V v, int delta, int width) {
  if constexpr (IsArgAcc<V>::value) {
    return V{shfl_down(mask, v.value, delta, width), shfl_down(mask, v.index, delta, width)};
  } else if constexpr (std::is_same_v<V, bool>) {
    return __shfl_down_sync(mask, static_cast<int>(v), delta, width) != 0;
  } else if constexpr (std::is_integral_v<V> && sizeof(V) < 4) {  // int8/uint8/int16 max/min
    return static_cast<V>(__shfl_down_sync(mask, static_cast<int>(v), delta, width));
  } else if constexpr (std::is_same_v<V, int64_t>) {
    return static_cast<int64_t>(__shfl_down_sync(mask, static_cast<long long>(v), delta, width));
  } else {
    return __shfl_down_sync(mask, v, delta, width);
  }
}

// Folds positions first, first + step, ... below end of one output (offsets from `offset`).
// kUnroll loads are issued before they are folded so that each thread keeps several memory
// requests in flight.
template <typename Op, int kUnroll, typename OffsetFn>
__host__ __device__ __forceinline__ typename Op::Acc fold_strided(typename Op::Acc acc,
                                                                  const typename Op::In* base,
                                                                  int64_t first, int64_t end,
                                                                  int64_t step, OffsetFn offset) {
  int64_t r = first;
  for (; r + (kUnroll - 1) * step < end; r += kUnroll * step) {
    typename Op::In v[kUnroll];
    TL_REDUCE_UNROLL
    for (int u = 0; u < kUnroll; ++u) v[u] = base[offset(r + u * step)];
    TL_REDUCE_UNROLL
    for (int u = 0; u < kUnroll; ++u) acc = Op::step(acc, v[u], r + u * step);
  }
  for (; r < end; r += step) acc = Op::step(acc, base[offset(r)], r);
  return acc;
}

// Several reduced dims (rare after coalescing) cost divisions per element; that path is kept
// small (no unrolling) so it does not bloat the common single-dim path.
template <typename Op>
__host__ __device__ __forceinline__ typename Op::Acc fold_range(const ReducePlan& p,
                                                                typename Op::Acc acc,
                                                                const typename Op::In* base,
                                                                int64_t first, int64_t end,
                                                                int64_t step) {
  if (p.red.n <= 1) {
    const int64_t rs = p.red.n == 1 ? p.red.stride[0] : 0;
    return fold_strided<Op, 4>(acc, base, first, end, step, [rs](int64_t r) { return r * rs; });
  }
  return fold_strided<Op, 1>(acc, base, first, end, step,
                             [&p](int64_t r) { return offset_of(p.red, r); });
}

template <typename T, int N>
struct alignas(16) Pack {
  T v[N];
};

// Positions [rb, re) of a unit-stride row: a scalar head up to 16-byte alignment (rows of a
// sliced or odd-width tensor start anywhere), 16-byte loads, then a scalar tail.
template <typename Op>
__host__ __device__ __forceinline__ typename Op::Acc fold_row_vectorized(typename Op::Acc acc,
                                                                         const typename Op::In* row,
                                                                         int64_t rb, int64_t re,
                                                                         int lane, int lanes) {
  using T = typename Op::In;
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kUnroll = 2;
  using V = Pack<T, kVec>;
  const auto address = reinterpret_cast<uintptr_t>(row + rb);
  int64_t head = static_cast<int64_t>(((16 - (address & 15)) & 15) / sizeof(T));
  if (head > re - rb) head = re - rb;
  for (int64_t i = lane; i < head; i += lanes) acc = Op::step(acc, row[rb + i], rb + i);
  const int64_t vb = rb + head;
  const int64_t n_vec = (re - vb) / kVec;
  const V* vp = reinterpret_cast<const V*>(row + vb);
  int64_t i = lane;
  for (; i + (kUnroll - 1) * lanes < n_vec; i += kUnroll * lanes) {
    V v[kUnroll];
    TL_REDUCE_UNROLL
    for (int u = 0; u < kUnroll; ++u) v[u] = vp[i + u * lanes];
    TL_REDUCE_UNROLL
    for (int u = 0; u < kUnroll; ++u) TL_REDUCE_UNROLL
    for (int e = 0; e < kVec; ++e) acc = Op::step(acc, v[u].v[e], vb + (i + u * lanes) * kVec + e);
  }
  for (; i < n_vec; i += lanes) {
    const V v = vp[i];
    TL_REDUCE_UNROLL
    for (int e = 0; e < kVec; ++e) acc = Op::step(acc, v.v[e], vb + i * kVec + e);
  }
  for (int64_t r = vb + n_vec * kVec + lane; r < re; r += lanes) acc = Op::step(acc, row[r], r);
  return acc;
}

// One thread's share of output o: its lane's positions of the slice [rb, re).
template <typename Op>
__host__ __device__ __forceinline__ typename Op::Acc fold_output(const ReducePlan& p,
                                                                 const typename Op::In* in,
                                                                 int64_t o, int64_t rb, int64_t re,
                                                                 int lane, int lanes) {
  const typename Op::In* base = in + offset_of(p.kept, o);
  if constexpr (sizeof(typename Op::In) <= 8)
    if (p.vector) return fold_row_vectorized<Op>(Op::identity(), base, rb, re, lane, lanes);
  return fold_range<Op>(p, Op::identity(), base, rb + lane, re, lanes);
}

// Combines the accumulators of the x lanes of each row of the block; lane 0 gets the result.
// Every thread of the block must call it.
template <typename Op>
__device__ __forceinline__ typename Op::Acc combine_x(typename Op::Acc acc,
                                                      typename Op::Acc* shared) {
  const int bx = blockDim.x, tx = threadIdx.x;
  const int threads = bx * blockDim.y;  // a power of two; below 32 the warp is partial
  const unsigned mask = threads >= 32 ? 0xffffffffu : (1u << threads) - 1u;
  const int width = bx < 32 ? bx : 32;
  for (int d = width / 2; d > 0; d /= 2) acc = Op::combine(acc, shfl_down(mask, acc, d, width));
  if (bx <= 32) return acc;
  const int warps = bx / 32, row = threadIdx.y * warps;
  if (tx % 32 == 0) shared[row + tx / 32] = acc;
  __syncthreads();
  if (tx < 32) {  // the row's first warp, whole
    acc = tx < warps ? shared[row + tx] : Op::identity();
    for (int d = warps / 2; d > 0; d /= 2)
      acc = Op::combine(acc, shfl_down(0xffffffffu, acc, d, 32));
  }
  __syncthreads();  // shared is written again for the block's next outputs
  return acc;
}

// Combines the accumulators of the y lanes of each column; ty == 0 gets the result.
template <typename Op>
__device__ __forceinline__ typename Op::Acc combine_y(typename Op::Acc acc,
                                                      typename Op::Acc* shared) {
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  if (by == 1) return acc;
  shared[ty * bx + tx] = acc;
  __syncthreads();
  for (int s = by / 2; s > 0; s /= 2) {
    if (ty < s)
      shared[ty * bx + tx] = Op::combine(shared[ty * bx + tx], shared[(ty + s) * bx + tx]);
    __syncthreads();
  }
  // Only ty == 0 reads: other threads may already be writing their rows for the next outputs.
  return ty == 0 ? shared[tx] : acc;
}

// Reads a partial written by another block of this launch: from L2 (ld.global.cg), as the L1 of
// this SM may hold an older copy of the line (loaded by a block that folded a neighbouring output).
template <typename V>
__device__ __forceinline__ V load_from_l2(const V* p) {
  if constexpr (IsArgAcc<V>::value) {
    return V{load_from_l2(&p->value), load_from_l2(&p->index)};
  } else {
    static_assert(sizeof(V) == 1 || sizeof(V) == 2 || sizeof(V) == 4 || sizeof(V) == 8);
    using Bits = std::conditional_t<
        sizeof(V) == 1, unsigned char,
        std::conditional_t<sizeof(V) == 2, unsigned short,
                           std::conditional_t<sizeof(V) == 4, unsigned, unsigned long long>>>;
    const Bits bits = __ldcg(reinterpret_cast<const Bits*>(p));
    V v;
    memcpy(&v, &bits, sizeof(V));
    return v;
  }
}

// After every slice of a split reduction wrote its partials of one output block, the last block
// to arrive folds them into out and resets the block's arrival counter for the next launch on
// this stream (launches on one stream never overlap; each stream has its own counters). The
// fences are the classic pattern: partials are visible device-wide before an arrival is counted,
// and the last block reads them only after it saw every arrival. Every thread must call it.
template <typename Op>
__device__ __forceinline__ void fold_if_last(const ReducePlan& p, const typename Op::Acc* partial,
                                             typename Op::Out* out, unsigned* arrival, int64_t o,
                                             int lane, int lanes, typename Op::Acc* shared) {
  using Partial = typename Op::Partial;
  using Acc = typename Op::Acc;
  __shared__ bool last;
  __syncthreads();  // the block's partials are written
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    __threadfence();
    last = atomicAdd(arrival, 1u) == gridDim.y - 1;
    if (last) *arrival = 0;
  }
  __syncthreads();
  if (!last) return;  // the same for the whole block
  __threadfence();
  Acc acc = Partial::identity();
  if (o < p.n_out)
    for (int64_t s = lane; s < gridDim.y; s += lanes)
      acc = Partial::step(acc, load_from_l2(partial + s * p.n_out + o), s);
  acc = p.inner ? combine_x<Partial>(acc, shared) : combine_y<Partial>(acc, shared);
  if (lane == 0 && o < p.n_out) out[o] = Partial::finalize(acc, p.mean_divisor);
}

// arrivals: p.to_partial only, one zeroed counter per output block (blockIdx.x's loop included).
template <typename Op>
__global__ void __launch_bounds__(kMaxThreads)
    reduce_kernel(const __grid_constant__ ReducePlan p, const typename Op::In* __restrict__ in,
                  typename Op::Out* __restrict__ out, typename Op::Acc* partial,
                  unsigned* arrivals) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kMaxThreads];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int lane = p.inner ? tx : ty;
  const int lanes = p.inner ? blockDim.x : blockDim.y;
  const int64_t per_block = p.inner ? blockDim.y : blockDim.x;
  const int64_t slot = p.inner ? ty : tx;
  const int64_t rb = static_cast<int64_t>(blockIdx.y) * p.chunk;
  const int64_t re = p.n_red - rb < p.chunk ? p.n_red : rb + p.chunk;
  const int64_t n_blocks = (p.n_out + per_block - 1) / per_block;
  for (int64_t ob = blockIdx.x; ob < n_blocks; ob += gridDim.x) {
    const int64_t o = ob * per_block + slot;
    Acc acc = o < p.n_out ? fold_output<Op>(p, in, o, rb, re, lane, lanes) : Op::identity();
    acc = p.inner ? combine_x<Op>(acc, shared) : combine_y<Op>(acc, shared);
    if (!p.to_partial) {
      if (lane == 0 && o < p.n_out) out[o] = Op::finalize(acc, p.mean_divisor);
      continue;
    }
    if (lane == 0 && o < p.n_out) partial[static_cast<int64_t>(blockIdx.y) * p.n_out + o] = acc;
    fold_if_last<Op>(p, partial, out, arrivals + ob, o, lane, lanes, shared);
  }
}

}  // namespace tensorlet::cuda::reduction

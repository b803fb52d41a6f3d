// Host-side planning of a CUDA reduction (cuda_reduce.cu): splits a tensor's dims into coalesced
// kept and reduced lists, then picks the kernel's thread layout and whether the reduced range is
// split over blocks (see cuda_reduce_kernel.cuh). Pure functions of shapes, strides and the SM
// count, so the same problem always runs the same way (and gives the same float rounding).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "tensorlet/backends/cuda/cuda_reduce_kernel.cuh"
#include "tensorlet/tensor/shape.h"

namespace tensorlet::cuda::reduction {

// A thread folds at least this many elements (vectors on the 16-byte path) before another lane
// shares its output, and at least kSplitWork per slice before a reduction is split over blocks.
constexpr int64_t kPerThread = 4;
constexpr int64_t kSplitWork = 32;
// Slice lengths are a multiple of this, so slices of a unit-stride row stay 16-byte aligned.
constexpr int64_t kSliceAlign = 64;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The smallest power of two >= v, for v in [1, kMaxThreads]; larger v give kMaxThreads.
inline int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v && p < kMaxThreads) p *= 2;
  return p;
}

inline void push(Dims& d, int64_t size, int64_t stride) {
  d.size[d.n] = size;
  d.stride[d.n] = stride;
  ++d.n;
}

// Merges each dim into the previous one when the pair steps like a single dim (this keeps
// row-major linear indices, so output order and arg positions are unchanged).
inline void coalesce(Dims& d) {
  int m = 0;
  for (int i = 0; i < d.n; ++i) {
    if (m > 0 && d.stride[m - 1] == d.stride[i] * d.size[i]) {
      d.size[m - 1] *= d.size[i];
      d.stride[m - 1] = d.stride[i];
    } else {
      d.size[m] = d.size[i];
      d.stride[m] = d.stride[i];
      ++m;
    }
  }
  d.n = m;
}

// Splits a tensor's dims (shape, strides) into kept and reduced lists, dropping extent-1 dims. When
// positions do not matter the reduced dims are ordered by decreasing stride, so a permuted input is
// read in order.
template <typename IsReduced>
void split_dims(const Shape& shape, const Shape& strides, IsReduced is_reduced, bool order_matters,
                ReducePlan& p) {
  for (int64_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    push(is_reduced(d) ? p.red : p.kept, shape[d], strides[d]);
  }
  if (!order_matters) {  // a stable insertion sort: at most 16 dims
    for (int i = 1; i < p.red.n; ++i)
      for (int j = i; j > 0 && std::abs(p.red.stride[j - 1]) < std::abs(p.red.stride[j]); --j) {
        std::swap(p.red.size[j - 1], p.red.size[j]);
        std::swap(p.red.stride[j - 1], p.red.stride[j]);
      }
  }
  coalesce(p.kept);
  coalesce(p.red);
}

// How far apart adjacent elements of the innermost dim are; a broadcast (stride 0) dim reads one
// address, so it counts as the farthest.
inline uint64_t distance(const Dims& d) {
  const int64_t s = d.stride[d.n - 1];
  return s == 0 ? UINT64_MAX : static_cast<uint64_t>(std::abs(s));
}

// Blocks per SM that a launch aims to fill; a reduction is split only while its output blocks are
// fewer than sms * this, so that also bounds the arrival counters a split launch needs.
constexpr int64_t kBlocksPerSm = 16;
inline int64_t max_split_output_blocks(int sms) { return int64_t{sms} * kBlocksPerSm; }

struct Launch {
  dim3 grid, block;
};

// Picks the thread layout and the split of p (see cuda_reduce_kernel.cuh); fills p's launch
// fields. elem_size: bytes of an input element (for the 16-byte path); resident(threads): how
// many blocks of that many threads one SM holds at once (the kernel's occupancy).
template <typename ResidentBlocks>
Launch configure(ReducePlan& p, size_t elem_size, bool allow_split, int sms,
                 ResidentBlocks resident) {
  p.inner = p.kept.n == 0 || (p.red.n > 0 && distance(p.red) < distance(p.kept));
  p.vector = p.inner && elem_size <= 8 && p.red.n == 1 && p.red.stride[0] == 1;
  const int64_t per_thread = kPerThread * (p.vector ? static_cast<int64_t>(16 / elem_size) : 1);
  int64_t bx, by;
  if (p.inner) {
    bx = pow2_at_least(ceil_div(p.n_red, per_thread));
    by = std::min(kMaxThreads / bx, pow2_at_least(p.n_out));
  } else {
    // A warp's x threads read 32 adjacent outputs; when the reduction is short, more of them.
    bx = std::min<int64_t>(pow2_at_least(p.n_out), 32);
    by = std::min(pow2_at_least(ceil_div(p.n_red, per_thread)), kMaxThreads / bx);
    bx = std::min(pow2_at_least(p.n_out), kMaxThreads / by);
  }
  const int64_t threads = bx * by;
  const int64_t out_blocks = ceil_div(p.n_out, p.inner ? by : bx);
  const int64_t lanes = p.inner ? bx : by;
  // Blocks that fill every SM once; fewer output blocks than that leave the GPU idle unless
  // the reduced range is split too. Once and no more: the kernel's registers decide how many
  // blocks an SM holds, and a split into more slices than fit runs a second wave with a tail
  // (float16 sum of 64M on an H100: 52.9 us asking 4 blocks of 512 per SM, 50.5 us with the 2
  // that fit at 64 registers).
  const int64_t target =
      int64_t{sms} * std::clamp<int64_t>(resident(static_cast<int>(threads)), 1, kBlocksPerSm);
  int64_t splits = 1;
  if (allow_split && out_blocks < target)
    splits = std::max<int64_t>(
        1, std::min(ceil_div(target, out_blocks), p.n_red / (lanes * kSplitWork)));
  p.chunk = p.n_red;
  if (splits > 1) {
    splits = std::min<int64_t>(splits, 65535);
    p.chunk = ceil_div(ceil_div(p.n_red, splits), kSliceAlign) * kSliceAlign;
    splits = ceil_div(p.n_red, p.chunk);
  }
  p.to_partial = splits > 1;
  const int64_t grid_x = std::min<int64_t>(out_blocks, INT32_MAX);  // the kernel loops past it
  return {dim3(static_cast<unsigned>(grid_x), static_cast<unsigned>(splits)),
          dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by))};
}

}  // namespace tensorlet::cuda::reduction

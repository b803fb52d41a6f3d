// Stream compaction for nonzero and masked_select: a count pass over tiles, prefix sums of the
// tile counts, and a write pass in which each block places its tile's selected elements at its
// tile's offset, in order. Only cuda_index.cu includes it.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "tensorlet/backends/cuda/cuda_index_common.cuh"

namespace tensorlet::cuda::compact {

constexpr int kThreads = 256;
// Rounds of one 16-byte load per thread that make a block's tile: the loads of all rounds are in
// flight together, and a tile is large enough that the prefix sums over tiles stay small.
constexpr int kRounds = 4;

template <typename Bits>
constexpr int kPerThread = static_cast<int>(16 / sizeof(Bits));  // elements per 16-byte load
template <typename Bits>
constexpr int kRound = kThreads* kPerThread<Bits>;
template <typename Bits>
constexpr int kTile = kRounds* kRound<Bits>;

// Element i is selected when (its bits & mask) != 0: the mask drops the sign bit of floats, so
// -0.0 counts as zero and NaN as non-zero, as `x != 0` does on the CPU.
template <typename Bits>
struct FlagSource {
  const Bits* data;
  Bits mask;
  bool contiguous;       // element i is data[i]
  bool vector;           // contiguous and 16-byte aligned: whole rounds load as uint4
  StridedIndexer<1> ix;  // element offsets when not contiguous
};

// Bit e set when element first + e is selected, for the kPerThread elements from `first`.
template <typename Bits, typename IndexT>
__device__ __forceinline__ uint32_t load_flags(const FlagSource<Bits>& src, IndexT first,
                                               IndexT n) {
  constexpr int kE = kPerThread<Bits>;
  uint32_t flags = 0;
  if (src.vector && first + kE <= n) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(src.data + first));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < kE; ++e) {
      Bits b;
      if constexpr (sizeof(Bits) == 1) {
        b = static_cast<Bits>(w[e >> 2] >> ((e & 3) * 8));
      } else if constexpr (sizeof(Bits) == 2) {
        b = static_cast<Bits>(w[e >> 1] >> ((e & 1) * 16));
      } else if constexpr (sizeof(Bits) == 4) {
        b = w[e];
      } else {
        static_assert(sizeof(Bits) == 8, "flags are read from 1-, 2-, 4- or 8-byte elements");
        b = (static_cast<uint64_t>(w[2 * e + 1]) << 32) | w[2 * e];
      }
      flags |= static_cast<uint32_t>((b & src.mask) != 0) << e;
    }
    return flags;
  }
  for (int e = 0; e < kE; ++e) {
    const IndexT i = first + e;
    if (i >= n) break;
    const Bits b = src.contiguous ? src.data[i] : src.data[element_offset(src.ix, i)];
    flags |= static_cast<uint32_t>((b & src.mask) != 0) << e;
  }
  return flags;
}

template <typename Bits, typename IndexT>
__device__ __forceinline__ IndexT tile_start() {
  return static_cast<IndexT>(blockIdx.x) * static_cast<IndexT>(kTile<Bits>);
}

// counts[b] = selected elements in tile b.
template <typename Bits, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    count_kernel(const __grid_constant__ FlagSource<Bits> src, IndexT n, int64_t* counts) {
  const IndexT tile = tile_start<Bits, IndexT>();
  int count = 0;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const IndexT first = tile + r * kRound<Bits> + threadIdx.x * kPerThread<Bits>;
    if (first < n) count += __popc(load_flags(src, first, n));
  }
  using Reduce = cub::BlockReduce<int, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const int total = Reduce(storage).Sum(count);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

constexpr int kScanThreads = 512;
constexpr int kScanItems = 8;

// In-place inclusive prefix sums of the tile counts, by one block (a tile holds thousands of
// elements, so there are few tiles): data[b] becomes the end of tile b's output.
__global__ void __launch_bounds__(kScanThreads) scan_kernel(int64_t* data, int64_t n) {
  using Scan = cub::BlockScan<int64_t, kScanThreads>;
  __shared__ typename Scan::TempStorage storage;
  int64_t carry = 0;
  for (int64_t base = 0; base < n; base += int64_t{kScanThreads} * kScanItems) {
    const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kScanItems;
    int64_t v[kScanItems];
#pragma unroll
    for (int k = 0; k < kScanItems; ++k) v[k] = first + k < n ? data[first + k] : 0;
    int64_t sum = 0;
    Scan(storage).InclusiveSum(v, v, sum);
#pragma unroll
    for (int k = 0; k < kScanItems; ++k)
      if (first + k < n) data[first + k] = v[k] + carry;
    carry += sum;
    __syncthreads();  // storage is reused by the next chunk
  }
}

// The selected elements of this block's tile, round by round: a block scan of the per-thread
// counts says where each selected element goes, the selected positions are staged in shared
// memory, and emit(round_start, list, count, at) then writes the round's `count` results from
// output position `at` on, consecutive threads on consecutive output words (coalesced stores at
// any density).
template <typename Bits, typename IndexT, typename Emit>
__device__ __forceinline__ void compact_tile(const FlagSource<Bits>& src, IndexT n, int64_t at,
                                             Emit&& emit) {
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage storage;
  __shared__ uint16_t list[kRound<Bits>];  // positions within the round
  const IndexT tile = tile_start<Bits, IndexT>();
  uint32_t flags[kRounds];
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const IndexT first = tile + r * kRound<Bits> + threadIdx.x * kPerThread<Bits>;
    flags[r] = first < n ? load_flags(src, first, n) : 0;
  }
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const IndexT round_start = tile + r * kRound<Bits>;
    if (round_start >= n) break;  // the same for every thread of the block
    int pos = 0, count = 0;
    Scan(storage).ExclusiveSum(__popc(flags[r]), pos, count);
    for (uint32_t f = flags[r]; f != 0; f &= f - 1)
      list[pos++] = static_cast<uint16_t>(threadIdx.x * kPerThread<Bits> + __ffs(f) - 1);
    __syncthreads();
    emit(round_start, static_cast<const uint16_t*>(list), count, at);
    at += count;
    __syncthreads();  // list and storage are reused by the next round
  }
}

// Row-major linear index -> coordinates: coordinate d = (i / inner[d]) % size[d].
struct Unravel {
  int ndim;
  FastDiv by_ndim;                              // output word -> row
  FastDiv inner32[kMaxDims], size32[kMaxDims];  // 32-bit index math
  int64_t inner[kMaxDims], size[kMaxDims];      // 64-bit index math
};

// out[row, d] = coordinate d of the row-th selected element, rows in row-major order.
template <typename Bits, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    nonzero_kernel(const __grid_constant__ FlagSource<Bits> src, IndexT n,
                   const int64_t* __restrict__ ends, const __grid_constant__ Unravel un,
                   int64_t* __restrict__ out) {
  // Threads of a warp need different dims' divisors: shared memory serves them in one pass,
  // where the constant bank of kernel parameters would serialize them.
  __shared__ FastDiv inner[kMaxDims], size[kMaxDims];
  const int nd = un.ndim;
  if (threadIdx.x < nd) {
    inner[threadIdx.x] = un.inner32[threadIdx.x];
    size[threadIdx.x] = un.size32[threadIdx.x];
  }
  __syncthreads();
  const int64_t at = blockIdx.x == 0 ? 0 : ends[blockIdx.x - 1];
  compact_tile<Bits, IndexT>(
      src, n, at, [&](IndexT start, const uint16_t* list, int count, int64_t row0) {
        int64_t* dst = out + row0 * nd;
        const int words = count * nd;
        for (int w = threadIdx.x; w < words; w += kThreads) {
          const int row = static_cast<int>(un.by_ndim.div(w));
          const int d = w - row * nd;
          const IndexT i = start + list[row];
          if constexpr (sizeof(IndexT) == 4) {
            const uint32_t q = inner[d].div(i);
            dst[w] = q - size[d].div(q) * size[d].divisor;
          } else {
            dst[w] = static_cast<int64_t>((i / static_cast<IndexT>(un.inner[d])) %
                                          static_cast<IndexT>(un.size[d]));
          }
        }
      });
}

// out[k] = in at the k-th selected element of the mask (in and mask of one shape).
template <typename V, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    masked_select_kernel(const __grid_constant__ FlagSource<uint8_t> mask, IndexT n,
                         const int64_t* __restrict__ ends, const V* __restrict__ in,
                         const __grid_constant__ StridedIndexer<1> in_ix, bool in_contiguous,
                         V* __restrict__ out) {
  const int64_t at = blockIdx.x == 0 ? 0 : ends[blockIdx.x - 1];
  compact_tile<uint8_t, IndexT>(
      mask, n, at, [&](IndexT start, const uint16_t* list, int count, int64_t k0) {
        for (int w = threadIdx.x; w < count; w += kThreads) {
          const IndexT i = start + list[w];
          out[k0 + w] = in[in_contiguous ? static_cast<int64_t>(i) : element_offset(in_ix, i)];
        }
      });
}

}  // namespace tensorlet::cuda::compact

// cumsum of few long rows in one pass (issue 30's O4): a decoupled look-back inclusive scan of
// our own, for ArithmeticScan<T, false> (every dtype's cumsum). cub::DeviceScan with a double
// accumulator runs CUB's generic tuning for 8-byte values (0.55 of a copy on an H100); this
// kernel moves the elements as T with 16-byte accesses and keeps only a few values in acc_t<T>.
//
// One launch covers every row. A tile is 256 threads x 4 vectors of 16 bytes (4096 float32,
// 2048 float64); tiles are numbered row by row and handed out in launch order by an atomic
// counter, so a block only ever waits for tiles handed out before its own, whose blocks are
// already running: forward progress holds whatever order the hardware starts blocks in
// (blockIdx would not promise that).
//
// Inside a tile, warp w owns a contiguous run of 32 x 4 vectors; vector j of lane l is the run's
// vector j * 32 + l, so each load instruction of a warp reads 512 contiguous bytes. The scan order
// inside a warp is therefore column j, then lane, then element: a thread sums each vector
// serially, a shuffle scan over lanes gives each vector the sum of its column's earlier lanes,
// and lane 31 turns the column totals into column offsets and the warp's total (shared memory).
// Warp 0 takes the tile's aggregate through CUB's TilePrefixCallbackOp (cub::ScanTileState<acc>:
// status and value in one 16-byte word, as DeviceScan does), and each output is the running value
// from tile prefix + warp prefix + column offset + lane prefix, adding the vector's elements one
// at a time, all in acc_t<T> (double for float32): one rounding to T per output, as the CPU's loop.
//
// The identity is -0.0 for floating accumulators, not +0.0: -0.0 + x is x for every x, so a sum
// with nothing before it keeps its sign (the CPU's cumsum of [-0.0] is -0.0).
#pragma once

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda::single_pass_scan {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// A thread holds kLoads 16-byte vectors: 16 float32 or 8 float64 elements, a tile 16 KiB of T.
constexpr int kLoads = 4;
// Blocks per SM the register budget is held to (64 registers a thread): a block keeps its
// tile's loads in flight from its start to its look-back, so the bytes in flight, and with them
// the bandwidth, grow with the resident blocks.
constexpr int kMinBlocksPerSm = 4;
constexpr int kInitThreads = 256;
// The tile counter sits at the start of the temp buffer; the tile states follow, 16-byte aligned.
constexpr size_t kCounterBytes = 256;
// cub::ScanTileState sizes its storage in int: (tiles + 32) * 16 bytes must fit.
constexpr int64_t kMaxTiles = INT_MAX / 16 - 64;

// Elements per 16-byte vector, per thread, per tile.
template <typename T>
constexpr int kVec = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));
template <typename T>
constexpr int kItems = (kLoads * kVec<T>);
template <typename T>
constexpr int kTileItems = (kThreads * kItems<T>);

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <typename Acc>
__device__ __forceinline__ Acc identity() {
  if constexpr (std::is_floating_point_v<Acc>)
    return static_cast<Acc>(-0.0);
  else
    return Acc{};
}

// The functor's combine as the binary operator CUB's look-back applies (earlier, later).
template <typename F>
struct Combine {
  __device__ __forceinline__ typename F::Acc operator()(typename F::Acc earlier,
                                                        typename F::Acc later) const {
    return F::combine(earlier, later);
  }
};

// Makes the compiler forget what v holds, so the conversions to Acc done before this point are
// not reused after it: reused, the converted values would stay live in registers (16 doubles for
// float32) where only the 16-byte vector should.
template <typename T, int V>
__device__ __forceinline__ void forget_values(Vec<T, V>& v) {
  static_assert(sizeof(Vec<T, V>) == 16, "one 16-byte vector");
  unsigned w[4];
  memcpy(w, &v, sizeof(w));
  asm volatile("" : "+r"(w[0]), "+r"(w[1]), "+r"(w[2]), "+r"(w[3]));
  memcpy(&v, w, sizeof(w));
}

// 16-byte loads and stores marked evict-first (ld.global.cs / st.global.cs): x is read once and
// y written once. Measured, not derived: 0.68 to 0.71 of a copy for 64M float32 in a standalone
// copy of this kernel on an H200 (issue 30); our guess is that the tile states every look-back
// polls then stay in L2.
template <typename T, int V>
__device__ __forceinline__ Vec<T, V> load_streaming(const Vec<T, V>* p) {
  const int4 bits = __ldcs(reinterpret_cast<const int4*>(p));
  Vec<T, V> v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

template <typename T, int V>
__device__ __forceinline__ void store_streaming(Vec<T, V>* p, const Vec<T, V>& v) {
  int4 bits;
  memcpy(&bits, &v, sizeof bits);
  __stcs(reinterpret_cast<int4*>(p), bits);
}

inline __host__ __device__ bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Marks every tile not yet done (CUB's InitializeStatus, which also writes the 32 padding
// states before tile 0 that the look-back window of the first tiles reads) and zeroes the tile
// counter, in stream order before the scan, so a replayed CUDA graph starts from zero too.
template <typename Acc>
__global__ void __launch_bounds__(kInitThreads)
    init_tiles_kernel(cub::ScanTileState<Acc> state, int num_tiles, unsigned* counter) {
  state.InitializeStatus(num_tiles);
  if (blockIdx.x == 0 && threadIdx.x == 0) *counter = 0;
}

// One tile per block: rows of n elements at x and y, tiles_per_row tiles each.
template <typename T, typename F>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    scan_sum_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, int tiles_per_row,
                    cub::ScanTileState<typename F::Acc> state, unsigned* counter) {
  using Acc = typename F::Acc;
  constexpr int V = kVec<T>;
  constexpr int kWarpItems = 32 * kItems<T>;
  constexpr int kTile = kTileItems<T>;
  constexpr unsigned kFull = 0xffffffffu;
  using Prefix = cub::TilePrefixCallbackOp<Acc, Combine<F>, cub::ScanTileState<Acc>>;
  __shared__ typename Prefix::TempStorage prefix_storage;
  __shared__ Acc column_offsets[kWarps][kLoads];  // column j's start within warp w
  __shared__ Acc warp_totals[kWarps];
  __shared__ Acc tile_prefix;
  __shared__ int tile_slot;

  if (threadIdx.x == 0) tile_slot = static_cast<int>(atomicAdd(counter, 1u));
  __syncthreads();
  const int tile = tile_slot;
  const int row = tile / tiles_per_row;
  const int row_tile = tile - row * tiles_per_row;
  const int64_t tile_start = static_cast<int64_t>(row_tile) * kTile;
  const int64_t start = static_cast<int64_t>(row) * n + tile_start;
  const int valid = n - tile_start < kTile ? static_cast<int>(n - tile_start) : kTile;
  // Block-uniform: a partial tile, or a row whose start (n * row elements in) or view offset
  // breaks the 16-byte alignment of the input (or of the output), reads (writes) element by
  // element in the same order, so the sums, and the results, are the same bits either way.
  const bool vector_in = valid == kTile && aligned16(x + start);
  const bool vector_out = valid == kTile && aligned16(y + start);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int first = warp * kWarpItems;  // the warp's first element within the tile
  const T* in = x + start + first;
  T* out = y + start + first;

  // The elements stay in registers as T (64 bytes a thread), not as Acc: converted twice, once
  // for the vector totals and once for the outputs, they leave registers for CUB's look-back
  // (with 16 doubles held across it, ptxas spilled at 64 registers).
  Vec<T, V> raw[kLoads];
  if (vector_in) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j)
      raw[j] = load_streaming(reinterpret_cast<const Vec<T, V>*>(in) + j * 32 + lane);
  } else {
    // Past the row's end: a filler. It comes after every valid element of the row's last tile,
    // so it reaches only that tile's aggregate, which no output and no later row's look-back
    // reads (a row's look-back stops at its own first tile).
    const T filler = F::store(identity<Acc>());
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int e = (j * 32 + lane) * V + k;
        raw[j].v[k] = first + e < valid ? in[e] : filler;
      }
    }
  }

  // before[j]: the sum of column j's vectors in lanes before this one (each vector's total, then
  // an exclusive scan over lanes: shift up by one and a Kogge-Stone inclusive scan, the columns
  // interleaved for ILP). Lane 31 then holds each column's total.
  Acc total[kLoads], before[kLoads];
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    total[j] = F::load(raw[j].v[0]);
#pragma unroll
    for (int k = 1; k < V; ++k) total[j] = F::combine(total[j], F::load(raw[j].v[k]));
    const Acc up = __shfl_up_sync(kFull, total[j], 1);
    before[j] = lane == 0 ? identity<Acc>() : up;
  }
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const Acc up = __shfl_up_sync(kFull, before[j], d);
      if (lane >= d) before[j] = F::combine(up, before[j]);
    }
  }
  if (lane == 31) {
    Acc running = identity<Acc>();
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      column_offsets[warp][j] = running;
      running = F::combine(running, F::combine(before[j], total[j]));
    }
    warp_totals[warp] = running;
  }
  __syncthreads();

  // Warp 0 publishes the tile's aggregate and looks back for its prefix. The first tile of a
  // row has none and publishes its inclusive sum at once (every tile publishes a status: a later
  // row's look-back window may wait on it, though it stops at that row's first tile).
  if (warp == 0) {
    Acc aggregate = warp_totals[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) aggregate = F::combine(aggregate, warp_totals[w]);
    Acc prefix = identity<Acc>();
    if (row_tile == 0) {
      if (lane == 0) state.SetInclusive(tile, aggregate);
    } else {
      Prefix look_back(state, prefix_storage, Combine<F>{}, tile);
      prefix = look_back(aggregate);  // valid in lane 0
    }
    if (lane == 0) tile_prefix = prefix;
  }
  Acc warp_prefix = identity<Acc>();
  for (int w = 0; w < warp; ++w) warp_prefix = F::combine(warp_prefix, warp_totals[w]);
  __syncthreads();

  // Each output: the running value from the vector's offset, one element at a time, rounded to
  // T once.
  const Acc base = F::combine(tile_prefix, warp_prefix);
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    forget_values(raw[j]);
    Acc running = F::combine(F::combine(base, column_offsets[warp][j]), before[j]);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      running = F::combine(running, F::load(raw[j].v[k]));
      raw[j].v[k] = F::store(running);
    }
  }
  if (vector_out) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j)
      store_streaming(reinterpret_cast<Vec<T, V>*>(out) + j * 32 + lane, raw[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int e = (j * 32 + lane) * V + k;
        if (first + e < valid) out[e] = raw[j].v[k];
      }
    }
  }
}

// Scans `rows` contiguous rows of n elements from x into y on stream s; temp storage (the tile
// counter and states) from the caching allocator. False, with nothing launched, when the tiles
// are too many for CUB's int-sized tile states (rows of over 5 * 10^11 elements): the caller
// takes another path.
template <typename T, typename F>
bool scan_sum_rows(const T* x, T* y, int64_t rows, int64_t n, Device device, cudaStream_t s) {
  using Acc = typename F::Acc;
  using State = cub::ScanTileState<Acc>;
  static_assert(sizeof(typename State::TxnWord) <= 16, "status and value in one word");
  const int64_t tiles_per_row = (n + kTileItems<T> - 1) / kTileItems<T>;
  if (rows < 1 || tiles_per_row > kMaxTiles / rows) return false;
  const int num_tiles = static_cast<int>(rows * tiles_per_row);
  size_t state_bytes = 0;
  TL_CUDA_CHECK(State::AllocationSize(num_tiles, state_bytes));
  Tensor temp = make_tensor({static_cast<int64_t>(kCounterBytes + state_bytes)}, kUInt8, device);
  auto* base = static_cast<unsigned char*>(temp.data_ptr());
  auto* counter = reinterpret_cast<unsigned*>(base);
  State state;
  TL_CUDA_CHECK(state.Init(num_tiles, base + kCounterBytes, state_bytes));
  const unsigned init_grid = static_cast<unsigned>((num_tiles + kInitThreads - 1) / kInitThreads);
  init_tiles_kernel<Acc><<<init_grid, kInitThreads, 0, s>>>(state, num_tiles, counter);
  check_launch(s, "init_tiles_kernel");
  scan_sum_kernel<T, F><<<static_cast<unsigned>(num_tiles), kThreads, 0, s>>>(
      x, y, n, static_cast<int>(tiles_per_row), state, counter);
  check_launch(s, "scan_sum_kernel");
  return true;
}

}  // namespace tensorlet::cuda::single_pass_scan

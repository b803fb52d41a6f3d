// Rows longer than one block's sort (cuda_sort.cu sorts the shorter ones), with CUB's device
// radix sorts of (order key, position) pairs; positions are int32 below 2^31 elements, int64
// above:
//  - one row: cub::DeviceRadixSort of its pairs;
//  - many rows (and fewer than 2^31 elements): cub::DeviceSegmentedRadixSort with a segment per
//    row;
//  - a few rows: cub::DeviceRadixSort of every (key, flat position) pair, then a stable radix sort
//    by row number on the few bits rows need, which regroups the rows with each row's order kept.
// Radix sorts are stable, so ties keep position order. One kernel then writes the results: each
// index widened to int64 from its position and, on the first two paths, each value decoded from
// its sorted key (order_value), the input read again only at keys that name no single element
// (zero, NaN). The regrouping sort carries positions alone, so the third path gathers the values.
//
// Why, for one row of 16M float32 (bound by memory traffic; bytes per element): the keys kernel
// reads 4 and writes 8 (key, int32 position); CUB's onesweep reads the keys once for its
// histograms (4), then in four 8-bit passes reads and writes a key and a position (16 each); the
// results kernel reads 8 and writes 12 (value, int64 index): 100 in all. Gathering the values at
// the positions instead would add a random 4-byte read per element (a 32-byte sector each), and
// int64 positions 8 bytes to each pass.
// Scratch comes from the caching allocator and everything runs on the current stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <limits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_sort_radix.h"
#include "tensorlet/backends/math/order_key.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

constexpr int kThreads = 256;
// With this many rows a block per row keeps the GPU busy: the segmented sort pays off.
constexpr int64_t kSegmentedMinRows = 128;

// Contiguous device scratch of `count` elements of U, from the caching allocator (freed when the
// tensor goes; later work on the same stream is ordered after this op's kernels).
template <typename U>
struct Scratch {
  Tensor t;
  U* p = nullptr;
  Scratch(int64_t count, Device device)
      : t(make_tensor({std::max<int64_t>(count, 1) * static_cast<int64_t>(sizeof(U))}, kUInt8,
                      device)),
        p(static_cast<U*>(t.data_ptr())) {}
};

// keys[f] = the (flipped) key of element f, pos[f] = f.
template <typename T, typename P>
__global__ void make_keys_kernel(const order_load_t<T>* __restrict__ in, int64_t total,
                                 bool descending, order_key_t<T>* __restrict__ keys,
                                 P* __restrict__ pos) {
  using K = order_key_t<T>;
  const K flip = order_flip<K>(descending);
  for (int64_t f = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; f < total;
       f += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    keys[f] = static_cast<K>(order_key<T>(in[f]) ^ flip);
    pos[f] = static_cast<P>(f);
  }
}

// The row of each sorted flat position: the key of the regrouping sort.
template <typename P>
__global__ void row_keys_kernel(const P* __restrict__ pos, int64_t total, int64_t n,
                                uint32_t* __restrict__ row) {
  for (int64_t f = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; f < total;
       f += static_cast<int64_t>(gridDim.x) * blockDim.x)
    row[f] = static_cast<uint32_t>(static_cast<int64_t>(pos[f]) / n);
}

__global__ void segment_offsets_kernel(int* __restrict__ offsets, int64_t count, int n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    offsets[i] = static_cast<int>(i) * n;
}

// Output (row, r) for r < out_cols: the element at the flat position sorted[row * n + r].
template <typename L, typename P>
__global__ void gather_sorted_kernel(const L* __restrict__ in, const P* __restrict__ sorted,
                                     int64_t rows, int64_t n, int64_t out_cols,
                                     L* __restrict__ values, int64_t* __restrict__ indices,
                                     const int64_t* __restrict__ source) {
  const int64_t total = rows * out_cols;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = o / out_cols, r = o - row * out_cols;
    const int64_t f = static_cast<int64_t>(sorted[row * n + r]);
    values[o] = in[f];
    indices[o] = source ? source[f] : f - row * n;
  }
}

// Output (row, r) for r < out_cols from the sorted pair at row * n + r: the value from its key
// (order_value), read from the input only where the key names no single element (a zero or a
// NaN: the element keeps -0.0's sign and a NaN's bits, as a gather's would), so the input is not
// read again at random; the index widened to int64 (or source's entry at the position).
template <typename T, typename P>
__global__ void write_sorted_kernel(const order_load_t<T>* __restrict__ in,
                                    const order_key_t<T>* __restrict__ keys,
                                    const P* __restrict__ sorted, int64_t rows, int64_t n,
                                    int64_t out_cols, bool descending,
                                    order_load_t<T>* __restrict__ values,
                                    int64_t* __restrict__ indices,
                                    const int64_t* __restrict__ source) {
  using K = order_key_t<T>;
  const K flip = order_flip<K>(descending);
  const int64_t total = rows * out_cols;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = rows == 1 ? 0 : o / out_cols;  // one row: no 64-bit division
    const int64_t at = row * n + (o - row * out_cols);
    const K k = static_cast<K>(keys[at] ^ flip);
    const int64_t f = static_cast<int64_t>(sorted[at]);
    values[o] = order_key_exact<T>(k) ? order_value<T>(k) : in[f];
    indices[o] = source ? source[f] : f - row * n;
  }
}

// The number of bits that hold every value in [0, count).
int bits_for(int64_t count) {
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) < count) ++bits;
  return bits;
}

// A stable sort of `count` pairs by the keys' bits [0, end_bit); the results are in
// keys.Current() and pos.Current(). The DoubleBuffer form sorts between our two buffers of each,
// so CUB's scratch holds no copies of them. The count goes to CUB as a P: an int32 count selects
// 32-bit offsets and with them CUB's tuned tiles (on sm_90, 23 items a thread for a 4-byte key and
// value, against 17 with 64-bit offsets).
template <typename K, typename P>
void device_sort_pairs(cub::DoubleBuffer<K>& keys, cub::DoubleBuffer<P>& pos, int64_t count,
                       int end_bit, Device device, cudaStream_t s) {
  size_t bytes = 0;
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, pos, static_cast<P>(count), 0,
                                                end_bit, s));
  Scratch<uint8_t> temp(static_cast<int64_t>(bytes), device);
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.p, bytes, keys, pos, static_cast<P>(count), 0,
                                                end_bit, s));
}

// The same for each row of n on its own (a segment per row; rows * n < 2^31).
template <typename K>
void segmented_sort_pairs(cub::DoubleBuffer<K>& keys, cub::DoubleBuffer<int32_t>& pos, int64_t rows,
                          int64_t n, Device device, cudaStream_t s) {
  Scratch<int> offsets(rows + 1, device);
  segment_offsets_kernel<<<grid_for(rows + 1, kThreads), kThreads, 0, s>>>(offsets.p, rows + 1,
                                                                           static_cast<int>(n));
  check_launch(s, "segment_offsets_kernel");
  const int items = static_cast<int>(rows * n), segments = static_cast<int>(rows);
  constexpr int kKeyBits = 8 * sizeof(K);
  size_t bytes = 0;
  TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, keys, pos, items, segments,
                                                         offsets.p, offsets.p + 1, 0, kKeyBits, s));
  Scratch<uint8_t> temp(static_cast<int64_t>(bytes), device);
  TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.p, bytes, keys, pos, items, segments,
                                                         offsets.p, offsets.p + 1, 0, kKeyBits, s));
}

template <typename T, typename P>
void radix_sort_typed(const order_load_t<T>* x, int64_t rows, int64_t n, int64_t out_cols,
                      bool descending, order_load_t<T>* values, int64_t* indices,
                      const int64_t* source, Device device, cudaStream_t s) {
  using K = order_key_t<T>;
  constexpr int kKeyBits = 8 * sizeof(K);
  const int64_t total = rows * n;
  Scratch<K> keys_a(total, device), keys_b(total, device);
  Scratch<P> pos_a(total, device), pos_b(total, device);
  make_keys_kernel<T, P>
      <<<grid_for(total, kThreads), kThreads, 0, s>>>(x, total, descending, keys_a.p, pos_a.p);
  check_launch(s, "make_keys_kernel");
  cub::DoubleBuffer<K> keys(keys_a.p, keys_b.p);
  cub::DoubleBuffer<P> pos(pos_a.p, pos_b.p);
  const unsigned grid = grid_for(rows * out_cols, kThreads);
  bool segmented = false;
  if constexpr (sizeof(P) == 4) segmented = rows >= kSegmentedMinRows;
  if (rows == 1 || segmented) {
    if (segmented) {
      if constexpr (sizeof(P) == 4) segmented_sort_pairs(keys, pos, rows, n, device, s);
    } else {
      device_sort_pairs(keys, pos, total, kKeyBits, device, s);
    }
    write_sorted_kernel<T, P><<<grid, kThreads, 0, s>>>(
        x, keys.Current(), pos.Current(), rows, n, out_cols, descending, values, indices, source);
    check_launch(s, "write_sorted_kernel");
    return;
  }
  // Every pair at once, then a stable sort by row number. That sort carries the positions alone,
  // so the values are gathered at them.
  device_sort_pairs(keys, pos, total, kKeyBits, device, s);
  Scratch<uint32_t> row_a(total, device), row_b(total, device);
  row_keys_kernel<P>
      <<<grid_for(total, kThreads), kThreads, 0, s>>>(pos.Current(), total, n, row_a.p);
  check_launch(s, "row_keys_kernel");
  cub::DoubleBuffer<uint32_t> row(row_a.p, row_b.p);
  device_sort_pairs(row, pos, total, bits_for(rows), device, s);
  gather_sorted_kernel<<<grid, kThreads, 0, s>>>(x, pos.Current(), rows, n, out_cols, values,
                                                 indices, source);
  check_launch(s, "gather_sorted_kernel");
}

}  // namespace

void radix_sort_rows(const Tensor& in, bool descending, int64_t out_cols, const Tensor& values,
                     const Tensor& indices, const int64_t* source) {
  const int64_t rows = in.shape()[0], n = in.shape()[1];
  const Device device = in.device();
  cudaStream_t s = current_stream_handle(device.index());
  dispatch_dtype<kAllDTypes>(in.dtype(), [&]<typename T>() {
    using L = order_load_t<T>;
    const L* x = typed_ptr<const L>(in);
    L* v = typed_ptr<L>(values);
    int64_t* i = typed_ptr<int64_t>(indices);
    if (rows * n <= std::numeric_limits<int32_t>::max())
      radix_sort_typed<T, int32_t>(x, rows, n, out_cols, descending, v, i, source, device, s);
    else
      radix_sort_typed<T, int64_t>(x, rows, n, out_cols, descending, v, i, source, device, s);
  });
}

}  // namespace tensorlet::cuda

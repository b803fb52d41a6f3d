// Rows longer than one block's sort (cuda_sort.cu sorts the shorter ones), with CUB's device
// radix sorts of (order key, position) pairs:
//  - many rows (and fewer than 2^31 elements): cub::DeviceSegmentedRadixSort with a segment per
//    row;
//  - otherwise (one long row, or few): cub::DeviceRadixSort of every (key, flat position) pair,
//    then, for several rows, a stable radix sort by row number on the few bits rows need, which
//    regroups the rows with each row's order kept.
// Radix sorts are stable, so ties keep position order. The values are gathered from the input at
// the sorted positions. Scratch comes from the caching allocator and everything runs on the
// current stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <limits>
#include <optional>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_sort_radix.h"
#include "tensorlet/backends/math/order_key.h"
#include "tensorlet/core/dispatch.h"

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

// The number of bits that hold every value in [0, count).
int bits_for(int64_t count) {
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) < count) ++bits;
  return bits;
}

template <typename T, typename P>
void radix_sort_typed(const order_load_t<T>* x, int64_t rows, int64_t n, int64_t out_cols,
                      bool descending, order_load_t<T>* values, int64_t* indices,
                      const int64_t* source, Device device, cudaStream_t s) {
  using K = order_key_t<T>;
  const int64_t total = rows * n;
  Scratch<K> keys_in(total, device), keys_out(total, device);
  Scratch<P> pos_in(total, device), pos_out(total, device);
  make_keys_kernel<T, P>
      <<<grid_for(total, kThreads), kThreads, 0, s>>>(x, total, descending, keys_in.p, pos_in.p);
  check_launch(s, "make_keys_kernel");
  const P* sorted = pos_out.p;
  size_t bytes = 0;
  if constexpr (sizeof(P) == 4) {
    if (rows >= kSegmentedMinRows) {
      Scratch<int> offsets(rows + 1, device);
      segment_offsets_kernel<<<grid_for(rows + 1, kThreads), kThreads, 0, s>>>(offsets.p, rows + 1,
                                                                               static_cast<int>(n));
      check_launch(s, "segment_offsets_kernel");
      const int items = static_cast<int>(total), segments = static_cast<int>(rows);
      TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
          nullptr, bytes, keys_in.p, keys_out.p, pos_in.p, pos_out.p, items, segments, offsets.p,
          offsets.p + 1, 0, static_cast<int>(8 * sizeof(K)), s));
      Scratch<uint8_t> temp(static_cast<int64_t>(bytes), device);
      TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
          temp.p, bytes, keys_in.p, keys_out.p, pos_in.p, pos_out.p, items, segments, offsets.p,
          offsets.p + 1, 0, static_cast<int>(8 * sizeof(K)), s));
      gather_sorted_kernel<<<grid_for(rows * out_cols, kThreads), kThreads, 0, s>>>(
          x, sorted, rows, n, out_cols, values, indices, source);
      check_launch(s, "gather_sorted_kernel");
      return;
    }
  }
  // Every pair at once, then (several rows) a stable sort by row number.
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in.p, keys_out.p, pos_in.p,
                                                pos_out.p, total, 0,
                                                static_cast<int>(8 * sizeof(K)), s));
  size_t regroup_bytes = 0;
  const int row_bits = bits_for(rows);
  std::optional<Scratch<uint32_t>> row_in, row_out;
  if (rows > 1) {
    row_in.emplace(total, device);
    row_out.emplace(total, device);
    TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, regroup_bytes, row_in->p, row_out->p,
                                                  pos_out.p, pos_in.p, total, 0, row_bits, s));
  }
  Scratch<uint8_t> temp(static_cast<int64_t>(std::max(bytes, regroup_bytes)), device);
  bytes = std::max(bytes, regroup_bytes);
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.p, bytes, keys_in.p, keys_out.p, pos_in.p,
                                                pos_out.p, total, 0,
                                                static_cast<int>(8 * sizeof(K)), s));
  if (rows > 1) {
    row_keys_kernel<P>
        <<<grid_for(total, kThreads), kThreads, 0, s>>>(pos_out.p, total, n, row_in->p);
    check_launch(s, "row_keys_kernel");
    bytes = std::max(bytes, regroup_bytes);
    TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.p, bytes, row_in->p, row_out->p, pos_out.p,
                                                  pos_in.p, total, 0, row_bits, s));
    sorted = pos_in.p;
  }
  gather_sorted_kernel<<<grid_for(rows * out_cols, kThreads), kThreads, 0, s>>>(
      x, sorted, rows, n, out_cols, values, indices, source);
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

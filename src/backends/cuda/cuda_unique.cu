// unique and unique_consecutive on CUDA over the rows of [n, m]:
//  1. the rows' order: a cub::DeviceRadixSort of (order_key, position) pairs for single elements,
//     a cub::DeviceMergeSort of positions by rows_compare (ties by position) for longer rows, or
//     the rows as they are (consecutive);
//  2. a flag where a row differs from the one before it (rows_equal: NaN equals nothing) and a
//     cub::DeviceScan::InclusiveSum of the flags: each rank's group number;
//  3. one wait, for the number of groups (the result's size, as nonzero);
//  4. scatters of each group's first rank and each row's group (the inverse), a gather of each
//     group's first row (the values), and counts as differences of first ranks.
// Scratch and CUB temp storage come from the caching allocator; all on the current stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/unique_rows.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

constexpr int kThreads = 256;

// A grid-stride loop over [0, n): every kernel here is one element (or row) per iteration.
#define TL_GRID_STRIDE(i, n)                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Device memory for `count` elements of U from the caching allocator (freed with the tensor;
// later work on the stream is ordered after this op's kernels).
template <typename U>
struct Scratch {
  Tensor t;
  U* p;
  Scratch(int64_t count, Device device)
      : t(make_tensor({std::max<int64_t>(count, 1) * static_cast<int64_t>(sizeof(U))}, kUInt8,
                      device)),
        p(static_cast<U*>(t.data_ptr())) {}
};

template <typename T>
__global__ void keys_kernel(const order_load_t<T>* __restrict__ x, int64_t n,
                            order_key_t<T>* __restrict__ keys, int64_t* __restrict__ pos) {
  TL_GRID_STRIDE(i, n) {
    keys[i] = order_key<T>(x[i]);
    pos[i] = i;
  }
}

__global__ void iota_kernel(int64_t* __restrict__ pos, int64_t n) {
  TL_GRID_STRIDE(i, n) { pos[i] = i; }
}

// The lexicographic order of rows, ties by position: a strict total order, so the merge sort's
// result is the stable one and does not depend on CUB's merge pattern.
template <typename T>
struct RowLess {
  const order_load_t<T>* x;
  int64_t m;
  __host__ __device__ bool operator()(const int64_t& a, const int64_t& b) const {
    const int c = rows_compare<T>(x + a * m, x + b * m, m);
    return c < 0 || (c == 0 && a < b);
  }
};

// The row at rank i (perm null: the identity).
__device__ inline int64_t row_at(const int64_t* perm, int64_t i) { return perm ? perm[i] : i; }

template <typename T>
__global__ void flags_kernel(const order_load_t<T>* __restrict__ x, const int64_t* perm, int64_t n,
                             int64_t m, int64_t* __restrict__ flags) {
  TL_GRID_STRIDE(i, n) {
    flags[i] = i == 0 || !rows_equal<T>(x + row_at(perm, i - 1) * m, x + row_at(perm, i) * m, m);
  }
}

// group[i] (1-based, the inclusive sum of flags) of rank i: the group's first rank, and the
// row's group for the inverse.
__global__ void groups_kernel(const int64_t* perm, const int64_t* __restrict__ flags,
                              const int64_t* __restrict__ group, int64_t n,
                              int64_t* __restrict__ starts, int64_t* __restrict__ inverse) {
  TL_GRID_STRIDE(i, n) {
    const int64_t g = group[i] - 1;
    if (flags[i]) starts[g] = i;
    if (inverse) inverse[row_at(perm, i)] = g;
  }
}

template <typename L>
__global__ void values_kernel(const L* __restrict__ x, const int64_t* perm,
                              const int64_t* __restrict__ starts, int64_t u, int64_t m,
                              L* __restrict__ values) {
  TL_GRID_STRIDE(e, u * m) {
    const int64_t g = e / m, j = e - g * m;
    values[e] = x[row_at(perm, starts[g]) * m + j];
  }
}

__global__ void counts_kernel(const int64_t* __restrict__ starts, int64_t u, int64_t n,
                              int64_t* __restrict__ counts) {
  TL_GRID_STRIDE(g, u) { counts[g] = (g + 1 < u ? starts[g + 1] : n) - starts[g]; }
}

// Rows' sorted order into perm (n positions).
template <typename T>
void sort_rows_order(const order_load_t<T>* x, int64_t n, int64_t m, int64_t* perm, Device device,
                     cudaStream_t s) {
  size_t bytes = 0;
  if (m == 1) {
    using K = order_key_t<T>;
    Scratch<K> keys_in(n, device), keys_out(n, device);
    Scratch<int64_t> pos_in(n, device);
    keys_kernel<T><<<grid_for(n, kThreads), kThreads, 0, s>>>(x, n, keys_in.p, pos_in.p);
    check_launch(s, "keys_kernel");
    const int bits = static_cast<int>(8 * sizeof(K));
    TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in.p, keys_out.p, pos_in.p,
                                                  perm, n, 0, bits, s));
    Scratch<uint8_t> temp(static_cast<int64_t>(bytes), device);
    TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.p, bytes, keys_in.p, keys_out.p, pos_in.p,
                                                  perm, n, 0, bits, s));
    return;
  }
  iota_kernel<<<grid_for(n, kThreads), kThreads, 0, s>>>(perm, n);
  check_launch(s, "iota_kernel");
  const RowLess<T> less{x, m};
  TL_CUDA_CHECK(cub::DeviceMergeSort::SortKeys(nullptr, bytes, perm, n, less, s));
  Scratch<uint8_t> temp(static_cast<int64_t>(bytes), device);
  TL_CUDA_CHECK(cub::DeviceMergeSort::SortKeys(temp.p, bytes, perm, n, less, s));
}

template <typename T>
UniqueResult unique_typed(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts) {
  using L = order_load_t<T>;
  const int64_t n = in.shape()[0], m = in.shape()[1];
  const Device device = in.device();
  cudaStream_t s = current_stream_handle(device.index());
  const L* x = static_cast<const L*>(in.data_ptr());
  Scratch<int64_t> order(consecutive ? 0 : n, device);
  const int64_t* perm = nullptr;
  if (!consecutive) {
    sort_rows_order<T>(x, n, m, order.p, device, s);
    perm = order.p;
  }
  Scratch<int64_t> flags(n, device), group(n, device);
  flags_kernel<T><<<grid_for(n, kThreads), kThreads, 0, s>>>(x, perm, n, m, flags.p);
  check_launch(s, "flags_kernel");
  size_t bytes = 0;
  TL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, flags.p, group.p, n, s));
  Scratch<uint8_t> temp(static_cast<int64_t>(bytes), device);
  TL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.p, bytes, flags.p, group.p, n, s));
  int64_t u = 0;
  check_not_capturing("waits for the GPU to learn how many values it returns");
  TL_CUDA_CHECK(cudaMemcpyAsync(&u, group.p + n - 1, sizeof u, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));

  UniqueResult r;
  Scratch<int64_t> starts(u, device);
  if (want_inverse) r.inverse = make_tensor({n}, kInt64, device);
  groups_kernel<<<grid_for(n, kThreads), kThreads, 0, s>>>(
      perm, flags.p, group.p, n, starts.p,
      want_inverse ? static_cast<int64_t*>(r.inverse.data_ptr()) : nullptr);
  check_launch(s, "groups_kernel");
  r.values = make_tensor({u, m}, in.dtype(), device);
  values_kernel<L><<<grid_for(u * m, kThreads), kThreads, 0, s>>>(
      x, perm, starts.p, u, m, static_cast<L*>(r.values.data_ptr()));
  check_launch(s, "values_kernel");
  if (want_counts) {
    r.counts = make_tensor({u}, kInt64, device);
    counts_kernel<<<grid_for(u, kThreads), kThreads, 0, s>>>(
        starts.p, u, n, static_cast<int64_t*>(r.counts.data_ptr()));
    check_launch(s, "counts_kernel");
  }
  return r;
}

#undef TL_GRID_STRIDE

}  // namespace

UniqueResult unique(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts) {
  return dispatch_dtype<kAllDTypes>(in.dtype(), [&]<typename T>() {
    return unique_typed<T>(in, consecutive, want_inverse, want_counts);
  });
}

}  // namespace tensorlet::cuda

// Sort on CUDA, by row length:
//  - rows of up to 4096 elements (kBlockSortMax): one block per row, cub::BlockRadixSort of
//    (key, position) in shared memory, read once and written once (here);
//  - longer rows: CUB's device radix sorts (cuda_sort_radix.cu).
// Keys are order_key's (backends/math/order_key.h: NaN largest, -0.0 == 0.0), inverted for
// descending; radix sorts are stable, so ties keep position order on every path. Everything runs
// on the current stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/block/block_radix_sort.cuh>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_sort_radix.h"
#include "tensorlet/backends/cuda/cuda_sort_rows.h"
#include "tensorlet/backends/math/order_key.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

// One block sorts one row (looping over rows): each thread holds kItems consecutive elements
// (the blocked arrangement, so that padding past n, given the largest key, stays after every
// real element of that key), and the sort hands rank j * kBlock + thread back to each thread.
template <typename T, int kBlock, int kItems>
__global__ void __launch_bounds__(kBlock)
    block_sort_kernel(const order_load_t<T>* __restrict__ in, int64_t rows, int n, int out_cols,
                      bool descending, order_load_t<T>* __restrict__ values,
                      int64_t* __restrict__ indices, const int64_t* __restrict__ source) {
  using K = order_key_t<T>;
  using Sort = cub::BlockRadixSort<K, kBlock, kItems, int>;
  __shared__ typename Sort::TempStorage temp;
  const K flip = order_flip<K>(descending);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const order_load_t<T>* x = in + row * n;
    K keys[kItems];
    int pos[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int p = static_cast<int>(threadIdx.x) * kItems + j;
      pos[j] = p;
      keys[j] = p < n ? static_cast<K>(order_key<T>(x[p]) ^ flip) : static_cast<K>(~K{0});
    }
    Sort(temp).SortBlockedToStriped(keys, pos);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int r = j * kBlock + static_cast<int>(threadIdx.x);
      if (r < out_cols) {
        const int p = pos[j];
        values[row * out_cols + r] = x[p];
        indices[row * out_cols + r] = source ? source[row * n + p] : p;
      }
    }
    __syncthreads();  // the next row reuses `temp`
  }
}

template <typename T, int kBlock, int kItems>
void launch_block_sort(const order_load_t<T>* in, int64_t rows, int64_t n, int64_t out_cols,
                       bool descending, order_load_t<T>* values, int64_t* indices,
                       const int64_t* source, cudaStream_t s) {
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
  block_sort_kernel<T, kBlock, kItems><<<grid, kBlock, 0, s>>>(in, rows, static_cast<int>(n),
                                                               static_cast<int>(out_cols),
                                                               descending, values, indices, source);
  check_launch(s, "block_sort_kernel");
}

// Threads and elements per thread for a row of n: the smallest block that holds it.
template <typename T>
void block_sort(const order_load_t<T>* in, int64_t rows, int64_t n, int64_t out_cols,
                bool descending, order_load_t<T>* values, int64_t* indices, const int64_t* source,
                cudaStream_t s) {
  if (n <= 128)
    launch_block_sort<T, 32, 4>(in, rows, n, out_cols, descending, values, indices, source, s);
  else if (n <= 512)
    launch_block_sort<T, 128, 4>(in, rows, n, out_cols, descending, values, indices, source, s);
  else if (n <= 1024)
    launch_block_sort<T, 128, 8>(in, rows, n, out_cols, descending, values, indices, source, s);
  else if (n <= 2048)
    launch_block_sort<T, 256, 8>(in, rows, n, out_cols, descending, values, indices, source, s);
  else
    launch_block_sort<T, 512, 8>(in, rows, n, out_cols, descending, values, indices, source, s);
}

}  // namespace

void sort_rows(const Tensor& in, bool descending, int64_t out_cols, const Tensor& values,
               const Tensor& indices, const int64_t* source) {
  const int64_t rows = in.shape()[0], n = in.shape()[1];
  if (n > kBlockSortMax) {
    radix_sort_rows(in, descending, out_cols, values, indices, source);
    return;
  }
  cudaStream_t s = current_stream_handle(in.device().index());
  dispatch_dtype<kAllDTypes>(in.dtype(), [&]<typename T>() {
    using L = order_load_t<T>;
    block_sort<T>(typed_ptr<const L>(in), rows, n, out_cols, descending, typed_ptr<L>(values),
                  typed_ptr<int64_t>(indices), source, s);
  });
}

void sort(const Tensor& in, bool descending, const Tensor& values, const Tensor& indices) {
  sort_rows(in, descending, in.shape()[1], values, indices, nullptr);
}

}  // namespace tensorlet::cuda

// Median of each row on CUDA without sorting: one block per row finds the row's first NaN (its
// answer when there is one), else radix-selects the element of rank (n - 1) / 2 over keys that
// order as the values do (8 bits a pass: a shared-memory histogram picks the digit), then finds
// which of the elements equal to that key has the remaining rank in position order (a block-wide
// prefix count per tile), so equal values rank by position as on the CPU.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"

namespace tensorlet::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kRadixBits = 8;
constexpr int kBins = 1 << kRadixBits;

template <typename T>
using KeyOf = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t,
                       std::conditional_t<sizeof(T) == 4, uint32_t, unsigned long long>>>;

// An unsigned key whose order is the values' order: floats (sign and magnitude) flip all bits
// when negative and the sign bit otherwise, with -0 taken as +0 (equal values get equal keys);
// signed integers flip the sign bit. NaN never gets here.
template <typename T>
__device__ __forceinline__ KeyOf<T> key_of(T v) {
  using K = KeyOf<T>;
  constexpr K kSign = static_cast<K>(K{1} << (sizeof(K) * 8 - 1));
  K bits;
  memcpy(&bits, &v, sizeof(K));
  if constexpr (is_floating_v<T>) {
    if (static_cast<K>(bits << 1) == 0) bits = 0;
    return (bits & kSign) ? static_cast<K>(~bits) : static_cast<K>(bits | kSign);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<K>(bits ^ kSign);
  } else {
    return bits;
  }
}

template <typename T>
__device__ __forceinline__ bool is_nan_value(T v) {
  if constexpr (is_floating_v<T>) {
    const auto c = static_cast<compute_t<T>>(v);
    return c != c;
  } else {
    return false;
  }
}

struct MinOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a < b ? a : b; }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    median_rows_kernel(const T* __restrict__ in, int64_t rows, int64_t n, T* __restrict__ values,
                       int64_t* __restrict__ indices) {
  using K = KeyOf<T>;
  using Reduce = cub::BlockReduce<int64_t, kThreads>;
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } storage;
  __shared__ unsigned long long histogram[kBins];
  __shared__ int64_t shared_nan, shared_rank;
  __shared__ unsigned shared_digit;
  const int tid = threadIdx.x;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * n;
    __syncthreads();  // the previous row is done with the shared values
    if constexpr (is_floating_v<T>) {
      // Each thread's positions increase, so its first NaN is its smallest.
      int64_t first = n;
      for (int64_t i = tid; i < n; i += kThreads)
        if (is_nan_value(x[i])) {
          first = i;
          break;
        }
      first = Reduce(storage.reduce).Reduce(first, MinOp{});
      if (tid == 0) shared_nan = first;
      __syncthreads();
      if (shared_nan < n) {
        if (tid == 0) {
          values[row] = x[shared_nan];
          indices[row] = shared_nan;
        }
        continue;
      }
    }
    // The key of rank `rank`, 8 bits a pass from the top: keys matching the digits chosen so far
    // are counted by their next digit; the digit whose bin holds the rank is the key's.
    K prefix = 0, mask = 0;
    int64_t rank = (n - 1) / 2;
    for (int shift = static_cast<int>(sizeof(K) * 8) - kRadixBits; shift >= 0;
         shift -= kRadixBits) {
      for (int b = tid; b < kBins; b += kThreads) histogram[b] = 0;
      __syncthreads();
      for (int64_t i = tid; i < n; i += kThreads) {
        const K k = key_of(x[i]);
        if ((k & mask) == prefix) atomicAdd(&histogram[(k >> shift) & (kBins - 1)], 1ull);
      }
      __syncthreads();
      if (tid == 0) {
        unsigned long long below = 0;
        for (int b = 0; b < kBins; ++b) {
          if (static_cast<unsigned long long>(rank) < below + histogram[b]) {
            shared_digit = static_cast<unsigned>(b);
            shared_rank = rank - static_cast<int64_t>(below);
            break;
          }
          below += histogram[b];
        }
      }
      __syncthreads();
      prefix = static_cast<K>(prefix | (static_cast<K>(shared_digit) << shift));
      mask = static_cast<K>(mask | (static_cast<K>(kBins - 1) << shift));
      rank = shared_rank;
    }
    // The rank-th (from 0) element whose key is `prefix`, in position order.
    for (int64_t t0 = 0; t0 < n; t0 += kThreads) {
      const int64_t i = t0 + tid;
      const int match = i < n && key_of(x[i]) == prefix ? 1 : 0;
      int before = 0, total = 0;
      Scan(storage.scan).ExclusiveSum(match, before, total);
      if (match && before == rank) {
        values[row] = x[i];
        indices[row] = i;
      }
      rank -= total;  // the same in every thread
      __syncthreads();
      if (rank < 0) break;
    }
  }
}

}  // namespace

void median(const Tensor& in, const Tensor& values, const Tensor& indices) {
  const int64_t rows = in.shape()[0], n = in.shape()[1];
  if (rows == 0 || n == 0) return;
  cudaStream_t s = current_stream_handle(values.device().index());
  dispatch_dtype<kNumericDTypes>(
      in.dtype(),
      [&]<typename T>() {
        const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 24));
        median_rows_kernel<T><<<grid, kThreads, 0, s>>>(
            typed_ptr<const T>(in), rows, n, typed_ptr<T>(values), typed_ptr<int64_t>(indices));
        check_launch(s, "median_rows_kernel");
      },
      "tl::median");
}

}  // namespace tensorlet::cuda

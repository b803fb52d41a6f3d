// Raw floor kernels for bench_cuda: what tensorlet's launches, elementwise kernels and sorts
// compete with.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "raw_kernels.h"

namespace bench {
namespace {

__global__ void empty_kernel() {}

// One thread that waits on the GPU's nanosecond timer: a kernel of a chosen length and no memory
// traffic, standing in for a small op of that GPU time.
__global__ void spin_kernel(uint64_t ns) {
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void scatter_add_kernel(const float* __restrict__ src, const int64_t* __restrict__ index,
                                   float* out, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    atomicAdd(out + index[i], src[i]);
}

// Grid-stride over float4s, then the n % 4 leftover floats by the first threads.
__global__ void add_kernel(const float4* a, const float4* b, float4* out, int64_t n4,
                           const float* at, const float* bt, float* outt, int tail) {
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = first; i < n4; i += stride) {
    const float4 x = a[i], y = b[i];
    out[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  if (first < tail) outt[first] = at[first] + bt[first];
}

}  // namespace

void launch_empty(cudaStream_t stream) { empty_kernel<<<1, 1, 0, stream>>>(); }

void launch_spin(uint64_t ns, cudaStream_t stream) { spin_kernel<<<1, 1, 0, stream>>>(ns); }

void launch_add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t n4 = n / 4;
  const int tail = static_cast<int>(n - 4 * n4);
  constexpr int kThreads = 256;
  // A few waves of blocks per SM are enough for a grid-stride loop to saturate memory.
  const auto blocks = static_cast<unsigned>(
      std::clamp<int64_t>((n4 + kThreads - 1) / kThreads, 1, int64_t{1} << 16));
  add_kernel<<<blocks, kThreads, 0, stream>>>(
      reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
      reinterpret_cast<float4*>(out), n4, a + 4 * n4, b + 4 * n4, out + 4 * n4, tail);
}

void launch_scatter_add(const float* src, const int64_t* index, float* out, int64_t n,
                        cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(
      std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, int64_t{1} << 20));
  scatter_add_kernel<<<blocks, kThreads, 0, stream>>>(src, index, out, n);
}

cudaError_t sort_pairs(void* temp, size_t& temp_bytes, const float* keys_in, float* keys_out,
                       const int64_t* values_in, int64_t* values_out, int64_t n,
                       cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                         n, 0, 32, stream);
}

cudaError_t segmented_sort_pairs(void* temp, size_t& temp_bytes, const float* keys_in,
                                 float* keys_out, const int64_t* values_in, int64_t* values_out,
                                 int64_t n, int64_t segments, const int* offsets,
                                 cudaStream_t stream) {
  return cub::DeviceSegmentedRadixSort::SortPairs(
      temp, temp_bytes, keys_in, keys_out, values_in, values_out, static_cast<int>(n),
      static_cast<int>(segments), offsets, offsets + 1, 0, 32, stream);
}

}  // namespace bench

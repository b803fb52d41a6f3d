// topk and kthvalue on CUDA. Rows that one block sorts (n <= 4096), and k too large a part of
// the row for selecting to pay, go through the row sort (cuda_sort.cu) keeping the first k.
// Otherwise one block per row finds the k-th key by radix select: 8 bits a pass from the top,
// a shared-memory histogram of the keys that match the digits found so far, a block scan to
// pick the digit holding the k-th, stopping early once that digit's keys are all taken. The row's
// keys stay in shared memory between passes when they fit (one read of the input). Then one pass
// keeps every key below the k-th and the first equal ones in position order (a block scan gives
// each its slot), so the survivors are in position order; for sorted results the block sort
// orders those k. kthvalue is the last of topk(k, smallest, sorted).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <limits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_sort_rows.h"
#include "tensorlet/backends/math/order_key.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

constexpr int kSelectThreads = 1024;
constexpr int kSelectItems = 8;           // consecutive elements per thread in the keeping pass
constexpr unsigned kEqualOne = 1u << 16;  // an equal key's count in the keeping pass's scan
static_assert(kSelectThreads * kSelectItems < (1 << 16));
constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
// Selecting pays while k is a small part of the row; beyond it the sort is as cheap.
constexpr int64_t kSelectMaxPart = 8;

template <typename T>
__global__ void __launch_bounds__(kSelectThreads)
    radix_select_kernel(const order_load_t<T>* __restrict__ in, int64_t rows, int n, int k,
                        bool largest, bool cached, order_load_t<T>* __restrict__ out_values,
                        int64_t* __restrict__ out_pos) {
  using K = order_key_t<T>;
  using Scan = cub::BlockScan<int, kSelectThreads>;
  using PairScan = cub::BlockScan<unsigned, kSelectThreads>;
  extern __shared__ __align__(16) unsigned char select_cache[];
  K* cache = reinterpret_cast<K*>(select_cache);
  __shared__ int hist[kBuckets];
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ typename PairScan::TempStorage pair_temp;
  __shared__ int s_digit, s_remaining, s_done;
  const K flip = order_flip<K>(largest);  // largest: the smallest of the inverted keys
  const int tid = static_cast<int>(threadIdx.x);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const order_load_t<T>* x = in + row * n;
    if (cached) {
      for (int i = tid; i < n; i += kSelectThreads)
        cache[i] = static_cast<K>(order_key<T>(x[i]) ^ flip);
      __syncthreads();
    }
    auto key_at = [&](int i) -> K {
      return cached ? cache[i] : static_cast<K>(order_key<T>(x[i]) ^ flip);
    };
    // The digits found so far (prefix under mask) and the rank of the k-th among the keys that
    // match them (1-based).
    K prefix = 0, mask = 0;
    int remaining = k;
    for (int shift = 8 * static_cast<int>(sizeof(K)) - kDigitBits; shift >= 0;
         shift -= kDigitBits) {
      for (int b = tid; b < kBuckets; b += kSelectThreads) hist[b] = 0;
      __syncthreads();
      for (int i = tid; i < n; i += kSelectThreads) {
        const K key = key_at(i);
        if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & (kBuckets - 1)], 1);
      }
      __syncthreads();
      const int count = tid < kBuckets ? hist[tid] : 0;
      int inclusive = 0;
      Scan(scan_temp).InclusiveSum(count, inclusive);
      const int before = inclusive - count;
      if (tid < kBuckets && before < remaining && remaining <= inclusive) {
        s_digit = tid;
        s_remaining = remaining - before;
        s_done = count == remaining - before;  // the whole bucket is kept: no need to refine
      }
      __syncthreads();
      prefix = static_cast<K>(prefix | (static_cast<K>(s_digit) << shift));
      mask = static_cast<K>(mask | (static_cast<K>(kBuckets - 1) << shift));
      remaining = s_remaining;
      const bool done = s_done != 0;
      __syncthreads();  // s_* and hist are written again by the next pass
      if (done) break;
    }
    // Keep keys whose digits so far are below the prefix, and the first `remaining` that match
    // it. An element's slot: the kept elements before it, counted per tile as (below, equal)
    // pairs in one 32-bit scan (equal in the high half; a tile holds fewer than 2^16 elements).
    int below_base = 0, equal_base = 0;
    for (int tile = 0; tile < n; tile += kSelectThreads * kSelectItems) {
      unsigned flags[kSelectItems], before[kSelectItems], total;
#pragma unroll
      for (int j = 0; j < kSelectItems; ++j) {
        const int i = tile + tid * kSelectItems + j;
        flags[j] = 0;
        if (i < n) {
          const K m = static_cast<K>(key_at(i) & mask);
          flags[j] = m < prefix ? 1u : m == prefix ? kEqualOne : 0u;
        }
      }
      PairScan(pair_temp).ExclusiveSum(flags, before, total);
#pragma unroll
      for (int j = 0; j < kSelectItems; ++j) {
        const int i = tile + tid * kSelectItems + j;
        if (i >= n || flags[j] == 0) continue;
        const int below = below_base + static_cast<int>(before[j] & 0xffffu);
        const int equal = equal_base + static_cast<int>(before[j] >> 16);
        if (flags[j] == kEqualOne && equal >= remaining) continue;
        const int64_t slot = row * k + below + (equal < remaining ? equal : remaining);
        out_values[slot] = x[i];
        out_pos[slot] = i;
      }
      below_base += static_cast<int>(total & 0xffffu);
      equal_base += static_cast<int>(total >> 16);
      __syncthreads();  // pair_temp is reused by the next tile
    }
    __syncthreads();  // the next row rewrites the cache
  }
}

// Dynamic shared memory a block of `kernel` may use on this device: at most `opt_in` bytes, and
// beyond `by_default` only after raising the kernel's attribute (the 48 KiB a block gets without
// opting in count the kernel's static shared memory too). Queried once per device and per kernel
// (Tag: the kernel's element type; each type's kernel has its own static shared memory).
struct DynamicShared {
  size_t opt_in = 0, by_default = 0;
};

template <typename Tag>
DynamicShared dynamic_shared(int device, const void* kernel) {
  constexpr int kCached = 64;
  static std::atomic<int64_t> static_bytes[kCached] = {};  // +1: 0 means not queried yet
  static std::atomic<int64_t> opt_in[kCached] = {};
  auto budget = [](int64_t optin, int64_t own) {
    return DynamicShared{static_cast<size_t>(std::max<int64_t>(0, optin - own)),
                         static_cast<size_t>(std::max<int64_t>(0, int64_t{48 * 1024} - own))};
  };
  if (device < kCached) {
    const int64_t own = static_bytes[device].load(std::memory_order_acquire);
    if (own > 0) return budget(opt_in[device].load(std::memory_order_relaxed), own - 1);
  }
  int optin = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  TL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const auto own = static_cast<int64_t>(attributes.sharedSizeBytes);
  if (device < kCached) {
    opt_in[device].store(optin, std::memory_order_relaxed);
    static_bytes[device].store(own + 1, std::memory_order_release);
  }
  return budget(optin, own);
}

// The k smallest (largest) of each row in position order into out_values / out_pos [rows, k].
template <typename T>
void radix_select(const Tensor& in, int64_t k, bool largest, const Tensor& out_values,
                  const Tensor& out_pos) {
  using L = order_load_t<T>;
  using K = order_key_t<T>;
  const int64_t rows = in.shape()[0], n = in.shape()[1];
  const int device = in.device().index();
  cudaStream_t s = current_stream_handle(device);
  const void* kernel = reinterpret_cast<const void*>(&radix_select_kernel<T>);
  const size_t bytes = static_cast<size_t>(n) * sizeof(K);
  const DynamicShared shared = dynamic_shared<T>(device, kernel);
  const bool cached = bytes <= shared.opt_in;
  const size_t dynamic = cached ? bytes : 0;
  if (dynamic > shared.by_default)
    TL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(dynamic)));
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
  radix_select_kernel<T><<<grid, kSelectThreads, dynamic, s>>>(
      typed_ptr<const L>(in), rows, static_cast<int>(n), static_cast<int>(k), largest, cached,
      typed_ptr<L>(out_values), typed_ptr<int64_t>(out_pos));
  check_launch(s, "radix_select_kernel");
}

}  // namespace

void topk(const Tensor& in, int64_t k, bool largest, bool sorted, const Tensor& values,
          const Tensor& indices) {
  const int64_t n = in.shape()[1];
  if (n <= kBlockSortMax || n > std::numeric_limits<int32_t>::max() || k * kSelectMaxPart > n) {
    sort_rows(in, largest, k, values, indices, nullptr);
    return;
  }
  dispatch_dtype<kAllDTypes>(in.dtype(), [&]<typename T>() {
    if (!sorted || k == 1) {
      radix_select<T>(in, k, largest, values, indices);
      return;
    }
    // The survivors, in position order, then sorted with their positions carried along.
    Tensor kept = make_tensor(values.shape(), values.dtype(), values.device());
    Tensor kept_pos = make_tensor(indices.shape(), kInt64, indices.device());
    radix_select<T>(in, k, largest, kept, kept_pos);
    sort_rows(kept, largest, k, values, indices, typed_ptr<const int64_t>(kept_pos));
  });
}

void kthvalue(const Tensor& in, int64_t k, const Tensor& values, const Tensor& indices) {
  const int64_t rows = in.shape()[0];
  Tensor smallest = make_tensor({rows, k}, in.dtype(), in.device());
  Tensor smallest_pos = make_tensor({rows, k}, kInt64, in.device());
  topk(in, k, false, true, smallest, smallest_pos);
  copy_same_device(smallest.select(1, k - 1), values);
  copy_same_device(smallest_pos.select(1, k - 1), indices);
}

}  // namespace tensorlet::cuda

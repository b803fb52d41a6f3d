// Softmax of few long rows in one wave (sm_90). Why: 64 rows of 501 KB (float32 [64, 128256])
// are 32.8 MB, more than the registers of all SMs hold (the register kernel of cuda_softmax.cu
// keeps at most 128 KiB an SM), so that kernel runs them in two waves, each a read phase, a
// reduction and a write phase with the DRAM idle in between. Here a block of 1024 threads owns
// one SM and holds its slice of a row in registers (8 vectors of 16 bytes a thread, 128 KiB) and,
// for the rest, in shared memory (up to 227 KB): an SM holds up to ~355 KB, so every row of such
// a tensor is resident at once, x is read from DRAM once and written once, in one wave.
//
// A row is split over a cluster of `cluster` blocks (1 to 16; 16 only where the device allows
// non-portable clusters): the largest cluster with which every row is resident at once
// (cudaOccupancyMaxActiveClusters, so the SM count and the GPC layout come from the device) and
// with which the slice fits. Per block:
//  1. each thread requests its shared-memory vectors (cp.async, no registers), then its register
//     vectors, all before using any, so the SM has its whole slice in flight;
//  2. per thread and per part (shared, registers): the max m, then e = exp(x - m) and its sum,
//     computed as the data arrives, while the rest of the row is still being read;
//  3. the block and then the cluster (distributed shared memory) reduce the row's max M, then its
//     sum S = sum over parts of sum(e) * exp(m - M);
//  4. the write: a float/double softmax keeps e in place of x and writes e * (exp(m - M) / S),
//     one multiply per element; log-softmax writes (x - M) - log(S); the half types, whose e
//     would be rounded, write exp(x - M) * (1 / S).
#include "tensorlet/backends/cuda/cuda_softmax_split.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_softmax_common.cuh"
#include "tensorlet/tensor/dtype.h"

namespace tensorlet::cuda {

namespace {

using namespace softmax_impl;

constexpr int kThreads = 1024;  // one block an SM: 64 registers a thread
constexpr int kLoads = 8;       // 16-byte vectors a thread holds in registers (32 registers)
constexpr int64_t kHeld = int64_t{kLoads} * kThreads;  // vectors of a slice in registers
constexpr int kVectorBytes = 16;
// Shared-memory vectors a thread may hold: 227 KB (sm_90's opt-in) / 16 KiB is 14; the bound
// only sizes the occupancy cache.
constexpr int kMaxStaged = 16;
constexpr int kClusterSizes[] = {16, 8, 4, 2, 1};  // tried largest first
constexpr int kMaxPortableCluster = 8;

struct SplitPlan {
  int64_t vectors;  // of a row
  int64_t chunk;    // vectors of a row per block (the last block of a row may get fewer)
  int staged;       // vectors per thread in shared memory
  int cluster;      // blocks per row
  bool log;
};

// cp.async of 16 bytes into shared memory, bypassing L1 (read once) and the registers; the
// issuing thread sees the data after wait_async_copies(). Before sm_80 (never launched there) a
// plain copy.
__device__ __forceinline__ void copy_async(void* shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to),
               "l"(__cvta_generic_to_global(global))
               : "memory");
#else
  *static_cast<uint4*>(shared) = *static_cast<const uint4*>(global);
#endif
}

__device__ __forceinline__ void wait_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// exp(x - base), the kernel's one transcendental per element. float's runs on the SFU (ex2.approx
// of (x - base) * log2(e), a few ulp, subnormal results flushed to 0), not expf's ten-odd
// instructions: with a 1024-thread block an SM, expf's issue time was exposed after the last loads
// landed (O1 [64, 128256] from 0.59 to 0.65 of a copy on an H200, issue 30). double keeps exp.
__device__ __forceinline__ float exp_shifted(float x, float base) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"((x - base) * 1.44269504088896341f));
  return y;
#else
  return exp_of(x - base);
#endif
}
__device__ __forceinline__ double exp_shifted(double x, double base) { return exp_of(x - base); }

// max_nan in one instruction for float (max.NaN, sm_80 on).
__device__ __forceinline__ float max_fast(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return max_nan(a, b);
#endif
}
__device__ __forceinline__ double max_fast(double a, double b) { return max_nan(a, b); }

// A 16-byte store marked evict-first: the output is not read again by this kernel.
template <typename V>
__device__ __forceinline__ void store_streaming(V* p, const V& v) {
  static_assert(sizeof(V) == 16, "one 16-byte vector");
  int4 bits;
  memcpy(&bits, &v, sizeof bits);
  __stcs(reinterpret_cast<int4*>(p), bits);
}

// The part of a thread's elements (its shared-memory or its register vectors) reduced on its own:
// the max m, and the sum of exp(x - base) with base = m, or 0 when m is -inf (the part holds only
// -inf, or nothing: exp(-inf - 0) = 0, where exp(-inf - -inf) would be NaN).
template <typename C>
struct Part {
  C m, s;

  __device__ __forceinline__ C base() const {
    constexpr C kInf = static_cast<C>(INFINITY);  // numeric_limits is host-only
    return m == -kInf ? C(0) : m;
  }
  // exp(base - M), the factor from this part's exponentials to the row's. A part of only -inf
  // adds nothing when the row's max M is finite. When it is not (a row of only -inf, a +inf or a
  // NaN in the row), the factor is left to come out as torch's NaN does: 0 * exp(0 - -inf) = NaN
  // in the sum, exp(inf - inf) = NaN in a +inf's part, NaN - NaN.
  __device__ __forceinline__ C to_row(C M) const {
    constexpr C kInf = static_cast<C>(INFINITY);
    const bool dropped = m == -kInf && M > -kInf && M < kInf;
    return dropped ? C(0) : exp_of(base() - M);
  }
};

// Block b of the grid takes slice b % cluster of row b / cluster. Vector j of a slice is held by
// thread j % kThreads: in register j / kThreads when j < kHeld, else in shared slot
// (j - kHeld) / kThreads at staged[(j - kHeld) / kThreads * kThreads + thread]; a warp's accesses
// are adjacent 16-byte vectors, in memory and in shared memory (no bank conflicts).
template <typename T, int kVec>
__global__ void __launch_bounds__(kThreads, 1)
    softmax_split_kernel(const T* __restrict__ in, T* __restrict__ out, SplitPlan p) {
  using C = compute_t<T>;
  using V = Pack<T, kVec>;
  constexpr bool kKeepExp = std::is_same_v<T, C>;  // the half types would round e to T
  constexpr C kInf = static_cast<C>(INFINITY);     // numeric_limits is host-only
  extern __shared__ __align__(16) unsigned char staged_bytes[];
  V* const staged = reinterpret_cast<V*>(staged_bytes);
  __shared__ C shared[32];
  __shared__ C cluster_slot[2];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t row = blockIdx.x / p.cluster;
  const int64_t begin = (blockIdx.x % p.cluster) * p.chunk;
  const int64_t left = p.vectors - begin;  // <= 0 for a block past a short row's end
  const int64_t count = left < p.chunk ? (left > 0 ? left : 0) : p.chunk;
  const V* const x = reinterpret_cast<const V*>(in) + row * p.vectors + begin;
  V* const y = reinterpret_cast<V*>(out) + row * p.vectors + begin;
  const bool keep_exp = kKeepExp && !p.log;

  // 1. The shared part is requested first, so it arrives first and is reduced while the register
  // loads are still in flight.
  for (int s = 0; s < p.staged; ++s) {
    const int64_t j = kHeld + int64_t{s} * kThreads + t;
    if (j < count) copy_async(&staged[s * kThreads + t], x + j);
  }
  V vals[kLoads];
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const int64_t j = int64_t{k} * kThreads + t;
    if (j < count) vals[k] = x[j];
  }

  // 2. The shared part: only this thread's own copies are read, so no barrier is needed.
  wait_async_copies();
  Part<C> a{-kInf, C(0)};
  for (int s = 0; s < p.staged; ++s) {
    if (kHeld + int64_t{s} * kThreads + t < count) {
      const V v = staged[s * kThreads + t];
#pragma unroll
      for (int e = 0; e < kVec; ++e) a.m = max_fast(a.m, static_cast<C>(v.v[e]));
    }
  }
  const C base_a = a.base();
  for (int s = 0; s < p.staged; ++s) {
    if (kHeld + int64_t{s} * kThreads + t < count) {
      V v = staged[s * kThreads + t];
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const C ex = exp_shifted(static_cast<C>(v.v[e]), base_a);
        a.s += ex;
        if (keep_exp) v.v[e] = static_cast<T>(ex);
      }
      if (keep_exp) staged[s * kThreads + t] = v;
    }
  }
  // The register part.
  Part<C> b{-kInf, C(0)};
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    if (int64_t{k} * kThreads + t < count) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) b.m = max_fast(b.m, static_cast<C>(vals[k].v[e]));
    }
  }
  const C base_b = b.base();
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    if (int64_t{k} * kThreads + t < count) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const C ex = exp_shifted(static_cast<C>(vals[k].v[e]), base_b);
        b.s += ex;
        if (keep_exp) vals[k].v[e] = static_cast<T>(ex);
      }
    }
  }

  // 3. The block's max Mb and its sum relative to Mb (0 for a block of only -inf, or of nothing:
  // its parts hold s = 0, and exp(0 - -inf) would make 0 * inf), then the row's M and S from one
  // exchange of (Mb, Sb) over the cluster: one cluster barrier where a max and then a sum took
  // two. A block of the row's -inf parts only is dropped by to_row as a part is.
  const C Mb = block_reduce(max_nan(a.m, b.m), MaxOp{}, -kInf, shared);
  const C Sb = block_reduce(Mb == -kInf ? C(0) : a.s * a.to_row(Mb) + b.s * b.to_row(Mb), SumOp{},
                            C(0), shared);
  C M = Mb, S = Sb;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (p.cluster > 1) {
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (t == 0) {
      cluster_slot[0] = Mb;
      cluster_slot[1] = Sb;
    }
    cluster_arrive();
    cluster_wait();
    const unsigned blocks = cluster.num_blocks();
    M = -kInf;
    for (unsigned r = 0; r < blocks; ++r)
      M = max_nan(M, *cluster.map_shared_rank(&cluster_slot[0], r));
    S = C(0);
    for (unsigned r = 0; r < blocks; ++r) {
      const Part<C> q{*cluster.map_shared_rank(&cluster_slot[0], r),
                      *cluster.map_shared_rank(&cluster_slot[1], r)};
      S += q.s * q.to_row(M);
    }
    cluster_arrive();  // done with the others' slots; the wait before the exit keeps ours alive
  }
#endif
  const C to_row_a = a.to_row(M), to_row_b = b.to_row(M);

  // 4. The write.
  const C scale = p.log ? log_of(S) : C(1) / S;  // a multiply per element, not a divide
  const C factor_a = to_row_a * scale, factor_b = to_row_b * scale;  // used when keep_exp
  auto result = [&](C v, C factor) {
    return static_cast<T>(p.log      ? (v - M) - scale
                          : keep_exp ? v * factor
                                     : exp_shifted(v, M) * scale);
  };
  for (int s = 0; s < p.staged; ++s) {
    const int64_t j = kHeld + int64_t{s} * kThreads + t;
    if (j < count) {
      const V v = staged[s * kThreads + t];
      V o;
#pragma unroll
      for (int e = 0; e < kVec; ++e) o.v[e] = result(static_cast<C>(v.v[e]), factor_a);
      store_streaming(y + j, o);
    }
  }
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const int64_t j = int64_t{k} * kThreads + t;
    if (j < count) {
      V o;
#pragma unroll
      for (int e = 0; e < kVec; ++e) o.v[e] = result(static_cast<C>(vals[k].v[e]), factor_b);
      store_streaming(y + j, o);
    }
  }
  if (p.cluster > 1) cluster_wait();
}

// Per (device, kernel): set up once, then the clusters resident at once for each cluster size
// and shared part, queried once each.
struct KernelFacts {
  int sms = 0;
  int max_staged = -1;  // -1: the kernel does not run here (no sm_90 code or no cluster launch)
  int max_cluster = 1;
};

template <typename T, int kVec>
class SplitKernel {
 public:
  static constexpr int kDevices = 64;

  static const void* kernel() {
    return reinterpret_cast<const void*>(&softmax_split_kernel<T, kVec>);
  }

  // The kernel's limits on `device` (the current device): its shared memory is raised to the
  // device's opt-in limit and non-portable clusters are allowed where the device takes them.
  static KernelFacts facts(int device) {
    static std::atomic<int> cache[kDevices];  // 0: not yet; else packed + 1
    if (device < kDevices) {
      const int v = cache[device].load(std::memory_order_acquire);
      if (v > 0) return unpack(v - 1);
    }
    KernelFacts f;
    int cluster_launch = 0, opt_in = 0;
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, device));
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&opt_in, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes attributes{};
    TL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel()));
    if (cluster_launch != 0 && attributes.binaryVersion >= 90) {
      const int64_t dynamic = int64_t{opt_in} - static_cast<int64_t>(attributes.sharedSizeBytes);
      f.max_staged = static_cast<int>(
          std::clamp<int64_t>(dynamic / (int64_t{kThreads} * kVectorBytes), 0, kMaxStaged));
      TL_CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         f.max_staged * kThreads * kVectorBytes));
      // The loads bypass L1 (cp.async.cg) or stream through it once: give it all to shared.
      TL_CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributePreferredSharedMemoryCarveout,
                                         cudaSharedmemCarveoutMaxShared));
      f.max_cluster = kMaxPortableCluster;
      if (cudaFuncSetAttribute(kernel(), cudaFuncAttributeNonPortableClusterSizeAllowed, 1) ==
          cudaSuccess)
        f.max_cluster = kClusterSizes[0];
      else
        (void)cudaGetLastError();  // a device without them: clusters of at most 8
    }
    if (device < kDevices) cache[device].store(pack(f) + 1, std::memory_order_release);
    return f;
  }

  // Clusters of `cluster` blocks with `staged` shared vectors a thread that are resident at once.
  static int resident_clusters(int device, const KernelFacts& f, int cluster, int staged) {
    static std::atomic<int> cache[kDevices][std::size(kClusterSizes)][kMaxStaged + 1];
    const int size =
        static_cast<int>(std::find(std::begin(kClusterSizes), std::end(kClusterSizes), cluster) -
                         std::begin(kClusterSizes));
    std::atomic<int>* slot = device < kDevices ? &cache[device][size][staged] : nullptr;
    if (slot) {
      const int v = slot->load(std::memory_order_relaxed);
      if (v > 0) return v - 1;
    }
    const size_t bytes = static_cast<size_t>(staged) * kThreads * kVectorBytes;
    int n = 0;
    if (cluster == 1) {
      TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel(), kThreads, bytes));
      n *= f.sms;
    } else {
      const ClusterLaunch launch(static_cast<unsigned>(cluster), kThreads, bytes, cluster, nullptr);
      // A size the device cannot place is an error here, not a throw: that size is not used.
      if (cudaOccupancyMaxActiveClusters(&n, kernel(), &launch.config) != cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
      }
    }
    if (slot) slot->store(n + 1, std::memory_order_relaxed);
    return n;
  }

 private:
  // max_staged + 1 (0..kMaxStaged + 1), max_cluster (1..16) and sms, in one int.
  static int pack(const KernelFacts& f) {
    return (f.sms * 32 + f.max_cluster) * 32 + (f.max_staged + 1);
  }
  static KernelFacts unpack(int v) {
    KernelFacts f;
    f.max_staged = v % 32 - 1;
    f.max_cluster = v / 32 % 32;
    f.sms = v / 1024;
    return f;
  }
};

template <typename T, int kVec>
bool launch_split(const T* in, T* out, int64_t rows, int64_t n, bool log, int device,
                  cudaStream_t stream) {
  using K = SplitKernel<T, kVec>;
  const KernelFacts f = K::facts(device);
  // A block has 1024 threads, and an SM runs at most 2048: more rows than two an SM cannot be
  // resident at once, whatever the cluster size.
  if (f.max_staged < 0 || rows > static_cast<int64_t>(f.sms) * 2) return false;
  const int64_t vectors = n / kVec;
  for (const int cluster : kClusterSizes) {
    if (cluster > f.max_cluster) continue;
    const int64_t chunk = (vectors + cluster - 1) / cluster;
    const int64_t staged = (std::max<int64_t>(0, chunk - kHeld) + kThreads - 1) / kThreads;
    if (staged > f.max_staged) return false;  // smaller clusters only make the slices longer
    if (K::resident_clusters(device, f, cluster, static_cast<int>(staged)) < rows) continue;
    const SplitPlan p{vectors, chunk, static_cast<int>(staged), cluster, log};
    const unsigned grid = static_cast<unsigned>(rows * cluster);
    const size_t bytes = static_cast<size_t>(staged) * kThreads * kVectorBytes;
    if (cluster == 1) {
      softmax_split_kernel<T, kVec><<<grid, kThreads, bytes, stream>>>(in, out, p);
      check_launch(stream, "softmax_split_kernel");
      return true;
    }
    const ClusterLaunch launch(grid, kThreads, bytes, cluster, stream);
    const cudaError_t err =
        cudaLaunchKernelEx(&launch.config, softmax_split_kernel<T, kVec>, in, out, p);
    check_launched(err, stream, "softmax_split_kernel");
    return true;
  }
  return false;
}

}  // namespace

template <typename T>
bool softmax_split(const T* in, T* out, int64_t rows, int64_t n, bool log, int device,
                   cudaStream_t stream) {
  constexpr int kVec = kVectorBytes / sizeof(T);
  const bool vector = reinterpret_cast<uintptr_t>(in) % kVectorBytes == 0 &&
                      reinterpret_cast<uintptr_t>(out) % kVectorBytes == 0 && n % kVec == 0;
  if (!vector || rows <= 0 || n <= 0) return false;
  return launch_split<T, kVec>(in, out, rows, n, log, device, stream);
}

template bool softmax_split<float>(const float*, float*, int64_t, int64_t, bool, int, cudaStream_t);
template bool softmax_split<double>(const double*, double*, int64_t, int64_t, bool, int,
                                    cudaStream_t);
template bool softmax_split<Half>(const Half*, Half*, int64_t, int64_t, bool, int, cudaStream_t);
template bool softmax_split<BFloat16>(const BFloat16*, BFloat16*, int64_t, int64_t, bool, int,
                                      cudaStream_t);

}  // namespace tensorlet::cuda

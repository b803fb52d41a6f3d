// Softmax and log-softmax on CUDA. Four kernels, picked on the host by the row shape:
//  - rows (the dim is the last one, rows that fit): one block per row, or for few long rows a
//    cluster of up to 8 blocks per row (sm_90) that exchange their maxima and sums through
//    distributed shared memory. Each thread loads its elements ONCE into registers (16-byte
//    vector loads when every row is 16-byte aligned), the block reduces max then sum with warp
//    shuffles, and the output is written from the registers: x is read from memory once;
//  - split (cuda_softmax_split.cu; sm_90, aligned rows): few long rows that the rows kernel would
//    take in more than one wave or not at all, held in registers and shared memory by clusters of
//    up to 16 blocks of one SM each, every row resident at once: read once, one wave;
//  - looped (rows too long for both, or no clusters): one block per row, an online
//    (max, sum of exp) pass, then a write pass: x is read twice (the second time mostly from L2);
//  - columns (elements after the dim, inner > 1): one thread per column, adjacent threads on
//    adjacent columns so every access is coalesced; an online pass, then a write pass.
// Everything runs on the current stream of the tensors' device, one launch per call.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cmath>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_softmax_common.cuh"
#include "tensorlet/backends/cuda/cuda_softmax_split.h"
#include "tensorlet/backends/softmax_rows.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

namespace {

using namespace softmax_impl;

constexpr int kMaxLoads = 8;          // vector loads a thread holds in registers
constexpr int kMaxCluster = 8;        // the portable cluster size
constexpr int kClusterThreads = 512;  // per block of a cluster: two blocks fit an SM's registers
// Below this many vectors per block a row is not split further: the exchange would cost more
// than the parallelism gives.
constexpr int64_t kMinChunkVectors = 1024;
// What the rows kernel holds an SM at most: 1024 threads (64 registers each fill the register
// file) of kMaxLoads 16-byte vectors.
constexpr int64_t kRegisterBytesPerSm = int64_t{1024} * kMaxLoads * 16;
constexpr int kLoopedThreads = 512;
constexpr int kColumnThreads = 256;

inline int64_t divide_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct RowPlan {
  int64_t rows, n;
  int64_t chunk;  // elements of a row per block of its cluster (a multiple of the vector width)
  int cluster;    // blocks per row: 1, or the cluster size
  bool log;
};

// One row per block (or per cluster): the row's elements stay in registers between the passes.
// Element i of the block's chunk is loaded by thread (i / kVec) % blockDim.x, load i / kVec /
// blockDim.x, so each load instruction of a warp reads adjacent memory.
template <typename T, int kVec, int kLoads>
__global__ void __launch_bounds__(1024)
    softmax_rows_kernel(const T* __restrict__ in, T* __restrict__ out, RowPlan p) {
  using C = compute_t<T>;
  using V = Pack<T, kVec>;
  constexpr bool kKeepExp = std::is_same_v<T, C>;  // the half types would round exp to T
  __shared__ C shared[32];
  __shared__ C cluster_slot[2];
  constexpr C kInf = static_cast<C>(INFINITY);  // numeric_limits is host-only
  const int rank = static_cast<int>(blockIdx.x % p.cluster);
  const int64_t row_step = gridDim.x / p.cluster;
  const int64_t begin = rank * p.chunk;
  const int64_t end = begin + p.chunk < p.n ? begin + p.chunk : p.n;
  for (int64_t row = blockIdx.x / p.cluster; row < p.rows; row += row_step) {
    const T* x = in + row * p.n;
    T* y = out + row * p.n;
    V vals[kLoads];
    // All loads first, so each thread has kLoads requests in flight.
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int64_t i = begin + (static_cast<int64_t>(k) * blockDim.x + threadIdx.x) * kVec;
      if (i < end) vals[k] = *reinterpret_cast<const V*>(x + i);
    }
    C m = -kInf;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int64_t i = begin + (static_cast<int64_t>(k) * blockDim.x + threadIdx.x) * kVec;
      if (i < end) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) m = max_nan(m, static_cast<C>(vals[k].v[e]));
      }
    }
    m = block_reduce(m, MaxOp{}, -kInf, shared);
    if (p.cluster > 1) m = cluster_reduce(m, MaxOp{}, &cluster_slot[0]);
    // A float or double softmax keeps exp(x - max) in place of x (the same value the write would
    // compute again), so the write pass is one multiply per element and expf runs once.
    const bool keep_exp = kKeepExp && !p.log;
    C s = 0;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int64_t i = begin + (static_cast<int64_t>(k) * blockDim.x + threadIdx.x) * kVec;
      if (i < end) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const C ex = exp_of(static_cast<C>(vals[k].v[e]) - m);
          s += ex;
          if (keep_exp) vals[k].v[e] = static_cast<T>(ex);
        }
      }
    }
    s = block_reduce(s, SumOp{}, C(0), shared);
    if (p.cluster > 1) s = cluster_reduce(s, SumOp{}, &cluster_slot[1]);
    const C scale = p.log ? log_of(s) : C(1) / s;  // a multiply per element, not a divide
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int64_t i = begin + (static_cast<int64_t>(k) * blockDim.x + threadIdx.x) * kVec;
      if (i < end) {
        V o;
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const C v = static_cast<C>(vals[k].v[e]);
          o.v[e] = static_cast<T>(p.log ? (v - m) - scale : (keep_exp ? v : exp_of(v - m)) * scale);
        }
        *reinterpret_cast<V*>(y + i) = o;
      }
    }
  }
  if (p.cluster > 1) cluster_barrier();
}

template <typename T>
__global__ void __launch_bounds__(kLoopedThreads)
    softmax_looped_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t n,
                          bool log) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  constexpr C kInf = static_cast<C>(INFINITY);  // numeric_limits is host-only
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * n;
    T* y = out + row * n;
    Online<C> acc{-kInf, C(0)};
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc.add(static_cast<C>(x[i]));
    const C m = block_reduce(acc.m, MaxOp{}, -kInf, shared);
    const C s = block_reduce(acc.sum_at(m), SumOp{}, C(0), shared);
    const C scale = log ? log_of(s) : C(1) / s;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const C t = static_cast<C>(x[i]) - m;
      y[i] = static_cast<T>(log ? t - scale : exp_of(t) * scale);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kColumnThreads)
    softmax_columns_kernel(const T* __restrict__ in, T* __restrict__ out, SoftmaxRows g, bool log) {
  using C = compute_t<T>;
  constexpr C kInf = static_cast<C>(INFINITY);  // numeric_limits is host-only
  const int64_t columns = g.outer * g.inner;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = c / g.inner, j = c - o * g.inner;
    const T* x = in + o * g.n * g.inner + j;
    T* y = out + o * g.n * g.inner + j;
    Online<C> acc{-kInf, C(0)};
    for (int64_t i = 0; i < g.n; ++i) acc.add(static_cast<C>(x[i * g.inner]));
    const C m = acc.m, s = acc.sum_at(acc.m);
    const C scale = log ? log_of(s) : C(1) / s;
    for (int64_t i = 0; i < g.n; ++i) {
      const C t = static_cast<C>(x[i * g.inner]) - m;
      y[i * g.inner] = static_cast<T>(log ? t - scale : exp_of(t) * scale);
    }
  }
}

// Per-device facts, queried once: SM count, and whether cluster launches of this build's code
// work there (the device supports them and runs sm_90 code, not an older arch's).
struct DeviceFacts {
  int sms = 0;
  bool clusters = false;
};

DeviceFacts device_facts(int device) {
  constexpr int kCached = 64;
  static std::atomic<int> cache[kCached];  // 0: not yet; else sms * 2 + clusters
  if (device < kCached) {
    const int v = cache[device].load(std::memory_order_relaxed);
    if (v > 0) return {v / 2, (v & 1) != 0};
  }
  DeviceFacts f;
  int cluster_launch = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, device));
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
  cudaFuncAttributes attributes{};
  TL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, softmax_rows_kernel<float, 4, kMaxLoads>));
  f.clusters = cluster_launch != 0 && attributes.binaryVersion >= 90;
  if (device < kCached) cache[device].store(f.sms * 2 + (f.clusters ? 1 : 0));
  return f;
}

// Threads and loads per thread for `vectors` vectors in one block of at most max_threads
// threads: few loads for short rows (more blocks per SM), up to kMaxLoads for long ones.
bool block_shape(int64_t vectors, int max_threads, int& threads, int& loads) {
  for (loads = 1; loads <= kMaxLoads; loads *= 2) {
    if (vectors <= 256 * loads || (loads == kMaxLoads && vectors <= max_threads * loads)) {
      threads = static_cast<int>(std::max<int64_t>(32, (divide_up(vectors, loads) + 31) / 32 * 32));
      return true;
    }
  }
  return false;
}

template <typename T, int kVec, int kLoads>
void launch_rows_kernel(const T* in, T* out, const RowPlan& p, int threads, cudaStream_t s) {
  constexpr int64_t kMaxGridRows = int64_t{1} << 24;
  const int64_t grid_rows = std::min(p.rows, kMaxGridRows / p.cluster);
  const unsigned grid = static_cast<unsigned>(grid_rows * p.cluster);
  if (p.cluster == 1) {
    softmax_rows_kernel<T, kVec, kLoads><<<grid, threads, 0, s>>>(in, out, p);
    check_launch(s, "softmax_rows_kernel");
    return;
  }
  const ClusterLaunch launch(grid, static_cast<unsigned>(threads), 0, p.cluster, s);
  const cudaError_t err =
      cudaLaunchKernelEx(&launch.config, softmax_rows_kernel<T, kVec, kLoads>, in, out, p);
  check_launched(err, s, "softmax_rows_kernel");
}

template <typename T, int kVec>
void launch_rows(const T* in, T* out, const RowPlan& p, int threads, int loads, cudaStream_t s) {
  switch (loads) {
    case 1:
      return launch_rows_kernel<T, kVec, 1>(in, out, p, threads, s);
    case 2:
      return launch_rows_kernel<T, kVec, 2>(in, out, p, threads, s);
    case 4:
      return launch_rows_kernel<T, kVec, 4>(in, out, p, threads, s);
    default:
      return launch_rows_kernel<T, kVec, kMaxLoads>(in, out, p, threads, s);
  }
}

template <typename T>
void run(const Tensor& in, const Tensor& out, const SoftmaxRows& g, bool log) {
  const int device = out.device().index();
  cudaStream_t s = current_stream_handle(device);
  const T* x = typed_ptr<const T>(in);
  T* y = typed_ptr<T>(out);
  if (g.inner > 1) {
    const int64_t columns = g.outer * g.inner;
    softmax_columns_kernel<T>
        <<<grid_for(columns, kColumnThreads), kColumnThreads, 0, s>>>(x, y, g, log);
    check_launch(s, "softmax_columns_kernel");
    return;
  }
  const DeviceFacts facts = device_facts(device);
  // 16-byte loads need every row to start on a 16-byte boundary.
  constexpr int kVec = 16 / sizeof(T);
  const bool vector = reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(y) % 16 == 0 && g.n % kVec == 0;
  const int width = vector ? kVec : 1;
  const int64_t vectors = g.n / width + (g.n % width != 0);
  auto fits = [&](int cluster) {
    return divide_up(vectors, cluster) <= (cluster == 1 ? 1024 : kClusterThreads) * kMaxLoads;
  };
  // Few rows: split each over a cluster until the GPU is busy (or the chunks get short).
  int cluster = 1;
  if (facts.clusters) {
    while (cluster < kMaxCluster &&
           (!fits(cluster) ||
            (g.outer * cluster < facts.sms && divide_up(vectors, 2 * cluster) >= kMinChunkVectors)))
      cluster *= 2;
  }
  int threads = 0, loads = 0;
  const bool in_registers =
      fits(cluster) && block_shape(divide_up(vectors, cluster),
                                   cluster == 1 ? 1024 : kClusterThreads, threads, loads);
  // Few long rows that this kernel would run in more than one wave (more bytes than the registers
  // of all SMs hold), or not at all: held in registers and shared memory in one wave instead, when
  // they fit (cuda_softmax_split.cu).
  const int64_t bytes = g.outer * g.n * static_cast<int64_t>(sizeof(T));
  if (facts.clusters && g.outer <= 2 * int64_t{facts.sms} &&
      (!in_registers || bytes > facts.sms * kRegisterBytesPerSm) &&
      softmax_split<T>(x, y, g.outer, g.n, log, device, s))
    return;
  if (!in_registers) {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(g.outer, int64_t{1} << 24));
    softmax_looped_kernel<T><<<grid, kLoopedThreads, 0, s>>>(x, y, g.outer, g.n, log);
    check_launch(s, "softmax_looped_kernel");
    return;
  }
  const RowPlan p{g.outer, g.n, divide_up(vectors, cluster) * width, cluster, log};
  if (vector)
    launch_rows<T, kVec>(x, y, p, threads, loads, s);
  else
    launch_rows<T, 1>(x, y, p, threads, loads, s);
}

}  // namespace

void softmax(const Tensor& in, int64_t dim, bool log, const Tensor& out) {
  if (in.numel() == 0) return;  // the front-end returns empty results as they are
  const SoftmaxRows g = softmax_rows(in.shape(), dim);
  dispatch_dtype<kFloatingDTypes>(in.dtype(), [&]<typename T>() { run<T>(in, out, g, log); });
}

}  // namespace tensorlet::cuda

// Pieces the softmax kernels share (cuda_softmax.cu, cuda_softmax_split.cu, and the fused
// cross entropy of cuda_cross_entropy.cu): exp and log of the compute type, torch's
// NaN-propagating max, an online (max, sum of exp), block and cluster reductions that give every
// thread the same result, the 16-byte vector of elements the row kernels load and store, and the
// host's description of a cluster launch.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cmath>

namespace tensorlet::cuda::softmax_impl {

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return ::exp(x); }
__device__ __forceinline__ float log_of(float x) { return logf(x); }
__device__ __forceinline__ double log_of(double x) { return ::log(x); }

// A NaN-propagating max (a NaN max makes every output NaN, as torch).
template <typename C>
__device__ __forceinline__ C max_nan(C a, C b) {
  return (a != a || a > b) ? a : b;
}

struct MaxOp {
  template <typename C>
  __device__ __forceinline__ C operator()(C a, C b) const {
    return max_nan(a, b);
  }
};
struct SumOp {
  template <typename C>
  __device__ __forceinline__ C operator()(C a, C b) const {
    return a + b;
  }
};

// Reduces v over the block (blockDim.x a multiple of 32); every thread gets the result.
// `shared` holds one value per warp; the first barrier lets a previous reduction finish reading it.
template <typename C, typename Op>
__device__ __forceinline__ C block_reduce(C v, Op op, C identity, C* shared) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x / 32) ? shared[lane] : identity;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Combines one value per block of the calling block's cluster (every block gets the same result,
// folded in rank order). `slot` must not be written again before the next cluster barrier.
template <typename C, typename Op>
__device__ __forceinline__ C cluster_reduce(C v, Op op, C* slot) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) *slot = v;
  cluster.sync();
  C r = *cluster.map_shared_rank(slot, 0);
  for (unsigned b = 1; b < cluster.num_blocks(); ++b) r = op(r, *cluster.map_shared_rank(slot, b));
  return r;
#else
  (void)op;
  (void)slot;
  __trap();  // the host launches clusters only for sm_90 code
  return v;
#endif
}

// Waits until every block of the cluster got here: a block must not exit while another block of
// its cluster may still read its shared memory (cluster_reduce's slots).
__device__ __forceinline__ void cluster_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}

// The two halves of a cluster barrier: arrive (release: this block's writes to its shared memory,
// and its reads of the others', are done) and wait (acquire: every block arrived). Apart, they
// let a block do its own work between the last read of another block's shared memory and the
// wait that keeps that memory alive until every reader is done.
__device__ __forceinline__ void cluster_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

// Running (max, sum of exp(x - max)) of the elements seen so far. An all -inf prefix keeps sum 0
// (it adds no mass; exp(-inf - -inf) would be NaN); exp(x - x) keeps torch's NaN for a +inf
// element; a NaN makes both NaN.
template <typename C>
struct Online {
  C m, s;

  __device__ __forceinline__ void add(C x) {
    constexpr C kInf = static_cast<C>(INFINITY);  // numeric_limits is host-only
    if (x != x) {
      m = x;
      s = x;
    } else if (x > m) {
      s = (m == -kInf ? C(0) : s * exp_of(m - x)) + exp_of(x - x);
      m = x;
    } else if (m != -kInf) {
      s += exp_of(x - m);
    }
  }
  // This thread's sum rescaled to the final max M.
  __device__ __forceinline__ C sum_at(C M) const {
    constexpr C kInf = static_cast<C>(INFINITY);  // numeric_limits is host-only
    return m == -kInf ? C(0) : s * exp_of(m - M);
  }
};

// kVec elements moved as one access (16 bytes when kVec > 1).
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

// A launch of `grid` blocks in clusters of `cluster` along x, as cudaLaunchKernelEx and
// cudaOccupancyMaxActiveClusters take it. config points at this object's own attribute, so it is
// neither copied nor moved.
struct ClusterLaunch {
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t config{};

  ClusterLaunch(unsigned grid, unsigned threads, size_t shared_bytes, int cluster,
                cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(cluster);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(grid);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace tensorlet::cuda::softmax_impl

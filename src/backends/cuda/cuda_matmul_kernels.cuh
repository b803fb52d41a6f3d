// Our own matmul kernels, for what cuBLAS does badly or not at all: a small-matrix kernel (whole
// matrices in shared memory, several per block, one launch for any batch) and a tiled kernel for
// integer matrices of any size. Both read any strides, so transposed or sliced views are not
// copied, and both take gemm's alpha and beta (addmm) in their last step.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/math/wrapping_int.h"
#include "tensorlet/tensor/dtype.h"

namespace tensorlet::cuda {

// Batch dims left after collapsing (see cuda_matmul.cu); more than this fall back to copies.
constexpr int kMaxKernelBatchDims = 4;
// The small kernel's limits: matrices up to this in M, N and K; at most this many threads, and
// this much shared memory per block (small enough for several resident blocks per SM).
constexpr int kSmallDim = 32;
constexpr int kSmallThreads = 256;
constexpr int kSmallSharedBytes = 16384;
constexpr int kTile = 16;

// Integer products accumulate in Wide<T> (backends/wrapping_int.h): wrap-around is then
// defined and matches the CPU's (8/16-bit ones accumulate in their own type: each product is an
// int, and narrowing a sum keeps its low bits, which is the wrapped result). float16/bfloat16
// accumulate in float and round once, as cuBLAS with CUBLAS_COMPUTE_32F.
template <typename T>
using MatmulAcc = std::conditional_t<is_reduced_float_v<T>, float, Wide<T>>;

// gemm's scaling, c = alpha * sum + beta * c in the accumulator type, rounded once; c is not read
// when beta is 0. Plain matmul leaves `scaled` false.
template <typename T>
struct MatmulScale {
  bool scaled = false;
  MatmulAcc<T> alpha = 1, beta = 0;

  __device__ __forceinline__ T apply(MatmulAcc<T> acc, const T* c) const {
    if (scaled) {
      acc = alpha * acc;
      if (beta != MatmulAcc<T>(0)) acc += beta * static_cast<MatmulAcc<T>>(*c);
    }
    return static_cast<T>(acc);
  }
};

// c[i] (contiguous [batch, m, n]) = a[i] @ b[i]; element (r, c) of matrix i of a lives at
// a + offset_a(i) + r * ars + c * acs, and likewise for b.
template <typename T>
struct MatmulArgs {
  const T* a;
  const T* b;
  T* c;
  int64_t m, n, k;
  int64_t ars, acs, brs, bcs;
  int64_t batch;
  int nbatch;
  int64_t bsize[kMaxKernelBatchDims], bsa[kMaxKernelBatchDims], bsb[kMaxKernelBatchDims];
  MatmulScale<T> scale;

  __device__ __forceinline__ void offsets(int64_t i, int64_t& oa, int64_t& ob) const {
    oa = 0;
    ob = 0;
    for (int d = nbatch - 1; d >= 0; --d) {
      const int64_t idx = i % bsize[d];
      i /= bsize[d];
      oa += idx * bsa[d];
      ob += idx * bsb[d];
    }
  }
};

// A block takes `group` consecutive matrices of the batch at a time: stages their a and b tiles
// in shared memory (consecutive threads read consecutive elements, so contiguous inputs load
// coalesced) and gives each thread an output element.
template <typename T>
__global__ void small_matmul_kernel(MatmulArgs<T> p, int group) {
  using Acc = MatmulAcc<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int64_t off_a[kSmallThreads], off_b[kSmallThreads];
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const int mk = m * k, kn = k * n, mn = m * n;
  T* as = reinterpret_cast<T*>(smem);
  T* bs = as + group * mk;
  const int64_t groups = (p.batch + group - 1) / group;
  for (int64_t g0 = blockIdx.x; g0 < groups; g0 += gridDim.x) {
    const int64_t first = g0 * group;
    const int count = static_cast<int>(min(static_cast<int64_t>(group), p.batch - first));
    for (int g = threadIdx.x; g < count; g += blockDim.x) p.offsets(first + g, off_a[g], off_b[g]);
    __syncthreads();
    for (int e = threadIdx.x; e < count * mk; e += blockDim.x) {
      const int g = e / mk, r = e - g * mk, i = r / k, q = r - i * k;
      as[e] = p.a[off_a[g] + i * p.ars + q * p.acs];
    }
    for (int e = threadIdx.x; e < count * kn; e += blockDim.x) {
      const int g = e / kn, r = e - g * kn, q = r / n, j = r - q * n;
      bs[e] = p.b[off_b[g] + q * p.brs + j * p.bcs];
    }
    __syncthreads();
    T* c = p.c + first * mn;
    for (int e = threadIdx.x; e < count * mn; e += blockDim.x) {
      const int g = e / mn, r = e - g * mn, i = r / n, j = r - i * n;
      const T* arow = as + g * mk + i * k;
      const T* bcol = bs + g * kn + j;
      Acc acc = 0;
      for (int q = 0; q < k; ++q) acc += static_cast<Acc>(arow[q]) * static_cast<Acc>(bcol[q * n]);
      c[e] = p.scale.apply(acc, c + e);
    }
    __syncthreads();  // the next group overwrites the tiles and offsets
  }
}

// One kTile x kTile output tile per block iteration, K walked in kTile steps through shared
// memory; blocks stride over (matrix, tile row, tile col) so no grid dimension limit applies.
template <typename T>
__global__ void tiled_matmul_kernel(MatmulArgs<T> p) {
  using Acc = MatmulAcc<T>;
  __shared__ T as[kTile][kTile + 1], bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles_m = (p.m + kTile - 1) / kTile, tiles_n = (p.n + kTile - 1) / kTile;
  const int64_t total = p.batch * tiles_m * tiles_n;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t tn = t % tiles_n, rest = t / tiles_n;
    const int64_t tm = rest % tiles_m, mat = rest / tiles_m;
    int64_t oa, ob;
    p.offsets(mat, oa, ob);
    const int64_t row = tm * kTile + ty, col = tn * kTile + tx;
    Acc acc = 0;
    for (int64_t k0 = 0; k0 < p.k; k0 += kTile) {
      as[ty][tx] = row < p.m && k0 + tx < p.k ? p.a[oa + row * p.ars + (k0 + tx) * p.acs] : T(0);
      bs[ty][tx] = k0 + ty < p.k && col < p.n ? p.b[ob + (k0 + ty) * p.brs + col * p.bcs] : T(0);
      __syncthreads();
#pragma unroll
      for (int q = 0; q < kTile; ++q)
        acc += static_cast<Acc>(as[ty][q]) * static_cast<Acc>(bs[q][tx]);
      __syncthreads();
    }
    if (row < p.m && col < p.n) {
      T* c = p.c + (mat * p.m + row) * p.n + col;
      *c = p.scale.apply(acc, c);
    }
  }
}

}  // namespace tensorlet::cuda

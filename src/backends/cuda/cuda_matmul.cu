// Matmul and gemm (alpha * a @ b + beta * out) on CUDA: cuBLAS for floats beyond small sizes
// (transposed views passed as transpose flags, batches as strided-batched calls; float16/bfloat16
// through cublasGemmEx on tensor cores, accumulating in float32; gemm's alpha and beta are
// cuBLAS's), our own kernels for matrices up to 128 a side, where cuBLAS costs several launches'
// worth of host time, and for integers (which PyTorch refuses on CUDA).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_blas.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_matmul_kernels.cuh"
#include "tensorlet/backends/math/gemm_scalar.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

// The batch dims of out with size-1 dims dropped and dims merged where both operands step
// through them evenly (out is contiguous, so it always does): usually 0 or 1 dim remains.
struct BatchDims {
  int n = 0;
  int64_t size[kMaxDims], sa[kMaxDims], sb[kMaxDims];
};

BatchDims collapse_batch(const Tensor& a, const Tensor& b, const Tensor& out) {
  BatchDims bd;
  const int64_t nbatch = out.dim() - 2;
  for (int64_t d = 0; d < nbatch; ++d) {
    const int64_t size = out.shape()[d];
    if (size == 1) continue;
    const int64_t sa = a.strides()[d], sb = b.strides()[d];
    if (bd.n > 0 && bd.sa[bd.n - 1] == sa * size && bd.sb[bd.n - 1] == sb * size) {
      bd.size[bd.n - 1] *= size;
      bd.sa[bd.n - 1] = sa;
      bd.sb[bd.n - 1] = sb;
    } else {
      bd.size[bd.n] = size;
      bd.sa[bd.n] = sa;
      bd.sb[bd.n] = sb;
      ++bd.n;
    }
  }
  return bd;
}

// A materialized copy of `t` (broadcast batch dims expanded too), for the rare layouts the
// kernels below cannot index.
Tensor dense_copy(const Tensor& t) {
  Tensor copy = make_tensor(t.shape(), t.dtype(), t.device());
  copy_same_device(t, copy);
  return copy;
}

// ---- our kernels: small matrices of every dtype, integers of any size ----
//
// Floats up to kMediumDim a side take the tiled kernel too: one plain launch, where cuBLAS costs
// the host several times that (about 10 µs per call on an H100), which held back eager work on two
// GPUs from one thread (bench_multi_gpu's M1). Bounded by kMediumWork multiply-adds so that a big
// batch still goes to cuBLAS's tuned kernels.
//
// float16/bfloat16 accumulate in float there (MatmulAcc), so a small product matches cuBLAS's.

constexpr int64_t kMediumDim = 128;
constexpr int64_t kMediumWork = kMediumDim * kMediumDim * kMediumDim;

template <typename T>
void kernel_matmul(const Tensor& a, const Tensor& b, const Tensor& out, cudaStream_t s,
                   const MatmulScale<T>& scale = {}) {
  const int64_t nd = out.dim();
  BatchDims bd = collapse_batch(a, b, out);
  if (bd.n > kMaxKernelBatchDims) {
    // Dense copies collapse to a single batch dim.
    kernel_matmul<T>(dense_copy(a), dense_copy(b), out, s, scale);
    return;
  }
  MatmulArgs<T> p{};
  p.scale = scale;
  p.a = static_cast<const T*>(a.data_ptr());
  p.b = static_cast<const T*>(b.data_ptr());
  p.c = static_cast<T*>(out.data_ptr());
  p.m = out.shape()[nd - 2];
  p.n = out.shape()[nd - 1];
  p.k = a.shape()[nd - 1];
  p.ars = a.strides()[nd - 2];
  p.acs = a.strides()[nd - 1];
  p.brs = b.strides()[nd - 2];
  p.bcs = b.strides()[nd - 1];
  p.batch = 1;
  p.nbatch = bd.n;
  for (int d = 0; d < bd.n; ++d) {
    p.bsize[d] = bd.size[d];
    p.bsa[d] = bd.sa[d];
    p.bsb[d] = bd.sb[d];
    p.batch *= bd.size[d];
  }
  if (p.m <= kSmallDim && p.n <= kSmallDim && p.k <= kSmallDim) {
    const int mn = static_cast<int>(p.m * p.n);
    const int tile_bytes = static_cast<int>((p.m + p.n) * p.k) * static_cast<int>(sizeof(T));
    int64_t group = std::min(kSmallThreads / mn, kSmallSharedBytes / tile_bytes);
    group = std::max<int64_t>(1, std::min(group, p.batch));
    const int threads =
        static_cast<int>(std::min<int64_t>(kSmallThreads, (group * mn + 31) / 32 * 32));
    const int64_t groups = (p.batch + group - 1) / group;
    // cudaLaunchKernel returns the launch's error itself: no cudaGetLastError on this hot path
    // (M1's eager matmuls are these kernels).
    int group_arg = static_cast<int>(group);
    void* args[] = {&p, &group_arg};
    check_launched(cudaLaunchKernel(reinterpret_cast<const void*>(&small_matmul_kernel<T>),
                                    dim3(grid_for(groups, 1)), dim3(threads), args,
                                    static_cast<size_t>(group * tile_bytes), s),
                   s, "small_matmul_kernel");
    return;
  }
  {  // integers of any size; floats of medium size (matmul_uses_kernels)
    const int64_t tiles = p.batch * ((p.m + kTile - 1) / kTile) * ((p.n + kTile - 1) / kTile);
    void* args[] = {&p};
    check_launched(cudaLaunchKernel(reinterpret_cast<const void*>(&tiled_matmul_kernel<T>),
                                    dim3(grid_for(tiles, 1)), dim3(kTile, kTile), args, 0, s),
                   s, "tiled_matmul_kernel");
  }
}

// ---- cuBLAS ----

// An operand cuBLAS cannot read in place (a slice with a step in both matrix dims, a broadcast
// inside the matrix) is copied once per call; broadcast batch dims stay broadcast, so a matrix
// shared by the whole batch is copied once.
Tensor blas_copy(const Tensor& t) {
  const int64_t nd = t.dim();
  Shape compact = t.shape();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.strides()[d] == 0) compact[d] = 1;
  Tensor copy = make_tensor(compact, t.dtype(), t.device());
  copy_same_device(make_view(t, compact, t.strides(), t.offset()), copy);
  Shape strides = copy.strides();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.strides()[d] == 0) strides[d] = 0;
  return make_view(copy, t.shape(), strides, 0);
}

// One cuBLAS product (count > 1: strided batched) in the column-major terms above.
struct Gemm {
  cublasOperation_t ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c, count;
};

// The type of cuBLAS's alpha and beta for T: float for float16/bfloat16 (CUBLAS_COMPUTE_32F).
template <typename T>
using BlasScalar = std::conditional_t<std::is_same_v<T, double>, double, float>;

// alpha = 1, beta = 0 for matmul; gemm's own for addmm (C then holds the input, unless beta is 0,
// when cuBLAS does not read it).
template <typename T>
void run_gemm_float(cublasHandle_t h, const Gemm& g, const T* A, const T* B, T* C, cudaStream_t s,
                    T alpha, T beta) {
  constexpr bool f32 = std::is_same_v<T, float>;
  // The 32-bit API unless a size needs the 64-bit one, so the common case calls exactly what a
  // plain cuBLAS user calls.
  const bool narrow = std::max({g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.count}) <= INT_MAX;
  const char* name;
  cublasStatus_t st;
  if (g.count == 1 && narrow) {
    name = f32 ? "cublasSgemm" : "cublasDgemm";
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    const int lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb);
    const int ldc = static_cast<int>(g.ldc);
    if constexpr (f32)
      st = cublasSgemm(h, g.ta, g.tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
    else
      st = cublasDgemm(h, g.ta, g.tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
  } else if (g.count == 1) {
    name = f32 ? "cublasSgemm_64" : "cublasDgemm_64";
    if constexpr (f32)
      st =
          cublasSgemm_64(h, g.ta, g.tb, g.m, g.n, g.k, &alpha, A, g.lda, B, g.ldb, &beta, C, g.ldc);
    else
      st =
          cublasDgemm_64(h, g.ta, g.tb, g.m, g.n, g.k, &alpha, A, g.lda, B, g.ldb, &beta, C, g.ldc);
  } else if (narrow) {
    name = f32 ? "cublasSgemmStridedBatched" : "cublasDgemmStridedBatched";
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    const int lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb);
    const int ldc = static_cast<int>(g.ldc), count = static_cast<int>(g.count);
    if constexpr (f32)
      st = cublasSgemmStridedBatched(h, g.ta, g.tb, m, n, k, &alpha, A, lda, g.stride_a, B, ldb,
                                     g.stride_b, &beta, C, ldc, g.stride_c, count);
    else
      st = cublasDgemmStridedBatched(h, g.ta, g.tb, m, n, k, &alpha, A, lda, g.stride_a, B, ldb,
                                     g.stride_b, &beta, C, ldc, g.stride_c, count);
  } else {
    name = f32 ? "cublasSgemmStridedBatched_64" : "cublasDgemmStridedBatched_64";
    if constexpr (f32)
      st = cublasSgemmStridedBatched_64(h, g.ta, g.tb, g.m, g.n, g.k, &alpha, A, g.lda, g.stride_a,
                                        B, g.ldb, g.stride_b, &beta, C, g.ldc, g.stride_c, g.count);
    else
      st = cublasDgemmStridedBatched_64(h, g.ta, g.tb, g.m, g.n, g.k, &alpha, A, g.lda, g.stride_a,
                                        B, g.ldb, g.stride_b, &beta, C, g.ldc, g.stride_c, g.count);
  }
  check_blas(st, name);
  check_launch(s, name);
}

// float16/bfloat16: cublasGemmEx (strided batched when count > 1) with 16-bit operands and result
// and CUBLAS_COMPUTE_32F, so products accumulate in float and the result is rounded once, as
// PyTorch's cuBLAS path does; cuBLAS picks tensor-core kernels for these types by itself.
void run_gemm_ex(cublasHandle_t h, const Gemm& g, const void* A, const void* B, void* C,
                 cudaDataType type, cudaStream_t s, float alpha, float beta) {
  const bool narrow = std::max({g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.count}) <= INT_MAX;
  constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  constexpr cublasGemmAlgo_t algo = CUBLAS_GEMM_DEFAULT;
  const char* name;
  cublasStatus_t st;
  if (g.count == 1 && narrow) {
    name = "cublasGemmEx";
    st = cublasGemmEx(h, g.ta, g.tb, static_cast<int>(g.m), static_cast<int>(g.n),
                      static_cast<int>(g.k), &alpha, A, type, static_cast<int>(g.lda), B, type,
                      static_cast<int>(g.ldb), &beta, C, type, static_cast<int>(g.ldc), compute,
                      algo);
  } else if (g.count == 1) {
    name = "cublasGemmEx_64";
    st = cublasGemmEx_64(h, g.ta, g.tb, g.m, g.n, g.k, &alpha, A, type, g.lda, B, type, g.ldb,
                         &beta, C, type, g.ldc, compute, algo);
  } else if (narrow) {
    name = "cublasGemmStridedBatchedEx";
    st = cublasGemmStridedBatchedEx(h, g.ta, g.tb, static_cast<int>(g.m), static_cast<int>(g.n),
                                    static_cast<int>(g.k), &alpha, A, type, static_cast<int>(g.lda),
                                    g.stride_a, B, type, static_cast<int>(g.ldb), g.stride_b, &beta,
                                    C, type, static_cast<int>(g.ldc), g.stride_c,
                                    static_cast<int>(g.count), compute, algo);
  } else {
    name = "cublasGemmStridedBatchedEx_64";
    st = cublasGemmStridedBatchedEx_64(h, g.ta, g.tb, g.m, g.n, g.k, &alpha, A, type, g.lda,
                                       g.stride_a, B, type, g.ldb, g.stride_b, &beta, C, type,
                                       g.ldc, g.stride_c, g.count, compute, algo);
  }
  check_blas(st, name);
  check_launch(s, name);
}

template <typename T>
void run_gemm(cublasHandle_t h, const Gemm& g, const T* A, const T* B, T* C, cudaStream_t s,
              BlasScalar<T> alpha, BlasScalar<T> beta) {
  if constexpr (std::is_same_v<T, Half>)
    run_gemm_ex(h, g, A, B, C, CUDA_R_16F, s, alpha, beta);
  else if constexpr (std::is_same_v<T, BFloat16>)
    run_gemm_ex(h, g, A, B, C, CUDA_R_16BF, s, alpha, beta);
  else
    run_gemm_float(h, g, A, B, C, s, alpha, beta);
}

template <typename T>
void blas_matmul(const Tensor& a_in, const Tensor& b_in, const Tensor& out, cudaStream_t s,
                 BlasScalar<T> alpha = 1, BlasScalar<T> beta = 0) {
  const int64_t nd = out.dim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a_in.shape()[nd - 1];
  BlasOperand la{CUBLAS_OP_N, 1}, lb{CUBLAS_OP_N, 1};
  // Pointers, not handle copies, on the common path where no operand needs a copy.
  const Tensor* a = &a_in;
  const Tensor* b = &b_in;
  Tensor a_copy, b_copy;
  if (!blas_layout(m, k, a->strides()[nd - 2], a->strides()[nd - 1], la)) {
    a_copy = blas_copy(*a);
    a = &a_copy;
    blas_layout(m, k, a->strides()[nd - 2], a->strides()[nd - 1], la);
  }
  if (!blas_layout(k, n, b->strides()[nd - 2], b->strides()[nd - 1], lb)) {
    b_copy = blas_copy(*b);
    b = &b_copy;
    blas_layout(k, n, b->strides()[nd - 2], b->strides()[nd - 1], lb);
  }
  const BatchDims bd = collapse_batch(*a, *b, out);

  // cuBLAS's A is our b (n x k after op), its B our a (k x m after op).
  Gemm g{lb.op, la.op, n, m, k, lb.ld, la.ld, n, 0, 0, m * n, 1};
  if (bd.n > 0) {
    g.count = bd.size[bd.n - 1];
    g.stride_a = bd.sb[bd.n - 1];
    g.stride_b = bd.sa[bd.n - 1];
  }
  // One matrix b for the whole batch and a's rows evenly spaced across it (x @ w.T in linear):
  // a single product with count * m rows, much faster than a batch of thin ones.
  if (bd.n == 1 && g.stride_a == 0 && la.op == CUBLAS_OP_N) {
    if (m == 1 && g.stride_b >= k) {
      g.n = g.count;
      g.ldb = g.stride_b;
      g.count = 1;
    } else if (m > 1 && g.stride_b == m * la.ld) {
      g.n = g.count * m;
      g.count = 1;
    }
  }

  const T* pa = static_cast<const T*>(a->data_ptr());
  const T* pb = static_cast<const T*>(b->data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  int64_t outer = 1;
  for (int d = 0; d + 1 < bd.n; ++d) outer *= bd.size[d];
  BlasHandle handle(out.device().index(), s, allow_tf32());
  // Batch dims that do not collapse into one stride: a strided-batched call per outer index.
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off_a = 0, off_b = 0, rest = o;
    for (int d = bd.n - 2; d >= 0; --d) {
      const int64_t idx = rest % bd.size[d];
      rest /= bd.size[d];
      off_a += idx * bd.sa[d];
      off_b += idx * bd.sb[d];
    }
    run_gemm<T>(handle.get(), g, pb + off_b, pa + off_a, pc + o * g.count * m * n, s, alpha, beta);
  }
}

}  // namespace

bool matmul_uses_kernels(const Tensor& out, int64_t m, int64_t n, int64_t k) {
  if (m <= kSmallDim && n <= kSmallDim && k <= kSmallDim) return true;
  if (m > kMediumDim || n > kMediumDim || k > kMediumDim) return false;
  const int64_t batch = out.numel() / std::max<int64_t>(m * n, 1);
  return batch <= kMediumWork / std::max<int64_t>(m * n * k, 1);
}

void matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t nd = out.dim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  cudaStream_t s = current_stream_handle(out.device().index());
  if (k == 0) {  // every output is an empty sum; out is contiguous
    TL_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), s));
    return;
  }
  const bool small = matmul_uses_kernels(out, m, n, k);
  dispatch_dtype<kNumericDTypes>(
      out.dtype(),
      [&]<typename T>() {
        if constexpr (is_floating_v<T>) {
          if (small)
            kernel_matmul<T>(a, b, out, s);
          else
            blas_matmul<T>(a, b, out, s);
        } else {
          kernel_matmul<T>(a, b, out, s);
        }
      },
      "tl::matmul");
}

}  // namespace tensorlet::cuda

namespace tensorlet::cuda {

void gemm(const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta, const Tensor& out) {
  const int64_t nd = out.dim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  cudaStream_t s = current_stream_handle(out.device().index());
  const bool small = matmul_uses_kernels(out, m, n, k);
  const bool keep = gemm_reads_out(beta);
  dispatch_dtype<kNumericDTypes>(
      out.dtype(),
      [&]<typename T>() {
        using Acc = MatmulAcc<T>;
        const MatmulScale<T> scale{true, gemm_scalar<Acc>(alpha),
                                   keep ? gemm_scalar<Acc>(beta) : Acc(0)};
        if constexpr (is_floating_v<T>) {
          if (small)
            kernel_matmul<T>(a, b, out, s, scale);
          else
            blas_matmul<T>(a, b, out, s, scale.alpha, scale.beta);
        } else {
          kernel_matmul<T>(a, b, out, s, scale);
        }
      },
      "tl::gemm");
}

}  // namespace tensorlet::cuda

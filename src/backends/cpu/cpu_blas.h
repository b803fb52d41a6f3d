// The optimized BLAS's GEMM (OpenBLAS or BLIS through CBLAS, when meson found one) and the
// TL_CPU_GEMM switch between it and Eigen's. Internal to the CPU backend.
#pragma once

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#if TL_WITH_BLAS
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {

#if TL_WITH_BLAS
inline constexpr bool kHaveBlas = true;
#else
inline constexpr bool kHaveBlas = false;
#endif

// The element types the BLAS multiplies.
template <typename T>
inline constexpr bool kBlasType = kHaveBlas &&
                                  (std::is_same_v<T, float> || std::is_same_v<T, double>);

// Which GEMM float32/float64 products run on. TL_CPU_GEMM=eigen: Eigen's, as in a build without
// a BLAS (so one binary can time both); TL_CPU_GEMM=blas: the BLAS for every product, tiny and
// batched ones too, one matrix at a time (tests and the fuzzer reach the BLAS with small shapes
// this way); unset or anything else: by size (cpu_matmul.cpp).
enum class GemmChoice { BySize, Eigen, Blas };

inline GemmChoice gemm_choice() {
  static const GemmChoice choice = [] {
    const char* v = std::getenv("TL_CPU_GEMM");
    if (v != nullptr && std::strcmp(v, "eigen") == 0) return GemmChoice::Eigen;
    if (v != nullptr && std::strcmp(v, "blas") == 0) return GemmChoice::Blas;
    return GemmChoice::BySize;
  }();
  return choice;
}

// Whether a BLAS call from inside an OpenMP region runs on the calling thread alone: OpenBLAS's
// OpenMP build does (it shares our pool and checks omp_in_parallel), so a batch of small products
// split over our threads may call it; a pthread build would wake its own pool from each thread.
inline bool blas_single_in_parallel() {
#if TL_BLAS_OPENBLAS
  static const bool single = openblas_get_parallel() == 2;
  return single;
#else
  return false;
#endif
}

// While alive, the BLAS called from this thread runs on it alone (where blas_single_in_parallel):
// OpenBLAS's OpenMP build takes its thread count from the calling thread's OpenMP setting, which
// belongs to this thread only, and with 1 it returns before touching its own global count. (Its
// openblas_set_num_threads would change that global count for every thread and free or allocate
// per-thread buffers on each change.)
class BlasOnCallingThread {
 public:
#ifdef _OPENMP
  BlasOnCallingThread() : before_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~BlasOnCallingThread() { omp_set_num_threads(before_); }

 private:
  int before_;
#else
  BlasOnCallingThread() {}  // user-provided: a guard is never an unused variable
#endif
};

// CBLAS takes int sizes (LP64 builds): larger ones stay on Eigen.
inline bool fits_blas_int(int64_t v) { return v <= INT_MAX; }

// One operand as CBLAS reads it: row-major with leading dimension ld, or the transpose of one.
template <typename T>
struct BlasOperand {
  const T* ptr;
  bool trans;
  int64_t ld;
};

// How a product is stated to CBLAS. Row-major is the plain statement; column-major states the
// same product as c^T = op(b)^T @ op(a)^T (a row-major matrix read column-major is its transpose,
// so the operands swap and keep their flags): the same work and result, but OpenBLAS 0.3.21 with
// AVX-512 sends small row-major NN float calls to its unpacked "direct" kernel, which column-major
// calls never take. Our split's single-threaded blocks are stated column-major (cpu_matmul.cpp).
enum class BlasStatement { RowMajor, ColMajor };

// c (row-major m x n, leading dimension ldc) = alpha * op(a) @ op(b) + beta * c; c is not read
// when beta is 0 (CBLAS's rule). The caller has checked every size with fits_blas_int.
template <typename T>
void blas_gemm([[maybe_unused]] int64_t m, [[maybe_unused]] int64_t n, [[maybe_unused]] int64_t k,
               [[maybe_unused]] T alpha, [[maybe_unused]] const BlasOperand<T>& a,
               [[maybe_unused]] const BlasOperand<T>& b, [[maybe_unused]] T beta,
               [[maybe_unused]] T* c, [[maybe_unused]] int64_t ldc,
               [[maybe_unused]] BlasStatement how = BlasStatement::RowMajor) {
#if TL_WITH_BLAS
  static_assert(kBlasType<T>);
  const auto op = [](bool trans) { return trans ? CblasTrans : CblasNoTrans; };
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  const int lda = static_cast<int>(a.ld), ldb = static_cast<int>(b.ld),
            ldci = static_cast<int>(ldc);
  const auto gemm = [&](auto fn) {
    if (how == BlasStatement::RowMajor)
      fn(CblasRowMajor, op(a.trans), op(b.trans), im, in, ik, alpha, a.ptr, lda, b.ptr, ldb, beta,
         c, ldci);
    else
      fn(CblasColMajor, op(b.trans), op(a.trans), in, im, ik, alpha, b.ptr, ldb, a.ptr, lda, beta,
         c, ldci);
  };
  if constexpr (std::is_same_v<T, float>)
    gemm(cblas_sgemm);
  else
    gemm(cblas_dgemm);
#endif
}

}  // namespace tensorlet::cpu

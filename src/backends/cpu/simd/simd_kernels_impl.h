// The SIMD leaf kernels, written once and compiled once per x86 target: simd_baseline.cpp,
// simd_avx2.cpp and simd_avx512.cpp define TL_SIMD_TARGET (their namespace) and TL_SIMD_LEVEL
// (0: SSE2, 1: AVX2 + FMA, 2: AVX-512) and include this file, each in a library of its own built
// with that target's -m flags (backends/cpu/simd/meson.build).
//
// ODR: everything here is in tensorlet::cpu::simd::TL_SIMD_TARGET (helpers in an unnamed namespace
// inside it), and nothing instantiates a template or emits an inline function declared outside
// (no std:: algorithm, no <cmath> overload: __builtin_expf and friends; no tensorlet header but
// the declarations of simd_kernels.h). The linker keeps one copy of each weak symbol: a copy
// compiled with -mavx512f chosen for the baseline path would crash an older CPU.
// scripts/check-simd-symbols (a meson test) checks the three libraries' symbols.
// No include guard: one inclusion per target file.

#if !defined(TL_SIMD_TARGET) || !defined(TL_SIMD_LEVEL)
#error "define TL_SIMD_TARGET and TL_SIMD_LEVEL before including simd_kernels_impl.h"
#endif
#if TL_SIMD_LEVEL == 2 && !(defined(__AVX512F__) && defined(__AVX512DQ__) && \
                            defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__FMA__))
#error "the AVX-512 kernels need -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma"
#elif TL_SIMD_LEVEL == 1 && !(defined(__AVX2__) && defined(__FMA__))
#error "the AVX2 kernels need -mavx2 -mfma"
#elif TL_SIMD_LEVEL == 0 && defined(__AVX__)
#error "the baseline kernels must be compiled without -mavx (they run on any x86-64)"
#endif

#include <stdint.h>

#include "tensorlet/backends/cpu/simd/simd_kernels.h"

// GCC 12's intrinsics headers pass "undefined" vectors made with a self-initialization, which
// -Wmaybe-uninitialized reports where they are inlined (castpd512_pd256, extractf64x4...): the
// warning is off for the header's own lines.
#if defined(__x86_64__) || defined(__i386__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

// SLEEF's vector functions on x86 (the build defines TL_WITH_SLEEF only there).
#if defined(TL_WITH_SLEEF)
#define TL_SIMD_VECTOR_MATH 1
#include <immintrin.h>
#include <sleef.h>
#else
#define TL_SIMD_VECTOR_MATH 0
#endif

namespace tensorlet::cpu::simd::TL_SIMD_TARGET {
namespace {

// ---- the scalar C functions (the reference, and the fallback outside SLEEF's domain) ----------

#define TL_SIMD_SCALAR(fn)                               \
  float fn##_s(float x) { return __builtin_##fn##f(x); } \
  double fn##_s(double x) { return __builtin_##fn(x); }
TL_SIMD_SCALAR(exp)
TL_SIMD_SCALAR(log)
TL_SIMD_SCALAR(tanh)
TL_SIMD_SCALAR(sin)
TL_SIMD_SCALAR(cos)
TL_SIMD_SCALAR(erf)
TL_SIMD_SCALAR(expm1)
TL_SIMD_SCALAR(log1p)
TL_SIMD_SCALAR(log2)
TL_SIMD_SCALAR(log10)
TL_SIMD_SCALAR(exp2)
TL_SIMD_SCALAR(tan)
TL_SIMD_SCALAR(sinh)
TL_SIMD_SCALAR(cosh)
TL_SIMD_SCALAR(asin)
TL_SIMD_SCALAR(acos)
TL_SIMD_SCALAR(atan)
#undef TL_SIMD_SCALAR

// ---- exact operations: plain loops the compiler vectorizes for the target ----------------------
// (-fno-math-errno lets sqrt become the instruction; ivdep: `out` is an input itself or apart
// from both, so no run-time overlap test is needed.)
#if defined(__clang__)
#define TL_SIMD_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define TL_SIMD_IVDEP _Pragma("GCC ivdep")
#endif

template <typename T>
void sqrt_k(const T* in, T* out, int64_t n) {
  TL_SIMD_IVDEP
  for (int64_t i = 0; i < n; ++i)
    out[i] = sizeof(T) == 4 ? __builtin_sqrtf(in[i]) : __builtin_sqrt(in[i]);
}
template <typename T>
void rsqrt_k(const T* in, T* out, int64_t n) {
  TL_SIMD_IVDEP
  for (int64_t i = 0; i < n; ++i)
    out[i] = T(1) / (sizeof(T) == 4 ? __builtin_sqrtf(in[i]) : __builtin_sqrt(in[i]));
}
template <typename T>
void reciprocal_k(const T* in, T* out, int64_t n) {
  TL_SIMD_IVDEP
  for (int64_t i = 0; i < n; ++i) out[i] = T(1) / in[i];
}

#define TL_SIMD_BINARY(name, op)                                         \
  template <typename T>                                                  \
  void name##_aa(const T* a, const T* b, T* out, int64_t n) {            \
    TL_SIMD_IVDEP for (int64_t i = 0; i < n; ++i) out[i] = a[i] op b[i]; \
  }                                                                      \
  template <typename T>                                                  \
  void name##_as(const T* a, const T* b, T* out, int64_t n) {            \
    const T s = *b;                                                      \
    TL_SIMD_IVDEP for (int64_t i = 0; i < n; ++i) out[i] = a[i] op s;    \
  }                                                                      \
  template <typename T>                                                  \
  void name##_sa(const T* a, const T* b, T* out, int64_t n) {            \
    const T s = *a;                                                      \
    TL_SIMD_IVDEP for (int64_t i = 0; i < n; ++i) out[i] = s op b[i];    \
  }
TL_SIMD_BINARY(add, +)
TL_SIMD_BINARY(sub, -)
TL_SIMD_BINARY(mul, *)
TL_SIMD_BINARY(div, /)
#undef TL_SIMD_BINARY

// ---- sums in float64 lanes, in the order simd_kernels.h fixes ----------------------------------
// The sixteen lanes are kSumVectors vectors of the target's width (eight SSE2, four AVX2 or two
// AVX-512 registers) and fold with vector adds: the same additions on every target. Each lane is
// a chain of dependent adds, so one row has at most sixteen adds in flight: rows are summed
// kSumRows at a time for more. Intrinsics, not GCC's generic vectors: GCC 12 widens float to
// double in halves through the stack for those. No stack arrays (see TL_SIMD_NO_ASAN below).
#if defined(__x86_64__) || defined(__i386__)
#if TL_SIMD_LEVEL == 2
struct SumLanes {
  typedef __m512d V;
  enum { kWidth = 8, kRows = 4 };
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  // Lanes 0-3, 4-7 of the 8 after the w = 8 step (lanes 0-7 + lanes 8-15), then w = 4.
  static __m256d fold_to_4(V l0, V l1) {
    const V s = _mm512_add_pd(l0, l1);
    return _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
  }
};
#elif TL_SIMD_LEVEL == 1
struct SumLanes {
  typedef __m256d V;
  enum { kWidth = 4, kRows = 2 };
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static __m256d fold_to_4(V l0, V l1, V l2, V l3) {
    return _mm256_add_pd(_mm256_add_pd(l0, l2), _mm256_add_pd(l1, l3));
  }
};
#endif
#if TL_SIMD_LEVEL >= 1
// w = 2 and w = 1 from the four lanes left after w = 4.
inline double fold_4(__m256d u) {
  const __m128d v = _mm_add_pd(_mm256_castpd256_pd128(u), _mm256_extractf128_pd(u, 1));
  return _mm_cvtsd_f64(v) + _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
}
// The vectors of one row's lanes, by value (an array's address would put them on the stack).
template <class L, class... V>
__attribute__((always_inline)) inline double fold_lanes(V... lanes) {
  return fold_4(L::fold_to_4(lanes...));
}
#else
struct SumLanes {
  typedef __m128d V;
  enum { kWidth = 2, kRows = 1 };
  static V zero() { return _mm_setzero_pd(); }
  static V load(const float* p) {
    return _mm_cvtps_pd(_mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(p)));
  }
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static V add(V a, V b) { return _mm_add_pd(a, b); }
  static void store(double* p, V v) { _mm_storeu_pd(p, v); }
};
template <class L>
__attribute__((always_inline)) inline double fold_lanes(__m128d l0, __m128d l1, __m128d l2,
                                                        __m128d l3, __m128d l4, __m128d l5,
                                                        __m128d l6, __m128d l7) {
  // lk holds lanes 2k, 2k + 1. w = 8: s_k = lk + l(k + 4); w = 4: u = s_k + s_k+2;
  // w = 2: u0 + u1; w = 1: the two halves.
  const __m128d s0 = _mm_add_pd(l0, l4), s1 = _mm_add_pd(l1, l5), s2 = _mm_add_pd(l2, l6),
                s3 = _mm_add_pd(l3, l7);
  const __m128d v = _mm_add_pd(_mm_add_pd(s0, s2), _mm_add_pd(s1, s3));
  return _mm_cvtsd_f64(v) + _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
}
#endif

constexpr int kSumVectors = 16 / SumLanes::kWidth;

// acc[r] + row r for R rows p + r * stride of n >= 32 elements, in the fixed order.
template <typename T, int R>
__attribute__((always_inline)) inline void sum_block(double* acc, const T* p, int64_t stride,
                                                     int64_t n) {
  using L = SumLanes;
  typename L::V lane[R][kSumVectors];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kSumVectors; ++v) lane[r][v] = L::zero();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < kSumVectors; ++v)
        lane[r][v] = L::add(lane[r][v], L::load(p + r * stride + i + v * L::kWidth));
  }
  // Folded with constant indices only (unrolled), so the lanes stay in registers: an array
  // indexed by a variable would live on the stack, where ASan's fake stack misaligns it.
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#if TL_SIMD_LEVEL == 2
    double a = acc[r] + fold_lanes<L>(lane[r][0], lane[r][1]);
#elif TL_SIMD_LEVEL == 1
    double a = acc[r] + fold_lanes<L>(lane[r][0], lane[r][1], lane[r][2], lane[r][3]);
#else
    double a = acc[r] + fold_lanes<L>(lane[r][0], lane[r][1], lane[r][2], lane[r][3], lane[r][4],
                                      lane[r][5], lane[r][6], lane[r][7]);
#endif
    const T* row = p + r * stride;
    for (int64_t k = i; k < n; ++k) a = a + static_cast<double>(row[k]);
    acc[r] = a;
  }
}

template <typename T>
void sum_rows_k(double* acc, const T* p, int64_t stride, int64_t rows, int64_t n) {
  if (n < 32) {  // no lanes: in order
    for (int64_t r = 0; r < rows; ++r) {
      double a = acc[r];
      for (int64_t k = 0; k < n; ++k) a = a + static_cast<double>(p[r * stride + k]);
      acc[r] = a;
    }
    return;
  }
  int64_t r = 0;
  for (; r + SumLanes::kRows <= rows; r += SumLanes::kRows)
    sum_block<T, SumLanes::kRows>(acc + r, p + r * stride, stride, n);
  for (; r < rows; ++r) sum_block<T, 1>(acc + r, p + r * stride, stride, n);
}

template <typename T>
void add_rows_k(double* acc, const T* rows, int64_t stride, int64_t nrows, int64_t n) {
  using L = SumLanes;
  constexpr int W = L::kWidth;
  int64_t r = 0;
  // Four rows per pass: each accumulator is loaded and stored once per four rows.
  for (; r + 4 <= nrows; r += 4) {
    const T* r0 = rows + r * stride;
    const T *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
    int64_t j = 0;
    for (; j + W <= n; j += W) {
      typename L::V a = L::load(acc + j);
      a = L::add(a, L::load(r0 + j));
      a = L::add(a, L::load(r1 + j));
      a = L::add(a, L::load(r2 + j));
      a = L::add(a, L::load(r3 + j));
      L::store(acc + j, a);
    }
    for (; j < n; ++j)
      acc[j] = acc[j] + static_cast<double>(r0[j]) + static_cast<double>(r1[j]) +
               static_cast<double>(r2[j]) + static_cast<double>(r3[j]);
  }
  for (; r < nrows; ++r) {
    const T* row = rows + r * stride;
    int64_t j = 0;
    for (; j + W <= n; j += W) L::store(acc + j, L::add(L::load(acc + j), L::load(row + j)));
    for (; j < n; ++j) acc[j] = acc[j] + static_cast<double>(row[j]);
  }
}

#else  // not x86: the same order in plain loops

template <typename T>
void sum_rows_k(double* acc, const T* p, int64_t stride, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = p + r * stride;
    double a = acc[r];
    int64_t i = 0;
    if (n >= 32) {
      double l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0, l8 = 0, l9 = 0,
             l10 = 0, l11 = 0, l12 = 0, l13 = 0, l14 = 0, l15 = 0;
      for (; i + 16 <= n; i += 16) {
        l0 += row[i], l1 += row[i + 1], l2 += row[i + 2], l3 += row[i + 3];
        l4 += row[i + 4], l5 += row[i + 5], l6 += row[i + 6], l7 += row[i + 7];
        l8 += row[i + 8], l9 += row[i + 9], l10 += row[i + 10], l11 += row[i + 11];
        l12 += row[i + 12], l13 += row[i + 13], l14 += row[i + 14], l15 += row[i + 15];
      }
      const double s0 = l0 + l8, s1 = l1 + l9, s2 = l2 + l10, s3 = l3 + l11, s4 = l4 + l12,
                   s5 = l5 + l13, s6 = l6 + l14, s7 = l7 + l15;
      const double u0 = s0 + s4, u1 = s1 + s5, u2 = s2 + s6, u3 = s3 + s7;
      a = a + ((u0 + u2) + (u1 + u3));
    }
    for (; i < n; ++i) a = a + static_cast<double>(row[i]);
    acc[r] = a;
  }
}

template <typename T>
void add_rows_k(double* acc, const T* rows, int64_t stride, int64_t nrows, int64_t n) {
  for (int64_t r = 0; r < nrows; ++r)
    for (int64_t j = 0; j < n; ++j) acc[j] = acc[j] + static_cast<double>(rows[r * stride + j]);
}

#endif

#if TL_SIMD_VECTOR_MATH
// ---- SLEEF's vector functions -------------------------------------------------------------------

// One lane type of the target: float or double, its vector, and the few operations used here.
#if TL_SIMD_LEVEL == 2
#define TL_SLEEF_F(fn) Sleef_##fn##f16_u10avx512f
#define TL_SLEEF_D(fn) Sleef_##fn##d8_u10avx512f
struct F32 {
  typedef float T;
  typedef __m512 V;
  enum { kWidth = 16 };
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(T x) { return _mm512_set1_ps(x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V neg(V a) { return _mm512_xor_ps(a, set1(-0.0f)); }
  // Lanes with |x| > hi or |x| < tiny, as bits (NaN is neither).
  static unsigned outside(V x, T hi, T tiny) {
    const V ax = _mm512_andnot_ps(set1(-0.0f), x);
    return _mm512_cmp_ps_mask(ax, set1(hi), _CMP_GT_OQ) |
           _mm512_cmp_ps_mask(ax, set1(tiny), _CMP_LT_OQ);
  }
};
struct F64 {
  typedef double T;
  typedef __m512d V;
  enum { kWidth = 8 };
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V set1(T x) { return _mm512_set1_pd(x); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V div(V a, V b) { return _mm512_div_pd(a, b); }
  static V neg(V a) { return _mm512_xor_pd(a, set1(-0.0)); }
  static unsigned outside(V x, T hi, T tiny) {
    const V ax = _mm512_andnot_pd(set1(-0.0), x);
    return _mm512_cmp_pd_mask(ax, set1(hi), _CMP_GT_OQ) |
           _mm512_cmp_pd_mask(ax, set1(tiny), _CMP_LT_OQ);
  }
};
#elif TL_SIMD_LEVEL == 1
#define TL_SLEEF_F(fn) Sleef_##fn##f8_u10avx2
#define TL_SLEEF_D(fn) Sleef_##fn##d4_u10avx2
struct F32 {
  typedef float T;
  typedef __m256 V;
  enum { kWidth = 8 };
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V neg(V a) { return _mm256_xor_ps(a, set1(-0.0f)); }
  static unsigned outside(V x, T hi, T tiny) {
    const V ax = _mm256_andnot_ps(set1(-0.0f), x);
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_or_ps(
        _mm256_cmp_ps(ax, set1(hi), _CMP_GT_OQ), _mm256_cmp_ps(ax, set1(tiny), _CMP_LT_OQ))));
  }
};
struct F64 {
  typedef double T;
  typedef __m256d V;
  enum { kWidth = 4 };
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V neg(V a) { return _mm256_xor_pd(a, set1(-0.0)); }
  static unsigned outside(V x, T hi, T tiny) {
    const V ax = _mm256_andnot_pd(set1(-0.0), x);
    return static_cast<unsigned>(_mm256_movemask_pd(_mm256_or_pd(
        _mm256_cmp_pd(ax, set1(hi), _CMP_GT_OQ), _mm256_cmp_pd(ax, set1(tiny), _CMP_LT_OQ))));
  }
};
#else
#define TL_SLEEF_F(fn) Sleef_##fn##f4_u10sse2
#define TL_SLEEF_D(fn) Sleef_##fn##d2_u10sse2
struct F32 {
  typedef float T;
  typedef __m128 V;
  enum { kWidth = 4 };
  static V load(const T* p) { return _mm_loadu_ps(p); }
  static void store(T* p, V v) { _mm_storeu_ps(p, v); }
  static V set1(T x) { return _mm_set1_ps(x); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V div(V a, V b) { return _mm_div_ps(a, b); }
  static V neg(V a) { return _mm_xor_ps(a, set1(-0.0f)); }
  static unsigned outside(V x, T hi, T tiny) {
    const V ax = _mm_andnot_ps(set1(-0.0f), x);
    return static_cast<unsigned>(
        _mm_movemask_ps(_mm_or_ps(_mm_cmpgt_ps(ax, set1(hi)), _mm_cmplt_ps(ax, set1(tiny)))));
  }
};
struct F64 {
  typedef double T;
  typedef __m128d V;
  enum { kWidth = 2 };
  static V load(const T* p) { return _mm_loadu_pd(p); }
  static void store(T* p, V v) { _mm_storeu_pd(p, v); }
  static V set1(T x) { return _mm_set1_pd(x); }
  static V add(V a, V b) { return _mm_add_pd(a, b); }
  static V div(V a, V b) { return _mm_div_pd(a, b); }
  static V neg(V a) { return _mm_xor_pd(a, set1(-0.0)); }
  static unsigned outside(V x, T hi, T tiny) {
    const V ax = _mm_andnot_pd(set1(-0.0), x);
    return static_cast<unsigned>(
        _mm_movemask_pd(_mm_or_pd(_mm_cmpgt_pd(ax, set1(hi)), _mm_cmplt_pd(ax, set1(tiny)))));
  }
};
#endif

// SLEEF's result r of x, with the lanes outside [tiny, hi] (in |x|) taken from the C function:
// there SLEEF's u10 functions are more than 1 ulp off (they overflow early, or lose the last
// bits of a denormal result), so those elements get exactly what the scalar kernel gives.
// Always inlined, so that a function without limits (hi infinite, tiny 0: constants here) costs
// no comparison at all.
//
// The lanes go through stack arrays, in a function ASan leaves alone (TL_SIMD_NO_ASAN): GCC gives
// such an array the vector's alignment and reads it with aligned moves, which ASan's fake stack
// (detect_stack_use_after_return) does not honour for 64-byte vectors: a crash under the
// sanitizer only. The arrays never hold anything but the two vectors.
#define TL_SIMD_NO_ASAN __attribute__((noinline, no_sanitize_address))
template <class L>
TL_SIMD_NO_ASAN typename L::V patch_lanes(typename L::V x, typename L::V r, unsigned lanes,
                                          typename L::T (*scalar)(typename L::T)) {
  typename L::T xs[L::kWidth], rs[L::kWidth];
  L::store(xs, x);
  L::store(rs, r);
  for (int k = 0; k < L::kWidth; ++k)
    if ((lanes >> k) & 1u) rs[k] = scalar(xs[k]);
  return L::load(rs);
}

template <class L>
__attribute__((always_inline)) inline typename L::V patch(typename L::V x, typename L::V r,
                                                          typename L::T hi, typename L::T tiny,
                                                          typename L::T (*scalar)(typename L::T)) {
  if (hi == __builtin_inf() && tiny == 0) return r;
  const unsigned lanes = L::outside(x, hi, tiny);
  if (__builtin_expect(lanes == 0, 1)) return r;
  return patch_lanes<L>(x, r, lanes, scalar);
}

// X(fn, float domain hi, float tiny, double hi, double tiny): where SLEEF's u10 function is
// within 1 ulp of the correctly rounded result (measured over every 13th float32 and millions of
// float64 values; tests/test_cpu_simd.cpp checks it).
constexpr float kInfF = __builtin_inff();
constexpr double kInfD = __builtin_inf();
#define TL_SLEEF_OPS(X)                                               \
  X(exp, kInfF, 0.0f, 0x1.62e42p+9, 0.0) /* 709.78: early overflow */ \
  X(log, kInfF, 0.0f, kInfD, 0.0)                                     \
  X(tanh, kInfF, 0.0f, kInfD, 0.0)                                    \
  X(sin, kInfF, 0.0f, kInfD, 0.0)                                     \
  X(cos, kInfF, 0.0f, kInfD, 0.0)                                     \
  X(erf, kInfF, 0x1p-120f, kInfD, 0x1p-1000) /* denormal results */   \
  X(expm1, kInfF, 0.0f, kInfD, 0.0)                                   \
  X(log1p, 0x1p+126f, 0.0f, 0x1p+1018, 0.0) /* infinity for huge x */ \
  X(log2, kInfF, 0.0f, kInfD, 0.0)                                    \
  X(log10, kInfF, 0.0f, kInfD, 0.0)                                   \
  X(exp2, kInfF, 0.0f, kInfD, 0.0)                                    \
  X(tan, kInfF, 0.0f, kInfD, 0.0)                                     \
  X(sinh, 0x1.6p+6f, 0.0f, 0x1.62p+9, 0.0) /* early overflow */       \
  X(cosh, 0x1.6p+6f, 0.0f, 0x1.62p+9, 0.0) /* early overflow */       \
  X(asin, kInfF, 0.0f, kInfD, 0.0)                                    \
  X(acos, kInfF, 0.0f, kInfD, 0.0)                                    \
  X(atan, kInfF, 0.0f, kInfD, 0.0)

#define TL_SLEEF_VECTOR(fn, hi_f, tiny_f, hi_d, tiny_d)                                      \
  F32::V fn##_v(F32::V x) { return patch<F32>(x, TL_SLEEF_F(fn)(x), hi_f, tiny_f, fn##_s); } \
  F64::V fn##_v(F64::V x) { return patch<F64>(x, TL_SLEEF_D(fn)(x), hi_d, tiny_d, fn##_s); }
TL_SLEEF_OPS(TL_SLEEF_VECTOR)
#undef TL_SLEEF_VECTOR

// 1 / (1 + exp(-x)), each step as the scalar functor's.
template <class L>
typename L::V sigmoid_vec(typename L::V x) {
  const typename L::V one = L::set1(typename L::T(1));
  return L::div(one, L::add(one, exp_v(L::neg(x))));
}
F32::V sigmoid_v(F32::V x) { return sigmoid_vec<F32>(x); }
F64::V sigmoid_v(F64::V x) { return sigmoid_vec<F64>(x); }

// out[i] = vec(in[i]): whole vectors, then the tail padded into one more vector, so an element
// of the tail gets the same result as in the body.
// The tail's vector goes through a stack array, outside ASan's fake stack as patch_lanes'.
template <class L, typename L::V (*vec)(typename L::V)>
TL_SIMD_NO_ASAN void map_tail(const typename L::T* in, typename L::T* out, int rest) {
  typename L::T buf[L::kWidth];
  for (int k = 0; k < L::kWidth; ++k) buf[k] = k < rest ? in[k] : typename L::T(0.5);
  L::store(buf, vec(L::load(buf)));
  for (int k = 0; k < rest; ++k) out[k] = buf[k];
}

template <class L, typename L::V (*vec)(typename L::V)>
void map_vec(const typename L::T* in, typename L::T* out, int64_t n) {
  int64_t i = 0;
  for (; i + L::kWidth <= n; i += L::kWidth) L::store(out + i, vec(L::load(in + i)));
  if (i < n) map_tail<L, vec>(in + i, out + i, static_cast<int>(n - i));
}
#define TL_SIMD_MATH_F32(fn) &map_vec<F32, fn##_v>
#define TL_SIMD_MATH_F64(fn) &map_vec<F64, fn##_v>

#else  // !TL_SIMD_VECTOR_MATH: the C library, element by element, as the scalar kernel

// As math::SigmoidFn.
float sigmoid_s(float x) { return 1.0f / (1.0f + __builtin_expf(-x)); }
double sigmoid_s(double x) { return 1.0 / (1.0 + __builtin_exp(-x)); }

template <typename T, T (*scalar)(T)>
void map_scalar(const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = scalar(in[i]);
}
#define TL_SIMD_MATH_F32(fn) &map_scalar<float, fn##_s>
#define TL_SIMD_MATH_F64(fn) &map_scalar<double, fn##_s>

#endif  // TL_SIMD_VECTOR_MATH

// The table: the math functions (SLEEF or the C library) and the exact loops, at their
// SimdUnary / SimdBinary index; constant-initialized, so it is ready before any constructor runs.
#define TL_SIMD_MATH_FNS(X) \
  X(exp)                    \
  X(log)                    \
  X(tanh)                   \
  X(sigmoid)                \
  X(sin)                    \
  X(cos)                    \
  X(erf) X(expm1) X(log1p) X(log2) X(log10) X(exp2) X(tan) X(sinh) X(cosh) X(asin) X(acos) X(atan)
#define TL_SIMD_EXACT_FNS(X) X(sqrt) X(rsqrt) X(reciprocal)
#define TL_SIMD_STRINGIZE(x) #x
#define TL_SIMD_NAME(x) TL_SIMD_STRINGIZE(x)

// The table and whether every SimdUnary entry got a kernel (flags, not a comparison of function
// pointers, which is no constant expression under GCC's sanitizers).
struct Built {
  SimdKernels table;
  bool complete;
};

constexpr Built build() {
  Built b{};
  SimdKernels& t = b.table;
  bool filled[kSimdUnaryCount] = {};
  t.name = TL_SIMD_NAME(TL_SIMD_TARGET);
  t.vector_math = TL_SIMD_VECTOR_MATH != 0;
#define TL_SIMD_SET_MATH(fn)                                           \
  t.unary_f32[static_cast<int>(SimdUnary::fn)] = TL_SIMD_MATH_F32(fn); \
  t.unary_f64[static_cast<int>(SimdUnary::fn)] = TL_SIMD_MATH_F64(fn); \
  filled[static_cast<int>(SimdUnary::fn)] = true;
  TL_SIMD_MATH_FNS(TL_SIMD_SET_MATH)
#undef TL_SIMD_SET_MATH
#define TL_SIMD_SET_EXACT(fn)                                     \
  t.unary_f32[static_cast<int>(SimdUnary::fn)] = &fn##_k<float>;  \
  t.unary_f64[static_cast<int>(SimdUnary::fn)] = &fn##_k<double>; \
  filled[static_cast<int>(SimdUnary::fn)] = true;
  TL_SIMD_EXACT_FNS(TL_SIMD_SET_EXACT)
#undef TL_SIMD_SET_EXACT
  constexpr int kAA = static_cast<int>(SimdLayout::ArrayArray);
  constexpr int kAS = static_cast<int>(SimdLayout::ArrayScalar);
  constexpr int kSA = static_cast<int>(SimdLayout::ScalarArray);
#define TL_SIMD_SET_BINARY(fn, Fn)                                        \
  t.binary_f32[static_cast<int>(SimdBinary::fn)][kAA] = &fn##_aa<float>;  \
  t.binary_f32[static_cast<int>(SimdBinary::fn)][kAS] = &fn##_as<float>;  \
  t.binary_f32[static_cast<int>(SimdBinary::fn)][kSA] = &fn##_sa<float>;  \
  t.binary_f64[static_cast<int>(SimdBinary::fn)][kAA] = &fn##_aa<double>; \
  t.binary_f64[static_cast<int>(SimdBinary::fn)][kAS] = &fn##_as<double>; \
  t.binary_f64[static_cast<int>(SimdBinary::fn)][kSA] = &fn##_sa<double>;
  TL_SIMD_BINARY_OPS(TL_SIMD_SET_BINARY)
#undef TL_SIMD_SET_BINARY
  t.sum_rows_f32 = &sum_rows_k<float>;
  t.sum_rows_f64 = &sum_rows_k<double>;
  t.add_rows_f32 = &add_rows_k<float>;
  t.add_rows_f64 = &add_rows_k<double>;
  b.complete = true;
  for (bool f : filled) b.complete = b.complete && f;
  return b;
}

constexpr Built kBuilt = build();
static_assert(kBuilt.complete, "a function of TL_SIMD_UNARY_OPS has no kernel here");

}  // namespace

const SimdKernels& kernels() { return kBuilt.table; }

}  // namespace tensorlet::cpu::simd::TL_SIMD_TARGET

// SimdKernels: the table of leaf kernels on raw pointers that each x86 target (baseline, AVX2,
// AVX-512) fills with code compiled for it; cpu_capability.h picks the table at run time.
// Included by simd_kernels_impl.h, so it holds declarations only: no inline function, no
// template (ODR: a copy compiled with -mavx512f must never be one the baseline path can call).
#pragma once

#include <stdint.h>

namespace tensorlet::cpu::simd {

// The vectorized unary math functions, X(name, math functor of backends/math/unary_ops.h). Each
// computes what the functor computes (the C library function; sigmoid as 1 / (1 + exp(-x))),
// through SLEEF's 1-ulp functions where the build has SLEEF, else through the C function itself.
#define TL_SIMD_UNARY_OPS(X) \
  X(exp, ExpFn)              \
  X(log, LogFn)              \
  X(tanh, TanhFn)            \
  X(sigmoid, SigmoidFn)      \
  X(sin, SinFn)              \
  X(cos, CosFn)              \
  X(erf, ErfFn)              \
  X(expm1, Expm1Fn)          \
  X(log1p, Log1pFn)          \
  X(log2, Log2Fn)            \
  X(log10, Log10Fn)          \
  X(exp2, Exp2Fn)            \
  X(tan, TanFn)              \
  X(sinh, SinhFn)            \
  X(cosh, CoshFn)            \
  X(asin, AsinFn)            \
  X(acos, AcosFn)            \
  X(atan, AtanFn)            \
  X(sqrt, SqrtFn)            \
  X(rsqrt, RsqrtFn)          \
  X(reciprocal, ReciprocalFn)

// The vectorized binary arithmetic, X(name, functor of backends/math/binary_ops.h): one
// correctly rounded operation per element, bit for bit the scalar loop's.
#define TL_SIMD_BINARY_OPS(X) \
  X(add, AddFn)               \
  X(sub, SubFn)               \
  X(mul, MulFn)               \
  X(div, DivFn)

enum class SimdUnary : uint8_t {
#define TL_SIMD_ENUM(name, Fn) name,
  TL_SIMD_UNARY_OPS(TL_SIMD_ENUM)
#undef TL_SIMD_ENUM
};
inline constexpr int kSimdUnaryCount = 0
#define TL_SIMD_COUNT(name, Fn) +1
    TL_SIMD_UNARY_OPS(TL_SIMD_COUNT)
#undef TL_SIMD_COUNT
    ;

enum class SimdBinary : uint8_t {
#define TL_SIMD_ENUM(name, Fn) name,
  TL_SIMD_BINARY_OPS(TL_SIMD_ENUM)
#undef TL_SIMD_ENUM
};
inline constexpr int kSimdBinaryCount = 0
#define TL_SIMD_COUNT(name, Fn) +1
    TL_SIMD_BINARY_OPS(TL_SIMD_COUNT)
#undef TL_SIMD_COUNT
    ;

// The operand layouts of a binary leaf: both arrays of n elements, or one of them a single value
// (read once) against an array.
enum class SimdLayout : uint8_t { ArrayArray, ArrayScalar, ScalarArray };
inline constexpr int kSimdLayoutCount = 3;

// out[i] = f(in[i]) for i < n. `out` may be `in` itself, never a partial overlap. The result of
// an element depends on its value alone (a short tail goes through the same vector code), so
// chunking and layout never change it.
typedef void (*UnaryF32)(const float* in, float* out, int64_t n);
typedef void (*UnaryF64)(const double* in, double* out, int64_t n);
// out[i] = a[i] op b[i], with a or b read as a single value in the scalar layouts; `out` may be
// an input itself.
typedef void (*BinaryF32)(const float* a, const float* b, float* out, int64_t n);
typedef void (*BinaryF64)(const double* a, const double* b, double* out, int64_t n);

// Sums of float32/float64 in float64 lanes, in an order fixed on every target (so every target
// gives the same bits, and the same bits as the generic reduction loop of cpu_reduce.cpp):
// acc[r] += row r (p + r * stride, n elements) for r < rows: when n >= 32, element i of each whole
// block of 16 goes to lane i % 16, the lanes fold as a pairwise tree (lane l += lane l + w for
// w = 8, 4, 2, 1) into acc[r], and the elements after the last whole block follow in order.
typedef void (*SumRowsF32)(double* acc, const float* p, int64_t stride, int64_t rows, int64_t n);
typedef void (*SumRowsF64)(double* acc, const double* p, int64_t stride, int64_t rows, int64_t n);
// acc[j] += rows[r * stride + j] for r = 0, 1, .. nrows - 1 in order, for j < n (a column sum's
// rows folded into its accumulators).
typedef void (*AddRowsF32)(double* acc, const float* rows, int64_t stride, int64_t nrows,
                           int64_t n);
typedef void (*AddRowsF64)(double* acc, const double* rows, int64_t stride, int64_t nrows,
                           int64_t n);

struct SimdKernels {
  const char* name;  // "baseline", "avx2", "avx512"
  bool vector_math;  // the math goes through SLEEF (false: the C library, element by element)
  UnaryF32 unary_f32[kSimdUnaryCount];
  UnaryF64 unary_f64[kSimdUnaryCount];
  BinaryF32 binary_f32[kSimdBinaryCount][kSimdLayoutCount];
  BinaryF64 binary_f64[kSimdBinaryCount][kSimdLayoutCount];
  SumRowsF32 sum_rows_f32;
  SumRowsF64 sum_rows_f64;
  AddRowsF32 add_rows_f32;
  AddRowsF64 add_rows_f64;
};

// Each target's table, defined in its own library (simd_<target>.cpp); only the x86 builds have
// the avx2 and avx512 ones.
namespace baseline {
const SimdKernels& kernels();
}
namespace avx2 {
const SimdKernels& kernels();
}
namespace avx512 {
const SimdKernels& kernels();
}

}  // namespace tensorlet::cpu::simd

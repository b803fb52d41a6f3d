// The unary elementwise ops, one entry each (TL_UNARY_OPS): enumerator, public name, result dtype
// rule, supported dtypes and the math, written once for the CPU and CUDA kernels. UnaryOp, its
// names, output_rule() and supported_dtypes() are generated from the list; both backends dispatch
// from it, so adding an op is one entry here plus its declaration in ops/elementwise.h.
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/math/elementwise_rule.h"
#include "tensorlet/backends/math/wrapping_int.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {
namespace math {

// The C library function of a float or double argument (the same names on the host and in CUDA
// device code).
#define TL_LIBM_UNARY(fn)                   \
  template <typename C>                     \
  TL_HOST_DEVICE inline C libm_##fn(C a) {  \
    if constexpr (std::is_same_v<C, float>) \
      return ::fn##f(a);                    \
    else                                    \
      return ::fn(a);                       \
  }
TL_LIBM_UNARY(fabs)
TL_LIBM_UNARY(exp)
TL_LIBM_UNARY(log)
TL_LIBM_UNARY(sqrt)
TL_LIBM_UNARY(sin)
TL_LIBM_UNARY(cos)
TL_LIBM_UNARY(tanh)
TL_LIBM_UNARY(floor)
TL_LIBM_UNARY(ceil)
TL_LIBM_UNARY(trunc)
TL_LIBM_UNARY(nearbyint)  // half to even in the default rounding mode, as torch.round
TL_LIBM_UNARY(tan)
TL_LIBM_UNARY(sinh)
TL_LIBM_UNARY(cosh)
TL_LIBM_UNARY(asin)
TL_LIBM_UNARY(acos)
TL_LIBM_UNARY(atan)
TL_LIBM_UNARY(log1p)
TL_LIBM_UNARY(expm1)
TL_LIBM_UNARY(log2)
TL_LIBM_UNARY(log10)
TL_LIBM_UNARY(exp2)
TL_LIBM_UNARY(erf)
TL_LIBM_UNARY(erfc)
#undef TL_LIBM_UNARY

// The functors take and return compute types (InComputeType converts around them): float for
// Half/BFloat16, the element type otherwise.

// Integers negate through Wide<C>, so INT_MIN wraps as in PyTorch instead of being undefined.
struct NegFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    if constexpr (is_integer_v<C>)
      return static_cast<C>(Wide<C>(0) - static_cast<Wide<C>>(a));
    else
      return -a;
  }
};
struct AbsFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    if constexpr (std::is_unsigned_v<C>)
      return a;
    else if constexpr (is_integer_v<C>)
      return a < 0 ? NegFn{}(a) : a;
    else
      return libm_fabs(a);
  }
};
// NaN stays NaN (a comparison with NaN is false), as torch.relu.
struct ReluFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    if constexpr (std::is_unsigned_v<C>)
      return a;
    else
      return a < C(0) ? C(0) : a;
  }
};
// Integers are already whole: floor is the identity on them, as torch.floor.
// Rounding to an integral value: integers are already there (the identity, dtype kept, as torch).
#define TL_ROUNDING_FN(Name, fn)             \
  struct Name {                              \
    template <typename C>                    \
    TL_HOST_DEVICE C operator()(C a) const { \
      if constexpr (is_integer_v<C>)         \
        return a;                            \
      else                                   \
        return libm_##fn(a);                 \
    }                                        \
  };
TL_ROUNDING_FN(FloorFn, floor)
TL_ROUNDING_FN(CeilFn, ceil)
TL_ROUNDING_FN(TruncFn, trunc)
TL_ROUNDING_FN(RoundFn, nearbyint)
#undef TL_ROUNDING_FN

#define TL_LIBM_FN(Name, fn)                 \
  struct Name {                              \
    template <typename C>                    \
    TL_HOST_DEVICE C operator()(C a) const { \
      return libm_##fn(a);                   \
    }                                        \
  };
TL_LIBM_FN(ExpFn, exp)
TL_LIBM_FN(LogFn, log)
TL_LIBM_FN(SqrtFn, sqrt)
TL_LIBM_FN(SinFn, sin)
TL_LIBM_FN(CosFn, cos)
TL_LIBM_FN(TanhFn, tanh)
TL_LIBM_FN(TanFn, tan)
TL_LIBM_FN(SinhFn, sinh)
TL_LIBM_FN(CoshFn, cosh)
TL_LIBM_FN(AsinFn, asin)
TL_LIBM_FN(AcosFn, acos)
TL_LIBM_FN(AtanFn, atan)
TL_LIBM_FN(Log1pFn, log1p)
TL_LIBM_FN(Expm1Fn, expm1)
TL_LIBM_FN(Log2Fn, log2)
TL_LIBM_FN(Log10Fn, log10)
TL_LIBM_FN(Exp2Fn, exp2)
TL_LIBM_FN(ErfFn, erf)
TL_LIBM_FN(ErfcFn, erfc)
#undef TL_LIBM_FN

// 1 / sqrt(x), correctly rounded division of the library's sqrt on both backends (the device's
// rsqrtf is 2 ulp off).
struct RsqrtFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    return C(1) / libm_sqrt(a);
  }
};
struct ReciprocalFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    return C(1) / a;
  }
};
// Integers square with wrap-around, as torch.square (= x * x).
struct SquareFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    if constexpr (std::is_same_v<C, bool>)
      return a;  // not reached: the front-end squares a mask in int64
    else if constexpr (is_integer_v<C>)
      return static_cast<C>(static_cast<Wide<C>>(a) * static_cast<Wide<C>>(a));
    else
      return a * a;
  }
};
// -1, 0 or 1 (0 for NaN and for -0.0, as torch.sign, which computes (0 < x) - (x < 0)); a bool
// is its own sign.
struct SignFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    if constexpr (std::is_same_v<C, bool>)
      return a;
    else if constexpr (std::is_unsigned_v<C>)
      return a > C(0) ? C(1) : C(0);
    else
      return static_cast<C>(static_cast<int>(C(0) < a) - static_cast<int>(a < C(0)));
  }
};
// ~x: bitwise complement of an integer, logical not of a bool (torch.bitwise_not).
struct BitwiseNotFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    if constexpr (std::is_same_v<C, bool>)
      return !a;
    else
      return static_cast<C>(~a);
  }
};

// The tests of a value: false / true for every integer and bool, as torch.isnan / isinf /
// isfinite.
struct IsnanFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a) const {
    if constexpr (is_floating_v<C>)
      return a != a;
    else
      return false;
  }
};
struct IsinfFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a) const {
    if constexpr (is_floating_v<C>)
      return a == C(INFINITY) || a == -C(INFINITY);
    else
      return false;
  }
};
struct IsfiniteFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a) const {
    if constexpr (is_floating_v<C>)
      return a == a && a != C(INFINITY) && a != -C(INFINITY);
    else
      return true;
  }
};

// Activations (torch.nn.functional), floating inputs only.
// silu(x) = x * sigmoid(x).
struct SiluFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    return a / (C(1) + libm_exp(-a));
  }
};
// softplus with torch's defaults (beta 1, threshold 20): x above the threshold is returned as is,
// where log1p(exp(x)) equals x to working precision.
struct SoftplusFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    return a > C(20) ? a : libm_log1p(libm_exp(a));
  }
};
// gelu(x) = x * Phi(x), exactly (approximate = "none")...
struct GeluFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    constexpr C kSqrtHalf = C(0.70710678118654752440);
    return C(0.5) * a * (C(1) + libm_erf(a * kSqrtHalf));
  }
};
// ...and through tanh (approximate = "tanh").
struct GeluTanhFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    constexpr C kSqrt2OverPi = C(0.79788456080286535588), kCubic = C(0.044715);
    return C(0.5) * a * (C(1) + libm_tanh(kSqrt2OverPi * (a + kCubic * a * a * a)));
  }
};

struct SigmoidFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a) const {
    return C(1) / (C(1) + libm_exp(-a));
  }
};
struct LogicalNotFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a) const {
    return a == C(0);
  }
};

}  // namespace math

// The lists. X(enumerator, C++ function name (public name "tl::<name>"), OutputRule, supported
// input dtypes, math functor in tensorlet::math). Supported dtypes follow torch on CPU and CUDA.
//
// Math ops: the free function tl::exp(x), the method x.exp() and the in-place x.exp_() are
// generated (ops/elementwise.cpp), so each row needs its two method declarations in
// tensor/tensor.h.
#define TL_UNARY_MATH_OPS(X)                                    \
  X(Neg, neg, Same, kNumericDTypes, NegFn)                      \
  X(Abs, abs, Same, kNumericDTypes, AbsFn)                      \
  X(Exp, exp, Floating, kAllDTypes, ExpFn)                      \
  X(Log, log, Floating, kAllDTypes, LogFn)                      \
  X(Sqrt, sqrt, Floating, kAllDTypes, SqrtFn)                   \
  X(Sin, sin, Floating, kAllDTypes, SinFn)                      \
  X(Cos, cos, Floating, kAllDTypes, CosFn)                      \
  X(Tanh, tanh, Floating, kAllDTypes, TanhFn)                   \
  X(Sigmoid, sigmoid, Floating, kAllDTypes, SigmoidFn)          \
  X(Relu, relu, Same, kNumericDTypes, ReluFn)                   \
  X(LogicalNot, logical_not, Bool, kAllDTypes, LogicalNotFn)    \
  X(Floor, floor, Same, kNumericDTypes, FloorFn)                \
  X(Ceil, ceil, Same, kNumericDTypes, CeilFn)                   \
  X(Trunc, trunc, Same, kNumericDTypes, TruncFn)                \
  X(Round, round, Same, kNumericDTypes, RoundFn)                \
  X(Sign, sign, Same, kAllDTypes, SignFn)                       \
  X(Reciprocal, reciprocal, Floating, kAllDTypes, ReciprocalFn) \
  X(Rsqrt, rsqrt, Floating, kAllDTypes, RsqrtFn)                \
  X(Log1p, log1p, Floating, kAllDTypes, Log1pFn)                \
  X(Expm1, expm1, Floating, kAllDTypes, Expm1Fn)                \
  X(Log2, log2, Floating, kAllDTypes, Log2Fn)                   \
  X(Log10, log10, Floating, kAllDTypes, Log10Fn)                \
  X(Exp2, exp2, Floating, kAllDTypes, Exp2Fn)                   \
  X(Erf, erf, Floating, kAllDTypes, ErfFn)                      \
  X(Erfc, erfc, Floating, kAllDTypes, ErfcFn)                   \
  X(Tan, tan, Floating, kAllDTypes, TanFn)                      \
  X(Sinh, sinh, Floating, kAllDTypes, SinhFn)                   \
  X(Cosh, cosh, Floating, kAllDTypes, CoshFn)                   \
  X(Asin, asin, Floating, kAllDTypes, AsinFn)                   \
  X(Acos, acos, Floating, kAllDTypes, AcosFn)                   \
  X(Atan, atan, Floating, kAllDTypes, AtanFn)                   \
  X(BitwiseNot, bitwise_not, Same, kBitwiseDTypes, BitwiseNotFn)

// Tests of a value: the free function and the method are generated; no in-place form (a bool
// result), as torch.
#define TL_UNARY_TEST_OPS(X)                 \
  X(Isnan, isnan, Bool, kAllDTypes, IsnanFn) \
  X(Isinf, isinf, Bool, kAllDTypes, IsinfFn) \
  X(Isfinite, isfinite, Bool, kAllDTypes, IsfiniteFn)

// Front-ends written by hand in ops/elementwise.cpp: the activations take parameters (gelu's
// approximate, softplus's beta; GeluTanh is gelu(x, "tanh")), and square of bool is int64 (as
// torch, where it is bool ** 2).
#define TL_UNARY_CUSTOM_OPS(X)                                 \
  X(Square, square, Same, kAllDTypes, SquareFn)                \
  X(Silu, silu, Floating, kFloatingDTypes, SiluFn)             \
  X(Softplus, softplus, Floating, kFloatingDTypes, SoftplusFn) \
  X(Gelu, gelu, Floating, kFloatingDTypes, GeluFn)             \
  X(GeluTanh, gelu, Floating, kFloatingDTypes, GeluTanhFn)

#define TL_UNARY_OPS(X) TL_UNARY_MATH_OPS(X) TL_UNARY_TEST_OPS(X) TL_UNARY_CUSTOM_OPS(X)

enum class UnaryOp : uint8_t {
#define TL_UNARY_ENUM(e, name, rule, dtypes, Fn) e,
  TL_UNARY_OPS(TL_UNARY_ENUM)
#undef TL_UNARY_ENUM
};

// "tl::exp"
constexpr const char* unary_op_name(UnaryOp op) {
  switch (op) {
#define TL_UNARY_NAME(e, name, rule, dtypes, Fn) \
  case UnaryOp::e:                               \
    return "tl::" #name;
    TL_UNARY_OPS(TL_UNARY_NAME)
#undef TL_UNARY_NAME
  }
  return "tl::unary";
}

constexpr OutputRule output_rule(UnaryOp op) {
  switch (op) {
#define TL_UNARY_RULE(e, name, rule, dtypes, Fn) \
  case UnaryOp::e:                               \
    return OutputRule::rule;
    TL_UNARY_OPS(TL_UNARY_RULE)
#undef TL_UNARY_RULE
  }
  return OutputRule::Same;
}

// The input dtypes the op accepts; others are a DTypeError before any kernel runs.
constexpr DTypeSet supported_dtypes(UnaryOp op) {
  switch (op) {
#define TL_UNARY_DTYPES(e, name, rule, dtypes, Fn) \
  case UnaryOp::e:                                 \
    return dtypes;
    TL_UNARY_OPS(TL_UNARY_DTYPES)
#undef TL_UNARY_DTYPES
  }
  return {};
}

}  // namespace tensorlet

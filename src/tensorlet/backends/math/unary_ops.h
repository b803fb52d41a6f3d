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
#include "tensorlet/core/dtype.h"
#include "tensorlet/core/host_device.h"

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
#undef TL_LIBM_FN

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

// The list. X(enumerator, C++ function name (public name "tl::<name>"), OutputRule, supported
// input dtypes, math functor in tensorlet::math). Supported dtypes follow torch on CPU and CUDA.
#define TL_UNARY_OPS(X)                                      \
  X(Neg, neg, Same, kNumericDTypes, NegFn)                   \
  X(Abs, abs, Same, kNumericDTypes, AbsFn)                   \
  X(Exp, exp, Floating, kAllDTypes, ExpFn)                   \
  X(Log, log, Floating, kAllDTypes, LogFn)                   \
  X(Sqrt, sqrt, Floating, kAllDTypes, SqrtFn)                \
  X(Sin, sin, Floating, kAllDTypes, SinFn)                   \
  X(Cos, cos, Floating, kAllDTypes, CosFn)                   \
  X(Tanh, tanh, Floating, kAllDTypes, TanhFn)                \
  X(Sigmoid, sigmoid, Floating, kAllDTypes, SigmoidFn)       \
  X(Relu, relu, Same, kNumericDTypes, ReluFn)                \
  X(LogicalNot, logical_not, Bool, kAllDTypes, LogicalNotFn) \
  X(Floor, floor, Same, kNumericDTypes, FloorFn)             \
  X(Ceil, ceil, Same, kNumericDTypes, CeilFn)                \
  X(Trunc, trunc, Same, kNumericDTypes, TruncFn)             \
  X(Round, round, Same, kNumericDTypes, RoundFn)

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

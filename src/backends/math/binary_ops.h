// The binary elementwise ops, one entry each (TL_BINARY_OPS): enumerator, public name, result
// dtype rule, supported dtypes and the math, written once for the CPU and CUDA kernels. BinaryOp,
// its names, output_rule(), supported_dtypes() and is_comparison() are generated from the list;
// both backends dispatch from it, so adding an op is one entry here plus its declaration in
// ops/elementwise.h.
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

// The functors take and return compute types (InComputeType converts around them): float for
// Half/BFloat16, the element type otherwise. Integer arithmetic runs in Wide<C>, which wraps as
// PyTorch's and still vectorizes; bool add/mul are or/and, as torch.

struct AddFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a || b;
    else
      return static_cast<C>(static_cast<Wide<C>>(a) + static_cast<Wide<C>>(b));
  }
};
struct SubFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    return static_cast<C>(static_cast<Wide<C>>(a) - static_cast<Wide<C>>(b));
  }
};
struct MulFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else
      return static_cast<C>(static_cast<Wide<C>>(a) * static_cast<Wide<C>>(b));
  }
};
// Floating only: the front-end sends integer division to float32 (OutputRule::Floating).
struct DivFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    return a / b;
  }
};
// Integer powers are exact (wrapping); floats use the C library's pow. On a GPU x ** 2 is x * x:
// the correctly rounded value, which the device pow does not promise (the CPU kernel has its own
// x ** 2 fast path).
struct PowFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (is_integer_v<C>) {
      return int_pow(a, b);
    } else {
#if defined(__CUDA_ARCH__)
      if (b == C(2)) return a * a;
#endif
      if constexpr (std::is_same_v<C, float>)
        return ::powf(a, b);
      else
        return ::pow(a, b);
    }
  }
};
// NaN in either operand gives NaN, as torch.maximum / torch.minimum.
struct MaximumFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (is_floating_v<C>)
      return (a != a || a > b) ? a : b;
    else
      return a > b ? a : b;
  }
};
struct MinimumFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (is_floating_v<C>)
      return (a != a || a < b) ? a : b;
    else
      return a < b ? a : b;
  }
};

#define TL_COMPARE_FN(Name, op)                      \
  struct Name {                                      \
    template <typename C>                            \
    TL_HOST_DEVICE bool operator()(C a, C b) const { \
      return a op b;                                 \
    }                                                \
  };
TL_COMPARE_FN(GtFn, >)
TL_COMPARE_FN(LtFn, <)
TL_COMPARE_FN(GeFn, >=)
TL_COMPARE_FN(LeFn, <=)
TL_COMPARE_FN(EqFn, ==)
TL_COMPARE_FN(NeFn, !=)
#undef TL_COMPARE_FN

struct LogicalAndFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a, C b) const {
    return a != C(0) && b != C(0);
  }
};
struct LogicalOrFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a, C b) const {
    return a != C(0) || b != C(0);
  }
};

// Integer division and modulo, floored (Python's // and %) or truncated (C's %, torch.fmod).
// x / -1 is a negation (INT_MIN wraps, as torch) and x % -1 is 0, which the hardware division
// would trap on; a zero divisor never reaches a kernel (the front-end raises ZeroDivisionError),
// and gives 0 here rather than a trap if it ever did.
template <typename C>
TL_HOST_DEVICE inline C int_trunc_mod(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return C(0);
  return static_cast<C>(a % b);
}
template <typename C>
TL_HOST_DEVICE inline C int_floor_mod(C a, C b) {
  const C r = int_trunc_mod(a, b);
  if constexpr (std::is_signed_v<C>)
    if (r != C(0) && ((r < C(0)) != (b < C(0)))) return static_cast<C>(r + b);
  return r;
}
template <typename C>
TL_HOST_DEVICE inline C int_floor_div(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return static_cast<C>(Wide<C>(0) - static_cast<Wide<C>>(a));
    const C q = static_cast<C>(a / b);
    return (a % b != C(0) && ((a < C(0)) != (b < C(0)))) ? static_cast<C>(q - 1) : q;
  } else {
    return static_cast<C>(a / b);
  }
}

template <typename C>
TL_HOST_DEVICE inline C libm_fmod(C a, C b) {
  if constexpr (std::is_same_v<C, float>)
    return ::fmodf(a, b);
  else
    return ::fmod(a, b);
}

// torch.fmod: the remainder of truncated division, with the dividend's sign.
struct FmodFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (is_integer_v<C>)
      return int_trunc_mod(a, b);
    else
      return libm_fmod(a, b);
  }
};
// torch.remainder (Python's %): the remainder of floored division, with the divisor's sign.
struct RemainderFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (is_integer_v<C>) {
      return int_floor_mod(a, b);
    } else {
      C m = libm_fmod(a, b);
      if (m != C(0) && ((b < C(0)) != (m < C(0)))) m += b;
      return m;
    }
  }
};
// torch.floor_divide (Python's //). Floats as Python's float floordiv: from fmod, so that the
// quotient is exact where a / b would round across an integer; b == 0 gives IEEE a / b.
struct FloorDivideFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (is_integer_v<C>) {
      return int_floor_div(a, b);
    } else {
      if (b == C(0)) return a / b;
      const C m = libm_fmod(a, b);
      C q = (a - m) / b;
      if (m != C(0) && ((b < C(0)) != (m < C(0)))) q -= C(1);
      if (q == C(0)) return copysign_of(C(0), a / b);  // the sign of zero: a / b's
      C f = floor_of(q);
      if (q - f > C(0.5)) f += C(1);
      return f;
    }
  }

 private:
  template <typename C>
  TL_HOST_DEVICE static C floor_of(C a) {
    if constexpr (std::is_same_v<C, float>)
      return ::floorf(a);
    else
      return ::floor(a);
  }
  template <typename C>
  TL_HOST_DEVICE static C copysign_of(C a, C b) {
    if constexpr (std::is_same_v<C, float>)
      return ::copysignf(a, b);
    else
      return ::copysign(a, b);
  }
};
struct Atan2Fn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, float>)
      return ::atan2f(a, b);
    else
      return ::atan2(a, b);
  }
};
struct LogicalXorFn {
  template <typename C>
  TL_HOST_DEVICE bool operator()(C a, C b) const {
    return (a != C(0)) != (b != C(0));
  }
};

// Bitwise ops on integers; on bool they are the logical ones (torch.bitwise_and of masks).
#define TL_BITWISE_FN(Name, op)                                                  \
  struct Name {                                                                  \
    template <typename C>                                                        \
    TL_HOST_DEVICE C operator()(C a, C b) const {                                \
      return static_cast<C>(static_cast<Wide<C>>(a) op static_cast<Wide<C>>(b)); \
    }                                                                            \
  };
TL_BITWISE_FN(BitwiseAndFn, &)
TL_BITWISE_FN(BitwiseOrFn, |)
TL_BITWISE_FN(BitwiseXorFn, ^)
#undef TL_BITWISE_FN
// Shifts as torch: a shift by a negative amount or by the width or more gives 0 to the left, and
// to the right the sign fill (-1 or 0) for signed types, 0 for unsigned ones.
struct LeftShiftFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    constexpr int kBits = sizeof(C) * 8;
    if (static_cast<std::make_signed_t<C>>(b) < 0 || static_cast<int64_t>(b) >= kBits) return C(0);
    return static_cast<C>(static_cast<Wide<C>>(a) << static_cast<int>(b));
  }
};
struct RightShiftFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C a, C b) const {
    constexpr int kMax = sizeof(C) * 8 - (std::is_signed_v<C> ? 1 : 0);
    if (static_cast<std::make_signed_t<C>>(b) < 0 || static_cast<int64_t>(b) >= kMax)
      return std::is_signed_v<C> ? static_cast<C>(a < C(0) ? -1 : 0) : C(0);
    return static_cast<C>(a >> static_cast<int>(b));
  }
};

// torch.add's alpha: a + alpha * b, rounded once as torch's fused multiply-add does. float (and the
// half types, which compute in float) in double: the product of two floats is exact there, so
// this is the FMA's value except in the rarest double-rounding ties; double as a product and a
// sum, kept unfused on the GPU so that both backends round alike; integers wrap; bool is
// a || (alpha && b).
template <typename C>
struct AddScaledFn {
  C alpha;
  TL_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a || (alpha && b);
    } else if constexpr (is_integer_v<C>) {
      return static_cast<C>(static_cast<Wide<C>>(a) +
                            static_cast<Wide<C>>(alpha) * static_cast<Wide<C>>(b));
    } else if constexpr (std::is_same_v<C, float>) {
      return static_cast<float>(static_cast<double>(a) +
                                static_cast<double>(alpha) * static_cast<double>(b));
    } else {
#if defined(__CUDA_ARCH__)
      return __dadd_rn(a, __dmul_rn(alpha, b));
#else
      return a + alpha * b;
#endif
    }
  }
};

}  // namespace math

// The list. X(enumerator, C++ function name (public name "tl::<name>"), OutputRule, supported
// dtypes of the promoted inputs, math functor in tensorlet::math). Supported dtypes follow torch
// on CPU and CUDA (sub and pow refuse bool).
#define TL_BINARY_OPS(X)                                               \
  X(Add, add, Same, kAllDTypes, AddFn)                                 \
  X(Sub, sub, Same, kNumericDTypes, SubFn)                             \
  X(Mul, mul, Same, kAllDTypes, MulFn)                                 \
  X(Div, div, Floating, kAllDTypes, DivFn)                             \
  X(Pow, pow, Same, kNumericDTypes, PowFn)                             \
  X(Maximum, maximum, Same, kAllDTypes, MaximumFn)                     \
  X(Minimum, minimum, Same, kAllDTypes, MinimumFn)                     \
  X(Gt, gt, Bool, kAllDTypes, GtFn)                                    \
  X(Lt, lt, Bool, kAllDTypes, LtFn)                                    \
  X(Ge, ge, Bool, kAllDTypes, GeFn)                                    \
  X(Le, le, Bool, kAllDTypes, LeFn)                                    \
  X(Eq, eq, Bool, kAllDTypes, EqFn)                                    \
  X(Ne, ne, Bool, kAllDTypes, NeFn)                                    \
  X(LogicalAnd, logical_and, Bool, kAllDTypes, LogicalAndFn)           \
  X(LogicalOr, logical_or, Bool, kAllDTypes, LogicalOrFn)              \
  X(LogicalXor, logical_xor, Bool, kAllDTypes, LogicalXorFn)           \
  X(Fmod, fmod, Same, kNumericDTypes, FmodFn)                          \
  X(Remainder, remainder, Same, kNumericDTypes, RemainderFn)           \
  X(FloorDivide, floor_divide, Same, kNumericDTypes, FloorDivideFn)    \
  X(Atan2, atan2, Floating, kAllDTypes, Atan2Fn)                       \
  X(BitwiseAnd, bitwise_and, Same, kBitwiseDTypes, BitwiseAndFn)       \
  X(BitwiseOr, bitwise_or, Same, kBitwiseDTypes, BitwiseOrFn)          \
  X(BitwiseXor, bitwise_xor, Same, kBitwiseDTypes, BitwiseXorFn)       \
  X(LeftShift, bitwise_left_shift, Same, kIntegralDTypes, LeftShiftFn) \
  X(RightShift, bitwise_right_shift, Same, kIntegralDTypes, RightShiftFn)

enum class BinaryOp : uint8_t {
#define TL_BINARY_ENUM(e, name, rule, dtypes, Fn) e,
  TL_BINARY_OPS(TL_BINARY_ENUM)
#undef TL_BINARY_ENUM
};

// "tl::add"
constexpr const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define TL_BINARY_NAME(e, name, rule, dtypes, Fn) \
  case BinaryOp::e:                               \
    return "tl::" #name;
    TL_BINARY_OPS(TL_BINARY_NAME)
#undef TL_BINARY_NAME
  }
  return "tl::binary";
}

constexpr OutputRule output_rule(BinaryOp op) {
  switch (op) {
#define TL_BINARY_RULE(e, name, rule, dtypes, Fn) \
  case BinaryOp::e:                               \
    return OutputRule::rule;
    TL_BINARY_OPS(TL_BINARY_RULE)
#undef TL_BINARY_RULE
  }
  return OutputRule::Same;
}

// The dtypes the op computes on (its inputs' promoted dtype); others are a DTypeError before any
// kernel runs.
constexpr DTypeSet supported_dtypes(BinaryOp op) {
  switch (op) {
#define TL_BINARY_DTYPES(e, name, rule, dtypes, Fn) \
  case BinaryOp::e:                                 \
    return dtypes;
    TL_BINARY_OPS(TL_BINARY_DTYPES)
#undef TL_BINARY_DTYPES
  }
  return {};
}

// Comparisons and logical ops: the ops with a bool result.
constexpr bool is_comparison(BinaryOp op) { return output_rule(op) == OutputRule::Bool; }

// Whether a scalar operand of a float16/bfloat16 op keeps float precision (compute_t) instead of
// being rounded to the dtype first: torch's CUDA kernels take add/sub/mul/div's Python number as
// an "opmath" float (h * 0.1 == (h.float() * 0.1).half()); pow's exponent, comparisons, maximum
// and minimum round it (torch's CPU kernels round add's and sub's too: the one place its two
// backends differ, and we follow CUDA's).
constexpr bool scalar_in_compute_type(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}

}  // namespace tensorlet

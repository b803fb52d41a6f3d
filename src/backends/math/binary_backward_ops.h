// The gradients of the binary ops whose formula is more than one op, as one element function each,
// (grad, a, b) -> grad * d op(a, b) / d a (or / d b), written once for the CPU and CUDA kernels of
// Backend::binary_backward with PyTorch's formulas and conventions (derivatives.yaml). The
// functors take and return compute types (float for float16/bfloat16), and compute in the order
// the composite formulas of autograd/derivatives_elementwise.cpp do, so float32 and float64
// gradients are the composite's bit for bit.
#pragma once

#include <cstdint>

#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {
namespace math {

template <typename C>
TL_HOST_DEVICE inline C libm_pow(C a, C b) {
  if constexpr (std::is_same_v<C, float>)
    return ::powf(a, b);
  else
    return ::pow(a, b);
}

// d(a / b)/db: -(g a) / (b b).
struct DivOtherBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return -((g * a) / (b * b));
  }
};
// d(a ** b)/da: b a^(b-1), 0 where b == 0 (torch's pow_backward_self, also at a == 0).
struct PowSelfBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return b == C(0) ? C(0) : g * (b * libm_pow(a, b - C(1)));
  }
};
// d(a ** b)/db: a^b log a, 0 where a == 0 and b >= 0 (torch's pow_backward_exponent).
struct PowExponentBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return a == C(0) && b >= C(0) ? C(0) : g * (libm_pow(a, b) * libm_log(a));
  }
};
// maximum / minimum: the gradient goes to the larger (smaller) operand, halves where they tie,
// as torch; none where either is NaN.
struct MaximumSelfBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * (C(a > b ? 1 : 0) + C(a == b ? 1 : 0) * C(0.5));
  }
};
struct MaximumOtherBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * (C(b > a ? 1 : 0) + C(a == b ? 1 : 0) * C(0.5));
  }
};
struct MinimumSelfBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * (C(a < b ? 1 : 0) + C(a == b ? 1 : 0) * C(0.5));
  }
};
struct MinimumOtherBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * (C(b < a ? 1 : 0) + C(a == b ? 1 : 0) * C(0.5));
  }
};
// atan2(a, b): d/da = b / (a² + b²), d/db = -a / (a² + b²).
struct Atan2SelfBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * (b / (a * a + b * b));
  }
};
struct Atan2OtherBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * -(a / (a * a + b * b));
  }
};
// fmod(a, b) = a - trunc(a / b) b, remainder(a, b) = a - floor(a / b) b: d/db = -trunc(a / b)
// (-floor(a / b)); d/da is the gradient itself (no kernel).
struct FmodOtherBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * -libm_trunc(a / b);
  }
};
struct RemainderOtherBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C a, C b) const {
    return g * -libm_floor(a / b);
  }
};

// The gradients with a kernel: X(enumerator, name, element function).
#define TL_BINARY_BACKWARD_OPS(X)                        \
  X(DivOther, div_other, DivOtherBackwardFn)             \
  X(PowSelf, pow_self, PowSelfBackwardFn)                \
  X(PowExponent, pow_exponent, PowExponentBackwardFn)    \
  X(MaximumSelf, maximum_self, MaximumSelfBackwardFn)    \
  X(MaximumOther, maximum_other, MaximumOtherBackwardFn) \
  X(MinimumSelf, minimum_self, MinimumSelfBackwardFn)    \
  X(MinimumOther, minimum_other, MinimumOtherBackwardFn) \
  X(Atan2Self, atan2_self, Atan2SelfBackwardFn)          \
  X(Atan2Other, atan2_other, Atan2OtherBackwardFn)       \
  X(FmodOther, fmod_other, FmodOtherBackwardFn)          \
  X(RemainderOther, remainder_other, RemainderOtherBackwardFn)

}  // namespace math

// Which operand's gradient of which op a binary_backward kernel computes.
enum class BinaryGradient : uint8_t {
#define TL_BINARY_GRADIENT_ENUM(e, name, Fn) e,
  TL_BINARY_BACKWARD_OPS(TL_BINARY_GRADIENT_ENUM)
#undef TL_BINARY_GRADIENT_ENUM
};

// The profiler's name of a binary gradient kernel, "tl::div_other_backward".
constexpr const char* binary_gradient_name(BinaryGradient which) {
  switch (which) {
#define TL_BINARY_GRADIENT_NAME(e, name, Fn) \
  case BinaryGradient::e:                    \
    return "tl::" #name "_backward";
    TL_BINARY_BACKWARD_OPS(TL_BINARY_GRADIENT_NAME)
#undef TL_BINARY_GRADIENT_NAME
  }
  return "tl::binary_backward";
}

}  // namespace tensorlet

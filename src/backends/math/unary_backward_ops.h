// The gradients of the unary ops as one element function each, (grad, saved) -> grad * op'(x),
// written once for the CPU and CUDA kernels of Backend::unary_backward with PyTorch's formulas
// (derivatives.yaml and its backward kernels). `saved` is the op's input x or its output y, as the
// list says; the functors take and return compute types (float for float16/bfloat16).
#pragma once

#include <cstdint>

#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {
namespace math {

// What a backward kernel reads beside the gradient: the forward's input or its output.
enum class BackwardSaved : uint8_t { Input, Output };

// grad * y: exp.
struct ExpBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g * y;
  }
};
// grad * sign(x): abs (0 at 0, as torch's sgn).
struct AbsBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g * SignFn{}(x);
  }
};
struct LogBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g / x;
  }
};
struct SqrtBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g / (C(2) * y);
  }
};
struct SinBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g * libm_cos(x);
  }
};
struct CosBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g * -libm_sin(x);
  }
};
// torch's tanh_backward and sigmoid_backward.
struct TanhBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g * (C(1) - y * y);
  }
};
struct SigmoidBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g * (C(1) - y) * y;
  }
};
// torch's threshold_backward(grad, y, 0): the gradient passes where y > 0, and where y is NaN.
struct ReluBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return y <= C(0) ? C(0) : g;
  }
};
struct ReciprocalBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return -g * (y * y);
  }
};
struct RsqrtBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return C(-0.5) * g * (y * y * y);
  }
};
struct Log1pBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g / (x + C(1));
  }
};
struct Expm1BackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g * (y + C(1));
  }
};
struct Log2BackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g / (x * C(0.69314718055994530942));
  }
};
struct Log10BackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g / (x * C(2.30258509299404568402));
  }
};
struct Exp2BackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g * y * C(0.69314718055994530942);
  }
};
// erf' = 2 / sqrt(pi) exp(-x^2); erfc' its negation.
struct ErfBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return C(1.12837916709551257390) * libm_exp(-x * x) * g;
  }
};
struct ErfcBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return C(-1.12837916709551257390) * libm_exp(-x * x) * g;
  }
};
struct TanBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C y) const {
    return g * (C(1) + y * y);
  }
};
struct SinhBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g * libm_cosh(x);
  }
};
struct CoshBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g * libm_sinh(x);
  }
};
struct AsinBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g / libm_sqrt(C(1) - x * x);
  }
};
struct AcosBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return -g / libm_sqrt(C(1) - x * x);
  }
};
struct AtanBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g / (x * x + C(1));
  }
};
// square is torch's pow(x, 2): grad * 2x.
struct SquareBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    return g * (C(2) * x);
  }
};
// torch's silu_backward: s = sigmoid(x), grad * s * (1 + x (1 - s)).
struct SiluBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    const C s = C(1) / (C(1) + libm_exp(-x));
    return g * s * (C(1) + x * (C(1) - s));
  }
};
// torch's softplus_backward with the defaults (beta 1, threshold 20): the gradient passes as is
// where the forward returned x, else grad * z / (z + 1) with z = exp(x).
struct SoftplusBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    if (x > C(20)) return g;
    const C z = libm_exp(x);
    return g * z / (z + C(1));
  }
};
// torch's gelu_backward, approximate "none": grad * (Phi(x) + x phi(x)).
struct GeluBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    constexpr C kSqrtHalf = C(0.70710678118654752440), kInvSqrt2Pi = C(0.39894228040143267794);
    const C cdf = C(0.5) * (C(1) + libm_erf(x * kSqrtHalf));
    const C pdf = kInvSqrt2Pi * libm_exp(C(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
// ...and approximate "tanh": t = tanh(k (x + c x^3)), grad * (0.5 (1 + t) + 0.5 x (1 - t^2) k
// (1 + 3 c x^2)).
struct GeluTanhBackwardFn {
  template <typename C>
  TL_HOST_DEVICE C operator()(C g, C x) const {
    constexpr C kSqrt2OverPi = C(0.79788456080286535588), kCubic = C(0.044715);
    const C x2 = x * x;
    const C t = libm_tanh(kSqrt2OverPi * (x + kCubic * x2 * x));
    const C left = C(0.5) * (C(1) + t);
    const C right = C(0.5) * x * (C(1) - t * t) * kSqrt2OverPi * (C(1) + C(3) * kCubic * x2);
    return g * (left + right);
  }
};

}  // namespace math

// The ops with a backward kernel: X(UnaryOp enumerator, what it reads beside the gradient
// (math::BackwardSaved), functor in tensorlet::math). The ops of TL_UNARY_OPS not here have none:
// neg's gradient is neg(grad), the rounding ops' and sign's are zeros, the rest have no
// derivative.
#define TL_UNARY_BACKWARD_OPS(X)              \
  X(Abs, Input, AbsBackwardFn)                \
  X(Exp, Output, ExpBackwardFn)               \
  X(Log, Input, LogBackwardFn)                \
  X(Sqrt, Output, SqrtBackwardFn)             \
  X(Sin, Input, SinBackwardFn)                \
  X(Cos, Input, CosBackwardFn)                \
  X(Tanh, Output, TanhBackwardFn)             \
  X(Sigmoid, Output, SigmoidBackwardFn)       \
  X(Relu, Output, ReluBackwardFn)             \
  X(Reciprocal, Output, ReciprocalBackwardFn) \
  X(Rsqrt, Output, RsqrtBackwardFn)           \
  X(Log1p, Input, Log1pBackwardFn)            \
  X(Expm1, Output, Expm1BackwardFn)           \
  X(Log2, Input, Log2BackwardFn)              \
  X(Log10, Input, Log10BackwardFn)            \
  X(Exp2, Output, Exp2BackwardFn)             \
  X(Erf, Input, ErfBackwardFn)                \
  X(Erfc, Input, ErfcBackwardFn)              \
  X(Tan, Output, TanBackwardFn)               \
  X(Sinh, Input, SinhBackwardFn)              \
  X(Cosh, Input, CoshBackwardFn)              \
  X(Asin, Input, AsinBackwardFn)              \
  X(Acos, Input, AcosBackwardFn)              \
  X(Atan, Input, AtanBackwardFn)              \
  X(Square, Input, SquareBackwardFn)          \
  X(Silu, Input, SiluBackwardFn)              \
  X(Softplus, Input, SoftplusBackwardFn)      \
  X(Gelu, Input, GeluBackwardFn)              \
  X(GeluTanh, Input, GeluTanhBackwardFn)

// Whether op has a backward kernel.
constexpr bool has_backward_kernel(UnaryOp op) {
  switch (op) {
#define TL_UNARY_BACKWARD_HAS(e, saved, Fn) \
  case UnaryOp::e:                          \
    return true;
    TL_UNARY_BACKWARD_OPS(TL_UNARY_BACKWARD_HAS)
#undef TL_UNARY_BACKWARD_HAS
    default:
      return false;
  }
}

// What op's backward kernel reads beside the gradient (only for ops with a kernel).
constexpr math::BackwardSaved backward_saved(UnaryOp op) {
  switch (op) {
#define TL_UNARY_BACKWARD_SAVED(e, saved, Fn) \
  case UnaryOp::e:                            \
    return math::BackwardSaved::saved;
    TL_UNARY_BACKWARD_OPS(TL_UNARY_BACKWARD_SAVED)
#undef TL_UNARY_BACKWARD_SAVED
    default:
      return math::BackwardSaved::Input;
  }
}

}  // namespace tensorlet

// Elementwise unary ops on CUDA: neg, abs, relu, logical_not and the floating-point math functions,
// with the CPU backend's semantics (integer neg/abs wrap, relu keeps NaN).
#include <type_traits>

#include "backends/cuda/cuda_elementwise.cuh"
#include "backends/cuda/cuda_kernels.h"
#include "core/error.h"

namespace tensorlet::cuda {
namespace {

// Through the unsigned type, so INT_MIN wraps as in PyTorch instead of being undefined.
template <typename T>
__device__ __forceinline__ T negate(T a) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
  else
    return -a;
}

struct NegOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a) const {
    return negate(a);
  }
};
struct AbsOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>)
      return a;
    else if constexpr (std::is_integral_v<T>)
      return a < 0 ? negate(a) : a;
    else if constexpr (std::is_same_v<T, float>)
      return fabsf(a);
    else
      return fabs(a);
  }
};
// NaN stays NaN (a comparison with NaN is false), as torch.relu.
struct ReluOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a) const {
    return a < T(0) ? T(0) : a;
  }
};
struct LogicalNotOp {
  template <typename T>
  __device__ __forceinline__ bool operator()(T a) const {
    return a == T(0);
  }
};

// The CUDA math library names float functions with an f suffix; double ones without.
#define TL_MATH_OP(Name, fn)                             \
  struct Name {                                          \
    template <typename T>                                \
    __device__ __forceinline__ T operator()(T a) const { \
      if constexpr (std::is_same_v<T, float>)            \
        return fn##f(a);                                 \
      else                                               \
        return fn(a);                                    \
    }                                                    \
  };
TL_MATH_OP(ExpOp, exp)
TL_MATH_OP(LogOp, log)
TL_MATH_OP(SqrtOp, sqrt)
TL_MATH_OP(SinOp, sin)
TL_MATH_OP(CosOp, cos)
TL_MATH_OP(TanhOp, tanh)
#undef TL_MATH_OP

struct SigmoidOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a) const {
    return T(1) / (T(1) + ExpOp{}(-a));
  }
};

template <typename Out, typename T, typename Op>
void run(const Op& op, const Tensor& in, const Tensor& out) {
  Elementwise<Out, T>::run(op, out, {&in});
}

[[noreturn]] void unsupported(UnaryOp op, DType dtype) {
  fail<DTypeError>(unary_op_name(op), "not supported for dtype ", dtype);
}

}  // namespace

void unary(UnaryOp op, const Tensor& in, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kClassicDTypes>(in.dtype(), [&]<typename T>() {
    constexpr bool is_bool = std::is_same_v<T, bool>;
    constexpr bool is_float = std::is_floating_point_v<T>;
    switch (op) {
      case UnaryOp::Neg:
        if constexpr (!is_bool) return run<T, T>(NegOp{}, in, out);
        break;
      case UnaryOp::Abs:
        return run<T, T>(AbsOp{}, in, out);
      case UnaryOp::Relu:
        if constexpr (!is_bool) return run<T, T>(ReluOp{}, in, out);
        break;
      case UnaryOp::LogicalNot:
        return run<bool, T>(LogicalNotOp{}, in, out);
      default:
        break;
    }
    // The rest are floating-point only: the front-end converts integer inputs first.
    if constexpr (is_float) {
      switch (op) {
        case UnaryOp::Exp:
          return run<T, T>(ExpOp{}, in, out);
        case UnaryOp::Log:
          return run<T, T>(LogOp{}, in, out);
        case UnaryOp::Sqrt:
          return run<T, T>(SqrtOp{}, in, out);
        case UnaryOp::Sin:
          return run<T, T>(SinOp{}, in, out);
        case UnaryOp::Cos:
          return run<T, T>(CosOp{}, in, out);
        case UnaryOp::Tanh:
          return run<T, T>(TanhOp{}, in, out);
        case UnaryOp::Sigmoid:
          return run<T, T>(SigmoidOp{}, in, out);
        default:
          break;
      }
    }
    unsupported(op, in.dtype());
  });
}

}  // namespace tensorlet::cuda

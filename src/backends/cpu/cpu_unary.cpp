// CPU unary elementwise kernels: neg, abs, relu, the floating-point math functions, logical_not.
#include <cmath>
#include <type_traits>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/strided_loop.h"
#include "core/dispatch.h"
#include "core/convert.h"

namespace tensorlet::cpu {
namespace {

// Integer negation and abs go through the unsigned type so INT_MIN wraps as in PyTorch instead
// of being undefined behaviour.
struct NegOp {
  template <typename T>
  T operator()(T a) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
    else
      return -a;
  }
};
struct AbsOp {
  template <typename T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>)
      return a;
    else if constexpr (std::is_integral_v<T>)
      return a < 0 ? NegOp{}(a) : a;
    else
      return std::abs(a);
  }
};
// NaN stays NaN (a comparison with NaN is false), as torch.relu.
struct ReluOp {
  template <typename T>
  T operator()(T a) const {
    return a < T(0) ? T(0) : a;
  }
};
struct ExpOp {
  template <typename T>
  T operator()(T a) const {
    return std::exp(a);
  }
};
struct LogOp {
  template <typename T>
  T operator()(T a) const {
    return std::log(a);
  }
};
struct SqrtOp {
  template <typename T>
  T operator()(T a) const {
    return std::sqrt(a);
  }
};
struct SinOp {
  template <typename T>
  T operator()(T a) const {
    return std::sin(a);
  }
};
struct CosOp {
  template <typename T>
  T operator()(T a) const {
    return std::cos(a);
  }
};
struct TanhOp {
  template <typename T>
  T operator()(T a) const {
    return std::tanh(a);
  }
};
struct SigmoidOp {
  template <typename T>
  T operator()(T a) const {
    return T(1) / (T(1) + std::exp(-a));
  }
};
struct LogicalNotOp {
  template <typename T>
  bool operator()(T a) const {
    return a == T(0);
  }
};

// The input is read as Stored<T>: a bool as its byte, any non-zero byte true (core/convert.h).
template <typename T, typename Out, typename F>
void unary_kernel(const StridedLoop<2>& loop, F f, int64_t grain = kGrainSize) {
  loop.run(
      [f](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t n) {
        if (s[0] == sizeof(Out) && s[1] == sizeof(T)) {
          Out* out = reinterpret_cast<Out*>(p[0]);
          const Stored<T>* in = reinterpret_cast<const Stored<T>*>(p[1]);
          for (int64_t i = 0; i < n; ++i) out[i] = f(from_stored<T>(in[i]));
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(load<T>(p[1] + i * s[1]));
        }
      },
      grain);
}

// The math functions are libm calls per element: threads pay off at a smaller size than for
// memory-bound loops.
constexpr int64_t kMathGrain = kGrainSize / 8;

[[noreturn]] void unsupported(UnaryOp op, DType dtype) {
  fail<DTypeError>(unary_op_name(op), "not supported for dtype ", dtype);
}

}  // namespace

void CpuBackend::unary(UnaryOp op, const Tensor& in, const Tensor& out) {
  StridedLoop<2> loop({&out, &in});
  if (loop.numel() == 0) return;
  dispatch_dtype<kClassicDTypes>(in.dtype(), [&]<typename T>() {
    constexpr bool is_bool = std::is_same_v<T, bool>;
    constexpr bool is_float = std::is_floating_point_v<T>;
    switch (op) {
      case UnaryOp::Neg:
        if constexpr (!is_bool) return unary_kernel<T, T>(loop, NegOp{});
        unsupported(op, in.dtype());
      case UnaryOp::Abs:
        return unary_kernel<T, T>(loop, AbsOp{});
      case UnaryOp::Relu:
        if constexpr (!is_bool) return unary_kernel<T, T>(loop, ReluOp{});
        unsupported(op, in.dtype());
      case UnaryOp::LogicalNot:
        return unary_kernel<T, bool>(loop, LogicalNotOp{});
      default:
        break;
    }
    // The rest are floating-point only: the front-end converts integer inputs first.
    if constexpr (is_float) {
      switch (op) {
        case UnaryOp::Exp:
          return unary_kernel<T, T>(loop, ExpOp{}, kMathGrain);
        case UnaryOp::Log:
          return unary_kernel<T, T>(loop, LogOp{}, kMathGrain);
        case UnaryOp::Sqrt:
          return unary_kernel<T, T>(loop, SqrtOp{});
        case UnaryOp::Sin:
          return unary_kernel<T, T>(loop, SinOp{}, kMathGrain);
        case UnaryOp::Cos:
          return unary_kernel<T, T>(loop, CosOp{}, kMathGrain);
        case UnaryOp::Tanh:
          return unary_kernel<T, T>(loop, TanhOp{}, kMathGrain);
        case UnaryOp::Sigmoid:
          return unary_kernel<T, T>(loop, SigmoidOp{}, kMathGrain);
        default:
          break;
      }
    }
    unsupported(op, in.dtype());
  });
}

}  // namespace tensorlet::cpu

// Elementwise binary ops on CUDA (arithmetic, pow, maximum/minimum, comparisons, logical), with the
// CPU backend's semantics: wrapping integer arithmetic, exact integer pow, NaN-propagating
// maximum/minimum, bool results for comparisons and logical ops.
#include <type_traits>

#include "backends/math/wrapping_int.h"
#include "backends/cuda/cuda_elementwise.cuh"
#include "backends/cuda/cuda_kernels.h"
#include "core/error.h"

namespace tensorlet::cuda {
namespace {

// Integer arithmetic runs in Wide<T> (backends/wrapping_int.h), which wraps as PyTorch's.

struct AddOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  }
};
struct SubOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
  }
};
struct MulOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  }
};
struct DivOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a / b;
  }
};

// x ** 2 is x * x, as on the CPU (where it is a fast path): the same correctly rounded value,
// which the device pow does not promise.
struct PowOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>)
      return b == 2.0f ? a * a : powf(a, b);
    else if constexpr (std::is_same_v<T, double>)
      return b == 2.0 ? a * a : pow(a, b);
    else
      return int_pow(a, b);
  }
};

// One kernel for both, and one for each family below: the op is a warp-uniform branch, which is
// free next to the memory traffic, and it keeps the number of instantiations down.
// NaN in either operand gives NaN, as torch.maximum / torch.minimum.
struct MaxMinOp {
  bool max;
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    const bool take_a = max ? a > b : a < b;
    if constexpr (std::is_floating_point_v<T>)
      return (a != a || take_a) ? a : b;
    else
      return take_a ? a : b;
  }
};
struct CompareOp {
  BinaryOp op;
  template <typename T>
  __device__ __forceinline__ bool operator()(T a, T b) const {
    switch (op) {
      case BinaryOp::Gt:
        return a > b;
      case BinaryOp::Lt:
        return a < b;
      case BinaryOp::Ge:
        return a >= b;
      case BinaryOp::Le:
        return a <= b;
      case BinaryOp::Eq:
        return a == b;
      default:
        return a != b;
    }
  }
};
struct LogicalOp {
  bool is_and;
  template <typename T>
  __device__ __forceinline__ bool operator()(T a, T b) const {
    return is_and ? (a != T(0) && b != T(0)) : (a != T(0) || b != T(0));
  }
};

template <typename Out, typename T, typename Op>
void run(const Op& op, const Tensor& a, const Tensor& b, const Tensor& out) {
  Elementwise<Out, T, T>::run(op, out, {&a, &b});
}

[[noreturn]] void unsupported(BinaryOp op, DType dtype) {
  fail<DTypeError>(binary_op_name(op), "not supported for dtype ", dtype);
}

}  // namespace

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kClassicDTypes>(a.dtype(), [&]<typename T>() {
    constexpr bool is_bool = std::is_same_v<T, bool>;
    constexpr bool is_float = std::is_floating_point_v<T>;
    switch (op) {
      case BinaryOp::Add:
        return run<T, T>(AddOp{}, a, b, out);
      case BinaryOp::Sub:
        if constexpr (!is_bool) return run<T, T>(SubOp{}, a, b, out);
        break;
      case BinaryOp::Mul:
        return run<T, T>(MulOp{}, a, b, out);
      case BinaryOp::Div:  // the front-end sends integer division to floating point
        if constexpr (is_float) return run<T, T>(DivOp{}, a, b, out);
        break;
      case BinaryOp::Pow:
        if constexpr (!is_bool) return run<T, T>(PowOp{}, a, b, out);
        break;
      case BinaryOp::Maximum:
      case BinaryOp::Minimum:
        return run<T, T>(MaxMinOp{op == BinaryOp::Maximum}, a, b, out);
      case BinaryOp::Gt:
      case BinaryOp::Lt:
      case BinaryOp::Ge:
      case BinaryOp::Le:
      case BinaryOp::Eq:
      case BinaryOp::Ne:
        return run<bool, T>(CompareOp{op}, a, b, out);
      case BinaryOp::LogicalAnd:
      case BinaryOp::LogicalOr:
        return run<bool, T>(LogicalOp{op == BinaryOp::LogicalAnd}, a, b, out);
    }
    unsupported(op, a.dtype());
  });
}

}  // namespace tensorlet::cuda

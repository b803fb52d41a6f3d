// CPU binary elementwise kernels (arithmetic, pow, maximum/minimum, comparisons, logical) and
// where.
#include <cmath>
#include <type_traits>

#include "backends/math/wrapping_int.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/strided_loop.h"
#include "core/dispatch.h"
#include "core/convert.h"

namespace tensorlet::cpu {
namespace {

// Integer arithmetic runs in Wide<T> (backends/wrapping_int.h): it wraps as PyTorch's and
// still vectorizes.

struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
  }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  }
};
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    return a / b;
  }
};

struct PowOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::pow(a, b);
    else
      return int_pow(a, b);
  }
};
// NaN in either operand gives NaN, as torch.maximum / torch.minimum.
struct MaximumOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return (a != a || a > b) ? a : b;
    else
      return a > b ? a : b;
  }
};
struct MinimumOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return (a != a || a < b) ? a : b;
    else
      return a < b ? a : b;
  }
};
struct GtOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct LtOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct GeOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct LeOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct EqOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};
struct NeOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a != b;
  }
};
struct LogicalAndOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a != T(0) && b != T(0);
  }
};
struct LogicalOrOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a != T(0) || b != T(0);
  }
};

// The byte stride with which an operand of `element` bytes can be walked as one flat run: the
// element size when it is contiguous, 0 when it is a broadcast scalar (stride 0 on every dim),
// -1 otherwise.
int64_t flat_stride(const TensorImpl& t, int64_t element) {
  bool contiguous = true, scalar = true;
  int64_t expected = 1;
  for (int64_t d = t.shape.size() - 1; d >= 0; --d) {
    const int64_t n = t.shape[d], st = t.strides[d];
    if (n == 1) continue;
    contiguous &= st == expected;
    scalar &= st == 0;
    expected *= n;
  }
  return contiguous ? element : scalar ? 0 : -1;
}

// Calls row(ptrs, byte_strides, count) over all n elements of the same-shape operands ops[0..N)
// (of the given element sizes), split across threads when large. Flat operands, the common case,
// skip StridedLoop's set-up, which costs as much as a whole small op.
template <int N, typename Row>
void for_each_run(const std::array<const Tensor*, N>& ops, const std::array<int64_t, N>& sizes,
                  const Row& row, int64_t grain = kGrainSize) {
  std::array<int64_t, N> strides;
  std::array<char*, N> base;
  for (int k = 0; k < N; ++k) {
    const TensorImpl& t = ops[k]->impl();
    strides[k] = flat_stride(t, sizes[k]);
    if (strides[k] < 0) return StridedLoop<N>(ops).run(row, grain);
    base[k] = static_cast<char*>(t.storage->data()) + t.offset * sizes[k];
  }
  const int64_t n = ops[0]->numel();
  if (n < grain) return row(base, strides, n);
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    std::array<char*, N> p = base;
    for (int k = 0; k < N; ++k) p[k] += begin * strides[k];
    row(p, strides, end - begin);
  });
}

// One inner run: unit strides and a stride-0 (scalar) operand get plain indexed loops that the
// compiler vectorizes; anything else walks byte strides. Inputs are read as Stored<T> (a bool as
// its byte, any non-zero byte true: core/convert.h).
template <typename T, typename Out, typename F>
void binary_kernel(const std::array<const Tensor*, 3>& ops, F f) {
  for_each_run<3>(ops, {sizeof(Out), sizeof(T), sizeof(T)},
                  [f](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t n) {
                    Out* out = reinterpret_cast<Out*>(p[0]);
                    const Stored<T>* a = reinterpret_cast<const Stored<T>*>(p[1]);
                    const Stored<T>* b = reinterpret_cast<const Stored<T>*>(p[2]);
                    constexpr int64_t so = sizeof(Out), st = sizeof(T);
                    auto ld = [](Stored<T> v) { return from_stored<T>(v); };
                    if (s[0] == so && s[1] == st && s[2] == st) {
                      for (int64_t i = 0; i < n; ++i) out[i] = f(ld(a[i]), ld(b[i]));
                    } else if (s[0] == so && s[1] == st && s[2] == 0) {
                      const T bv = ld(*b);
                      for (int64_t i = 0; i < n; ++i) out[i] = f(ld(a[i]), bv);
                    } else if (s[0] == so && s[1] == 0 && s[2] == st) {
                      const T av = ld(*a);
                      for (int64_t i = 0; i < n; ++i) out[i] = f(av, ld(b[i]));
                    } else {
                      for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                            f(load<T>(p[1] + i * s[1]), load<T>(p[2] + i * s[2]));
                    }
                  });
}

// x ** 2 is common enough (squared errors, norms) to skip pow's general path; x * x is the
// same correctly rounded value.
template <typename T>
void pow_kernel(const std::array<const Tensor*, 3>& ops, int64_t grain) {
  for_each_run<3>(
      ops, {sizeof(T), sizeof(T), sizeof(T)},
      [](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t n) {
        T* out = reinterpret_cast<T*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == 0 && *b == T(2)) {
          // Integers square in Wide<T> so overflow wraps as the general path's int_pow does.
          for (int64_t i = 0; i < n; ++i)
            out[i] = static_cast<T>(static_cast<Wide<T>>(a[i]) * static_cast<Wide<T>>(a[i]));
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                PowOp{}(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                        *reinterpret_cast<const T*>(p[2] + i * s[2]));
        }
      },
      grain);
}

[[noreturn]] void unsupported(BinaryOp op, DType dtype) {
  fail<DTypeError>(binary_op_name(op), "not supported for dtype ", dtype);
}

}  // namespace

void CpuBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  const std::array<const Tensor*, 3> ops{&out, &a, &b};
  dispatch_dtype<kClassicDTypes>(a.dtype(), [&]<typename T>() {
    constexpr bool is_bool = std::is_same_v<T, bool>;
    constexpr bool is_float = std::is_floating_point_v<T>;
    switch (op) {
      case BinaryOp::Add:
        return binary_kernel<T, T>(ops, AddOp{});
      case BinaryOp::Sub:
        if constexpr (!is_bool) return binary_kernel<T, T>(ops, SubOp{});
        unsupported(op, a.dtype());
      case BinaryOp::Mul:
        return binary_kernel<T, T>(ops, MulOp{});
      case BinaryOp::Div:  // the front-end sends integer division to floating point
        if constexpr (is_float) return binary_kernel<T, T>(ops, DivOp{});
        unsupported(op, a.dtype());
      case BinaryOp::Pow:
        // pow is a libm call per element for floats: worth threads well before copies are.
        if constexpr (!is_bool) return pow_kernel<T>(ops, is_float ? kGrainSize / 8 : kGrainSize);
        unsupported(op, a.dtype());
      case BinaryOp::Maximum:
        return binary_kernel<T, T>(ops, MaximumOp{});
      case BinaryOp::Minimum:
        return binary_kernel<T, T>(ops, MinimumOp{});
      case BinaryOp::Gt:
        return binary_kernel<T, bool>(ops, GtOp{});
      case BinaryOp::Lt:
        return binary_kernel<T, bool>(ops, LtOp{});
      case BinaryOp::Ge:
        return binary_kernel<T, bool>(ops, GeOp{});
      case BinaryOp::Le:
        return binary_kernel<T, bool>(ops, LeOp{});
      case BinaryOp::Eq:
        return binary_kernel<T, bool>(ops, EqOp{});
      case BinaryOp::Ne:
        return binary_kernel<T, bool>(ops, NeOp{});
      case BinaryOp::LogicalAnd:
        return binary_kernel<T, bool>(ops, LogicalAndOp{});
      case BinaryOp::LogicalOr:
        return binary_kernel<T, bool>(ops, LogicalOrOp{});
    }
    unsupported(op, a.dtype());
  });
}

void CpuBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kClassicDTypes>(out.dtype(), [&]<typename T>() {
    // Selecting moves elements as they are stored; the condition is read as a byte (non-zero is
    // true: core/convert.h).
    using S = Stored<T>;
    for_each_run<4>({&out, &cond, &a, &b}, {sizeof(T), sizeof(bool), sizeof(T), sizeof(T)},
                    [](std::array<char*, 4> p, std::array<int64_t, 4> s, int64_t n) {
                      constexpr int64_t st = sizeof(T);
                      if (s[0] == st && s[1] == 1 && s[2] == st && s[3] == st) {
                        S* o = reinterpret_cast<S*>(p[0]);
                        const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);
                        const S* x = reinterpret_cast<const S*>(p[2]);
                        const S* y = reinterpret_cast<const S*>(p[3]);
                        for (int64_t i = 0; i < n; ++i) o[i] = c[i] != 0 ? x[i] : y[i];
                      } else {
                        for (int64_t i = 0; i < n; ++i)
                          *reinterpret_cast<S*>(p[0] + i * s[0]) =
                              load<bool>(p[1] + i * s[1])
                                  ? *reinterpret_cast<const S*>(p[2] + i * s[2])
                                  : *reinterpret_cast<const S*>(p[3] + i * s[3]);
                      }
                    });
  });
}

}  // namespace tensorlet::cpu

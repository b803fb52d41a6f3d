// CPU binary elementwise kernels, one per op of the list in backends/math/binary_ops.h and dtype
// it supports (flat and scalar-operand runs that vectorize, strided runs otherwise; float and
// double arithmetic through the SIMD leaves of the CPU's target), and where.
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/simd/cpu_capability.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/binary_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

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

// Operands of one kernel: out first, then the inputs; a null tensor is a scalar input, read at
// values[k] (a local of the kernel) with stride 0.
template <int N>
struct Operands {
  std::array<const Tensor*, N> ops;
  std::array<const void*, N> values{};
};

// Calls row(ptrs, byte_strides, count) over all n elements of the same-shape operands (of the
// given element sizes), split across threads when large. Flat operands, the common case, skip
// StridedLoop's set-up, which costs as much as a whole small op.
template <int N, typename Row>
void for_each_run(const Operands<N>& o, const std::array<int64_t, N>& sizes, const Row& row,
                  int64_t grain = kGrainSize) {
  std::array<int64_t, N> strides;
  std::array<char*, N> base;
  for (int k = 0; k < N; ++k) {
    if (!o.ops[k]) {
      strides[k] = 0;
      base[k] = const_cast<char*>(static_cast<const char*>(o.values[k]));
      continue;
    }
    const TensorImpl& t = o.ops[k]->impl();
    strides[k] = flat_stride(t, sizes[k]);
    if (strides[k] < 0) return StridedLoop<N>(o.ops, o.values).run(row, grain);
    base[k] = static_cast<char*>(t.storage->data()) + t.offset * sizes[k];
  }
  const int64_t n = o.ops[0]->numel();
  if (n < grain) return row(base, strides, n);
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    std::array<char*, N> p = base;
    for (int k = 0; k < N; ++k) p[k] += begin * strides[k];
    row(p, strides, end - begin);
  });
}

// One inner run: unit strides and a stride-0 operand (a scalar input, or a broadcast 0-dim tensor)
// get plain indexed loops that the compiler vectorizes, the stride-0 value read once; anything
// else walks byte strides. Inputs are read as Stored<T> (a bool as its byte, any non-zero byte
// true: tensor/convert.h).
template <typename T, typename Out, typename F>
void binary_kernel(const Operands<3>& ops, F f, int64_t grain) {
  for_each_run<3>(
      ops, {sizeof(Out), sizeof(T), sizeof(T)},
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
      },
      grain);
}

// The SIMD table's slot of an arithmetic functor (simd/simd_kernels.h lists them), -1 for others.
template <typename Fn>
constexpr int kSimdSlot = -1;
#define TL_SIMD_SLOT(name, Fn) \
  template <>                  \
  constexpr int kSimdSlot<math::Fn> = static_cast<int>(simd::SimdBinary::name);
TL_SIMD_BINARY_OPS(TL_SIMD_SLOT)
#undef TL_SIMD_SLOT

// float/double add, sub, mul, div: runs of the three flat layouts call the SIMD leaf of the
// CPU's target (the same correctly rounded operation, in its widest vectors); other runs walk
// byte strides with the functor.
template <typename T, typename Fn>
void simd_binary_kernel(const Operands<3>& ops, int slot, int64_t grain) {
  const simd::SimdKernels& table = simd::kernels();
  const auto& leaves = [&]() -> const auto& {
    if constexpr (std::is_same_v<T, float>)
      return table.binary_f32[slot];
    else
      return table.binary_f64[slot];
  }
  ();
  for_each_run<3>(
      ops, {sizeof(T), sizeof(T), sizeof(T)},
      [&leaves](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t n) {
        T* out = reinterpret_cast<T*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        constexpr int64_t st = sizeof(T);
        using simd::SimdLayout;
        if (s[0] == st && s[1] == st && s[2] == st)
          return leaves[static_cast<int>(SimdLayout::ArrayArray)](a, b, out, n);
        if (s[0] == st && s[1] == st && s[2] == 0)
          return leaves[static_cast<int>(SimdLayout::ArrayScalar)](a, b, out, n);
        if (s[0] == st && s[1] == 0 && s[2] == st)
          return leaves[static_cast<int>(SimdLayout::ScalarArray)](a, b, out, n);
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<T*>(p[0] + i * s[0]) =
              Fn{}(load<T>(p[1] + i * s[1]), load<T>(p[2] + i * s[2]));
      },
      grain);
}

// x ** 2 is common enough (squared errors, norms) to skip pow's general path; x * x is the
// same correctly rounded value (integers square in Wide<T>, wrapping as int_pow does).
template <typename T>
void pow_kernel(const Operands<3>& ops, int64_t grain) {
  using C = compute_t<T>;
  for_each_run<3>(
      ops, {sizeof(T), sizeof(T), sizeof(T)},
      [](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t n) {
        T* out = reinterpret_cast<T*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        const InComputeType<T, math::PowFn> general{};
        if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == 0 && static_cast<C>(*b) == C(2)) {
          for (int64_t i = 0; i < n; ++i) {
            const C x = static_cast<C>(a[i]);
            out[i] = static_cast<T>(math::MulFn{}(x, x));
          }
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                general(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                        *reinterpret_cast<const T*>(p[2] + i * s[2]));
        }
      },
      grain);
}

// A float16/bfloat16 op with a scalar operand: the scalar is a float (it may carry more precision
// than T: backend.h), so the op runs over the tensor operand alone, in float, rounding once.
template <typename T, typename Out, typename Fn>
void reduced_float_scalar_kernel(const ElementwiseArg& a, const ElementwiseArg& b,
                                 const Tensor& out, int64_t grain) {
  using C = compute_t<T>;
  const bool scalar_first = a.is_scalar();
  const C s = (scalar_first ? a : b).scalar.template to<C>();
  const Operands<2> ops{{&out, scalar_first ? b.tensor : a.tensor}};
  for_each_run<2>(
      ops, {sizeof(Out), sizeof(T)},
      [s, scalar_first](std::array<char*, 2> p, std::array<int64_t, 2> st, int64_t n) {
        const auto f = [&](T x) {
          const C c = static_cast<C>(x);
          if constexpr (std::is_same_v<Fn, math::PowFn>)  // x ** 2 as x * x (pow_kernel)
            if (!scalar_first && s == C(2)) return static_cast<Out>(math::MulFn{}(c, c));
          return static_cast<Out>(scalar_first ? Fn{}(s, c) : Fn{}(c, s));
        };
        if (st[0] == sizeof(Out) && st[1] == sizeof(T)) {
          Out* o = reinterpret_cast<Out*>(p[0]);
          const T* x = reinterpret_cast<const T*>(p[1]);
          for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<Out*>(p[0] + i * st[0]) = f(load<T>(p[1] + i * st[1]));
        }
      },
      grain);
}

// The op Fn over every dtype of its kernel set: loads T, computes in compute_t<T>, stores Out.
template <OutputRule Rule, DTypeSet Dtypes, typename Fn>
void binary_op(const ElementwiseArg& a, const ElementwiseArg& b, const Tensor& out,
               const char* name) {
  auto run = [&]<typename T>() {
    // A scalar input is this local, walked with stride 0: read once, by value.
    Stored<T> av{}, bv{};
    if (a.is_scalar()) av = a.scalar.to<T>();
    if (b.is_scalar()) bv = b.scalar.to<T>();
    const Operands<3> ops{{&out, a.tensor, b.tensor}, {nullptr, &av, &bv}};
    // pow and the Floating ops' functions are libm calls per element for floats: worth threads
    // well before copies are.
    constexpr bool is_math =
        Rule == OutputRule::Floating || (is_floating_v<T> && std::is_same_v<Fn, math::PowFn>);
    constexpr int64_t grain = is_math ? kGrainSize / 8 : kGrainSize;
    if constexpr (is_reduced_float_v<T>)
      if (a.is_scalar() || b.is_scalar())
        return reduced_float_scalar_kernel<T, rule_out_t<Rule, T>, Fn>(a, b, out, grain);
    if constexpr (std::is_same_v<Fn, math::PowFn>)
      pow_kernel<T>(ops, grain);
    else if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, double>)&&kSimdSlot<Fn> >= 0)
      simd_binary_kernel<T, Fn>(ops, kSimdSlot<Fn>, grain);
    else
      binary_kernel<T, rule_out_t<Rule, T>>(ops, InComputeType<rule_out_t<Rule, T>, Fn>{}, grain);
  };
  dispatch_dtype<Dtypes>((a.tensor ? a.tensor : b.tensor)->dtype(), run, name);
}

// The bits of a scalar input as an element of `dtype`, in the unsigned type U of its size.
template <typename U>
U scalar_as(Scalar value, DType dtype) {
  const uint64_t bits = element_bits(value, dtype);
  U u;
  std::memcpy(&u, &bits, sizeof(U));
  return u;
}

}  // namespace

void CpuBackend::binary(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b,
                        const Tensor& out) {
  if (out.numel() == 0) return;
  switch (op) {
#define TL_BINARY_CASE(e, name, rule, dtypes, Fn)                                          \
  case BinaryOp::e:                                                                        \
    return binary_op<OutputRule::rule, kernel_dtypes(OutputRule::rule, dtypes), math::Fn>( \
        a, b, out, "tl::" #name);
    TL_BINARY_OPS(TL_BINARY_CASE)
#undef TL_BINARY_CASE
  }
}

void CpuBackend::add_scaled(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kAllDTypes>(
      out.dtype(),
      [&]<typename T>() {
        using C = compute_t<T>;
        const math::AddScaledFn<C> fn{alpha.to<C>()};
        const Operands<3> ops{{&out, &a, &b}};
        binary_kernel<T, T>(
            ops,
            [fn](T x, T y) { return static_cast<T>(fn(static_cast<C>(x), static_cast<C>(y))); },
            kGrainSize);
      },
      "tl::add");
}

void CpuBackend::where(const Tensor& cond, const ElementwiseArg& a, const ElementwiseArg& b,
                       const Tensor& out) {
  if (out.numel() == 0) return;
  // Selecting moves bits, so dtypes of one size share a kernel (a scalar input as its bits in
  // out's dtype, walked with stride 0); the condition is read as a byte (non-zero is true:
  // tensor/convert.h).
  dispatch_bits(out.element_size(), [&]<typename T>() {
    using S = T;
    S av{}, bv{};
    if (a.is_scalar()) av = scalar_as<S>(a.scalar, out.dtype());
    if (b.is_scalar()) bv = scalar_as<S>(b.scalar, out.dtype());
    const Operands<4> ops{{&out, &cond, a.tensor, b.tensor}, {nullptr, nullptr, &av, &bv}};
    for_each_run<4>(ops, {sizeof(T), sizeof(bool), sizeof(T), sizeof(T)},
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

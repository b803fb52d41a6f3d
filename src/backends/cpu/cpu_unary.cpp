// CPU unary elementwise kernels: one per op of the list in backends/math/unary_ops.h and dtype
// it supports, each a strided loop around the op's shared math functor, or, for the floating
// math of simd/simd_kernels.h's list, around the SIMD leaf of the CPU's target.
#include <algorithm>
#include <type_traits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/simd/cpu_capability.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// The input is read as Stored<T>: a bool as its byte, any non-zero byte true (tensor/convert.h).
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

// The SIMD table's slot of a math functor (simd/simd_kernels.h lists them), -1 for the others.
template <typename Fn>
constexpr int kSimdSlot = -1;
#define TL_SIMD_SLOT(name, Fn) \
  template <>                  \
  constexpr int kSimdSlot<math::Fn> = static_cast<int>(simd::SimdUnary::name);
TL_SIMD_UNARY_OPS(TL_SIMD_SLOT)
#undef TL_SIMD_SLOT

// Elements a strided or float16/bfloat16 run hands the leaf at a time, through a local buffer.
constexpr int64_t kSimdChunk = 256;

// T -> T through the leaf of `slot` for compute_t<T> (float or double): a contiguous float or
// double run is passed as it is; any other run is gathered (and converted) into a buffer, run
// in place there and scattered back. A leaf's result for an element depends on its value alone,
// so neither the layout nor the split across threads changes it.
template <typename T>
void simd_unary_kernel(const StridedLoop<2>& loop, int slot) {
  using C = compute_t<T>;
  const simd::SimdKernels& table = simd::kernels();
  void (*leaf)(const C*, C*, int64_t);
  if constexpr (std::is_same_v<C, float>)
    leaf = table.unary_f32[slot];
  else
    leaf = table.unary_f64[slot];
  // With SLEEF the math is vectorized: threads pay off at the usual grain, not the libm one.
  const int64_t grain = table.vector_math ? kGrainSize : kMathGrain;
  loop.run(
      [leaf](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t n) {
        if constexpr (std::is_same_v<T, C>) {
          if (s[0] == sizeof(T) && s[1] == sizeof(T))
            return leaf(reinterpret_cast<const C*>(p[1]), reinterpret_cast<C*>(p[0]), n);
        }
        C buf[kSimdChunk];
        for (int64_t begin = 0; begin < n; begin += kSimdChunk) {
          const int64_t m = std::min(kSimdChunk, n - begin);
          const char* in = p[1] + begin * s[1];
          char* out = p[0] + begin * s[0];
          for (int64_t i = 0; i < m; ++i) buf[i] = static_cast<C>(load<T>(in + i * s[1]));
          leaf(buf, buf, m);
          for (int64_t i = 0; i < m; ++i)
            *reinterpret_cast<T*>(out + i * s[0]) = static_cast<T>(buf[i]);
        }
      },
      grain);
}

// The op Fn over every dtype of its kernel set: loads T, computes in compute_t<T>, stores Out.
// Floating inputs of the SIMD list's functions take their SIMD leaf.
template <OutputRule Rule, DTypeSet Dtypes, typename Fn>
void unary_op(const StridedLoop<2>& loop, DType dtype, const char* name) {
  constexpr int64_t grain = Rule == OutputRule::Floating ? kMathGrain : kGrainSize;
  dispatch_dtype<Dtypes>(
      dtype,
      [&]<typename T>() {
        using Out = rule_out_t<Rule, T>;
        if constexpr (kSimdSlot<Fn> >= 0 && is_floating_v<T> && std::is_same_v<Out, T>)
          simd_unary_kernel<T>(loop, kSimdSlot<Fn>);
        else
          unary_kernel<T, Out>(loop, InComputeType<Out, Fn>{}, grain);
      },
      name);
}

}  // namespace

void CpuBackend::unary(UnaryOp op, const Tensor& in, const Tensor& out) {
  StridedLoop<2> loop({&out, &in});
  if (loop.numel() == 0) return;
  switch (op) {
#define TL_UNARY_CASE(e, name, rule, dtypes, Fn)                                          \
  case UnaryOp::e:                                                                        \
    return unary_op<OutputRule::rule, kernel_dtypes(OutputRule::rule, dtypes), math::Fn>( \
        loop, in.dtype(), "tl::" #name);
    TL_UNARY_OPS(TL_UNARY_CASE)
#undef TL_UNARY_CASE
  }
}

}  // namespace tensorlet::cpu

// CPU unary elementwise kernels: one per op of the list in backends/math/unary_ops.h and dtype
// it supports, each a strided loop around the op's shared math functor.
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/core/convert.h"
#include "tensorlet/core/dispatch.h"

namespace tensorlet::cpu {
namespace {

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

// The op Fn over every dtype of its kernel set: loads T, computes in compute_t<T>, stores Out.
template <OutputRule Rule, DTypeSet Dtypes, typename Fn>
void unary_op(const StridedLoop<2>& loop, DType dtype, const char* name) {
  constexpr int64_t grain = Rule == OutputRule::Floating ? kMathGrain : kGrainSize;
  dispatch_dtype<Dtypes>(
      dtype,
      [&]<typename T>() {
        using Out = rule_out_t<Rule, T>;
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

// Elementwise unary ops on CUDA, generated from the list in backends/math/unary_ops.h: the ops of
// one output rule share one kernel per dtype behind a runtime switch (warp-uniform, free next to
// the memory traffic), which keeps the number of instantiations down.
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/core/dispatch.h"
#include "tensorlet/backends/math/unary_ops.h"

namespace tensorlet::cuda {
namespace {

// Whether an op of rule OpRule and supported dtypes Dtypes has a kernel in group Rule for T (a
// variable template: evaluated on the host, where the constexpr DTypeSet functions live).
template <OutputRule Rule, OutputRule OpRule, DTypeSet Dtypes, typename T>
inline constexpr bool runs_on = Rule ==
                                OpRule&& kernel_dtypes(OpRule, Dtypes).contains(dtype_of_v<T>);

// Every op of output rule Rule, on element type T: loads T, computes in compute_t<T>, stores Out.
template <OutputRule Rule>
struct UnaryGroup {
  UnaryOp op;
  template <typename T>
  __device__ __forceinline__ rule_out_t<Rule, T> operator()(T a) const {
    using Out = rule_out_t<Rule, T>;
    switch (op) {
#define TL_UNARY_CASE(e, name, rule, dtypes, Fn)              \
  case UnaryOp::e:                                            \
    if constexpr (runs_on<Rule, OutputRule::rule, dtypes, T>) \
      return InComputeType<Out, math::Fn>{}(a);               \
    break;
      TL_UNARY_OPS(TL_UNARY_CASE)
#undef TL_UNARY_CASE
    }
    return Out{};  // not reached: the front-end sends each op only its own dtypes
  }
};

// The dtypes some op of output rule Rule runs on.
template <OutputRule Rule>
constexpr DTypeSet group_dtypes() {
  DTypeSet set;
#define TL_UNARY_SET(e, name, rule, dtypes, Fn) \
  if (OutputRule::rule == Rule) set = set | kernel_dtypes(OutputRule::rule, dtypes);
  TL_UNARY_OPS(TL_UNARY_SET)
#undef TL_UNARY_SET
  return set;
}

template <OutputRule Rule>
void run_group(UnaryOp op, const Tensor& in, const Tensor& out) {
  dispatch_dtype<group_dtypes<Rule>()>(
      in.dtype(),
      [&]<typename T>() {
        Elementwise<rule_out_t<Rule, T>, T>::run(UnaryGroup<Rule>{op}, out, {&in});
      },
      unary_op_name(op));
}

}  // namespace

void unary(UnaryOp op, const Tensor& in, const Tensor& out) {
  if (out.numel() == 0) return;
  switch (output_rule(op)) {
    case OutputRule::Same:
      return run_group<OutputRule::Same>(op, in, out);
    case OutputRule::Bool:
      return run_group<OutputRule::Bool>(op, in, out);
    case OutputRule::Floating:
      return run_group<OutputRule::Floating>(op, in, out);
  }
}

}  // namespace tensorlet::cuda

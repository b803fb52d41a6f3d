// Elementwise unary ops on CUDA, generated from the list in backends/math/unary_ops.h: the ops of
// one output rule share one kernel per dtype behind a runtime switch (warp-uniform), which keeps
// the number of instantiations down; float32 math ops (the Floating rule) get a kernel each.
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/dispatch.h"
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

// One Floating-rule op on float32, in a kernel of its own: behind the group's switch its registers
// would be those of the costliest op of the group (erfc, tan, ...), lowering the occupancy, and a
// switch cannot be inlined twice over; alone it loads 2 vectors per thread before computing
// (cuda_elementwise.cuh), which keeps sin/cos at 0.97 of the copy rate on an H200 (bench_cuda G4,
// one binary, TL_CUDA_VECTORS_PER_THREAD: 1 vector 0.90, 2 vectors 0.97, 4 vectors 0.96).
template <typename Fn>
struct Float32Op {
  static constexpr int kVectorsPerThread = 2;
  __device__ __forceinline__ float operator()(float a) const { return Fn{}(a); }
};

// The kernel of a Floating-rule op on float32; false for the other rules (a template, so that the
// branch not taken is never instantiated).
template <OutputRule Rule, typename Fn>
bool run_float32(const Tensor& in, const Tensor& out) {
  if constexpr (Rule == OutputRule::Floating) {
    Elementwise<float, float>::run(Float32Op<Fn>{}, out, {&in});
    return true;
  } else {
    return false;
  }
}

// Runs op on its own kernel when it has one (a Floating-rule op on float32); false otherwise.
bool run_float32_op(UnaryOp op, const Tensor& in, const Tensor& out) {
  if (in.dtype() != kFloat32 || out.dtype() != kFloat32) return false;
  switch (op) {
#define TL_UNARY_FLOAT32(e, name, rule, dtypes, Fn) \
  case UnaryOp::e:                                  \
    return run_float32<OutputRule::rule, math::Fn>(in, out);
    TL_UNARY_OPS(TL_UNARY_FLOAT32)
#undef TL_UNARY_FLOAT32
  }
  return false;
}

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
  if (run_float32_op(op, in, out)) return;
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

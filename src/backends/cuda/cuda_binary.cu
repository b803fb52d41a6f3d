// Elementwise binary ops on CUDA, generated from the list in backends/math/binary_ops.h: the ops
// of one output rule share one kernel per dtype behind a runtime switch (warp-uniform, free next
// to the memory traffic), which keeps the number of instantiations down.
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_device_error.cuh"
#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/backends/math/binary_ops.h"

namespace tensorlet::cuda {
namespace {

// Whether an op of rule OpRule and supported dtypes Dtypes has a kernel in group Rule for T (a
// variable template: evaluated on the host, where the constexpr DTypeSet functions live).
template <OutputRule Rule, OutputRule OpRule, DTypeSet Dtypes, typename T>
inline constexpr bool runs_on = Rule ==
                                OpRule&& kernel_dtypes(OpRule, Dtypes).contains(dtype_of_v<T>);

// Every op of output rule Rule, on element type T: loads T, computes in compute_t<T>, stores Out.
template <OutputRule Rule>
struct BinaryGroup {
  BinaryOp op;
  template <typename T>
  __device__ __forceinline__ rule_out_t<Rule, T> operator()(T a, T b) const {
    return apply<T>(static_cast<compute_t<T>>(a), static_cast<compute_t<T>>(b));
  }
  // The op on values already in T's compute type.
  template <typename T>
  __device__ __forceinline__ rule_out_t<Rule, T> apply(compute_t<T> a, compute_t<T> b) const {
    using Out = rule_out_t<Rule, T>;
    switch (op) {
#define TL_BINARY_CASE(e, name, rule, dtypes, Fn)             \
  case BinaryOp::e:                                           \
    if constexpr (runs_on<Rule, OutputRule::rule, dtypes, T>) \
      return static_cast<Out>(math::Fn{}(a, b));              \
    break;
      TL_BINARY_OPS(TL_BINARY_CASE)
#undef TL_BINARY_CASE
    }
    return Out{};  // not reached: the front-end sends each op only its own dtypes
  }
};

// A float16/bfloat16 op with a scalar operand, which is a float (it may carry more precision than
// T: backend.h): one input, the scalar in the kernel's parameters.
template <OutputRule Rule, typename T>
struct ReducedFloatScalarGroup {
  BinaryGroup<Rule> group;
  compute_t<T> scalar;
  bool scalar_first;
  __device__ __forceinline__ rule_out_t<Rule, T> operator()(T x) const {
    const compute_t<T> c = static_cast<compute_t<T>>(x);
    return scalar_first ? group.template apply<T>(scalar, c) : group.template apply<T>(c, scalar);
  }
};

// An integer fmod / remainder / floor_divide: a zero divisor gives 0 and is reported to the host
// (cuda_device_error.h), which raises ZeroDivisionError at its next wait for the device, so the
// launch needs no scan of the divisor and no wait (and can be captured in a graph).
template <typename T>
struct CheckedIntegerDivision {
  BinaryOp op;
  DeviceErrorSink sink;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if (b == T(0)) {
      report_device_error(sink, 0);
      return T(0);
    }
    if (op == BinaryOp::Fmod) return math::FmodFn{}(a, b);
    if (op == BinaryOp::Remainder) return math::RemainderFn{}(a, b);
    return math::FloorDivideFn{}(a, b);
  }
};

inline bool is_integer_division(BinaryOp op) {
  return op == BinaryOp::Fmod || op == BinaryOp::Remainder || op == BinaryOp::FloorDivide;
}

// The dtypes some op of output rule Rule runs on.
template <OutputRule Rule>
constexpr DTypeSet group_dtypes() {
  DTypeSet set;
#define TL_BINARY_SET(e, name, rule, dtypes, Fn) \
  if (OutputRule::rule == Rule) set = set | kernel_dtypes(OutputRule::rule, dtypes);
  TL_BINARY_OPS(TL_BINARY_SET)
#undef TL_BINARY_SET
  return set;
}

template <OutputRule Rule>
void run_group(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b, const Tensor& out) {
  const DType dtype = (a.tensor ? a.tensor : b.tensor)->dtype();
  dispatch_dtype<group_dtypes<Rule>()>(
      dtype,
      [&]<typename T>() {
        if constexpr (is_reduced_float_v<T>) {
          if (a.is_scalar() || b.is_scalar()) {
            const bool first = a.is_scalar();
            const ReducedFloatScalarGroup<Rule, T> f{
                {op}, (first ? a : b).scalar.to<compute_t<T>>(), first};
            Elementwise<rule_out_t<Rule, T>, T>::run(f, out, {kernel_input(first ? b : a, dtype)});
            return;
          }
        }
        if constexpr (Rule == OutputRule::Same && std::is_integral_v<T> &&
                      !std::is_same_v<T, bool>) {
          if (is_integer_division(op)) {
            const CheckedIntegerDivision<T> f{
                op, device_error_sink(out.device().index(), current_op_name(),
                                      DeviceErrorKind::ZeroDivision)};
            Elementwise<T, T, T>::run(f, out, {kernel_input(a, dtype), kernel_input(b, dtype)});
            return;
          }
        }
        Elementwise<rule_out_t<Rule, T>, T, T>::run(
            BinaryGroup<Rule>{op}, out, {kernel_input(a, dtype), kernel_input(b, dtype)});
      },
      binary_op_name(op));
}

// a + alpha * b on element type T, alpha in the kernel's parameters.
template <typename T>
struct AddScaledOp {
  math::AddScaledFn<compute_t<T>> fn;
  __device__ __forceinline__ T operator()(T a, T b) const {
    return static_cast<T>(fn(static_cast<compute_t<T>>(a), static_cast<compute_t<T>>(b)));
  }
};

}  // namespace

void add_scaled(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kAllDTypes>(
      out.dtype(),
      [&]<typename T>() {
        const AddScaledOp<T> op{{alpha.to<compute_t<T>>()}};
        Elementwise<T, T, T>::run(op, out, {KernelInput(&a), KernelInput(&b)});
      },
      "tl::add");
}

void binary(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b, const Tensor& out) {
  if (out.numel() == 0) return;
  switch (output_rule(op)) {
    case OutputRule::Same:
      return run_group<OutputRule::Same>(op, a, b, out);
    case OutputRule::Bool:
      return run_group<OutputRule::Bool>(op, a, b, out);
    case OutputRule::Floating:
      return run_group<OutputRule::Floating>(op, a, b, out);
  }
}

}  // namespace tensorlet::cuda

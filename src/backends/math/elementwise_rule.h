// What the elementwise op tables (unary_ops.h, binary_ops.h) share: the rule that gives an op's
// result dtype, the dtypes its kernels instantiate, and the adaptor that runs an op's math in
// compute_t<T> (float for Half/BFloat16) and rounds once on the way out.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// Same: the result has the compute dtype (add, neg). Bool: the result is bool (gt, logical_not).
// Floating: bool and integer inputs compute in float32, as torch's default dtype (exp, div).
enum class OutputRule : uint8_t { Same, Bool, Floating };

// The dtype an op computes in, from its inputs' promoted dtype.
constexpr DType compute_dtype_for(OutputRule rule, DType promoted) {
  return rule == OutputRule::Floating && !is_floating_point(promoted) ? kFloat32 : promoted;
}

// The dtype of an op's result, from the dtype it computes in.
constexpr DType output_dtype_for(OutputRule rule, DType compute) {
  return rule == OutputRule::Bool ? kBool : compute;
}

// The integer dtypes and bool: the bitwise ops' (on bool they are the logical ones). A named
// constant, not an expression in the op lists: nvcc refuses host constexpr calls in the device
// code's template arguments that the lists expand to.
inline constexpr DTypeSet kBitwiseDTypes = kIntegralDTypes | DTypeSet{kBool};

// The dtypes an op's kernels are instantiated for: the compute dtypes of its supported inputs
// (a Floating op never runs an integer kernel: float32 stands in for every non-float input).
constexpr DTypeSet kernel_dtypes(OutputRule rule, DTypeSet supported) {
  if (rule != OutputRule::Floating) return supported;
  const DTypeSet floats = supported - (kAllDTypes - kFloatingDTypes);
  return floats == supported ? floats : floats | DTypeSet{kFloat32};
}

// The C++ type of a kernel's output element for input element type T.
template <OutputRule Rule, typename T>
using rule_out_t = std::conditional_t<Rule == OutputRule::Bool, bool, T>;

// An op's math functor Fn (written once on compute types) as a kernel's element function: loads
// T, computes in compute_t<T>, converts the result to Out once.
template <typename Out, typename Fn>
struct InComputeType {
  template <typename... T>
  TL_HOST_DEVICE Out operator()(T... a) const {
    return static_cast<Out>(Fn{}(static_cast<compute_t<T>>(a)...));
  }
};

}  // namespace tensorlet

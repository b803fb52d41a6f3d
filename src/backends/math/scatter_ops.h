// How scatter-like kernels (scatter, scatter_add, scatter_reduce, index_add/copy/fill) combine a
// value into an element of the destination, written once for the CPU loop and the CUDA atomics.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/math/reduce_ops.h"
#include "tensorlet/backends/math/wrapping_int.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// Assign: the value replaces the element (which of several writes to one element wins is
// unspecified, as torch). The reductions fold every value in: Add (with index_add's alpha),
// Mul, Max, Min; "mean" is Add and a count, finished by the front-end.
enum class ScatterOp : uint8_t { Assign, Add, Mul, Max, Min };

namespace scatter_ops {

// cur op v in C = compute_t<T>. Integers wrap (Wide<C>), bool adds as "or" and multiplies as
// "and" (torch's bool arithmetic), and a NaN wins max/min from either side, as torch's
// scatter_reduce: once an element holds NaN no comparison replaces it.
template <ScatterOp Op, typename C>
TL_HOST_DEVICE inline C combine(C cur, C v) {
  if constexpr (Op == ScatterOp::Assign) {
    return v;
  } else if constexpr (std::is_same_v<C, bool>) {
    return (Op == ScatterOp::Add || Op == ScatterOp::Max) ? (cur || v) : (cur && v);
  } else if constexpr (Op == ScatterOp::Add || Op == ScatterOp::Mul) {
    if constexpr (is_integer_v<C>) {
      const Wide<C> a = static_cast<Wide<C>>(cur), b = static_cast<Wide<C>>(v);
      return static_cast<C>(Op == ScatterOp::Add ? static_cast<Wide<C>>(a + b)
                                                 : static_cast<Wide<C>>(a * b));
    } else {
      return Op == ScatterOp::Add ? cur + v : cur * v;
    }
  } else {
    constexpr bool kMax = Op == ScatterOp::Max;
    return ((kMax ? cur < v : v < cur) || reduce_ops::is_nan(v)) ? v : cur;
  }
}

// index_add's alpha * v (torch computes the scaled source in the element's compute type; bool
// alpha is "and").
template <typename C>
TL_HOST_DEVICE inline C scale(C alpha, C v) {
  if constexpr (std::is_same_v<C, bool>)
    return alpha && v;
  else if constexpr (is_integer_v<C>)
    return static_cast<C>(static_cast<Wide<C>>(alpha) * static_cast<Wide<C>>(v));
  else
    return alpha * v;
}

// The value an element starts from when scatter_reduce leaves self out (include_self = false):
// the op's identity, -inf / +inf (or the integer extremes) for amax / amin.
template <ScatterOp Op, typename C>
TL_HOST_DEVICE constexpr C identity() {
  if constexpr (std::is_same_v<C, bool>)
    return Op == ScatterOp::Mul || Op == ScatterOp::Min;
  else if constexpr (Op == ScatterOp::Mul)
    return C(1);
  else if constexpr (Op == ScatterOp::Max)
    return reduce_ops::lowest<C>();
  else if constexpr (Op == ScatterOp::Min)
    return reduce_ops::highest<C>();
  else
    return C(0);
}

}  // namespace scatter_ops
}  // namespace tensorlet

// Element math of the pointwise ops with parameters (lerp, isclose, nan_to_num), written once for
// every backend and rounded as torch rounds them, so CPU and CUDA agree bit for bit.
#pragma once

#include <math.h>

#include <type_traits>

#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet::math {

// torch.lerp: start + w (end - start) for |w| < 0.5, else end - (end - start)(1 - w), both as one
// fused multiply-add (torch's CPU and CUDA kernels do the same), so w = 0 gives start and w = 1
// gives end exactly. C is the compute type (float for float16/bfloat16).
template <typename C>
TL_HOST_DEVICE inline C fused_multiply_add(C a, C b, C c) {
  if constexpr (std::is_same_v<C, float>)
    return ::fmaf(a, b, c);
  else
    return ::fma(a, b, c);
}

template <typename C>
TL_HOST_DEVICE inline C lerp(C start, C end, C w) {
  const bool small = w < C(0.5) && w > C(-0.5);
  const C coeff = small ? w : w - C(1);
  const C base = small ? start : end;
  return fused_multiply_add(coeff, end - start, base);
}

template <typename T>
struct LerpFn {
  TL_HOST_DEVICE T operator()(T start, T end, T w) const {
    using C = compute_t<T>;
    return static_cast<T>(lerp<C>(static_cast<C>(start), static_cast<C>(end), static_cast<C>(w)));
  }
};

// The weight a number: kept in the compute type (torch's opmath), not rounded to T first.
template <typename T>
struct LerpScalarFn {
  compute_t<T> w;
  TL_HOST_DEVICE T operator()(T start, T end) const {
    using C = compute_t<T>;
    return static_cast<T>(lerp<C>(static_cast<C>(start), static_cast<C>(end), w));
  }
};

// torch.isclose as torch composes it from tensor ops: a == b, or (equal_nan and both NaN), or
// |a - b| finite and <= atol + |rtol * b|, each intermediate rounded to the tensor's dtype (so
// float16 compares float16 values), with rtol and atol in its compute type. Integer and bool
// inputs compute as float32 (torch converts them to the default dtype first, so an integer
// difference does not wrap), after the exact equality test in their own type.
template <typename T>
struct IsCloseFn {
  double rtol, atol;
  bool equal_nan;

  TL_HOST_DEVICE bool operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      using C = compute_t<T>;
      const C x = static_cast<C>(a), y = static_cast<C>(b);
      if (x == y) return true;
      if (equal_nan && x != x && y != y) return true;
      if (rtol == 0 && atol == 0) return false;
      auto round = [](C v) { return static_cast<C>(static_cast<T>(v)); };
      const C actual = libm_fabs(round(x - y));
      const C allowed = round(static_cast<C>(atol) + libm_fabs(round(static_cast<C>(rtol) * y)));
      return IsfiniteFn{}(actual) && actual <= allowed;
    } else {
      if (a == b) return true;
      // Zero tolerances: torch's equality short-circuit (in float32 INT64_MIN and INT64_MIN + 1
      // are one value; found by the fuzzer).
      if (rtol == 0 && atol == 0) return false;
      return IsCloseFn<float>{rtol, atol, false}(static_cast<float>(a), static_cast<float>(b));
    }
  }
};

// torch.nan_to_num on a floating element: NaN, +inf and -inf replaced by values already in T.
template <typename T>
struct NanToNumFn {
  T nan, posinf, neginf;
  TL_HOST_DEVICE T operator()(T v) const {
    using C = compute_t<T>;
    const C x = static_cast<C>(v);
    if (x != x) return nan;
    if (IsinfFn{}(x)) return x > C(0) ? posinf : neginf;
    return v;
  }
};

}  // namespace tensorlet::math

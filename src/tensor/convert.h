// Element loads and conversions shared by the CPU and CUDA kernels and Scalar, defined for every
// input: a bool byte is true when it is not 0, and float -> integer gives the integer type's
// minimum for NaN, infinities and out-of-range values (what x86 and so torch on x86 give).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// How an element of T is read from memory. A bool tensor's byte may hold any value (an
// uninitialised tl::empty, bytes written through a uint8 pointer), and loading a byte other than
// 0/1 as a C++ bool is undefined, so bool is read as the byte it is.
template <typename T>
struct StoredOf {
  using type = T;
};
template <>
struct StoredOf<bool> {
  using type = uint8_t;
};
template <typename T>
using Stored = typename StoredOf<T>::type;

// The value of a stored element: for bool, any non-zero byte is true.
template <typename T>
TL_HOST_DEVICE constexpr T from_stored(Stored<T> v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else
    return v;
}

template <typename T>
TL_HOST_DEVICE inline T load(const void* p) {
  return from_stored<T>(*static_cast<const Stored<T>*>(p));
}

// The smallest value of a signed integer type (constexpr on the device without
// std::numeric_limits).
template <typename I>
TL_HOST_DEVICE constexpr I int_min() {
  return static_cast<I>(std::make_unsigned_t<I>{1} << (sizeof(I) * 8 - 1));
}

// Whether x truncated toward zero is a value of the integer type I (false for NaN and
// infinities). The comparisons run in F: 2^(bits-1) is exact in float and double, and where
// -2^(bits-1) - 1 rounds to -2^(bits-1) (float, or int64's bound in double), that value is
// reported as not fitting and still converts to int_min, its own value.
template <typename I, typename F>
TL_HOST_DEVICE constexpr bool float_fits(F x) {
  static_assert(std::is_integral_v<I> && std::is_signed_v<I> && std::is_floating_point_v<F>);
  constexpr F bound = static_cast<F>(uint64_t{1} << (sizeof(I) * 8 - 1));
  return x > -bound - F(1) && x < bound;
}

// static_cast where it is defined, and the rules above where it is not: to bool is v != 0 (NaN is
// true), float -> integer out of range is int_min (cvttss2si / cvttsd2si's "integer indefinite").
// Integer narrowing wraps modulo 2^bits (defined since C++20), as torch's casts do. As torch on
// x86: a float goes to a type narrower than int32 through int32 (300.0 -> uint8 is 44, NaN is 0);
// Half and BFloat16 convert through float both ways (int64 70000 -> float16 is inf).
template <typename To, typename From>
TL_HOST_DEVICE constexpr To convert(From v) {
  if constexpr (std::is_same_v<To, From>)
    return v;
  else if constexpr (is_reduced_float_v<From>)
    return convert<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, bool>)
    return v != From(0);
  else if constexpr (is_reduced_float_v<To>)
    return To(static_cast<float>(v));
  else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From> && sizeof(To) < 4)
    return static_cast<To>(convert<int32_t>(v));
  else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>)
    return float_fits<To>(v) ? static_cast<To>(v) : int_min<To>();
  else
    return static_cast<To>(v);
}

}  // namespace tensorlet

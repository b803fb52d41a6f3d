// Integer arithmetic as PyTorch does it, shared by the CPU and CUDA kernels: Wide<T>, the type
// that wraps on overflow (signed overflow is undefined in C++; an unsigned type wraps in two's
// complement; other types map to themselves), and int_pow.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// Integers compute in the unsigned type of their width, which wraps; 1- and 2-byte ones in
// uint32_t, not in their own unsigned type: that one promotes to int, and int16 * int16 can
// overflow int. Truncating the uint32_t result wraps as torch does. Other types map to themselves.
// Derived from the type alone, so a new integer dtype needs no entry here.
template <typename T>
struct WideOf {
  using type = T;
};
template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct WideOf<T> {
  using type = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

// Integer powers: exact (wrapping) repeated squaring; a negative exponent gives 1 for base 1,
// +-1 for base -1 and 0 otherwise (the front-end rejects negative scalar exponents).
template <typename T>
TL_HOST_DEVICE inline T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 != 0) ? T(-1) : T(1);
      return 0;
    }
  }
  using W = Wide<T>;
  W result = 1, b = static_cast<W>(base);
  while (exp != 0) {
    if (exp & 1) result *= b;
    b *= b;
    exp = static_cast<T>(exp >> 1);
  }
  return static_cast<T>(result);
}

}  // namespace tensorlet

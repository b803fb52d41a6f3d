// The order of sort, topk and kthvalue as unsigned integers, shared by every backend: comparing
// two elements' keys compares the elements as torch does (NaN above everything, -0.0 == 0.0).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// The unsigned key of an element type: one of its width (bool: a byte). Radix sorts run on it,
// so it is no wider than the element.
template <typename T>
using order_key_t =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// How kernels read an element for its key: bool as its byte (any non-zero byte is true), the
// other types as themselves.
template <typename T>
using order_load_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// The key of v: unsigned integers as they are; signed ones with the sign bit flipped; floats by
// their bits (negatives inverted, positives above them), with every NaN the largest key and -0.0
// the key of 0.0, so that equal values have equal keys and ties are ordered by position alone.
template <typename T>
TL_HOST_DEVICE inline order_key_t<T> order_key(order_load_t<T> v) {
  using K = order_key_t<T>;
  constexpr K kSign = static_cast<K>(K{1} << (8 * sizeof(K) - 1));
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<K>(v != 0);
  } else if constexpr (std::is_unsigned_v<T>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<K>(static_cast<K>(v) ^ kSign);
  } else {
    K b;
    if constexpr (is_reduced_float_v<T>)
      b = v.bits;
    else
      std::memcpy(&b, &v, sizeof b);
    // The bits of +inf: exponent all ones, mantissa zero. Anything above it (sign aside) is NaN.
    constexpr uint64_t kInfBits = std::is_same_v<T, Half>       ? 0x7c00
                                  : std::is_same_v<T, BFloat16> ? 0x7f80
                                  : std::is_same_v<T, float>    ? 0x7f800000
                                                                : 0x7ff0000000000000;
    constexpr K kInf = static_cast<K>(kInfBits);
    const K magnitude = static_cast<K>(b & static_cast<K>(~kSign));
    if (magnitude > kInf) return static_cast<K>(~K{0});
    if (magnitude == 0) return kSign;  // -0.0 and 0.0
    return (b & kSign) ? static_cast<K>(~b) : static_cast<K>(b | kSign);
  }
}

// Whether key k names one element exactly, so that a sort may write order_value(k) instead of
// reading the element again: every integer and bool key; every float key but zero's (0.0 and
// -0.0 share it) and NaN's (every NaN shares it), whose elements must be read from the input to
// keep -0.0's sign and a NaN's bits.
template <typename T>
TL_HOST_DEVICE inline bool order_key_exact(order_key_t<T> k) {
  using K = order_key_t<T>;
  if constexpr (is_floating_v<T>) {
    constexpr K kSign = static_cast<K>(K{1} << (8 * sizeof(K) - 1));
    return k != kSign && k != static_cast<K>(~K{0});
  } else {
    return true;
  }
}

// The element whose key is k: order_key's inverse where order_key_exact(k) (bool as 0 or 1).
// For a key that is not exact it is an element of that key (0.0, or a NaN).
template <typename T>
TL_HOST_DEVICE inline order_load_t<T> order_value(order_key_t<T> k) {
  using K = order_key_t<T>;
  using L = order_load_t<T>;
  constexpr K kSign = static_cast<K>(K{1} << (8 * sizeof(K) - 1));
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return static_cast<L>(k);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<L>(static_cast<K>(k ^ kSign));  // two's complement: the bits of v
  } else {
    // Keys with the sign bit set are the non-negative elements (their bits with it set); the
    // others are the negative ones, inverted.
    const K b = (k & kSign) ? static_cast<K>(k & static_cast<K>(~kSign)) : static_cast<K>(~k);
    if constexpr (is_reduced_float_v<T>) {
      return T::from_bits(b);
    } else {
      T v;
      std::memcpy(&v, &b, sizeof v);
      return v;
    }
  }
}

// Descending orders (and topk's largest) sort the inverted keys ascending: a stable sort of them
// keeps equal elements in position order, as torch's stable descending sort does.
template <typename K>
TL_HOST_DEVICE inline K order_flip(bool descending) {
  return descending ? static_cast<K>(~K{0}) : K{0};
}

}  // namespace tensorlet

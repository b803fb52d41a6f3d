// tl::Half (IEEE binary16) and tl::BFloat16 (the top 16 bits of a float32): the element types of
// kFloat16 and kBFloat16. Storage only: every comparison and every operation goes through the
// implicit conversion to float (a Half + a Half is a float), which is what the kernels want: they
// compute in float and round once when they store.
//
// Both are two bytes, trivially copyable, with a trivial default constructor, so an array of them
// has the layout of Eigen::half / __half and Eigen::bfloat16 / __nv_bfloat16 and may be memcpy'd
// or reinterpreted as those.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "tensorlet/tensor/host_device.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif

namespace tensorlet {

namespace half_detail {

// float -> binary16, round to nearest even; a value at or above 65520 (the midpoint between the
// largest float16, 65504, and 2^16) becomes infinity, as IEEE says.
inline uint16_t float_to_half_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  // NaN: a quiet NaN of the same sign with no payload. That is what c10::Half's software
  // conversion gives, so a NaN stored by the CPU has the bits torch would store.
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520, inf
  if (a < 0x38800000u) {
    // Below 2^-14: a float16 subnormal (or zero), m * 2^-24. With the implicit bit the float is
    // mant * 2^(e - 150), so m = mant >> (126 - e), rounded to nearest even.
    const uint32_t e = a >> 23;
    if (e < 102) return sign;  // below 2^-25 (float subnormals included): rounds to zero
    const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;  // a carry into 0x400 is 2^-14, right
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits rounding to nearest even;
  // a carry out of the mantissa correctly bumps the exponent (never to inf, given the test above).
  uint32_t r = a - (112u << 23);
  r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
  return static_cast<uint16_t>(sign | r);
}

// binary16 -> float, exact.
inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  uint32_t u;
  if (e == 0x1F) {
    u = sign | 0x7F800000u | (m << 13);  // inf, or NaN keeping its payload
  } else if (e != 0) {
    u = sign | ((e + 112) << 23) | (m << 13);
  } else if (m == 0) {
    u = sign;  // +-0
  } else {
    // Subnormal m * 2^-24: normalise so that bit 10 is the implicit bit.
    const int lz = std::countl_zero(m) - 21;  // shifts that bring the top set bit to bit 10
    m = (m << lz) & 0x3FFu;
    u = sign | (static_cast<uint32_t>(113 - lz) << 23) | (m << 13);
  }
  return std::bit_cast<float>(u);
}

// float -> bfloat16, round to nearest even. Adding 0x7FFF plus the lowest kept bit carries into
// the kept half exactly when the dropped half is above the midpoint, or at it with an odd kept
// half; the largest floats carry into the exponent and give inf, as IEEE says.
inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  // NaN: 0x7FC0 whatever its sign or payload, as c10::BFloat16's scalar conversion gives
  // (the plain rounding could carry a NaN with a large payload into the sign bit).
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0u;
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace half_detail

struct Half {
  uint16_t bits;

  Half() = default;  // trivial, as for float: uninitialised

  TL_HOST_DEVICE explicit Half(float f) {
#if defined(__CUDA_ARCH__)
    bits = __half_as_ushort(__float2half_rn(f));
#else
    bits = half_detail::float_to_half_bits(f);
#endif
  }
  // Through float, as torch does (c10::Half has no double constructor): a double is rounded
  // twice, so 1 + 2^-11 + 2^-40 gives 1.0 and not 1 + 2^-10, exactly as torch's .to(float16).
  TL_HOST_DEVICE explicit Half(double d) : Half(static_cast<float>(d)) {}
  template <typename I>
  requires std::is_integral_v<I> TL_HOST_DEVICE explicit Half(I i) : Half(static_cast<float>(i)) {}

  // Implicit, as c10::Half: comparisons and arithmetic happen in float.
  TL_HOST_DEVICE operator float() const {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(bits));
#else
    return half_detail::half_bits_to_float(bits);
#endif
  }

  static constexpr TL_HOST_DEVICE Half from_bits(uint16_t b) { return Half(b, BitsTag{}); }

 private:
  struct BitsTag {};
  constexpr TL_HOST_DEVICE Half(uint16_t b, BitsTag) : bits(b) {}
};

struct BFloat16 {
  uint16_t bits;

  BFloat16() = default;  // trivial, as for float: uninitialised

  TL_HOST_DEVICE explicit BFloat16(float f) {
#if defined(__CUDA_ARCH__)
    bits = __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
    bits = half_detail::float_to_bfloat16_bits(f);
#endif
  }
  // Through float, as torch does: a double is rounded twice.
  TL_HOST_DEVICE explicit BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  template <typename I>
  requires std::is_integral_v<I> TL_HOST_DEVICE explicit BFloat16(I i)
      : BFloat16(static_cast<float>(i)) {}

  // Implicit, as c10::BFloat16: comparisons and arithmetic happen in float.
  TL_HOST_DEVICE operator float() const {
#if defined(__CUDA_ARCH__)
    return __bfloat162float(__ushort_as_bfloat16(bits));
#else
    return half_detail::bfloat16_bits_to_float(bits);
#endif
  }

  static constexpr TL_HOST_DEVICE BFloat16 from_bits(uint16_t b) { return BFloat16(b, BitsTag{}); }

 private:
  struct BitsTag {};
  constexpr TL_HOST_DEVICE BFloat16(uint16_t b, BitsTag) : bits(b) {}
};

static_assert(sizeof(Half) == 2 && alignof(Half) == 2);
static_assert(sizeof(BFloat16) == 2 && alignof(BFloat16) == 2);
static_assert(std::is_trivially_copyable_v<Half> && std::is_trivially_copyable_v<BFloat16>);
static_assert(std::is_trivially_default_constructible_v<Half> &&
              std::is_trivially_default_constructible_v<BFloat16>);
static_assert(std::is_standard_layout_v<Half> && std::is_standard_layout_v<BFloat16>);
#if defined(__CUDACC__)
static_assert(sizeof(__half) == sizeof(Half) && alignof(__half) == alignof(Half));
static_assert(sizeof(__nv_bfloat16) == sizeof(BFloat16) &&
              alignof(__nv_bfloat16) == alignof(BFloat16));
#endif

inline std::ostream& operator<<(std::ostream& os, Half h) { return os << static_cast<float>(h); }
inline std::ostream& operator<<(std::ostream& os, BFloat16 b) {
  return os << static_cast<float>(b);
}

}  // namespace tensorlet

namespace std {

// Values as torch's numeric_limits<c10::Half> / <c10::BFloat16> (finfo), built from bits so that
// they are constexpr.
template <>
struct numeric_limits<tensorlet::Half> {
 private:
  using T = tensorlet::Half;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr TL_HOST_DEVICE T min() noexcept { return T::from_bits(0x0400); }  // 2^-14
  static constexpr TL_HOST_DEVICE T lowest() noexcept { return T::from_bits(0xFBFF); }
  static constexpr TL_HOST_DEVICE T max() noexcept { return T::from_bits(0x7BFF); }      // 65504
  static constexpr TL_HOST_DEVICE T epsilon() noexcept { return T::from_bits(0x1400); }  // 2^-10
  static constexpr TL_HOST_DEVICE T round_error() noexcept { return T::from_bits(0x3800); }
  static constexpr TL_HOST_DEVICE T infinity() noexcept { return T::from_bits(0x7C00); }
  static constexpr TL_HOST_DEVICE T quiet_NaN() noexcept { return T::from_bits(0x7E00); }
  static constexpr TL_HOST_DEVICE T signaling_NaN() noexcept { return T::from_bits(0x7D00); }
  static constexpr TL_HOST_DEVICE T denorm_min() noexcept { return T::from_bits(0x0001); }
};

template <>
struct numeric_limits<tensorlet::BFloat16> {
 private:
  using T = tensorlet::BFloat16;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;  // not an IEEE interchange format (c10 says the same)
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr TL_HOST_DEVICE T min() noexcept { return T::from_bits(0x0080); }  // 2^-126
  static constexpr TL_HOST_DEVICE T lowest() noexcept { return T::from_bits(0xFF7F); }
  // 3.38953139e38
  static constexpr TL_HOST_DEVICE T max() noexcept { return T::from_bits(0x7F7F); }
  static constexpr TL_HOST_DEVICE T epsilon() noexcept { return T::from_bits(0x3C00); }  // 2^-7
  static constexpr TL_HOST_DEVICE T round_error() noexcept { return T::from_bits(0x3F00); }
  static constexpr TL_HOST_DEVICE T infinity() noexcept { return T::from_bits(0x7F80); }
  static constexpr TL_HOST_DEVICE T quiet_NaN() noexcept { return T::from_bits(0x7FC0); }
  static constexpr TL_HOST_DEVICE T signaling_NaN() noexcept { return T::from_bits(0x7FA0); }
  static constexpr TL_HOST_DEVICE T denorm_min() noexcept { return T::from_bits(0x0001); }
};

}  // namespace std

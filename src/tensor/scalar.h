// Scalar: a Python-style number (bool, integer or floating) that does not widen a tensor's dtype.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dtype.h"

namespace tensorlet {

class Scalar {
 public:
  Scalar() = default;
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit on purpose, as at::Scalar
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = DTypeKind::Bool;
      i_ = v;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = DTypeKind::Integer;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = DTypeKind::Floating;
      d_ = static_cast<double>(v);
    }
  }

  // tl::Half and tl::BFloat16 values are floating scalars, as torch's item() of a float16 tensor.
  template <typename T, std::enable_if_t<is_reduced_float_v<T>, int> = 0>
  Scalar(T v) : kind_(DTypeKind::Floating), d_(static_cast<float>(v)) {}  // NOLINT: implicit

  DTypeKind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == DTypeKind::Floating; }
  bool is_integral() const { return kind_ == DTypeKind::Integer; }
  bool is_bool() const { return kind_ == DTypeKind::Bool; }

  // The value as a T, by the element conversion rules of tensor/convert.h (defined for every
  // value: integers wrap, out-of-range floats give the integer minimum). Check fits() first where
  // torch refuses such values.
  template <typename T>
  T to() const {
    return kind_ == DTypeKind::Floating ? convert<T>(d_) : convert<T>(i_);
  }

  // Whether the value can be stored in `dtype` without overflow, as torch's checked conversion of
  // fill values: any value fits bool, float64, float16 and bfloat16 (those round to infinity);
  // float32 takes a finite value up to its largest (infinities and NaN fit); a signed integer type
  // takes a float in [min, max + 1) (NaN and infinities do not; the fraction is truncated) and an
  // integer in [min, max]; uint8 takes a float in [0, 256) and an integer in [-255, 255] (a
  // negative one wraps, as torch's overflows<uint8_t>).
  // Derived from the dtype's kind and C++ type, so a new dtype needs no case here.
  bool fits(DType dtype) const {
    if (dtype == kBool || dtype == kFloat64 || is_reduced_float(dtype)) return true;
    if (dtype == kFloat32)
      return kind_ != DTypeKind::Floating || !std::isfinite(d_) ||
             std::abs(d_) <= static_cast<double>(std::numeric_limits<float>::max());
    switch (dtype) {
#define TL_SCALAR_FITS(e, T, name, kind)                     \
  case DType::e:                                             \
    if constexpr (is_integer_v<T>) return fits_integer<T>(); \
    break;
      TL_DTYPES(TL_SCALAR_FITS)
#undef TL_SCALAR_FITS
    }
    return false;
  }

 private:
  template <typename I>
  bool fits_integer() const {
    if constexpr (std::is_unsigned_v<I>) {  // torch's overflows<uint8_t>: negatives wrap
      if (kind_ == DTypeKind::Floating)
        return d_ >= 0 && d_ < static_cast<double>(std::numeric_limits<I>::max()) + 1;
      static_assert(sizeof(I) < 8, "an unsigned 64-bit dtype needs its own integer range check");
      const auto max = static_cast<int64_t>(std::numeric_limits<I>::max());
      return i_ >= -max && i_ <= max;
    } else {
      if (kind_ == DTypeKind::Floating) {
        const double bound = -static_cast<double>(int_min<I>());  // 2^(bits-1), exact
        return d_ >= -bound && d_ < bound;
      }
      return i_ >= std::numeric_limits<I>::min() && i_ <= std::numeric_limits<I>::max();
    }
  }

  DTypeKind kind_ = DTypeKind::Integer;
  int64_t i_ = 0;
  double d_ = 0;
};

inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_floating_point()) return os << s.to<double>();
  if (s.is_bool()) return os << (s.to<bool>() ? "True" : "False");
  return os << s.to<int64_t>();
}

}  // namespace tensorlet

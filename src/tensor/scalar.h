// Scalar: a Python-style number (bool, integer or floating) that does not widen a tensor's dtype.
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "tensor/dtype.h"

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

  DTypeKind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == DTypeKind::Floating; }
  bool is_integral() const { return kind_ == DTypeKind::Integer; }
  bool is_bool() const { return kind_ == DTypeKind::Bool; }

  template <typename T>
  T to() const {
    return kind_ == DTypeKind::Floating ? static_cast<T>(d_) : static_cast<T>(i_);
  }

 private:
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

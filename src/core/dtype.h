// Element types, their sizes and names, and PyTorch's type-promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace tensorlet {

enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64 };

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kDouble = DType::Float64;
inline constexpr DType kInt = DType::Int32;
inline constexpr DType kLong = DType::Int64;

constexpr size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return 1;
    case DType::Int32:
      return 4;
    case DType::Int64:
      return 8;
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
  }
  return 0;
}
const char* dtype_name(DType dtype);  // "float32", ... (as torch.float32 prints without "torch.")
std::ostream& operator<<(std::ostream& os, DType dtype);

inline bool is_floating_point(DType d) { return d == kFloat32 || d == kFloat64; }
inline bool is_integral(DType d, bool include_bool = false) {
  return d == kInt32 || d == kInt64 || (include_bool && d == kBool);
}

// The kind a dtype belongs to, ordered: a higher kind wins promotion regardless of width.
enum class DTypeKind : uint8_t { Bool, Integer, Floating };
inline DTypeKind dtype_kind(DType d) {
  return d == kBool             ? DTypeKind::Bool
         : is_floating_point(d) ? DTypeKind::Floating
                                : DTypeKind::Integer;
}

// promote_types(a, b) as torch.promote_types: the smallest dtype both convert to losslessly.
DType promote_types(DType a, DType b);

// The dtype torch gives to Python scalars / new tensors of a kind: bool, int64, float32.
DType default_dtype_for(DTypeKind kind);

// C++ type <-> DType mapping.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = kBool;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = kInt32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = kInt64;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = kFloat32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = kFloat64;
};
template <typename T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace tensorlet

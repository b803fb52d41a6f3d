// Element types from one list (TL_DTYPES): the enum, names, sizes, kinds, C++ types, the types
// element math runs and accumulates in, and PyTorch's type-promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <type_traits>

#include "tensorlet/tensor/half.h"

namespace tensorlet {

// The dtype list: adding a dtype starts here (ARCHITECTURE.md, "Add a dtype").
// X(enumerator, C++ element type, name as torch prints it without "torch.", kind)
// The enumerators' values are those of the list order; earlier releases' dtypes come first so
// their values do not change.
#define TL_DTYPES(X)                      \
  X(Bool, bool, "bool", Bool)             \
  X(Int32, int32_t, "int32", Integer)     \
  X(Int64, int64_t, "int64", Integer)     \
  X(Float32, float, "float32", Floating)  \
  X(Float64, double, "float64", Floating) \
  X(UInt8, uint8_t, "uint8", Integer)     \
  X(Int8, int8_t, "int8", Integer)        \
  X(Int16, int16_t, "int16", Integer)     \
  X(Float16, Half, "float16", Floating)   \
  X(BFloat16, BFloat16, "bfloat16", Floating)

enum class DType : uint8_t {
#define TL_DTYPE_ENUM(e, T, name, kind) e,
  TL_DTYPES(TL_DTYPE_ENUM)
#undef TL_DTYPE_ENUM
};
inline constexpr int kNumDTypes = 0
#define TL_DTYPE_COUNT(e, T, name, kind) +1
    TL_DTYPES(TL_DTYPE_COUNT)
#undef TL_DTYPE_COUNT
    ;

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kInt16 = DType::Int16;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
// torch's other names: torch.half, torch.short, torch.int, torch.long, torch.float, torch.double.
inline constexpr DType kHalf = DType::Float16;
inline constexpr DType kShort = DType::Int16;
inline constexpr DType kInt = DType::Int32;
inline constexpr DType kLong = DType::Int64;
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kDouble = DType::Float64;

// The kind a dtype belongs to, ordered: a higher kind wins promotion regardless of width.
enum class DTypeKind : uint8_t { Bool, Integer, Floating };

constexpr size_t element_size(DType dtype) {
  switch (dtype) {
#define TL_DTYPE_SIZE(e, T, name, kind) \
  case DType::e:                        \
    return sizeof(T);
    TL_DTYPES(TL_DTYPE_SIZE)
#undef TL_DTYPE_SIZE
  }
  return 0;
}

constexpr DTypeKind dtype_kind(DType dtype) {
  switch (dtype) {
#define TL_DTYPE_KIND(e, T, name, kind) \
  case DType::e:                        \
    return DTypeKind::kind;
    TL_DTYPES(TL_DTYPE_KIND)
#undef TL_DTYPE_KIND
  }
  return DTypeKind::Floating;
}

const char* dtype_name(DType dtype);  // "float32", ... (as torch.float32 prints without "torch.")
std::ostream& operator<<(std::ostream& os, DType dtype);

constexpr bool is_floating_point(DType d) { return dtype_kind(d) == DTypeKind::Floating; }
constexpr bool is_integral(DType d, bool include_bool = false) {
  return dtype_kind(d) == DTypeKind::Integer || (include_bool && d == kBool);
}
// float16 and bfloat16: stored in two bytes, computed in float.
constexpr bool is_reduced_float(DType d) { return d == kFloat16 || d == kBFloat16; }
// Whether the dtype holds negative values (torch's is_signed: false for bool and uint8).
constexpr bool is_signed(DType d) { return d != kBool && d != kUInt8; }

// promote_types(a, b) as torch.promote_types: the smallest dtype both convert to without losing
// their kind (uint8 + int8 -> int16, float16 + bfloat16 -> float32).
DType promote_types(DType a, DType b);

// The dtype torch gives to Python scalars / new tensors of a kind: bool, int64, float32.
DType default_dtype_for(DTypeKind kind);

// A set of dtypes: what an op supports, what a dispatch instantiates (tensor/dispatch.h). A
// structural type (public bits), so a set can be a template argument.
struct DTypeSet {
  uint32_t bits = 0;

  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits |= bit(d);
  }
  constexpr bool contains(DType d) const { return (bits & bit(d)) != 0; }
  constexpr DTypeSet operator|(DTypeSet o) const { return from_bits(bits | o.bits); }
  constexpr DTypeSet operator-(DTypeSet o) const { return from_bits(bits & ~o.bits); }
  constexpr bool operator==(const DTypeSet&) const = default;

 private:
  static constexpr uint32_t bit(DType d) { return uint32_t{1} << static_cast<unsigned>(d); }
  static constexpr DTypeSet from_bits(uint32_t b) {
    DTypeSet s;
    s.bits = b;
    return s;
  }
};

inline constexpr DTypeSet kAllDTypes{
#define TL_DTYPE_ITEM(e, T, name, kind) DType::e,
    TL_DTYPES(TL_DTYPE_ITEM)
#undef TL_DTYPE_ITEM
};
inline constexpr DTypeSet kIntegralDTypes{kUInt8, kInt8, kInt16, kInt32, kInt64};
inline constexpr DTypeSet kFloatingDTypes{kFloat16, kBFloat16, kFloat32, kFloat64};
inline constexpr DTypeSet kNumericDTypes = kIntegralDTypes | kFloatingDTypes;  // all but bool

// ---- C++ element types ----

template <typename T>
inline constexpr bool always_false_v = false;

// C++ type -> DType. Any other type is refused at compile time, naming the supported ones
// (int64_t is `long` here, so `long long` is refused: spell it int64_t).
template <typename T>
struct dtype_of {
  static_assert(always_false_v<T>,
                "tensorlet element types are bool, uint8_t, int8_t, int16_t, int32_t, int64_t, "
                "tl::Half, tl::BFloat16, float and double");
};
#define TL_DTYPE_OF(e, T, name, kind)        \
  template <>                                \
  struct dtype_of<T> {                       \
    static constexpr DType value = DType::e; \
  };
TL_DTYPES(TL_DTYPE_OF)
#undef TL_DTYPE_OF
template <typename T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

// Whether T is the element type of some dtype (no static_assert, for constraints).
template <typename T>
inline constexpr bool is_element_type_v = false;
#define TL_IS_ELEMENT(e, T, name, kind) \
  template <>                           \
  inline constexpr bool is_element_type_v<T> = true;
TL_DTYPES(TL_IS_ELEMENT)
#undef TL_IS_ELEMENT

// DType -> C++ type.
template <DType D>
struct cpp_type_of;
#define TL_CPP_TYPE(e, T, name, kind) \
  template <>                         \
  struct cpp_type_of<DType::e> {      \
    using type = T;                   \
  };
TL_DTYPES(TL_CPP_TYPE)
#undef TL_CPP_TYPE
template <DType D>
using cpp_type_t = typename cpp_type_of<D>::type;

// Element-type predicates for kernels: "floating" includes Half and BFloat16, which
// std::is_floating_point does not.
template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
template <typename T>
inline constexpr bool is_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type element math runs in: float for Half and BFloat16 (loaded, computed in float, rounded
// once when stored, as torch), the element type itself otherwise.
template <typename T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// The type sums and products accumulate in, one meaning on every backend: float for Half and
// BFloat16, double for float (torch's CPU acc_type; on a GPU the extra adds are free next to the
// memory traffic), int64 for integers and bool, double for double.
template <typename T>
using acc_t = std::conditional_t<is_floating_v<T>,
                                 std::conditional_t<is_reduced_float_v<T>, float, double>, int64_t>;

}  // namespace tensorlet

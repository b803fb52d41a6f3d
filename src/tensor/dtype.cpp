// DType names and torch's promotion table, both generated from the dtype list.
#include "tensorlet/tensor/dtype.h"

#include <array>

namespace tensorlet {

const char* dtype_name(DType dtype) {
  switch (dtype) {
#define TL_DTYPE_NAME(e, T, name, kind) \
  case DType::e:                        \
    return name;
    TL_DTYPES(TL_DTYPE_NAME)
#undef TL_DTYPE_NAME
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

namespace {

// torch.promote_types as rules over kinds, widths and signedness; tests/test_promotion.cpp
// checks the table they make against torch's, written out.
constexpr DType promote_rule(DType a, DType b) {
  if (a == b) return a;
  const DTypeKind ka = dtype_kind(a), kb = dtype_kind(b);
  if (ka != kb) return ka > kb ? a : b;  // bool < integer < floating, whatever the widths
  if (ka == DTypeKind::Floating) {
    // The two 16-bit formats hold different ranges and precisions: neither holds the other.
    if (is_reduced_float(a) && is_reduced_float(b)) return kFloat32;
    return element_size(a) >= element_size(b) ? a : b;
  }
  // Integers: uint8 meets a signed type; the signed type holds it when it is wider than a byte.
  if (a == kUInt8 || b == kUInt8) {
    const DType other = a == kUInt8 ? b : a;
    return element_size(other) > 1 ? other : kInt16;
  }
  return element_size(a) >= element_size(b) ? a : b;
}

constexpr auto make_promotion_table() {
  std::array<std::array<DType, kNumDTypes>, kNumDTypes> table{};
  for (int i = 0; i < kNumDTypes; ++i)
    for (int j = 0; j < kNumDTypes; ++j)
      table[i][j] = promote_rule(static_cast<DType>(i), static_cast<DType>(j));
  return table;
}
constexpr auto kPromotion = make_promotion_table();

}  // namespace

DType promote_types(DType a, DType b) {
  return kPromotion[static_cast<size_t>(a)][static_cast<size_t>(b)];
}

DType default_dtype_for(DTypeKind kind) {
  switch (kind) {
    case DTypeKind::Bool:
      return kBool;
    case DTypeKind::Integer:
      return kInt64;
    case DTypeKind::Floating:
      return kFloat32;
  }
  return kFloat32;
}

}  // namespace tensorlet

// DType names, sizes and promotion.
#include "core/dtype.h"

namespace tensorlet {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case kBool:
      return "bool";
    case kInt32:
      return "int32";
    case kInt64:
      return "int64";
    case kFloat32:
      return "float32";
    case kFloat64:
      return "float64";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  DTypeKind ka = dtype_kind(a), kb = dtype_kind(b);
  if (ka != kb) return ka > kb ? a : b;
  // Same kind, different width: the wider one.
  return element_size(a) >= element_size(b) ? a : b;
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

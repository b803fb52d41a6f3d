// IValue's kind names and its typed error.
#include "tensorlet/autograd/ivalue.h"

namespace tensorlet {

std::string IValue::tagKind() const {
  static const char* const kinds[] = {"None",   "Bool",    "Int",        "Double",    "String",
                                      "Tensor", "IntList", "DoubleList", "TensorList"};
  return kinds[value_.index()];
}

void IValue::fail_kind(const char* method, const char* kind) const {
  const std::string api = std::string("tl::IValue::") + method;
  fail<DTypeError>(api.c_str(), "Expected ", kind, " but got ", tagKind());
}

}  // namespace tensorlet

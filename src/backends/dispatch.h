// dispatch_dtype: calls a generic lambda with the C++ type of a runtime DType.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/error.h"

namespace tensorlet {

// f is a C++20 template lambda: [&]<typename T>() { ... }.
template <typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case kBool:
      return f.template operator()<bool>();
    case kInt32:
      return f.template operator()<int32_t>();
    case kInt64:
      return f.template operator()<int64_t>();
    case kFloat32:
      return f.template operator()<float>();
    case kFloat64:
      return f.template operator()<double>();
  }
  fail<DTypeError>("tl::dispatch", "unknown dtype");
}

}  // namespace tensorlet

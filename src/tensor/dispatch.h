// The one dtype dispatcher of CPU and CUDA code: calls a template lambda with the C++ element type
// of a runtime DType, instantiating it only for the dtypes of a compile-time set.
#pragma once

#include <cstdint>

#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {

// f is a C++20 template lambda: [&]<typename T>() { ... }, instantiated for each dtype of
// `Supported`. Another dtype throws DTypeError naming the user's op (`op` outside any op).
template <DTypeSet Supported = kAllDTypes, typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f, const char* op = "tl::dispatch") {
  switch (dtype) {
#define TL_DISPATCH_CASE(e, T, name, kind)                                         \
  case DType::e:                                                                   \
    if constexpr (Supported.contains(DType::e)) return f.template operator()<T>(); \
    break;
    TL_DTYPES(TL_DISPATCH_CASE)
#undef TL_DISPATCH_CASE
  }
  fail<DTypeError>(profiler::user_op_or(op), "not supported for dtype ", dtype);
}

// Calls f.template operator()<U>() with the unsigned integer type of an element size: copies,
// fills, gathers and concatenations move bits, so every dtype of one size shares one kernel.
template <typename F>
decltype(auto) dispatch_bits(size_t element_size, F&& f, const char* op = "tl::dispatch") {
  switch (element_size) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
  }
  fail<DTypeError>(profiler::user_op_or(op), "unsupported element size ", element_size);
}

}  // namespace tensorlet

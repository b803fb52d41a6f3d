// The checked maker of tensors over memory the library does not own: from_blob, from_dlpack and
// the file loaders that map files build on it.
#pragma once

#include <functional>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {
namespace detail {

// The checked maker under from_blob, from_dlpack and the file loaders; `op` names the public
// function in errors, and the caller opens its profiler::OpScope. `release` runs as from_blob's
// deleter (not when this throws).
Tensor wrap_external(const char* op, void* data, const Shape& sizes, const Shape& strides,
                     DType dtype, Device device, std::function<void(void*)> release);

}  // namespace detail
}  // namespace tensorlet

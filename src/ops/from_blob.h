// tl::from_blob: tensors over memory the caller owns, host or device, with LibTorch's overloads.
#pragma once

#include <functional>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Wraps `data` (not copied) as a tensor of `sizes`, contiguous or with `strides` (in elements,
// non-negative), of options' dtype on options' device (CPU unless told). The memory must stay
// valid while any view of the tensor lives; `deleter`, when given, runs once the last view is gone
// (for GPU memory, after the work enqueued on that GPU so far has finished); when from_blob throws
// it has not taken the memory and the deleter does not run. GPU memory must be
// said to be on its own device, and host memory on the CPU (DeviceError otherwise; managed memory
// goes either way). The elements must fit the address space: ShapeError when the strided extent
// overflows, tl::Error for a null `data` under a non-empty shape.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& options = {});

}  // namespace tensorlet

// TensorMap: named tensors, as .npz archives and safetensors files hold them (sorted by name).
#pragma once

#include <map>
#include <string>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

using TensorMap = std::map<std::string, Tensor>;

}  // namespace tensorlet

// Joining: cat, stack, vstack, hstack, dstack (each one many-input copy) and atleast_Nd.
#pragma once

#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor vstack(const std::vector<Tensor>& tensors);  // cat of atleast_2d along 0
Tensor hstack(const std::vector<Tensor>& tensors);  // along 1, or 0 for 1-D inputs
Tensor dstack(const std::vector<Tensor>& tensors);  // cat of atleast_3d along 2
Tensor atleast_1d(const Tensor& a);
Tensor atleast_2d(const Tensor& a);
Tensor atleast_3d(const Tensor& a);

}  // namespace tensorlet

// Broadcasting: the common shape of several tensors by NumPy's rules.
#pragma once

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// The broadcast of two shapes; throws ShapeError naming `op` when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// True when `from` broadcasts to exactly `to` (`from` aligned on the right, its dims 1 or equal).
bool broadcasts_to(const Shape& from, const Shape& to);

}  // namespace tensorlet

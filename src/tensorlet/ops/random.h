// Random numbers from a counter-based Philox4x32-10 stream, defined so every backend can
// produce the same numbers for the same seed, call order and shape.
#pragma once

#include <cstdint>

#include "tensorlet/core/tensor.h"

namespace tensorlet {

// Seeds the default generator of every device and rewinds its offset to 0.
void manual_seed(uint64_t seed);

// Uniform in [0, 1).
Tensor rand(const Shape& shape, TensorOptions options = {});
// Standard normal.
Tensor randn(const Shape& shape, TensorOptions options = {});
// Integers in [low, high); int64 unless told.
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions options = {});
Tensor randint(int64_t high, const Shape& shape, TensorOptions options = {});

}  // namespace tensorlet

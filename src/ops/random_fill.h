// Internal to the random ops: which generator a call draws from, and the one place that reserves
// Philox blocks and fills a tensor through its device's backend.
#pragma once

#include <optional>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/generator.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::detail {

// `gen` when given (DeviceError naming op unless it serves `device`'s type), else the default
// generator of `device`'s type.
Generator generator_for(const std::optional<Generator>& gen, Device device, const char* op);

// Reserves the blocks `out`'s elements need (philox.h's layouts: two words per element for
// float64, or for integers whose range exceeds 32 bits; normals in pairs) and fills `out` (any
// strides: a non-contiguous one is filled through a contiguous copy, in its element order).
void fill_random(RandomParams params, const Tensor& out, const Generator& gen);

// Throws DTypeError naming op unless [low, high - 1] are values of dtype (randint and random_).
void check_int_range_fits(int64_t low, int64_t high, DType dtype, const char* op);

}  // namespace tensorlet::detail

namespace tensorlet::detail {

// bernoulli's draw into `out` (any dtype, checked writable): out = (u < p) for float64 uniforms u,
// p a floating tensor broadcast to out's shape (p_tensor) or the number p; every p in [0, 1]
// (ShapeError naming op; NaN too).
void bernoulli_into(const Tensor& out, const Tensor* p_tensor, double p,
                    const std::optional<Generator>& gen, const char* op);

}  // namespace tensorlet::detail

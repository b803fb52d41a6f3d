// Scans along a dim, as torch's: cumsum, cumprod, cummax, cummin.
#pragma once

#include <cstdint>
#include <optional>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// torch.cumsum / torch.cumprod along dim (a 0-dim tensor takes 0 and -1). The result dtype is
// `dtype` when given (the input is converted to it first; bool is refused, as torch's kernels
// do), else int64 for bool and integer inputs, else the input's. Running values accumulate in
// double for float32/float64, in float for float16/bfloat16 (each output rounded once), in
// int64 for integers (wrapping on overflow, then each output wrapped to the result dtype).
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

// torch.cummax / torch.cummin along dim: the running max/min and the int64 position it was taken
// from. Every dtype. As torch: ties give the LAST position of the running extreme; from the first
// NaN on the values are NaN and the index is the position of the most recent NaN.
// auto [v, i] = tl::cummax(x, 1);
ValuesIndices cummax(const Tensor& x, int64_t dim);
ValuesIndices cummin(const Tensor& x, int64_t dim);

}  // namespace tensorlet

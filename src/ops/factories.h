// Factories: empty, zeros, ones, full, arange, linspace, eye, from_vector and the *_like family.
#pragma once

#include <optional>
#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Sizes are an IntArrayRef (tensor/int_array_ref.h), as in LibTorch: `tl::zeros({2, 3})`,
// `tl::zeros(5)` (one dim), `tl::zeros(x.shape())`.

Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
// dtype defaults to the fill value's kind (bool, int64 or float32), as torch.full.
Tensor full(IntArrayRef size, Scalar value, TensorOptions options = {});
// 0-dim tensor holding value.
Tensor scalar_tensor(Scalar value, TensorOptions options = {});
// [start, end) by step; int64 when all bounds are integers, else float32, unless told.
Tensor arange(Scalar end, TensorOptions options = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, TensorOptions options = {});
Tensor linspace(double start, double end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});

// Copies values (row-major) into a new tensor of `shape` (1-D of values.size() when empty). T is
// the element type of a dtype (bool, uint8_t, ..., tl::Half, tl::BFloat16, float, double);
// another type does not compile (ElementType, tensor/tensor.h).
template <ElementType T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef shape = {},
                   Device device = Device::cpu());

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& t, Scalar value,
                 std::optional<TensorOptions> options = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);

}  // namespace tensorlet

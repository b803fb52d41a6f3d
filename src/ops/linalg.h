// Matrix products with PyTorch's rules: matmul (1-D, 2-D, batched with broadcast), mm, bmm, linear.
#pragma once

#include <optional>

#include "core/tensor.h"

namespace tensorlet {

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // [n, k] @ [k, m]
Tensor bmm(const Tensor& a, const Tensor& b);  // [B, n, k] @ [B, k, m]
Tensor dot(const Tensor& a, const Tensor& b);  // 1-D . 1-D -> 0-dim
// linear(x, w, b) = x @ w.T + b, w: [out, in], b: [out].
Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b = std::nullopt);

}  // namespace tensorlet

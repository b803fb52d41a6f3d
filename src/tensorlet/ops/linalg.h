// Matrix products with PyTorch's rules: matmul (1-D, 2-D, batched with broadcast), mm, bmm, linear.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tensorlet/core/tensor.h"

namespace tensorlet {

Tensor matmul(const Tensor& a, const Tensor& b);
// matmul into `out` (an empty one is resized, as torch; otherwise it must have the result's
// shape): no allocation when out is contiguous, of the operands' dtype and apart from them.
Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // [n, k] @ [k, m]
Tensor bmm(const Tensor& a, const Tensor& b);  // [B, n, k] @ [B, k, m]
Tensor dot(const Tensor& a, const Tensor& b);  // 1-D . 1-D -> 0-dim
// linear(x, w, b) = x @ w.T + b, w: [out, in], b: [out].
Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b = std::nullopt);

// float32 matmul precision, as torch.set_float32_matmul_precision: "highest" (the default: full
// float32), "high" (TF32 tensor cores allowed) or "medium" (bfloat16-level precision allowed;
// the CUDA backend uses TF32 for it, as PyTorch's cuBLAS path does). The CPU always computes
// in full float32. Another string throws tl::Error. tl::cuda::set_allow_tf32 is a view of the
// same setting. float16/bfloat16 products always accumulate in float32, whatever the setting.
void set_float32_matmul_precision(std::string_view precision);
std::string get_float32_matmul_precision();

}  // namespace tensorlet

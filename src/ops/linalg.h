// Matrix products with PyTorch's rules: matmul (1-D, 2-D, batched with broadcast), mm, bmm, linear.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorlet/tensor/tensor.h"

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

// outer(a, b)[i][j] = a[i] * b[j] of two 1-D tensors, dtypes promoted as tl::mul (torch.outer).
Tensor outer(const Tensor& a, const Tensor& b);

// addmm: beta * input + alpha * (mat1 @ mat2), mat1 [n, k], mat2 [k, m], input broadcast to
// [n, m]; one dtype for all three (no promotion, as torch), any but bool. beta = 0 ignores input
// (NaN there does not propagate) and alpha = 0 the product, as BLAS; for integer dtypes alpha and
// beta must be integral and fit the dtype. One GEMM with alpha and beta after input is copied
// into the result.
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
             Scalar alpha = 1);
// addmm into `out`, as matmul_out: an empty one is resized; no allocation when out is
// contiguous, of the result's dtype and apart from mat1 and mat2 (input may be out itself).
Tensor& addmm_out(Tensor& out, const Tensor& input, const Tensor& mat1, const Tensor& mat2,
                  Scalar beta = 1, Scalar alpha = 1);
// baddbmm: beta * input + alpha * bmm(batch1, batch2), batch1 [B, n, k], batch2 [B, k, m],
// input broadcast to [B, n, m]; otherwise as addmm.
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta = 1,
               Scalar alpha = 1);

// torch.einsum: "ij,jk->ik" (explicit output) or "ij,jk" (implicit: the labels appearing once,
// in alphabetical order, uppercase first, after the ellipsis dims); "..." broadcasts
// dims; a label repeated in one operand takes its diagonal; labels missing from the output are
// summed; size-1 dims broadcast; spaces are ignored. Contracted left to right in pairs, each one
// batched matmul of permuted, reshaped operands (as torch without opt_einsum). Operands share
// one dtype and device; bool only for a single operand (as a permute or a sum).
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);

// float32 matmul precision, as torch.set_float32_matmul_precision: "highest" (the default: full
// float32), "high" (TF32 tensor cores allowed) or "medium" (bfloat16-level precision allowed;
// the CUDA backend uses TF32 for it, as PyTorch's cuBLAS path does). The CPU always computes
// in full float32. Another string throws tl::Error. tl::cuda::set_allow_tf32 is a view of the
// same setting. float16/bfloat16 products always accumulate in float32, whatever the setting.
void set_float32_matmul_precision(std::string_view precision);
std::string get_float32_matmul_precision();

}  // namespace tensorlet

// The float32 matmul precision setting (tl::set_float32_matmul_precision), kept below the op layer
// so every backend can read it; tl::cuda::set_allow_tf32 is another view of the same setting.
#pragma once

namespace tensorlet {

// As PyTorch: Highest computes float32 products in full float32; High lets them use TF32 tensor
// cores; Medium allows bfloat16-level internal precision (the CUDA backend uses TF32 for it, as
// PyTorch's cuBLAS path does).
enum class MatmulPrecision { Highest, High, Medium };

void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();

}  // namespace tensorlet

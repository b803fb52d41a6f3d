// Matmul on CUDA: cuBLAS, and a small-matrix kernel (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void matmul(const Tensor&, const Tensor&, const Tensor&) { fail<DeviceError>("tl::matmul", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

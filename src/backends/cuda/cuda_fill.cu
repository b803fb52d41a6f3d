// Fill of any strided CUDA tensor (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void fill(const Tensor&, Scalar) { fail<DeviceError>("tl::fill_", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

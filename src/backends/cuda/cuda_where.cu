// where(cond, a, b) on CUDA (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { fail<DeviceError>("tl::where", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

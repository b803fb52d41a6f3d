// Same-device strided copy with dtype conversion (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void copy_same_device(const Tensor&, const Tensor&) { fail<DeviceError>("tl::copy_", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

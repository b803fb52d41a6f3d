// Device-side Philox random numbers (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void random(const RandomParams&, const Tensor&) { fail<DeviceError>("tl::rand", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

// Elementwise binary ops on CUDA (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void binary(BinaryOp op, const Tensor&, const Tensor&, const Tensor&) { fail<DeviceError>(binary_op_name(op), "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

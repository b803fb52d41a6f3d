// Elementwise unary ops on CUDA (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void unary(UnaryOp op, const Tensor&, const Tensor&) { fail<DeviceError>(unary_op_name(op), "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

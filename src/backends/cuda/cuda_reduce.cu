// Reductions and arg reductions on CUDA (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

void reduce(ReduceOp, const Tensor&, const std::vector<bool>&, const Tensor&) { fail<DeviceError>("tl::sum", "not implemented on CUDA yet"); }
void arg_reduce(ArgReduceOp, const Tensor&, std::optional<int64_t>, const Tensor&) { fail<DeviceError>("tl::argmax", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

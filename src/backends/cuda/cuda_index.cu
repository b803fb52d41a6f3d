// nonzero, masked_select, index_select and gather on CUDA (placeholder until its kernels land).
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {

Tensor nonzero(const Tensor&) { fail<DeviceError>("tl::nonzero", "not implemented on CUDA yet"); }
Tensor masked_select(const Tensor&, const Tensor&) { fail<DeviceError>("tl::masked_select", "not implemented on CUDA yet"); }
void index_select(const Tensor&, int64_t, const Tensor&, const Tensor&) { fail<DeviceError>("tl::index_select", "not implemented on CUDA yet"); }
void gather(const Tensor&, int64_t, const Tensor&, const Tensor&) { fail<DeviceError>("tl::gather", "not implemented on CUDA yet"); }

}  // namespace tensorlet::cuda

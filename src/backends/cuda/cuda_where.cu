// where(cond, a, b) on CUDA: out = cond ? a : b, with broadcast and strided operands.
#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

struct WhereOp {
  template <typename U>
  __device__ __forceinline__ U operator()(bool c, U a, U b) const {
    return c ? a : b;
  }
};

}  // namespace

void where(const Tensor& cond, const ElementwiseArg& a, const ElementwiseArg& b,
           const Tensor& out) {
  if (out.numel() == 0) return;
  // Selecting moves bits, so dtypes of one size share a kernel; a scalar input goes as its bits in
  // out's dtype.
  const KernelInput x = kernel_input(a, out.dtype()), y = kernel_input(b, out.dtype());
  dispatch_bits(out.element_size(), [&]<typename U>() {
    Elementwise<U, bool, U, U>::run(WhereOp{}, out, {&cond, x, y});
  });
}

}  // namespace tensorlet::cuda

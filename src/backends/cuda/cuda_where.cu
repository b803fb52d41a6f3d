// where(cond, a, b) on CUDA: out = cond ? a : b, with broadcast and strided operands.
#include "backends/cuda/cuda_elementwise.cuh"
#include "backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

struct WhereOp {
  template <typename U>
  __device__ __forceinline__ U operator()(bool c, U a, U b) const {
    return c ? a : b;
  }
};

}  // namespace

void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  // Selecting moves bits, so dtypes of one size share a kernel.
  dispatch_bits(out.element_size(), [&]<typename U>() {
    Elementwise<U, bool, U, U>::run(WhereOp{}, out, {&cond, &a, &b});
  });
}

}  // namespace tensorlet::cuda

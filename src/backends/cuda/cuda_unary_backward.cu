// The unary ops' gradients on CUDA, one Elementwise launch of (grad, saved) -> out around the
// element function of backends/math/unary_backward_ops.h (shared with the CPU): float32 ops get a
// kernel each, as cuda_unary.cu's, the other floating dtypes share one kernel per dtype behind a
// runtime switch.
#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/unary_backward_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {
namespace {

// One op on float32 in a kernel of its own, loading 2 vectors of each input per thread before it
// computes: the forward's choice (cuda_unary.cu), which keeps the math-heavy gradients (gelu,
// silu) at the copy rate of their three streams; behind a switch their registers would be the
// costliest op's.
template <typename Fn>
struct Float32Backward {
  static constexpr int kVectorsPerThread = 2;
  __device__ __forceinline__ float operator()(float g, float saved) const { return Fn{}(g, saved); }
};

// Every op with a backward kernel on T (float64, float16, bfloat16), computed in compute_t<T>.
template <typename T>
struct BackwardGroup {
  UnaryOp op;
  __device__ __forceinline__ T operator()(T g, T saved) const {
    switch (op) {
#define TL_BACKWARD_CASE(e, saved_kind, Fn) \
  case UnaryOp::e:                          \
    return InComputeType<T, math::Fn>{}(g, saved);
      TL_UNARY_BACKWARD_OPS(TL_BACKWARD_CASE)
#undef TL_BACKWARD_CASE
      default:
        break;
    }
    return T{};  // not reached: the host sends only ops with a kernel
  }
};

// The dtypes of the switch kernels (a named constant: nvcc refuses a host constexpr expression in
// the template arguments that reach device code).
inline constexpr DTypeSet kGroupDTypes = kFloatingDTypes - DTypeSet{kFloat32};

}  // namespace

void unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved, const Tensor& out) {
  if (out.numel() == 0) return;
  if (!has_backward_kernel(op))
    fail<Error>("tl::autograd::backward", unary_op_name(op), " has no backward kernel");
  if (out.dtype() == kFloat32) {
    switch (op) {
#define TL_BACKWARD_FLOAT32(e, saved_kind, Fn) \
  case UnaryOp::e:                             \
    return Elementwise<float, float, float>::run(Float32Backward<math::Fn>{}, out, {&grad, &saved});
      TL_UNARY_BACKWARD_OPS(TL_BACKWARD_FLOAT32)
#undef TL_BACKWARD_FLOAT32
      default:
        return;
    }
  }
  dispatch_dtype<kGroupDTypes>(
      out.dtype(),
      [&]<typename T>() {
        Elementwise<T, T, T>::run(BackwardGroup<T>{op}, out, {&grad, &saved});
      },
      "tl::autograd::backward");
}

}  // namespace tensorlet::cuda

// The binary ops' gradients on CUDA, one Elementwise launch of (grad, a, b) -> out around the
// element function of backends/math/binary_backward_ops.h (shared with the CPU): float32 gets a
// kernel per gradient, the other floating dtypes one kernel per dtype behind a runtime switch (as
// cuda_unary_backward.cu).
#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/binary_backward_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {
namespace {

template <typename Fn>
struct Float32Gradient {
  __device__ __forceinline__ float operator()(float g, float a, float b) const {
    return Fn{}(g, a, b);
  }
};

// Every gradient with a kernel on T (float64, float16, bfloat16), computed in compute_t<T>.
template <typename T>
struct GradientGroup {
  BinaryGradient which;
  __device__ __forceinline__ T operator()(T g, T a, T b) const {
    switch (which) {
#define TL_BACKWARD_CASE(e, name, Fn) \
  case BinaryGradient::e:             \
    return InComputeType<T, math::Fn>{}(g, a, b);
      TL_BINARY_BACKWARD_OPS(TL_BACKWARD_CASE)
#undef TL_BACKWARD_CASE
    }
    return T{};
  }
};

inline constexpr DTypeSet kGroupDTypes = kFloatingDTypes - DTypeSet{kFloat32};

}  // namespace

void binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b,
                     const Tensor& out) {
  if (out.numel() == 0) return;
  if (out.dtype() == kFloat32) {
    switch (which) {
#define TL_BACKWARD_FLOAT32(e, name, Fn)                                                  \
  case BinaryGradient::e:                                                                 \
    return Elementwise<float, float, float, float>::run(Float32Gradient<math::Fn>{}, out, \
                                                        {&grad, &a, &b});
      TL_BINARY_BACKWARD_OPS(TL_BACKWARD_FLOAT32)
#undef TL_BACKWARD_FLOAT32
    }
    return;
  }
  dispatch_dtype<kGroupDTypes>(
      out.dtype(),
      [&]<typename T>() {
        Elementwise<T, T, T, T>::run(GradientGroup<T>{which}, out, {&grad, &a, &b});
      },
      "tl::autograd::backward");
}

}  // namespace tensorlet::cuda

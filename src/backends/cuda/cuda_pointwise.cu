// CUDA kernels of the pointwise ops with parameters: lerp, isclose, nan_to_num, each one
// Elementwise launch of the element functor of backends/math/pointwise_ops.h (shared with the CPU).
#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/math/pointwise_ops.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cuda {

void lerp(const Tensor& start, const Tensor& end, const ElementwiseArg& weight, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kFloatingDTypes>(
      out.dtype(),
      [&]<typename T>() {
        if (weight.is_scalar()) {
          const math::LerpScalarFn<T> f{weight.scalar.to<compute_t<T>>()};
          Elementwise<T, T, T>::run(f, out, {&start, &end});
        } else {
          Elementwise<T, T, T, T>::run(math::LerpFn<T>{}, out, {&start, &end, weight.tensor});
        }
      },
      "tl::lerp");
}

void isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
             const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kAllDTypes>(
      a.dtype(),
      [&]<typename T>() {
        Elementwise<bool, T, T>::run(math::IsCloseFn<T>{rtol, atol, equal_nan}, out, {&a, &b});
      },
      "tl::isclose");
}

void nan_to_num(const Tensor& in, Scalar nan, Scalar posinf, Scalar neginf, const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kFloatingDTypes>(
      out.dtype(),
      [&]<typename T>() {
        const math::NanToNumFn<T> f{nan.to<T>(), posinf.to<T>(), neginf.to<T>()};
        Elementwise<T, T>::run(f, out, {&in});
      },
      "tl::nan_to_num");
}

}  // namespace tensorlet::cuda

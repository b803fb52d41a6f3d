// CPU kernels of the pointwise ops with parameters: lerp, isclose, nan_to_num, each a strided
// loop over the element functor of backends/math/pointwise_ops.h (shared with CUDA).
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/pointwise_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// out[i] = f(in_0[i], ..., in_{N-2}[i]) over same-shape (broadcast) operands of element type In,
// out of type Out; a contiguous run gets a plain indexed loop.
template <typename Out, typename In, int N, typename F>
void pointwise_kernel(const std::array<const Tensor*, N>& ops, const F& f, int64_t grain) {
  StridedLoop<N>(ops).run(
      [&f](std::array<char*, N> p, std::array<int64_t, N> s, int64_t n) {
        auto at = [&]<size_t... I>(int64_t i, std::index_sequence<I...>) {
          return f(load<In>(p[I + 1] + i * s[I + 1])...);
        };
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<Out*>(p[0] + i * s[0]) = at(i, std::make_index_sequence<N - 1>{});
      },
      grain);
}

}  // namespace

void CpuBackend::lerp(const Tensor& start, const Tensor& end, const ElementwiseArg& weight,
                      const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kFloatingDTypes>(
      out.dtype(),
      [&]<typename T>() {
        if (weight.is_scalar()) {
          const math::LerpScalarFn<T> f{weight.scalar.to<compute_t<T>>()};
          pointwise_kernel<T, T, 3>({&out, &start, &end}, f, kGrainSize);
        } else {
          pointwise_kernel<T, T, 4>({&out, &start, &end, weight.tensor}, math::LerpFn<T>{},
                                    kGrainSize);
        }
      },
      "tl::lerp");
}

void CpuBackend::isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
                         const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kAllDTypes>(
      a.dtype(),
      [&]<typename T>() {
        pointwise_kernel<bool, T, 3>({&out, &a, &b}, math::IsCloseFn<T>{rtol, atol, equal_nan},
                                     kGrainSize);
      },
      "tl::isclose");
}

void CpuBackend::nan_to_num(const Tensor& in, Scalar nan, Scalar posinf, Scalar neginf,
                            const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_dtype<kFloatingDTypes>(
      out.dtype(),
      [&]<typename T>() {
        const math::NanToNumFn<T> f{nan.to<T>(), posinf.to<T>(), neginf.to<T>()};
        pointwise_kernel<T, T, 2>({&out, &in}, f, kGrainSize);
      },
      "tl::nan_to_num");
}

}  // namespace tensorlet::cpu

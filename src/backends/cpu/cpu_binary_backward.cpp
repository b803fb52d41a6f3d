// CPU kernels of the binary ops' gradients: one strided loop per gradient and floating dtype around
// the element function of backends/math/binary_backward_ops.h (shared with CUDA).
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/binary_backward_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// Three loads per element and, for pow, two libm calls: threads pay off below the copy grain.
constexpr int64_t kBackwardGrain = kGrainSize / 4;

// out[i] = Fn(grad[i], a[i], b[i]) computed in compute_t<T>; a run where all four are contiguous
// gets a plain indexed loop the compiler can vectorize (a broadcast operand has stride 0 and takes
// the strided one).
template <typename T, typename Fn>
void backward_kernel(const StridedLoop<4>& loop) {
  loop.run(
      [](std::array<char*, 4> p, std::array<int64_t, 4> s, int64_t n) {
        const InComputeType<T, Fn> f;
        constexpr int64_t e = sizeof(T);
        if (s[0] == e && s[1] == e && s[2] == e && s[3] == e) {
          T* out = reinterpret_cast<T*>(p[0]);
          const T* g = reinterpret_cast<const T*>(p[1]);
          const T* a = reinterpret_cast<const T*>(p[2]);
          const T* b = reinterpret_cast<const T*>(p[3]);
          for (int64_t i = 0; i < n; ++i) out[i] = f(g[i], a[i], b[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                f(load<T>(p[1] + i * s[1]), load<T>(p[2] + i * s[2]), load<T>(p[3] + i * s[3]));
        }
      },
      kBackwardGrain);
}

template <typename Fn>
void run_gradient(const StridedLoop<4>& loop, DType dtype) {
  dispatch_dtype<kFloatingDTypes>(
      dtype, [&]<typename T>() { backward_kernel<T, Fn>(loop); }, "tl::autograd::backward");
}

}  // namespace

void CpuBackend::binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a,
                                 const Tensor& b, const Tensor& out) {
  StridedLoop<4> loop({&out, &grad, &a, &b});
  if (loop.numel() == 0) return;
  switch (which) {
#define TL_BACKWARD_CASE(e, name, Fn) \
  case BinaryGradient::e:             \
    return run_gradient<math::Fn>(loop, out.dtype());
    TL_BINARY_BACKWARD_OPS(TL_BACKWARD_CASE)
#undef TL_BACKWARD_CASE
  }
}

}  // namespace tensorlet::cpu

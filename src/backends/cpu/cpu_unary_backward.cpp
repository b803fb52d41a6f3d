// CPU kernels of the unary ops' gradients: one strided loop per op and floating dtype around the
// element function of backends/math/unary_backward_ops.h (shared with CUDA).
#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/backends/math/unary_backward_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// Two loads per element and, for many ops, a libm call: threads pay off below the copy grain.
constexpr int64_t kBackwardGrain = kGrainSize / 4;

// out[i] = Fn(grad[i], saved[i]) computed in compute_t<T>; a run where all three are contiguous
// gets a plain indexed loop the compiler can vectorize.
template <typename T, typename Fn>
void backward_kernel(const StridedLoop<3>& loop) {
  loop.run(
      [](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t n) {
        const InComputeType<T, Fn> f;
        constexpr int64_t e = sizeof(T);
        if (s[0] == e && s[1] == e && s[2] == e) {
          T* out = reinterpret_cast<T*>(p[0]);
          const T* g = reinterpret_cast<const T*>(p[1]);
          const T* v = reinterpret_cast<const T*>(p[2]);
          for (int64_t i = 0; i < n; ++i) out[i] = f(g[i], v[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                f(load<T>(p[1] + i * s[1]), load<T>(p[2] + i * s[2]));
        }
      },
      kBackwardGrain);
}

template <typename Fn>
void run_op(const StridedLoop<3>& loop, DType dtype) {
  dispatch_dtype<kFloatingDTypes>(
      dtype, [&]<typename T>() { backward_kernel<T, Fn>(loop); }, "tl::autograd::backward");
}

}  // namespace

void CpuBackend::unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved,
                                const Tensor& out) {
  StridedLoop<3> loop({&out, &grad, &saved});
  if (loop.numel() == 0) return;
  switch (op) {
#define TL_BACKWARD_CASE(e, saved_kind, Fn) \
  case UnaryOp::e:                          \
    return run_op<math::Fn>(loop, out.dtype());
    TL_UNARY_BACKWARD_OPS(TL_BACKWARD_CASE)
#undef TL_BACKWARD_CASE
    default:
      fail<Error>("tl::autograd::backward", unary_op_name(op), " has no backward kernel");
  }
}

}  // namespace tensorlet::cpu

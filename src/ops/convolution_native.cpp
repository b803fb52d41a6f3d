// tl::conv2d through Backend::conv2d_forward (cuDNN on CUDA), and the im2col gradient formulas
// its node falls back on.
#include "tensorlet/ops/convolution_native.h"

#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/window.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::detail {

namespace {

Window2d window_of(const Conv2dArgs& a, int64_t kh, int64_t kw, int64_t in_h, int64_t in_w) {
  return make_window({kh, kw}, {a.stride[0], a.stride[1]}, {a.padding[0], a.padding[1]},
                     {a.dilation[0], a.dilation[1]}, in_h, in_w, false, "tl::conv2d");
}

}  // namespace

Tensor native_conv2d(const Tensor& x, const Tensor& weight, const Conv2dArgs& args,
                     const Shape& y_shape) {
  Backend& backend = backend_for(x.device());
  if (!backend.has_conv2d(x.dtype()) || x.numel() == 0 || weight.numel() == 0) return {};
  const bool record = autograd::should_record({&x, &weight});
  const Tensor y = make_tensor(y_shape, x.dtype(), x.device());
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    if (!backend.conv2d_forward(x.contiguous(), weight.contiguous(), args, y)) return {};
  }
  if (record) autograd::record_conv2d(x, weight, args, y);
  return y;
}

Tensor conv2d_input_grad(const Tensor& g, const Tensor& weight, const Conv2dArgs& args,
                         const Shape& x_shape, DType dtype) {
  const Window2d w = window_of(args, weight.size(2), weight.size(3), x_shape[2], x_shape[3]);
  const int64_t n = x_shape[0], groups = args.groups, og = weight.size(0) / groups;
  const int64_t k = weight.size(1) * w.taps(), l = w.positions();
  // [g, k, O/g] @ [N, g, O/g, L] -> the columns' gradient [N, g, k, L] = [N, C, taps, L].
  const Tensor cols =
      matmul(weight.reshape({groups, og, k}).transpose(-1, -2), g.reshape({n, groups, og, l}));
  return window_columns_adjoint(cols.reshape({n, x_shape[1], w.taps(), l}), w, x_shape, dtype);
}

Tensor conv2d_weight_grad(const Tensor& g, const Tensor& x, const Conv2dArgs& args,
                          const Shape& w_shape) {
  const Window2d w = window_of(args, w_shape[2], w_shape[3], x.size(2), x.size(3));
  const int64_t n = x.size(0), groups = args.groups, og = w_shape[0] / groups;
  const int64_t k = w_shape[1] * w.taps(), l = w.positions();
  const Tensor cols = window_columns(x, w, 0.0).reshape({n, groups, k, l});
  // sum over the batch of [N, g, O/g, L] @ [N, g, L, k] -> [g, O/g, k].
  return sum(matmul(g.reshape({n, groups, og, l}), cols.transpose(-1, -2)), {0}).reshape(w_shape);
}

}  // namespace tensorlet::detail

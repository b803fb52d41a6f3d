// tl::conv2d: the backend's own convolution where it has one (cuDNN: ops/convolution_native.cpp),
// else im2col + matmul: every window gathered by one index_select, then one batched matmul per
// group, all recorded ops (so on every device and differentiable twice).
#include "tensorlet/ops/convolution.h"

#include "tensorlet/tensor/autocast.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/convolution_native.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/window.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {

namespace {

constexpr const char* kOp = "tl::conv2d";

void check_operands(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t groups) {
  check_defined(input, kOp);
  check_defined(weight, kOp);
  TL_CHECK(input.dim() == 3 || input.dim() == 4, ShapeError, kOp,
           "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ",
           input.shape());
  TL_CHECK(weight.dim() == 4, ShapeError, kOp,
           "expected a 4-D weight [out_channels, in_channels / groups, kH, kW], got ",
           weight.shape());
  TL_CHECK(groups >= 1, ShapeError, kOp, "non-positive groups is not supported, got ", groups);
  TL_CHECK(is_floating_point(input.dtype()), DTypeError, kOp,
           "expected a floating point input, got ", input.dtype());
  TL_CHECK(weight.dtype() == input.dtype(), DTypeError, kOp, "Input type (", input.dtype(),
           ") and weight type (", weight.dtype(), ") should be the same");
  TL_CHECK(weight.device() == input.device(), DeviceError, kOp, "Input (", input.device(),
           ") and weight (", weight.device(), ") should be on the same device");
  const int64_t out_channels = weight.size(0);
  const int64_t channels = input.size(input.dim() - 3);
  // torch wants at least `groups` output channels (a weight of 0 gives no empty result there).
  TL_CHECK(out_channels >= groups, ShapeError, kOp, "Given groups=", groups,
           ", expected weight to be at least ", groups, " at dimension 0, but got weight of size ",
           weight.shape(), " instead");
  TL_CHECK(out_channels % groups == 0, ShapeError, kOp,
           "out_channels must be divisible by groups, got weight of size ", weight.shape(),
           " and groups=", groups);
  TL_CHECK(channels == weight.size(1) * groups, ShapeError, kOp, "Given groups=", groups,
           ", weight of size ", weight.shape(), ", expected input", input.shape(), " to have ",
           weight.size(1) * groups, " channels, but got ", channels, " channels instead");
  if (!bias.defined()) return;
  TL_CHECK(bias.dim() == 1 && bias.size(0) == out_channels, ShapeError, kOp,
           "expected a bias of shape [", out_channels, "], got ", bias.shape());
  TL_CHECK(bias.dtype() == input.dtype(), DTypeError, kOp, "Input type (", input.dtype(),
           ") and bias type (", bias.dtype(), ") should be the same");
  TL_CHECK(bias.device() == input.device(), DeviceError, kOp, "Input (", input.device(),
           ") and bias (", bias.device(), ") should be on the same device");
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  if (autocast_detail::applies(input) || autocast_detail::applies(weight)) [[unlikely]] {
    const Tensor li = autocast_detail::to_lower(input), lw = autocast_detail::to_lower(weight),
                 lb = autocast_detail::to_lower(bias);
    autocast_detail::InsideOp inside;
    return conv2d(li, lw, lb, stride, padding, dilation, groups);
  }
  profiler::OpScope scope(kOp);
  scope.inputs({&input, &weight});
  check_operands(input, weight, bias, groups);
  const auto s = detail::expand_pair(stride, "stride", kOp);
  const auto p = detail::expand_pair(padding, "padding", kOp);
  const auto d = detail::expand_pair(dilation, "dilation", kOp);
  const bool batched = input.dim() == 4;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), o = weight.size(0);
  const detail::Window2d w = detail::make_window({weight.size(2), weight.size(3)}, s, p, d,
                                                 x.size(2), x.size(3), false, kOp);
  const Conv2dArgs args{{s[0], s[1]}, {p[0], p[1]}, {d[0], d[1]}, groups};
  Tensor native = detail::native_conv2d(x, weight, args, Shape({n, o, w.out_h, w.out_w}));
  if (native.defined()) {
    if (bias.defined()) native = native + bias.view({1, o, 1, 1});
    return batched ? native : native.squeeze(0);
  }
  const int64_t cg = c / groups, og = o / groups, k = cg * w.taps(), l = w.positions();
  // [N, C, taps, L] -> [N, groups, C/g * taps, L]; weight [O, C/g, kH, kW] -> [g, O/g, C/g*taps].
  const Tensor cols = detail::window_columns(x, w, 0.0).view({n, groups, k, l});
  Tensor out = matmul(weight.reshape({groups, og, k}), cols).view({n, o, w.out_h, w.out_w});
  if (bias.defined()) out = out + bias.view({1, o, 1, 1});
  return batched ? out : out.squeeze(0);
}

}  // namespace tensorlet

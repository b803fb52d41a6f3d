// tl::nn::Conv2d: option checks, torch's default initialization, forward's checks naming the
// layer, and torch's printed form.
#include "tensorlet/nn/conv.h"
#include "tensorlet/tensor/autocast.h"

#include <cmath>

#include "tensorlet/ops/convolution.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/ops/window.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn {
namespace {

constexpr const char* kOptions = "tl::nn::Conv2dOptions";
constexpr const char* kCtor = "tl::nn::Conv2d";
constexpr const char* kForward = "tl::nn::Conv2d::forward";

void print_pair(std::ostream& s, const std::array<int64_t, 2>& v) {
  s << "(" << v[0] << ", " << v[1] << ")";
}

}  // namespace

Conv2dOptions::Conv2dOptions(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size)
    : in_channels_(in_channels),
      out_channels_(out_channels),
      kernel_size_(detail::expand_pair(kernel_size, "kernel_size", kOptions)) {}
Conv2dOptions& Conv2dOptions::stride(IntArrayRef v) {
  stride_ = detail::expand_pair(v, "stride", kOptions);
  return *this;
}
Conv2dOptions& Conv2dOptions::padding(IntArrayRef v) {
  padding_ = detail::expand_pair(v, "padding", kOptions);
  return *this;
}
Conv2dOptions& Conv2dOptions::dilation(IntArrayRef v) {
  dilation_ = detail::expand_pair(v, "dilation", kOptions);
  return *this;
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_, TensorOptions tensor_options)
    : options(options_) {
  const Conv2dOptions& o = options;
  TL_CHECK(o.in_channels() >= 0 && o.out_channels() >= 0, ShapeError, kCtor,
           "expected non-negative in_channels and out_channels, got ", o.in_channels(), " and ",
           o.out_channels());
  TL_CHECK(o.groups() >= 1, ShapeError, kCtor, "groups must be a positive integer, got ",
           o.groups());
  TL_CHECK(o.in_channels() % o.groups() == 0, ShapeError, kCtor,
           "in_channels must be divisible by groups, got in_channels=", o.in_channels(),
           ", groups=", o.groups());
  TL_CHECK(o.out_channels() % o.groups() == 0, ShapeError, kCtor,
           "out_channels must be divisible by groups, got out_channels=", o.out_channels(),
           ", groups=", o.groups());
  for (int i = 0; i < 2; ++i) {
    TL_CHECK(o.kernel_size()[i] >= 1, ShapeError, kCtor, "kernel_size must be positive, got (",
             o.kernel_size()[0], ", ", o.kernel_size()[1], ")");
    TL_CHECK(o.stride()[i] >= 1, ShapeError, kCtor, "stride must be positive");
    TL_CHECK(o.padding()[i] >= 0, ShapeError, kCtor, "padding must be non-negative");
    TL_CHECK(o.dilation()[i] >= 1, ShapeError, kCtor, "dilation must be positive");
  }
  TL_CHECK(is_floating_point(tensor_options.dtype()), DTypeError, kCtor,
           "expected a floating-point dtype for the parameters, got ", tensor_options.dtype());
  const Shape shape{o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()[0],
                    o.kernel_size()[1]};
  NoGradGuard no_grad;
  weight = register_parameter("weight", empty(shape, tensor_options));
  bias =
      register_parameter("bias", o.bias() ? empty({o.out_channels()}, tensor_options) : Tensor());
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  NoGradGuard no_grad;
  // torch: kaiming_uniform_(a=sqrt(5)) gives the bound 1 / sqrt(fan_in); the bias the same.
  const int64_t fan_in = weight.size(1) * weight.size(2) * weight.size(3);
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  weight.uniform_(-bound, bound);
  if (bias.defined()) bias.uniform_(-bound, bound);
}

Tensor Conv2dImpl::forward(const Tensor& x) const {
  check_defined(x, kForward);
  TL_CHECK(x.dim() == 3 || x.dim() == 4, ShapeError, kForward,
           "expected input of shape [N, C, H, W] or [C, H, W], got ", x.shape());
  TL_CHECK(x.size(x.dim() - 3) == options.in_channels(), ShapeError, kForward, "expected input ",
           x.shape(), " to have ", options.in_channels(), " channels, but got ",
           x.size(x.dim() - 3), " channels instead");
  // Under autocast the convolution casts both (torch's Conv2d leaves that to F.conv2d too).
  TL_CHECK(x.dtype() == weight.dtype() || autocast_detail::applies(x), DTypeError, kForward,
           "expected input of dtype ", weight.dtype(), " (the layer's), got ", x.dtype());
  TL_CHECK(x.device() == weight.device(), DeviceError, kForward, "expected input on ",
           weight.device(), " (the layer's device), got ", x.device());
  return conv2d(x, weight, bias, options.stride(), options.padding(), options.dilation(),
                options.groups());
}

void Conv2dImpl::pretty_print(std::ostream& stream) const {
  const Conv2dOptions& o = options;
  stream << "Conv2d(" << o.in_channels() << ", " << o.out_channels() << ", kernel_size=";
  print_pair(stream, o.kernel_size());
  stream << ", stride=";
  print_pair(stream, o.stride());
  if (o.padding() != std::array<int64_t, 2>{0, 0}) {
    stream << ", padding=";
    print_pair(stream, o.padding());
  }
  if (o.dilation() != std::array<int64_t, 2>{1, 1}) {
    stream << ", dilation=";
    print_pair(stream, o.dilation());
  }
  if (o.groups() != 1) stream << ", groups=" << o.groups();
  if (!o.bias()) stream << ", bias=False";
  stream << ")";
}

}  // namespace tensorlet::nn

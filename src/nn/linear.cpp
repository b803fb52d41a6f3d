// tl::nn::Linear: initialization from tensorlet's generator, argument checks naming the layer,
// forward through tl::linear and torch's printed form.
#include "tensorlet/nn/linear.h"
#include "tensorlet/tensor/autocast.h"

#include <cmath>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn {
namespace {

constexpr const char* kCtor = "tl::nn::Linear";
constexpr const char* kForward = "tl::nn::Linear::forward";

// Uniform in [-bound, bound) from the default generator, with options' dtype and device.
Tensor uniform(const Shape& shape, double bound, TensorOptions options) {
  return (rand(shape, options) * 2.0 - 1.0) * bound;
}

// torch's kaiming_uniform_(a=sqrt(5)) bound, gain * sqrt(3 / fan_in), is 1 / sqrt(fan_in); its
// bias uses the same bound, and 0 for a layer without inputs.
double init_bound(int64_t in_features) {
  return in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
}

}  // namespace

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool bias,
                       TensorOptions tensor_options)
    : LinearImpl(LinearOptions(in_features, out_features).bias(bias), tensor_options) {}

LinearImpl::LinearImpl(const LinearOptions& options_, TensorOptions tensor_options)
    : options(options_) {
  TL_CHECK(options.in_features() >= 0 && options.out_features() >= 0, ShapeError, kCtor,
           "expected non-negative in_features and out_features, got in_features=",
           options.in_features(), ", out_features=", options.out_features());
  TL_CHECK(is_floating_point(tensor_options.dtype()), DTypeError, kCtor,
           "expected a floating-point dtype for the parameters, got ", tensor_options.dtype());
  const double bound = init_bound(options.in_features());
  NoGradGuard no_grad;
  weight = register_parameter(
      "weight", uniform({options.out_features(), options.in_features()}, bound, tensor_options));
  bias = register_parameter(
      "bias", options.bias() ? uniform({options.out_features()}, bound, tensor_options) : Tensor());
}

void LinearImpl::reset_parameters() {
  NoGradGuard no_grad;
  const double bound = init_bound(options.in_features());
  const TensorOptions like = TensorOptions(weight.dtype()).device(weight.device());
  weight.copy_(uniform(weight.shape(), bound, like));
  if (bias.defined()) bias.copy_(uniform(bias.shape(), bound, like));
}

Tensor LinearImpl::forward(const Tensor& x) const {
  if (bias.defined()) return forward({weight, bias}, x);
  return forward({weight}, x);
}

Tensor LinearImpl::forward(const std::vector<Tensor>& params, const Tensor& x) const {
  const bool has_bias = bias.defined();
  const size_t expected = has_bias ? 2 : 1;
  TL_CHECK(params.size() == expected, Error, kForward, "expected ", expected, " parameter",
           expected == 1 ? " (weight)" : "s (weight, bias)", ", got ", params.size());
  for (const Tensor& p : params) check_defined(p, kForward);
  const Tensor& w = params[0];
  TL_CHECK(w.dim() == 2 && w.size(0) == out_features() && w.size(1) == in_features(), ShapeError,
           kForward, "expected a weight of shape [", out_features(), ", ", in_features(), "], got ",
           w.shape());
  if (has_bias)
    TL_CHECK(params[1].dim() == 1 && params[1].size(0) == out_features(), ShapeError, kForward,
             "expected a bias of shape [", out_features(), "], got ", params[1].shape());
  check_defined(x, kForward);
  TL_CHECK(x.dim() >= 1 && x.size(-1) == in_features(), ShapeError, kForward,
           "expected an input whose last dim is in_features=", in_features(), ", got shape ",
           x.shape());
  TL_CHECK(x.device() == w.device(), DeviceError, kForward, "expected the input on ", w.device(),
           " (the parameters' device), got ", x.device());
  // Under autocast the product casts both (torch's Linear leaves that to F.linear too).
  TL_CHECK(x.dtype() == w.dtype() || autocast_detail::applies(x), DTypeError, kForward,
           "expected a ", w.dtype(), " input (the parameters' dtype), got ", x.dtype());
  return has_bias ? linear(x, w, params[1]) : linear(x, w);
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "Linear(in_features=" << in_features() << ", out_features=" << out_features()
         << ", bias=" << (bias.defined() ? "True" : "False") << ")";
}

}  // namespace tensorlet::nn

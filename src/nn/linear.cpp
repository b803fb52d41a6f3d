// tl::nn::Linear: initialisation from tensorlet's generator, argument checks naming the layer,
// forward through tl::linear, device moves and torch's printed form.
#include "tensorlet/nn/linear.h"

#include <cmath>

#include "tensorlet/tensor/error.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/random.h"

namespace tensorlet::nn {
namespace {

constexpr const char* kCtor = "tl::nn::Linear";
constexpr const char* kForward = "tl::nn::Linear::forward";

// Uniform in [-bound, bound) from the default generator, with options' dtype and device.
Tensor uniform(const Shape& shape, double bound, TensorOptions options) {
  return (rand(shape, options) * 2.0 - 1.0) * bound;
}

}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, TensorOptions options)
    : in_features_(in_features), out_features_(out_features) {
  TL_CHECK(in_features >= 0 && out_features >= 0, ShapeError, kCtor,
           "expected non-negative in_features and out_features, got in_features=", in_features,
           ", out_features=", out_features);
  TL_CHECK(is_floating_point(options.dtype()), DTypeError, kCtor,
           "expected a floating-point dtype for the parameters, got ", options.dtype());
  // torch's kaiming_uniform_(a=sqrt(5)) bound, gain * sqrt(3 / fan_in), is 1 / sqrt(fan_in); its
  // bias uses the same bound, and 0 for a layer without inputs.
  const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  weight_ = uniform({out_features, in_features}, bound, options);
  if (bias) bias_ = uniform({out_features}, bound, options);
}

Tensor Linear::forward(const Tensor& x) const {
  if (bias_) return forward({weight_, *bias_}, x);
  return forward({weight_}, x);
}

Tensor Linear::forward(const std::vector<Tensor>& params, const Tensor& x) const {
  const size_t expected = bias_ ? 2 : 1;
  TL_CHECK(params.size() == expected, Error, kForward, "expected ", expected, " parameter",
           expected == 1 ? " (weight)" : "s (weight, bias)", ", got ", params.size());
  for (const Tensor& p : params) check_defined(p, kForward);
  const Tensor& w = params[0];
  TL_CHECK(w.dim() == 2 && w.size(0) == out_features_ && w.size(1) == in_features_, ShapeError,
           kForward, "expected a weight of shape [", out_features_, ", ", in_features_, "], got ",
           w.shape());
  if (bias_)
    TL_CHECK(params[1].dim() == 1 && params[1].size(0) == out_features_, ShapeError, kForward,
             "expected a bias of shape [", out_features_, "], got ", params[1].shape());
  check_defined(x, kForward);
  TL_CHECK(x.dim() >= 1 && x.size(-1) == in_features_, ShapeError, kForward,
           "expected an input whose last dim is in_features=", in_features_, ", got shape ",
           x.shape());
  TL_CHECK(x.device() == w.device(), DeviceError, kForward, "expected the input on ", w.device(),
           " (the parameters' device), got ", x.device());
  TL_CHECK(x.dtype() == w.dtype(), DTypeError, kForward, "expected a ", w.dtype(),
           " input (the parameters' dtype), got ", x.dtype());
  return bias_ ? linear(x, w, params[1]) : linear(x, w);
}

std::vector<Tensor> Linear::parameters() const {
  if (bias_) return {weight_, *bias_};
  return {weight_};
}

Linear& Linear::to(Device device) {
  weight_ = weight_.to(device);
  if (bias_) bias_ = bias_->to(device);
  return *this;
}

std::ostream& operator<<(std::ostream& os, const Linear& layer) {
  return os << "Linear(in_features=" << layer.in_features()
            << ", out_features=" << layer.out_features()
            << ", bias=" << (layer.bias() ? "True" : "False") << ")";
}

}  // namespace tensorlet::nn

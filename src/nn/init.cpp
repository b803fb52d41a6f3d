// torch.nn.init's formulas: bounds and standard deviations from the fans and the gain, the
// values drawn in place by Tensor::uniform_ / normal_ under no-grad.
#include "tensorlet/nn/init.h"

#include <cmath>
#include <utility>

#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn::init {

namespace {

void check_floating(const Tensor& t, const char* op) {
  check_defined(t, op);
  TL_CHECK(is_floating_point(t.dtype()), DTypeError, op, "expected a floating point tensor, got ",
           t.dtype());
}

Fans fans_of(const Tensor& t, const char* op) {
  check_defined(t, op);
  TL_CHECK(t.dim() >= 2, ShapeError, op,
           "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got "
           "shape ",
           t.shape(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double fan_for(const Tensor& t, FanMode mode, const char* op) {
  const Fans f = fans_of(t, op);
  return static_cast<double>(mode == FanMode::FanIn ? f.fan_in : f.fan_out);
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param) {
  switch (nonlinearity) {
    case Nonlinearity::Tanh:
      return 5.0 / 3.0;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: {
      const double slope = param.value_or(0.01);
      return std::sqrt(2.0 / (1 + slope * slope));
    }
    case Nonlinearity::SELU:
      return 3.0 / 4.0;
    default:
      return 1.0;
  }
}

Fans calculate_fan_in_and_fan_out(const Tensor& tensor) {
  return fans_of(tensor, "tl::nn::init::calculate_fan_in_and_fan_out");
}

Tensor uniform_(Tensor tensor, double low, double high) {
  check_floating(tensor, "tl::nn::init::uniform_");
  NoGradGuard no_grad;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_floating(tensor, "tl::nn::init::normal_");
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, Scalar value) {
  check_defined(tensor, "tl::nn::init::constant_");
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor xavier_uniform_(Tensor tensor, double gain) {
  constexpr const char* op = "tl::nn::init::xavier_uniform_";
  check_floating(tensor, op);
  const Fans f = fans_of(tensor, op);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(f.fan_in + f.fan_out));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  constexpr const char* op = "tl::nn::init::xavier_normal_";
  check_floating(tensor, op);
  const Fans f = fans_of(tensor, op);
  return normal_(std::move(tensor), 0,
                 gain * std::sqrt(2.0 / static_cast<double>(f.fan_in + f.fan_out)));
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  constexpr const char* op = "tl::nn::init::kaiming_uniform_";
  check_floating(tensor, op);
  const double fan = fan_for(tensor, mode, op);
  // An empty tensor has nothing to draw (torch warns and returns it).
  if (fan == 0) return tensor;
  const double bound = std::sqrt(3.0) * calculate_gain(nonlinearity, a) / std::sqrt(fan);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  constexpr const char* op = "tl::nn::init::kaiming_normal_";
  check_floating(tensor, op);
  const double fan = fan_for(tensor, mode, op);
  if (fan == 0) return tensor;
  return normal_(std::move(tensor), 0, calculate_gain(nonlinearity, a) / std::sqrt(fan));
}

}  // namespace tensorlet::nn::init

// tl::nn::init: torch.nn.init's in-place initializers (uniform_, normal_, constant_, zeros_,
// ones_, xavier_*, kaiming_*), the fan and gain they use, drawn from tensorlet's generator.
#pragma once

#include <optional>

#include "tensorlet/tensor/scalar.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity {
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU,
  SELU
};
inline constexpr FanMode kFanIn = FanMode::FanIn;
inline constexpr FanMode kFanOut = FanMode::FanOut;
inline constexpr Nonlinearity kLinear = Nonlinearity::Linear;
inline constexpr Nonlinearity kSigmoid = Nonlinearity::Sigmoid;
inline constexpr Nonlinearity kTanh = Nonlinearity::Tanh;
inline constexpr Nonlinearity kReLU = Nonlinearity::ReLU;
inline constexpr Nonlinearity kLeakyReLU = Nonlinearity::LeakyReLU;
inline constexpr Nonlinearity kSELU = Nonlinearity::SELU;

// torch.nn.init.calculate_gain: 1 for linear and convolutions and sigmoid, 5/3 tanh, sqrt(2)
// relu, sqrt(2 / (1 + slope^2)) leaky_relu (slope default 0.01), 3/4 selu.
double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param = std::nullopt);

struct Fans {
  int64_t fan_in, fan_out;
};
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (the product of the
// dims past the second). Error naming the caller for fewer than 2 dims.
Fans calculate_fan_in_and_fan_out(const Tensor& tensor);

// Each fills `tensor` in place, outside autograd, and returns it. Error for an undefined or
// non-floating tensor (constant_, zeros_ and ones_ take any dtype).
Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
Tensor xavier_uniform_(Tensor tensor, double gain = 1);
Tensor xavier_normal_(Tensor tensor, double gain = 1);
// a: the negative slope of the leaky_relu that follows (torch's default 0).
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanMode mode = kFanIn,
                        Nonlinearity nonlinearity = kLeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanMode mode = kFanIn,
                       Nonlinearity nonlinearity = kLeakyReLU);

}  // namespace tensorlet::nn::init

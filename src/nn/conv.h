// tl::nn::Conv2d: torch.nn.Conv2d as a Module (Conv2dImpl behind the TL_MODULE holder), its
// LibTorch-style options, torch's initialization and printed form; forward runs tl::conv2d.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/tensor.h"
#include "tensorlet/tensor/tensor_options.h"

namespace tensorlet::nn {

// LibTorch's Conv2dOptions: Conv2dOptions(1, 6, 5).padding(2). kernel_size, stride, padding and
// dilation take one value for both dims or {H, W} (ShapeError naming tl::nn::Conv2dOptions for
// another length).
class Conv2dOptions {
 public:
  Conv2dOptions(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size);
  Conv2dOptions& stride(IntArrayRef v);
  Conv2dOptions& padding(IntArrayRef v);
  Conv2dOptions& dilation(IntArrayRef v);
  Conv2dOptions& groups(int64_t v) {
    groups_ = v;
    return *this;
  }
  Conv2dOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const std::array<int64_t, 2>& kernel_size() const { return kernel_size_; }
  const std::array<int64_t, 2>& stride() const { return stride_; }
  const std::array<int64_t, 2>& padding() const { return padding_; }
  const std::array<int64_t, 2>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_channels_, out_channels_;
  std::array<int64_t, 2> kernel_size_, stride_{1, 1}, padding_{0, 0}, dilation_{1, 1};
  int64_t groups_ = 1;
  bool bias_ = true;
};

// weight [out_channels, in_channels / groups, kH, kW] and bias [out_channels] (undefined without
// one), parameters that require grad, drawn as torch's default: uniform in +-1/sqrt(fan_in),
// fan_in = in_channels / groups * kH * kW. `tensor_options` picks their dtype and device.
class Conv2dImpl : public Module {
 public:
  // Throws ShapeError for channels or kernel sizes below 1 (0 channels allowed), groups that do
  // not divide both channel counts; DTypeError for a non-floating dtype; naming tl::nn::Conv2d.
  explicit Conv2dImpl(const Conv2dOptions& options, TensorOptions tensor_options = {});
  Conv2dImpl(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size,
             TensorOptions tensor_options = {})
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size), tensor_options) {}

  void reset_parameters();
  // x [N, in_channels, H, W] or [in_channels, H, W]. ShapeError, DTypeError, DeviceError naming
  // tl::nn::Conv2d::forward for input that does not fit the layer.
  Tensor forward(const Tensor& x) const;
  // Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2)), as torch prints it.
  void pretty_print(std::ostream& stream) const override;

  Conv2dOptions options;
  Tensor weight;
  Tensor bias;
};

TL_MODULE(Conv2d);

}  // namespace tensorlet::nn

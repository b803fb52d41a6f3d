// tl::nn::MaxPool2d, AvgPool2d and AdaptiveAvgPool2d: torch.nn's pooling layers as Modules with
// LibTorch-style options and torch's printed form; forward runs ops/pooling.h.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn {

// Sizes keep the form given (one value or {H, W}) for printing, as torch's modules do; stride
// defaults to kernel_size. Values are checked when the layer runs (tl::max_pool2d's errors).
class MaxPool2dOptions {
 public:
  MaxPool2dOptions(IntArrayRef kernel_size) : kernel_size_(kernel_size.vec()) {}  // NOLINT
  MaxPool2dOptions& stride(IntArrayRef v) {
    stride_ = v.vec();
    return *this;
  }
  MaxPool2dOptions& padding(IntArrayRef v) {
    padding_ = v.vec();
    return *this;
  }
  MaxPool2dOptions& dilation(IntArrayRef v) {
    dilation_ = v.vec();
    return *this;
  }
  MaxPool2dOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }
  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_.empty() ? kernel_size_ : stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

 private:
  std::vector<int64_t> kernel_size_, stride_, padding_{0}, dilation_{1};
  bool ceil_mode_ = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(const MaxPool2dOptions& options_) : options(options_) {}
  explicit MaxPool2dImpl(IntArrayRef kernel_size) : options(kernel_size) {}
  Tensor forward(const Tensor& x) const;
  // MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  void pretty_print(std::ostream& stream) const override;
  MaxPool2dOptions options;
};
TL_MODULE(MaxPool2d);

class AvgPool2dOptions {
 public:
  AvgPool2dOptions(IntArrayRef kernel_size) : kernel_size_(kernel_size.vec()) {}  // NOLINT
  AvgPool2dOptions& stride(IntArrayRef v) {
    stride_ = v.vec();
    return *this;
  }
  AvgPool2dOptions& padding(IntArrayRef v) {
    padding_ = v.vec();
    return *this;
  }
  AvgPool2dOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }
  AvgPool2dOptions& count_include_pad(bool v) {
    count_include_pad_ = v;
    return *this;
  }
  AvgPool2dOptions& divisor_override(std::optional<int64_t> v) {
    divisor_override_ = v;
    return *this;
  }
  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_.empty() ? kernel_size_ : stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }
  std::optional<int64_t> divisor_override() const { return divisor_override_; }

 private:
  std::vector<int64_t> kernel_size_, stride_, padding_{0};
  bool ceil_mode_ = false, count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(const AvgPool2dOptions& options_) : options(options_) {}
  explicit AvgPool2dImpl(IntArrayRef kernel_size) : options(kernel_size) {}
  Tensor forward(const Tensor& x) const;
  // AvgPool2d(kernel_size=2, stride=2, padding=0)
  void pretty_print(std::ostream& stream) const override;
  AvgPool2dOptions options;
};
TL_MODULE(AvgPool2d);

class AdaptiveAvgPool2dOptions {
 public:
  AdaptiveAvgPool2dOptions(IntArrayRef output_size) : output_size_(output_size.vec()) {}  // NOLINT
  const std::vector<int64_t>& output_size() const { return output_size_; }

 private:
  std::vector<int64_t> output_size_;
};

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options_) : options(options_) {}
  explicit AdaptiveAvgPool2dImpl(IntArrayRef output_size) : options(output_size) {}
  Tensor forward(const Tensor& x) const;
  // AdaptiveAvgPool2d(output_size=(1, 1))
  void pretty_print(std::ostream& stream) const override;
  AdaptiveAvgPool2dOptions options;
};
TL_MODULE(AdaptiveAvgPool2d);

}  // namespace tensorlet::nn

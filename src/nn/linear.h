// tl::nn::Linear: torch.nn.Linear's layer y = x W^T + b, its parameters, device moves and
// printed form, without autograd.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "tensorlet/tensor/tensor.h"
#include "tensorlet/tensor/tensor_options.h"

namespace tensorlet::nn {

// weight is [out_features, in_features], bias [out_features]; both drawn from tensorlet's
// generator (tl::manual_seed) uniformly in [-1/sqrt(in_features), 1/sqrt(in_features)), the
// distribution torch's default initialisation gives (0 when in_features is 0). `options` picks
// their dtype and device (float32 on the CPU unless told).
class Linear {
 public:
  // Throws ShapeError for a negative in_features or out_features.
  Linear(int64_t in_features, int64_t out_features, bool bias = true, TensorOptions options = {});

  // x of shape [..., in_features] on the parameters' device and dtype -> [..., out_features].
  // Throws ShapeError (a last dim other than in_features, a 0-dim x), DeviceError, DTypeError,
  // each naming tl::nn::Linear::forward.
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  // The same layer computed with `params` in place of its own (weight, then bias if it has one):
  // what tl::DataParallel runs on each device's copy of the parameters.
  Tensor forward(const std::vector<Tensor>& params, const Tensor& x) const;

  // weight, then bias when the layer has one. Tensors share storage, as torch's parameters do:
  // an in-place change to one changes the layer.
  std::vector<Tensor> parameters() const;
  // Moves the parameters to `device` in place and returns *this, as torch's Module.to does.
  Linear& to(Device device);
  Linear& cuda(int index = 0) { return to(Device::cuda(index)); }
  Linear& cpu() { return to(Device::cpu()); }

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  const Tensor& weight() const { return weight_; }
  const std::optional<Tensor>& bias() const { return bias_; }
  Device device() const { return weight_.device(); }

 private:
  int64_t in_features_;
  int64_t out_features_;
  Tensor weight_;
  std::optional<Tensor> bias_;
};

// Linear(in_features=10, out_features=1, bias=True), as torch prints the module.
std::ostream& operator<<(std::ostream& os, const Linear& layer);

}  // namespace tensorlet::nn

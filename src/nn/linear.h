// tl::nn::Linear: torch.nn.Linear's layer y = x W^T + b as a Module (LinearImpl behind the
// TL_MODULE holder Linear), its options, torch's initialization and printed form.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/tensor.h"
#include "tensorlet/tensor/tensor_options.h"

namespace tensorlet::nn {

// LibTorch's LinearOptions: LinearOptions(784, 10).bias(false).
class LinearOptions {
 public:
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& in_features(int64_t v) {
    in_features_ = v;
    return *this;
  }
  LinearOptions& out_features(int64_t v) {
    out_features_ = v;
    return *this;
  }
  LinearOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

// weight is [out_features, in_features], bias [out_features] (undefined without one): registered
// parameters that require grad, drawn from tensorlet's generator (tl::manual_seed) uniformly in
// [-1/sqrt(in_features), 1/sqrt(in_features)), the distribution torch's default initialization
// gives (0 when in_features is 0). `tensor_options` picks their dtype and device (float32 on the
// CPU unless told), a tensorlet extension of LibTorch's constructor.
class LinearImpl : public Module {
 public:
  // Throws ShapeError for a negative in_features or out_features, DTypeError for a dtype that is
  // not floating, naming tl::nn::Linear.
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true,
             TensorOptions tensor_options = {});
  explicit LinearImpl(const LinearOptions& options, TensorOptions tensor_options = {});

  // Draws weight and bias again (LibTorch's reset_parameters), in place.
  void reset_parameters();

  // x of shape [..., in_features] on the parameters' device and dtype -> [..., out_features].
  // Throws ShapeError (a last dim other than in_features, a 0-dim x), DeviceError, DTypeError,
  // each naming tl::nn::Linear::forward.
  Tensor forward(const Tensor& x) const;
  // The same layer computed with `params` in place of its own (weight, then bias if it has one):
  // what tl::DataParallel runs on each device's copy of the parameters.
  Tensor forward(const std::vector<Tensor>& params, const Tensor& x) const;

  // Linear(in_features=10, out_features=1, bias=True), as torch prints the module.
  void pretty_print(std::ostream& stream) const override;

  int64_t in_features() const { return options.in_features(); }
  int64_t out_features() const { return options.out_features(); }

  LinearOptions options;
  Tensor weight;
  Tensor bias;
};

TL_MODULE(Linear);

}  // namespace tensorlet::nn

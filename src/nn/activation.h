// The activation and shape layers of tl::nn (torch.nn's ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax,
// Flatten, Dropout, Identity): modules without parameters over tl::nn::functional, printed as
// torch prints them.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn {

class IdentityImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const { return x; }
  void pretty_print(std::ostream& stream) const override { stream << "Identity()"; }
};
TL_MODULE(Identity);

class ReLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override { stream << "ReLU()"; }
};
TL_MODULE(ReLU);

class GELUImpl : public Module {
 public:
  // approximate: "none" (erf) or "tanh" (Error naming tl::nn::GELU otherwise).
  explicit GELUImpl(std::string approximate = "none");
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override;
  std::string approximate;
};
TL_MODULE(GELU);

class SiLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override { stream << "SiLU()"; }
};
TL_MODULE(SiLU);

class TanhImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override { stream << "Tanh()"; }
};
TL_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override { stream << "Sigmoid()"; }
};
TL_MODULE(Sigmoid);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : dim(dim) {}
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override { stream << "Softmax(dim=" << dim << ")"; }
  int64_t dim;
};
TL_MODULE(Softmax);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override {
    stream << "Flatten(start_dim=" << start_dim << ", end_dim=" << end_dim << ")";
  }
  int64_t start_dim, end_dim;
};
TL_MODULE(Flatten);

// Zeroes each element with probability p in training mode (scaling the rest by 1 / (1 - p)),
// passes x through in eval mode. Error naming tl::nn::Dropout for a p outside [0, 1].
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& stream) const override;
  double p;
};
TL_MODULE(Dropout);

}  // namespace tensorlet::nn

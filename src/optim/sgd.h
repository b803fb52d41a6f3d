// tl::optim::SGD: torch.optim.SGD (momentum, dampening, nesterov, weight_decay), LibTorch's
// SGDOptions.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensorlet/optim/optimizer.h"

namespace tensorlet::optim {

class SGDOptions : public OptimizerOptions {
 public:
  explicit SGDOptions(double lr = 1e-3) : lr_(lr) {}
  SGDOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  SGDOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  SGDOptions& dampening(double v) {
    dampening_ = v;
    return *this;
  }
  SGDOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  SGDOptions& nesterov(bool v) {
    nesterov_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  double momentum() const { return momentum_; }
  double dampening() const { return dampening_; }
  double weight_decay() const { return weight_decay_; }
  bool nesterov() const { return nesterov_; }

  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<SGDOptions>(*this);
  }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::map<std::string, double> values() const override;
  void set_values(const std::map<std::string, double>& values) override;
  void validate(const char* op) const override;

 private:
  double lr_, momentum_ = 0, dampening_ = 0, weight_decay_ = 0;
  bool nesterov_ = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> groups, SGDOptions defaults);
  SGD(std::vector<Tensor> params, SGDOptions defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  // torch's: g += wd p; buf = g (first step) or momentum buf + (1 - dampening) g; g = g +
  // momentum buf (nesterov) or buf; p -= lr g. Parameters of one device and dtype go through
  // one fused pass (on CUDA one launch for all, a "tl::optim::fused_sgd" row).
  void step() override;

 private:
  // The single-tensor ops, for a parameter the fused pass does not take (strided, mixed dtypes).
  void update_eager(Tensor& p, Tensor g, const SGDOptions& o);
};

}  // namespace tensorlet::optim

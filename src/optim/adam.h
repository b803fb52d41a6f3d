// tl::optim::Adam and AdamW: torch.optim.Adam / AdamW (betas, eps, weight_decay, amsgrad),
// LibTorch's AdamOptions and AdamWOptions.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tensorlet/optim/optimizer.h"

namespace tensorlet::optim {

class AdamOptions : public OptimizerOptions {
 public:
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  AdamOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  AdamOptions& betas(std::tuple<double, double> v) {
    betas_ = v;
    return *this;
  }
  AdamOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  AdamOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  AdamOptions& amsgrad(bool v) {
    amsgrad_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }

  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<AdamOptions>(*this);
  }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::map<std::string, double> values() const override;
  void set_values(const std::map<std::string, double>& values) override;
  void validate(const char* op) const override;

 protected:
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8, weight_decay_ = 0;
  bool amsgrad_ = false;
};

// AdamW's options: Adam's with weight_decay 1e-2 by default (applied to the parameter, not the
// gradient).
class AdamWOptions : public AdamOptions {
 public:
  explicit AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay_ = 1e-2; }
  AdamWOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  AdamWOptions& betas(std::tuple<double, double> v) {
    betas_ = v;
    return *this;
  }
  AdamWOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  AdamWOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  AdamWOptions& amsgrad(bool v) {
    amsgrad_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<AdamWOptions>(*this);
  }
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> groups, AdamOptions defaults);
  Adam(std::vector<Tensor> params, AdamOptions defaults)
      : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  // torch's, per parameter: step += 1; g += wd p (Adam) or p *= 1 - lr wd (AdamW);
  // m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2 (amsgrad: vmax = max(vmax, v));
  // p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps). Parameters of
  // one device, dtype and step count go through one fused pass (on CUDA one launch for all, a
  // "tl::optim::fused_adam" row), as torch's fused=True.
  void step() override;

 protected:
  Adam(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults,
       const char* name, bool decoupled);

 private:
  // The single-tensor ops, for a parameter the fused pass does not take (strided, mixed dtypes).
  void update_eager(Tensor& p, Tensor g, std::map<std::string, Tensor>& s, const AdamOptions& o,
                    double step);
  bool decoupled_weight_decay_ = false;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<OptimizerParamGroup> groups, AdamWOptions defaults);
  AdamW(std::vector<Tensor> params, AdamWOptions defaults)
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
};

}  // namespace tensorlet::optim

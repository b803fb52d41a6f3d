// Adam's and AdamW's options and step (torch.optim.Adam / AdamW's single-tensor algorithm).
#include "tensorlet/optim/adam.h"

#include <cmath>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::optim {

std::map<std::string, double> AdamOptions::values() const {
  return {{"lr", lr_},   {"beta1", std::get<0>(betas_)},  {"beta2", std::get<1>(betas_)},
          {"eps", eps_}, {"weight_decay", weight_decay_}, {"amsgrad", amsgrad_ ? 1.0 : 0.0}};
}

void AdamOptions::set_values(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  betas_ = {v.at("beta1"), v.at("beta2")};
  eps_ = v.at("eps");
  weight_decay_ = v.at("weight_decay");
  amsgrad_ = v.at("amsgrad") != 0;
}

void AdamOptions::validate(const char* op) const {
  const auto [beta1, beta2] = betas_;
  TL_CHECK(std::isfinite(lr_) && lr_ >= 0, Error, op, "Invalid learning rate: ", lr_);
  TL_CHECK(std::isfinite(eps_) && eps_ >= 0, Error, op, "Invalid epsilon value: ", eps_);
  TL_CHECK(beta1 >= 0 && beta1 < 1, Error, op, "Invalid beta parameter at index 0: ", beta1);
  TL_CHECK(beta2 >= 0 && beta2 < 1, Error, op, "Invalid beta parameter at index 1: ", beta2);
  TL_CHECK(std::isfinite(weight_decay_) && weight_decay_ >= 0, Error, op,
           "Invalid weight_decay value: ", weight_decay_);
}

Adam::Adam(std::vector<OptimizerParamGroup> groups, AdamOptions defaults)
    : Adam(std::move(groups), std::make_unique<AdamOptions>(defaults), "tl::optim::Adam", false) {}

Adam::Adam(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults,
           const char* name, bool decoupled)
    : Optimizer(std::move(groups), std::move(defaults), name), decoupled_weight_decay_(decoupled) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> groups, AdamWOptions defaults)
    : Adam(std::move(groups), std::make_unique<AdamWOptions>(defaults), "tl::optim::AdamW", true) {}

void Adam::step() {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups()) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    const auto [beta1, beta2] = o.betas();
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor g = p.grad();
      auto& s = state(p);
      if (!s.count("step")) {
        s["step"] = zeros({}, kFloat64);
        s["exp_avg"] = zeros_like(p);
        s["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad()) s["max_exp_avg_sq"] = zeros_like(p);
      }
      s["step"].add_(1.0);
      const double step = s["step"].item<double>();
      if (o.weight_decay() != 0) {
        if (decoupled_weight_decay_)
          p.mul_(1 - o.get_lr() * o.weight_decay());
        else
          g = g + p * o.weight_decay();
      }
      Tensor& m = s["exp_avg"];
      Tensor& v = s["exp_avg_sq"];
      m.lerp_(g, 1 - beta1);
      v.mul_(beta2).add_(g * g, 1 - beta2);
      const double bias1 = 1 - std::pow(beta1, step);
      const double bias2_sqrt = std::sqrt(1 - std::pow(beta2, step));
      Tensor second = v;
      if (o.amsgrad()) {
        Tensor& vmax = s["max_exp_avg_sq"];
        vmax.copy_(maximum(vmax, v));
        second = vmax;
      }
      const Tensor denom = sqrt(second) / bias2_sqrt + o.eps();
      p.sub_(m / denom, o.get_lr() / bias1);
    }
  }
}

}  // namespace tensorlet::optim

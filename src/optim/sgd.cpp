// SGD's options and step (torch.optim.SGD's single-tensor algorithm).
#include "tensorlet/optim/sgd.h"

#include <cmath>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::optim {

std::map<std::string, double> SGDOptions::values() const {
  return {{"lr", lr_},
          {"momentum", momentum_},
          {"dampening", dampening_},
          {"weight_decay", weight_decay_},
          {"nesterov", nesterov_ ? 1.0 : 0.0}};
}

void SGDOptions::set_values(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  momentum_ = v.at("momentum");
  dampening_ = v.at("dampening");
  weight_decay_ = v.at("weight_decay");
  nesterov_ = v.at("nesterov") != 0;
}

void SGDOptions::validate(const char* op) const {
  TL_CHECK(std::isfinite(lr_) && lr_ >= 0, Error, op, "Invalid learning rate: ", lr_);
  TL_CHECK(std::isfinite(momentum_) && momentum_ >= 0, Error, op,
           "Invalid momentum value: ", momentum_);
  TL_CHECK(std::isfinite(weight_decay_) && weight_decay_ >= 0, Error, op,
           "Invalid weight_decay value: ", weight_decay_);
  TL_CHECK(!nesterov_ || (momentum_ > 0 && dampening_ == 0), Error, op,
           "Nesterov momentum requires a momentum and zero dampening");
}

SGD::SGD(std::vector<OptimizerParamGroup> groups, SGDOptions defaults)
    : Optimizer(std::move(groups), std::make_unique<SGDOptions>(defaults), "tl::optim::SGD") {}

void SGD::step() {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups()) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor g = p.grad();
      if (o.weight_decay() != 0) g = g + p * o.weight_decay();
      if (o.momentum() != 0) {
        auto& s = state(p);
        auto it = s.find("momentum_buffer");
        if (it == s.end()) {
          it = s.emplace("momentum_buffer", g.clone()).first;
        } else {
          it->second.mul_(o.momentum()).add_(g, 1 - o.dampening());
        }
        g = o.nesterov() ? g + it->second * o.momentum() : it->second;
      }
      p.sub_(g, o.lr());
    }
  }
}

}  // namespace tensorlet::optim

// Adam's and AdamW's options and step (torch.optim.Adam / AdamW): a fused pass per parameter
// list (Backend::fused_adam), the single-tensor ops for a parameter that does not fit it.
#include "tensorlet/optim/adam.h"

#include <algorithm>
#include <cmath>

#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/out_arg.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/tensor/op_scope.h"

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

namespace {

// The parameters of one fused launch: one device, dtype and step count.
struct FusedBatch {
  Device device;
  DType dtype;
  double step;
  std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
};

// Whether p's update can go through Backend::fused_adam: a floating parameter with a gradient and
// states of its dtype and device, all contiguous (a strided or mixed one takes the eager ops).
bool fusable(const Tensor& p, const Tensor& g, const std::map<std::string, Tensor>& s,
             bool amsgrad) {
  if (!is_floating_point(p.dtype()) || p.numel() == 0 || !p.is_contiguous()) return false;
  std::vector<const Tensor*> others = {&g, &s.at("exp_avg"), &s.at("exp_avg_sq")};
  if (amsgrad) others.push_back(&s.at("max_exp_avg_sq"));
  for (const Tensor* t : others)
    if (t->dtype() != p.dtype() || t->device() != p.device() || !t->is_contiguous() ||
        t->shape() != p.shape())
      return false;
  return true;
}

}  // namespace

void Adam::update_eager(Tensor& p, Tensor g, std::map<std::string, Tensor>& s, const AdamOptions& o,
                        double step) {
  const auto [beta1, beta2] = o.betas();
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

// Each group's parameters are updated by one fused pass per (device, dtype, step count): on CUDA
// one launch for all of them (torch's fused=True), on the CPU one loop per parameter; a
// parameter that does not fit (strided, mixed dtypes) takes the eager ops.
void Adam::step() {
  NoGradGuard no_grad;
  const char* name = decoupled_weight_decay_ ? "tl::optim::AdamW" : "tl::optim::Adam";
  for (OptimizerParamGroup& group : param_groups()) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    std::vector<FusedBatch> batches;
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      const Tensor g = p.grad();
      auto& s = state(p);
      if (!s.count("step")) {
        s["step"] = zeros({}, kFloat64);
        s["exp_avg"] = zeros_like(p);
        s["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad()) s["max_exp_avg_sq"] = zeros_like(p);
      }
      s["step"].add_(1.0);
      const double step = s["step"].item<double>();
      if (!fusable(p, g, s, o.amsgrad())) {
        update_eager(p, g, s, o, step);
        continue;
      }
      auto it = std::find_if(batches.begin(), batches.end(), [&](const FusedBatch& b) {
        return b.device == p.device() && b.dtype == p.dtype() && b.step == step;
      });
      if (it == batches.end())
        it = batches.insert(batches.end(),
                            FusedBatch{p.device(), p.dtype(), step, {}, {}, {}, {}, {}});
      it->params.push_back(p);
      it->grads.push_back(g);
      it->exp_avgs.push_back(s["exp_avg"]);
      it->exp_avg_sqs.push_back(s["exp_avg_sq"]);
      if (o.amsgrad()) it->max_exp_avg_sqs.push_back(s["max_exp_avg_sq"]);
    }
    const auto [beta1, beta2] = o.betas();
    for (const FusedBatch& b : batches) {
      profiler::OpScope scope("tl::optim::fused_adam");
      for (const std::vector<Tensor>* list :
           {&b.params, &b.exp_avgs, &b.exp_avg_sqs, &b.max_exp_avg_sqs})
        for (const Tensor& t : *list) check_writable(name, t);  // versions bumped, as p.sub_
      AdamStep args;
      args.lr = o.get_lr();
      args.beta1 = beta1;
      args.beta2 = beta2;
      args.eps = o.eps();
      args.weight_decay = o.weight_decay();
      args.decoupled_weight_decay = decoupled_weight_decay_;
      args.amsgrad = o.amsgrad();
      args.step = b.step;
      backend_for(b.device).fused_adam(b.params, b.grads, b.exp_avgs, b.exp_avg_sqs,
                                       b.max_exp_avg_sqs, args);
    }
  }
}

}  // namespace tensorlet::optim

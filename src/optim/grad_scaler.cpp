// tl::GradScaler: torch.amp.GradScaler's algorithm with the scale kept on the host (step waits
// for the inf/NaN flag anyway, as torch's does), so each scaled loss multiplies by a number.
#include "tensorlet/optim/grad_scaler.h"

#include <cmath>

#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {
  constexpr const char* op = "tl::GradScaler";
  TL_CHECK(std::isfinite(options.init_scale) && options.init_scale > 0, Error, op,
           "init_scale must be positive and finite, got ", options.init_scale);
  TL_CHECK(options.growth_factor > 1, Error, op, "growth_factor must be > 1, got ",
           options.growth_factor);
  TL_CHECK(options.backoff_factor > 0 && options.backoff_factor < 1, Error, op,
           "backoff_factor must be in (0, 1), got ", options.backoff_factor);
  TL_CHECK(options.growth_interval > 0, Error, op, "growth_interval must be positive, got ",
           options.growth_interval);
}

Tensor GradScaler::scale(const Tensor& outputs) {
  check_defined(outputs, "tl::GradScaler::scale");
  if (!options_.enabled) return outputs;
  TL_CHECK(is_floating_point(outputs.dtype()), DTypeError, "tl::GradScaler::scale",
           "expected a floating point loss, got ", outputs.dtype());
  return outputs * scale_;
}

void GradScaler::unscale_(optim::Optimizer& opt) {
  if (!options_.enabled) return;
  PerOptimizer& state = per_optimizer_[&opt];
  TL_CHECK(!state.unscaled, Error, "tl::GradScaler::unscale_",
           "unscale_() has already been called on this optimizer since the last update()");
  TL_CHECK(!state.stepped, Error, "tl::GradScaler::unscale_",
           "unscale_() is being called after step()");
  NoGradGuard no_grad;
  const double inverse = 1.0 / scale_;
  for (optim::OptimizerParamGroup& group : opt.param_groups())
    for (Tensor& p : group.params()) {
      Tensor& g = p.mutable_grad();
      if (!g.defined()) continue;
      const Tensor bad = any(logical_not(isfinite(g)));
      state.found_inf = state.found_inf.defined()
                            ? logical_or(state.found_inf, bad.to(state.found_inf.device()))
                            : bad;
      g.mul_(inverse);
    }
  state.unscaled = true;
}

bool GradScaler::step(optim::Optimizer& opt) {
  if (!options_.enabled) {
    opt.step();
    return true;
  }
  PerOptimizer& state = per_optimizer_[&opt];
  TL_CHECK(!state.stepped, Error, "tl::GradScaler::step",
           "step() has already been called since the last update()");
  if (!state.unscaled) unscale_(opt);
  state.stepped = true;
  if (state.found_inf.defined() && state.found_inf.item<bool>()) {
    found_inf_this_iteration_ = true;
    return false;
  }
  opt.step();
  return true;
}

void GradScaler::update(double new_scale) {
  if (!options_.enabled) return;
  // An optimizer unscaled but not stepped still counts (its flag not read yet).
  for (const auto& [opt, state] : per_optimizer_)
    if (!state.stepped && state.found_inf.defined() && state.found_inf.item<bool>())
      found_inf_this_iteration_ = true;
  if (new_scale != 0) {
    TL_CHECK(std::isfinite(new_scale) && new_scale > 0, Error, "tl::GradScaler::update",
             "new_scale must be positive and finite, got ", new_scale);
    scale_ = new_scale;
    growth_tracker_ = 0;
  } else if (found_inf_this_iteration_) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == options_.growth_interval) {
    scale_ *= options_.growth_factor;
    growth_tracker_ = 0;
  }
  found_inf_this_iteration_ = false;
  per_optimizer_.clear();
}

}  // namespace tensorlet

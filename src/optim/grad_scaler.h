// tl::GradScaler (torch.amp.GradScaler): loss scaling for float16 training. scale(loss) multiplies
// the loss by the current scale so small float16 gradients do not flush to zero; step(opt)
// divides the gradients back (unscale_), and skips the step when any of them is inf or NaN;
// update() halves the scale after such a step and doubles it after growth_interval clean ones.
#pragma once

#include <cstdint>
#include <map>

#include "tensorlet/optim/optimizer.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16, torch's
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * scale (outputs' dtype); outputs itself when disabled.
  Tensor scale(const Tensor& outputs);
  // Divides every gradient of opt's parameters by the scale, in place, and notes whether one is
  // inf or NaN. At most once per optimizer between update()s (a second call is an Error, as
  // torch's); step() calls it when the caller did not (to clip gradients first, call it first).
  void unscale_(optim::Optimizer& opt);
  // opt.step() unless a gradient was inf or NaN (then the step is skipped). One host wait, for
  // that flag. Returns whether the step ran.
  bool step(optim::Optimizer& opt);
  // The next scale: backoff_factor times this one when a step this iteration saw inf/NaN, else
  // growth_factor times it after growth_interval clean iterations in a row; new_scale sets it.
  void update(double new_scale = 0);

  double get_scale() const { return options_.enabled ? scale_ : 1.0; }
  bool is_enabled() const { return options_.enabled; }
  // Clean iterations in a row since the scale last changed.
  int64_t growth_tracker() const { return growth_tracker_; }

 private:
  struct PerOptimizer {
    bool unscaled = false, stepped = false;
    Tensor found_inf;  // bool, on the gradients' device
  };
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  std::map<const optim::Optimizer*, PerOptimizer> per_optimizer_;
  bool found_inf_this_iteration_ = false;
};

}  // namespace tensorlet

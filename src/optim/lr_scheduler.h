// tl::optim's learning-rate schedulers (torch.optim.lr_scheduler's StepLR, CosineAnnealingLR,
// LinearLR): step() advances the epoch and sets every group's lr from its base lr in closed form.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorlet/optim/optimizer.h"

namespace tensorlet::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  // One epoch on: each group's lr becomes the schedule's value there.
  void step();
  // The lrs the last step (or the constructor) set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // Sets epoch 0's lrs (the constructors call it once their parameters are checked).
  void start();
  virtual double lr_at(double base_lr, int64_t epoch) const = 0;

 private:
  void apply();
  Optimizer& optimizer_;
  std::vector<double> base_lrs_, last_lr_;
  int64_t last_epoch_ = 0;
};

// base_lr * gamma^(epoch / step_size). Error naming tl::optim::StepLR for step_size < 1.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 private:
  double lr_at(double base_lr, int64_t epoch) const override;
  int64_t step_size_;
  double gamma_;
};

// eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2. Error for T_max < 1.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 private:
  double lr_at(double base_lr, int64_t epoch) const override;
  int64_t t_max_;
  double eta_min_;
};

// base_lr times a factor going linearly from start_factor to end_factor over total_iters epochs,
// then staying. Error for start_factor outside (0, 1], end_factor outside [0, 1], total_iters < 1.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 private:
  double lr_at(double base_lr, int64_t epoch) const override;
  double start_, end_;
  int64_t total_;
};

}  // namespace tensorlet::optim

// The schedulers' closed forms (torch's _get_closed_form_lr) and the epoch bookkeeping.
#include "tensorlet/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tensorlet/tensor/error.h"

namespace tensorlet::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (const OptimizerParamGroup& g : optimizer_.param_groups())
    base_lrs_.push_back(g.options().get_lr());
}

void LRScheduler::start() { apply(); }

void LRScheduler::step() {
  ++last_epoch_;
  apply();
}

void LRScheduler::apply() {
  last_lr_.clear();
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < base_lrs_.size(); ++i) {
    const double lr = lr_at(base_lrs_[i], last_epoch_);
    groups[i].options().set_lr(lr);
    last_lr_.push_back(lr);
  }
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  TL_CHECK(step_size >= 1, Error, "tl::optim::StepLR", "step_size must be at least 1, got ",
           step_size);
  start();
}

double StepLR::lr_at(double base_lr, int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  TL_CHECK(T_max >= 1, Error, "tl::optim::CosineAnnealingLR", "T_max must be at least 1, got ",
           T_max);
  start();
}

double CosineAnnealingLR::lr_at(double base_lr, int64_t epoch) const {
  return eta_min_ + (base_lr - eta_min_) *
                        (1 + std::cos(std::numbers::pi * static_cast<double>(epoch) /
                                      static_cast<double>(t_max_))) /
                        2;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer), start_(start_factor), end_(end_factor), total_(total_iters) {
  constexpr const char* op = "tl::optim::LinearLR";
  TL_CHECK(start_factor > 0 && start_factor <= 1, Error, op,
           "Starting multiplicative factor expected to be greater than 0 and less or equal to 1, "
           "got ",
           start_factor);
  TL_CHECK(end_factor >= 0 && end_factor <= 1, Error, op,
           "Ending multiplicative factor expected to be between 0 and 1, got ", end_factor);
  TL_CHECK(total_iters >= 1, Error, op, "total_iters must be at least 1, got ", total_iters);
  start();
}

double LinearLR::lr_at(double base_lr, int64_t epoch) const {
  const double t = static_cast<double>(std::min(epoch, total_)) / static_cast<double>(total_);
  return base_lr * (start_ + (end_ - start_) * t);
}

}  // namespace tensorlet::optim

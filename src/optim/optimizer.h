// tl::optim's base (LibTorch's torch::optim::Optimizer): parameter groups with their options,
// per-parameter state kept by the parameter's identity, zero_grad, and a state_dict of tensors
// (safetensors-ready, with PyTorch's layout of state and param_groups).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensorlet/nn/ordered_dict.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::optim {

// What every optimizer's options have: a learning rate, a copy, and their numbers by name (for
// state_dict). Each optimizer's options class chains setters as LibTorch's (SGDOptions(0.1)
// .momentum(0.9)).
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // The options as numbers ("lr", "momentum", a flag as 0 or 1), and back.
  virtual std::map<std::string, double> values() const = 0;
  virtual void set_values(const std::map<std::string, double>& values) = 0;
  // Error naming `op` for a value out of its range (a NaN or negative learning rate, ...).
  virtual void validate(const char* op) const = 0;
};

class OptimizerParamGroup {
 public:
  // Without options the group takes the optimizer's defaults when added.
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& other)
      : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
    return *this;
  }
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options() { return *options_; }
  const OptimizerOptions& options() const { return *options_; }
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient, outside autograd.
  virtual void step() = 0;
  // Clears (set_to_none) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true);
  // Error naming the optimizer for an empty group, an undefined, non-leaf or non-floating
  // parameter, one already in a group, or options out of range.
  void add_param_group(const OptimizerParamGroup& group);

  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  // A parameter's state by name ("momentum_buffer", "exp_avg", "step"), made on first use.
  std::map<std::string, Tensor>& state(const Tensor& param) { return state_[&param.impl()]; }

  // PyTorch's state_dict as named tensors: "state.<i>.<name>" for parameter i (numbered across
  // the groups in order), "param_groups.<g>.<option>" (0-d float64) and "param_groups.<g>.params"
  // (int64 indices). load_state_dict takes one of the same layout (Error naming the call for
  // another group count or size, or a missing key); state moves to each parameter's device.
  OrderedDict<std::string, Tensor> state_dict() const;
  void load_state_dict(const OrderedDict<std::string, Tensor>& dict);

 protected:
  Optimizer(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults,
            const char* name);
  const char* name_;

 private:
  std::vector<OptimizerParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::unordered_map<const TensorImpl*, std::map<std::string, Tensor>> state_;
};

}  // namespace tensorlet::optim

// The optimizer base: group checks, zero_grad, and the state_dict's named-tensor layout.
#include "tensorlet/optim/optimizer.h"

#include <string>
#include <unordered_set>

#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::optim {

Optimizer::Optimizer(std::vector<OptimizerParamGroup> groups,
                     std::unique_ptr<OptimizerOptions> defaults, const char* name)
    : name_(name), defaults_(std::move(defaults)) {
  defaults_->validate(name_);
  TL_CHECK(!groups.empty(), Error, name_, "optimizer got an empty parameter list");
  for (const OptimizerParamGroup& g : groups) add_param_group(g);
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  TL_CHECK(!group.params().empty(), Error, name_, "optimizer got an empty parameter list");
  std::unordered_set<const TensorImpl*> seen;
  for (const OptimizerParamGroup& g : groups_)
    for (const Tensor& p : g.params()) seen.insert(&p.impl());
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    TL_CHECK(p.defined(), Error, name_, "parameter ", i, " of the group is undefined");
    TL_CHECK(is_floating_point(p.dtype()), DTypeError, name_,
             "can only optimize floating point tensors, got ", p.dtype(), " (parameter ", i, ")");
    TL_CHECK(p.is_leaf(), Error, name_, "can't optimize a non-leaf Tensor (parameter ", i, ")");
    TL_CHECK(seen.insert(&p.impl()).second, Error, name_,
             "some parameters appear in more than one parameter group (parameter ", i, ")");
  }
  OptimizerParamGroup added(group);
  if (!added.has_options()) added.set_options(defaults_->clone());
  added.options().validate(name_);
  groups_.push_back(std::move(added));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& g : groups_)
    for (Tensor& p : g.params()) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        if (grad.grad_fn()) grad = grad.detach();
        grad.zero_();
      }
    }
}

OrderedDict<std::string, Tensor> Optimizer::state_dict() const {
  OrderedDict<std::string, Tensor> out("Key");
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    for (const auto& [name, v] : groups_[g].options().values())
      out.insert(prefix + name, full({}, v, kFloat64));
    std::vector<int64_t> indices;
    for (const Tensor& p : groups_[g].params()) {
      auto it = state_.find(&p.impl());
      if (it != state_.end())
        for (const auto& [name, t] : it->second)
          out.insert("state." + std::to_string(index) + "." + name, t);
      indices.push_back(index++);
    }
    out.insert(prefix + "params", from_vector(indices, {static_cast<int64_t>(indices.size())}));
  }
  return out;
}

void Optimizer::load_state_dict(const OrderedDict<std::string, Tensor>& dict) {
  const std::string op = std::string(name_) + "::load_state_dict";
  // Checked whole before anything changes.
  size_t groups = 0;
  while (dict.contains("param_groups." + std::to_string(groups) + ".params")) ++groups;
  TL_CHECK(groups == groups_.size(), Error, op.c_str(), "loaded state dict has ", groups,
           " parameter groups, the optimizer has ", groups_.size());
  for (size_t g = 0; g < groups; ++g) {
    const Tensor& ids = dict["param_groups." + std::to_string(g) + ".params"];
    TL_CHECK(ids.numel() == static_cast<int64_t>(groups_[g].params().size()), Error, op.c_str(),
             "loaded state dict contains a parameter group (", g, ") of ", ids.numel(),
             " parameters where the optimizer's has ", groups_[g].params().size());
    for (const auto& [name, v] : groups_[g].options().values()) {
      (void)v;
      TL_CHECK(dict.contains("param_groups." + std::to_string(g) + "." + name), Error, op.c_str(),
               "loaded state dict lacks param_groups.", g, ".", name);
    }
  }
  NoGradGuard no_grad;
  int64_t index = 0;
  for (size_t g = 0; g < groups; ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    std::map<std::string, double> values = groups_[g].options().values();
    for (auto& [name, v] : values) v = dict[prefix + name].item<double>();
    groups_[g].options().set_values(values);
    for (const Tensor& p : groups_[g].params()) {
      const std::string key = "state." + std::to_string(index++) + ".";
      std::map<std::string, Tensor> loaded;
      for (const auto& item : dict)
        if (item.key().compare(0, key.size(), key) == 0) {
          const Tensor& t = item.value();
          // Floating state follows its parameter's dtype and device ("step" stays a float64
          // count on the CPU, read without a device wait), as torch's load_state_dict casts it.
          const std::string name = item.key().substr(key.size());
          loaded[name] =
              name == "step" ? t.to(Device::cpu()).clone() : t.to(p.device()).to(p.dtype()).clone();
        }
      if (loaded.empty())
        state_.erase(&p.impl());
      else
        state_[&p.impl()] = std::move(loaded);
    }
  }
}

}  // namespace tensorlet::optim

// SGD's options and step (torch.optim.SGD): a fused pass per parameter list (Backend::fused_sgd),
// the single-tensor ops for a parameter that does not fit it.
#include "tensorlet/optim/sgd.h"

#include <algorithm>
#include <cmath>

#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/out_arg.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/tensor/op_scope.h"

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

namespace {

// The parameters of one fused launch: one device, dtype, and first step of their buffers or not.
struct FusedBatch {
  Device device;
  DType dtype;
  bool first;
  std::vector<Tensor> params, grads, buffers;
};

bool fusable(const Tensor& p, const Tensor& g, const Tensor* buffer) {
  if (!is_floating_point(p.dtype()) || p.numel() == 0 || !p.is_contiguous()) return false;
  for (const Tensor* t : {&g, buffer})
    if (t != nullptr && (t->dtype() != p.dtype() || t->device() != p.device() ||
                         !t->is_contiguous() || t->shape() != p.shape()))
      return false;
  return true;
}

}  // namespace

void SGD::update_eager(Tensor& p, Tensor g, const SGDOptions& o) {
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

// One fused pass per (device, dtype, first step) of a group's parameters (Backend::fused_sgd: on
// CUDA one launch for all of them); a strided or mixed one takes the eager ops.
void SGD::step() {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups()) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    const bool momentum = o.momentum() != 0;
    std::vector<FusedBatch> batches;
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      const Tensor g = p.grad();
      Tensor* buffer = nullptr;
      bool first = false;
      if (momentum) {
        auto& s = state(p);
        auto it = s.find("momentum_buffer");
        first = it == s.end();
        if (!first) buffer = &it->second;
      }
      if (!fusable(p, g, buffer)) {
        update_eager(p, g, o);
        continue;
      }
      // A new buffer is written whole by the kernel (buf = g, torch's clone).
      if (momentum && first)
        buffer = &state(p).emplace("momentum_buffer", empty_like(p)).first->second;
      auto it = std::find_if(batches.begin(), batches.end(), [&](const FusedBatch& b) {
        return b.device == p.device() && b.dtype == p.dtype() && b.first == first;
      });
      if (it == batches.end())
        it = batches.insert(batches.end(), FusedBatch{p.device(), p.dtype(), first, {}, {}, {}});
      it->params.push_back(p);
      it->grads.push_back(g);
      if (momentum) it->buffers.push_back(*buffer);
    }
    for (const FusedBatch& b : batches) {
      profiler::OpScope scope("tl::optim::fused_sgd");
      for (const std::vector<Tensor>* list : {&b.params, &b.buffers})
        for (const Tensor& t : *list) check_writable("tl::optim::SGD", t);
      SgdStep args;
      args.lr = o.lr();
      args.momentum = o.momentum();
      args.dampening = o.dampening();
      args.weight_decay = o.weight_decay();
      args.nesterov = o.nesterov();
      args.first = b.first;
      backend_for(b.device).fused_sgd(b.params, b.grads, b.buffers, args);
    }
  }
}

}  // namespace tensorlet::optim

// The optimizers' per-element updates, written once for the CPU and CUDA kernels of the fused
// multi-tensor steps (Backend::fused_adam): torch.optim.Adam / AdamW's single-tensor algorithm on
// one element, computed in the compute type (float for float16/bfloat16), each state rounded to
// its dtype once per step.
#pragma once

#include <cstdint>

#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// One Adam/AdamW step's constants, as the host computes them from the options and the step count.
struct AdamStep {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled_weight_decay = false;  // AdamW: p *= 1 - lr wd before the update
  bool amsgrad = false;
  double step = 1;  // the step count after this step (1 on the first), for the bias corrections
};

// One SGD step's constants (torch.optim.SGD).
struct SgdStep {
  double lr = 0.1, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  bool first = false;  // the momentum buffers are new: buf = g, as torch's clone
};

namespace math {

// AdamStep in the compute type C, with the bias corrections folded in.
template <typename C>
struct AdamConstants {
  C lr, one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay, decay_factor, step_size,
      bias2_sqrt;
  bool decoupled, amsgrad;
};

template <typename C>
AdamConstants<C> adam_constants(const AdamStep& s) {
  const double bias1 = 1 - ::pow(s.beta1, s.step);
  const double bias2_sqrt = ::sqrt(1 - ::pow(s.beta2, s.step));
  return {C(s.lr),
          C(1 - s.beta1),
          C(s.beta2),
          C(1 - s.beta2),
          C(s.eps),
          C(s.weight_decay),
          C(1 - s.lr * s.weight_decay),
          C(s.lr / bias1),
          C(bias2_sqrt),
          s.decoupled_weight_decay,
          s.amsgrad};
}

// Element i of one parameter: p, its gradient g, exp_avg m, exp_avg_sq v and (amsgrad)
// max_exp_avg_sq vmax, all of dtype T. torch's order: weight decay (decoupled on p, or added to
// g), m = lerp(m, g, 1 - beta1), v = beta2 v + (1 - beta2) g², vmax = max(vmax, v),
// p -= lr / bias1 * m / (sqrt(v or vmax) / sqrt(bias2) + eps).
template <typename T, typename C>
TL_HOST_DEVICE inline void adam_element(T* p, const T* g, T* m, T* v, T* vmax, int64_t i,
                                        const AdamConstants<C>& k) {
  C pi = static_cast<C>(p[i]);
  C gi = static_cast<C>(g[i]);
  if (k.weight_decay != C(0)) {
    if (k.decoupled)
      pi = pi * k.decay_factor;
    else
      gi = gi + pi * k.weight_decay;
  }
  const C mi = static_cast<C>(m[i]) + k.one_minus_beta1 * (gi - static_cast<C>(m[i]));
  const C vi = static_cast<C>(v[i]) * k.beta2 + k.one_minus_beta2 * (gi * gi);
  C second = vi;
  if (k.amsgrad) {
    const C old = static_cast<C>(vmax[i]);
    second = old > vi ? old : vi;
    vmax[i] = static_cast<T>(second);
  }
  const C denom = libm_sqrt(second) / k.bias2_sqrt + k.eps;
  p[i] = static_cast<T>(pi - k.step_size * (mi / denom));
  m[i] = static_cast<T>(mi);
  v[i] = static_cast<T>(vi);
}

template <typename C>
struct SgdConstants {
  C lr, momentum, one_minus_dampening, weight_decay;
  bool nesterov, first, has_momentum;
};

template <typename C>
SgdConstants<C> sgd_constants(const SgdStep& s) {
  return {C(s.lr),    C(s.momentum), C(1 - s.dampening), C(s.weight_decay),
          s.nesterov, s.first,       s.momentum != 0};
}

// Element i of one parameter p with gradient g and (with momentum) buffer buf: torch's order,
// g += wd p; buf = g on the first step, else momentum buf + (1 - dampening) g; g = g + momentum
// buf (nesterov) or buf; p -= lr g.
template <typename T, typename C>
TL_HOST_DEVICE inline void sgd_element(T* p, const T* g, T* buf, int64_t i,
                                       const SgdConstants<C>& k) {
  const C pi = static_cast<C>(p[i]);
  C gi = static_cast<C>(g[i]);
  if (k.weight_decay != C(0)) gi = gi + pi * k.weight_decay;
  if (k.has_momentum) {
    const C b = k.first ? gi : static_cast<C>(buf[i]) * k.momentum + k.one_minus_dampening * gi;
    buf[i] = static_cast<T>(b);
    gi = k.nesterov ? gi + b * k.momentum : b;
  }
  p[i] = static_cast<T>(pi - k.lr * gi);
}

}  // namespace math
}  // namespace tensorlet

// The fused cross entropy of class-index targets (nn::functional::cross_entropy's log_softmax +
// nll in one kernel each way), written once for the CPU and CUDA kernels: per row r of x [rows, C]
// with target t = target[r], class weights w (1 without), their sum W (C without) and smoothing e,
//   lse      = log(sum_c exp(x_c))
//   loss[r]  = (1 - e) w_t (lse - x_t) + e / C (W lse - sum_c w_c x_c)   (0 where t is ignored)
//   dx[r, c] = g_r ((1 - e) w_t (p_c - [c == t]) + e / C (W p_c - w_c)),  p_c = exp(x_c - lse)
// which is torch's (1 - e) nll(log_softmax(x)) + e / C * -(sum_c w_c log_softmax(x)_c).
#pragma once

#include <cstdint>

#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// One call's shape and options: x is [rows, classes], contiguous.
struct CrossEntropyArgs {
  int64_t rows = 0, classes = 0;
  int64_t ignore_index = -100;
  double smoothing = 0;  // label_smoothing, in [0, 1]
};

namespace math {

// Whether row target t counts (not ignored, in range). An out-of-range target that is not the
// ignore_index is an error the caller reports; the kernels then treat its row as ignored.
TL_HOST_DEVICE inline bool target_counts(int64_t t, const CrossEntropyArgs& a) {
  return t != a.ignore_index && t >= 0 && t < a.classes;
}
TL_HOST_DEVICE inline bool target_out_of_range(int64_t t, const CrossEntropyArgs& a) {
  return t != a.ignore_index && (t < 0 || t >= a.classes);
}

// loss[r] from the row's logsumexp, its target's logit and weight, and sum_c w_c x_c (read only
// with smoothing: an infinite logit must not turn the unsmoothed loss into 0 * inf).
template <typename A>
TL_HOST_DEVICE inline A cross_entropy_row_loss(A lse, A x_t, A w_t, A weighted_sum_x, A total_w,
                                               const CrossEntropyArgs& a) {
  const A e = static_cast<A>(a.smoothing);
  A loss = (A(1) - e) * w_t * (lse - x_t);
  if (a.smoothing > 0) loss += e / static_cast<A>(a.classes) * (total_w * lse - weighted_sum_x);
  return loss;
}

// The row's constants of dx[r, c] = p_c * scale - (c == t ? hit : 0) - w_c * spread.
template <typename A>
struct CrossEntropyRowGrad {
  A scale, hit, spread;
};

template <typename A>
TL_HOST_DEVICE inline CrossEntropyRowGrad<A> cross_entropy_row_grad(A g, A w_t, A total_w,
                                                                    const CrossEntropyArgs& a) {
  const A e = static_cast<A>(a.smoothing);
  const A hit = g * (A(1) - e) * w_t;
  if (a.smoothing == 0) return {hit, hit, A(0)};
  const A spread = g * e / static_cast<A>(a.classes);
  return {hit + spread * total_w, hit, spread};
}

}  // namespace math
}  // namespace tensorlet

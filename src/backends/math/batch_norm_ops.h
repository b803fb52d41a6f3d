// Batch norm in training mode as the backends' fused kernels compute it (Backend::batch_norm_*),
// per channel c of x [n, channels, inner] over its M = n * inner values:
//   mean = sum(x) / M,  var = sum((x - mean)^2) / M,  invstd = 1 / sqrt(var + eps)
//   y    = (x - mean) invstd w + b = x scale + shift,  scale = invstd w, shift = b - mean scale
//   running_mean = (1 - momentum) running_mean + momentum mean
//   running_var  = (1 - momentum) running_var + momentum var M / (M - 1)
// and backward, with xhat = (x - mean) invstd, from g = dL/dy:
//   dbias = sum(g),  dweight = sum(g xhat)
//   dx    = w invstd (g - dbias / M - xhat dweight / M)
// (w = 1, b = 0 without an affine weight and bias), which is torch's batch_norm.
#pragma once

#include <cstdint>

namespace tensorlet {

struct BatchNormArgs {
  int64_t n = 0, channels = 0, inner = 0;  // x viewed as [n, channels, inner]
  double momentum = 0.1, eps = 1e-5;
  int64_t count() const { return n * inner; }  // M, the values per channel
};

}  // namespace tensorlet

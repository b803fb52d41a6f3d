// The fused batch norm's forward (autograd/derivatives_batch_norm.cpp records its node).
#include "tensorlet/nn/fused_batch_norm.h"

#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn::functional {

Tensor fused_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                        const Tensor& weight, const Tensor& bias, double momentum, double eps) {
  if (x.numel() == 0) return {};
  // The per-channel tensors share one dtype and x's device, and are contiguous (the running
  // statistics are written in place); anything else takes the composite.
  const Tensor* params[] = {&weight, &bias, &running_mean, &running_var};
  std::optional<DType> param_dtype;
  for (const Tensor* p : params) {
    if (!p->defined()) continue;
    if ((param_dtype && p->dtype() != *param_dtype) || p->device() != x.device() ||
        !p->is_contiguous())
      return {};
    param_dtype = p->dtype();
  }
  Backend& backend = backend_for(x.device());
  if (!backend.has_batch_norm(x.dtype(), param_dtype.value_or(x.dtype()))) return {};
  const int64_t c = x.size(1);
  BatchNormArgs a{x.size(0), c, x.numel() / (x.size(0) * c), momentum, eps};
  const DType stat_dtype = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  const bool record = autograd::should_record({&x, &weight, &bias});
  Tensor xs, y, mean, invstd;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    xs = x.contiguous();
    y = make_tensor(x.shape(), x.dtype(), x.device());
    mean = make_tensor(Shape({c}), stat_dtype, x.device());
    invstd = make_tensor(Shape({c}), stat_dtype, x.device());
    backend.batch_norm_forward(xs, weight, bias, running_mean, running_var, a, y, mean, invstd);
  }
  if (record) autograd::record_batch_norm(x, weight, bias, mean, invstd, a, y);
  return y;
}

}  // namespace tensorlet::nn::functional

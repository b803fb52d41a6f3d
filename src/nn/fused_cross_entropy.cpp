// The fused cross entropy's forward: one kernel for the row losses, the row weights and the
// logsumexp the backward reuses (autograd/derivatives_loss.cpp records its node).
#include "tensorlet/nn/fused_cross_entropy.h"

#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn::functional {

RowLosses fused_cross_entropy_rows(const Tensor& x, const Tensor& target, const Tensor& weight,
                                   int64_t ignore_index, double label_smoothing) {
  const bool record = autograd::should_record({&x});
  const DType loss_dtype = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  const CrossEntropyArgs args{x.size(0), x.size(1), ignore_index, label_smoothing};
  RowLosses out;
  Tensor xs, ts, ws, total, lse;
  {
    std::optional<NoGradGuard> below;
    if (record) below.emplace();
    xs = x.contiguous();
    ts = target.contiguous();
    ws = weight.defined() ? weight.contiguous() : Tensor();
    // sum(weight) for the smoothing term, read by the kernels on the device (no host wait).
    if (ws.defined() && label_smoothing > 0) total = sum(ws.to(loss_dtype));
    out.loss = make_tensor(Shape({args.rows}), loss_dtype, x.device());
    out.weight = make_tensor(Shape({args.rows}), loss_dtype, x.device());
    lse = make_tensor(Shape({args.rows}), loss_dtype, x.device());
    backend_for(x.device())
        .cross_entropy_forward(xs, ts, ws, total, args, out.loss, out.weight, lse);
  }
  if (record) autograd::record_cross_entropy(x, ts, ws, total, lse, args, out.loss);
  return out;
}

}  // namespace tensorlet::nn::functional

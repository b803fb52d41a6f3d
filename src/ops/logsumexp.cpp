// tl::logsumexp: a composite of reductions and elementwise ops around the max, as torch's.
#include <limits>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/autocast.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/reduce_mask.h"

namespace tensorlet {

namespace {

Tensor logsumexp_below(const Tensor& x, const DimList& dims, bool keepdim) {
  const char* name = "tl::logsumexp";
  // Checked here so a bad dim names tl::logsumexp, not the amax inside.
  const std::vector<bool> mask = reduce_mask(x, dims, name);
  const DType out_dtype = is_floating_point(x.dtype()) ? x.dtype() : kFloat32;
  // float16/bfloat16: the shifted exps and their sum in float32, one rounding at the end.
  const Tensor in = x.to(is_reduced_float(out_dtype) ? kFloat32 : out_dtype);
  Tensor result;
  if (in.numel() == 0) {
    // No max to take; an empty slice sums to 0, whose log is -inf, as torch.
    result = log(sum(in, dims, keepdim));
  } else {
    // A slice whose max is infinite is shifted by 0 instead: all -inf gives log(0) = -inf, a +inf
    // gives +inf (x - max would be NaN there).
    const Tensor m = amax(in, dims, true);
    const Tensor shift = where(abs(m) == std::numeric_limits<double>::infinity(), 0.0, m);
    result = log(sum(exp(in - shift), dims, true)) + shift;
    if (!keepdim) result = result.view(drop_reduced(result.shape(), mask));
  }
  return result.to(out_dtype);
}

}  // namespace

// In a graph: one LogsumexpBackward0 node (softmax * g) for the composite computed below it.
Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim) {
  if (autocast_detail::applies_cuda_float32(x) && is_reduced_float(x.dtype())) [[unlikely]] {
    const Tensor f = autocast_detail::to_float32(x);
    autocast_detail::InsideOp inside;
    return logsumexp(f, dims, keepdim);
  }
  const char* name = "tl::logsumexp";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  if (!autograd::should_record({&x})) return logsumexp_below(x, dims, keepdim);
  Tensor out;
  {
    NoGradGuard below;
    out = logsumexp_below(x, dims, keepdim);
  }
  autograd::record_logsumexp(x, dims, keepdim, out);
  return out;
}

}  // namespace tensorlet

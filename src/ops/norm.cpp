// tl::norm: vector p-norms over dims as composites of reductions and elementwise ops, under one
// op scope, with torch.linalg.vector_norm's rules (floating inputs, no identity for p < 0 or inf).
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/autocast.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/reduce_mask.h"

namespace tensorlet {

namespace {

Tensor vector_norm(const char* name, const Tensor& x, double p, const DimList& dims, bool keepdim) {
  if (autocast_detail::applies_cuda_float32(x) && is_reduced_float(x.dtype())) [[unlikely]] {
    const Tensor f = autocast_detail::to_float32(x);
    autocast_detail::InsideOp inside;
    return vector_norm(name, f, p, dims, keepdim);
  }
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  if (!is_floating_point(x.dtype()))
    fail<DTypeError>(name, "expected a floating point input, got ", x.dtype(),
                     "; convert it first, e.g. .to(tl::kFloat32)");
  const std::vector<bool> mask = reduce_mask(x, dims, name);
  const double inf = std::numeric_limits<double>::infinity();
  // max/min of |x| and |x|^p for p < 0 have no value for an empty slice: torch refuses them.
  if (p < 0 || p == inf) {
    for (int64_t d = 0; d < x.dim(); ++d)
      if (mask[d] && x.shape()[d] == 0)
        fail<IndexError>(name, "cannot compute the ", p, " norm over dim ", d, " of shape ",
                         x.shape(), ": the dim is empty and the norm has no identity");
  }
  // In a graph: one LinalgVectorNormBackward0 node for the composite computed below it.
  const bool record = autograd::should_record({&x});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  // float16/bfloat16: powers and sums in float32, one rounding at the end.
  const Tensor in = x.to(is_reduced_float(x.dtype()) ? kFloat32 : x.dtype());
  Tensor result;
  if (p == inf) {
    result = amax(abs(in), dims, keepdim);
  } else if (p == -inf) {
    result = amin(abs(in), dims, keepdim);
  } else if (p == 0) {
    result = sum(in != 0, dims, keepdim).to(in.dtype());  // NaN != 0: it counts, as torch
  } else if (p == 1) {
    result = sum(abs(in), dims, keepdim);
  } else if (p == 2) {
    result = sqrt(sum(in * in, dims, keepdim));  // unscaled, as torch: overflows as it does
  } else {
    result = pow(sum(pow(abs(in), p), dims, keepdim), 1.0 / p);
  }
  result = result.to(x.dtype());
  below.reset();
  if (record) autograd::record_norm(x, p, dims, keepdim, result);
  return result;
}

}  // namespace

Tensor norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  return vector_norm("tl::norm", x, p, dims, keepdim);
}

Tensor norm(const Tensor& x, std::string_view p, const DimList& dims, bool keepdim) {
  if (p != "fro")
    fail<Error>("tl::norm", "unsupported norm type \"", std::string(p),
                "\": the only string norm is \"fro\" (pass a number for a vector p-norm)");
  return vector_norm("tl::norm", x, 2, dims, keepdim);
}

}  // namespace tensorlet

// tl::var, tl::std, tl::var_mean, tl::std_mean: shifted two-pass composites (the mean of the
// data shifted by one of them, then the squared deviations from it).
#include <algorithm>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/reduce_mask.h"

namespace tensorlet {

namespace {

// {var or std, mean} over dims; one op scope names the public function in every error.
std::pair<Tensor, Tensor> moments(const char* name, const Tensor& x, const DimList& dims,
                                  double correction, bool keepdim, bool take_sqrt) {
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  if (!is_floating_point(x.dtype()))
    fail<DTypeError>(name, "std and var only support floating point dtypes, got ", x.dtype(),
                     "; convert it first, e.g. .to(tl::kFloat32)");
  const std::vector<bool> mask = reduce_mask(x, dims, name);
  int64_t count = 1;  // N: elements per output
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask[d]) count *= x.shape()[d];
  // The deviations are taken from the mean in a wider type than x (float32 in float64, as torch's
  // CPU accumulates; float16/bfloat16 in float32), rounded once at the end: a mean rounded to
  // x's type first would shift every deviation by its rounding error (for float32 values near
  // 1e4 spread by 1e-2, a variance off by 1e-3 relative).
  const Tensor in =
      x.to(x.dtype() == kFloat32 ? kFloat64 : (is_reduced_float(x.dtype()) ? kFloat32 : x.dtype()));
  // The data are shifted by one of their own values per output (the slice's first element)
  // before the mean is taken: a constant slice then has deviations of exactly 0 and a variance of
  // exactly 0 (as the Welford update of torch gives), where sum / N would round the mean and
  // leave deviations of one ulp, whose std's gradient is O(1) instead of masked to 0 (and differs
  // between devices that sum in other orders). Shifting by a data point also keeps a large mean
  // from cancelling.
  Tensor pivot;
  if (count > 0) {
    pivot = in;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (mask[d]) pivot = pivot.narrow(d, 0, 1);
  }
  const Tensor shifted = pivot.defined() ? in - pivot : in;
  const Tensor shifted_mean = mean(shifted, dims, true);
  const Tensor deviation = shifted - shifted_mean;
  const Tensor mean_kept = pivot.defined() ? shifted_mean + pivot : shifted_mean;
  // max(0, N - correction): N <= correction divides by 0, giving inf, or NaN for 0 / 0, as torch.
  const double divisor = std::max(0.0, static_cast<double>(count) - correction);
  Tensor result = sum(deviation * deviation, dims, keepdim) / divisor;
  if (take_sqrt) result = sqrt(result);
  const Tensor m = keepdim ? mean_kept : mean_kept.view(result.shape());
  return {result.to(x.dtype()), m.to(x.dtype())};
}

// In a graph: the moments computed below autograd, then one VarBackward0 / StdBackward0 node for
// the first and a mean node for the second (var_mean, std_mean).
std::pair<Tensor, Tensor> recorded_moments(const char* name, const Tensor& x, const DimList& dims,
                                           double correction, bool keepdim, bool take_sqrt) {
  if (!autograd::should_record({&x})) return moments(name, x, dims, correction, keepdim, take_sqrt);
  std::pair<Tensor, Tensor> out;
  {
    NoGradGuard below;
    out = moments(name, x, dims, correction, keepdim, take_sqrt);
  }
  autograd::record_var(take_sqrt, x, dims, correction, keepdim, out.first);
  autograd::record_reduction(autograd::Reduction::Mean, x, dims, keepdim, out.second);
  return out;
}

}  // namespace

Tensor var(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return recorded_moments("tl::var", x, dims, correction, keepdim, false).first;
}
Tensor std(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return recorded_moments("tl::std", x, dims, correction, keepdim, true).first;
}
std::pair<Tensor, Tensor> var_mean(const Tensor& x, const DimList& dims, double correction,
                                   bool keepdim) {
  return recorded_moments("tl::var_mean", x, dims, correction, keepdim, false);
}
std::pair<Tensor, Tensor> std_mean(const Tensor& x, const DimList& dims, double correction,
                                   bool keepdim) {
  return recorded_moments("tl::std_mean", x, dims, correction, keepdim, true);
}

}  // namespace tensorlet

// tl::histc front-end: torch's range rules (the data's min and max when min == max, found in one
// wait on a device), then one counting kernel.
#include <cmath>
#include <cstdint>
#include <vector>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/ordering.h"
#include "tensorlet/ops/reduce.h"

namespace tensorlet {

Tensor histc(const Tensor& x, int64_t bins, Scalar min, Scalar max) {
  const char* name = "tl::histc";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  // torch's CPU kernel takes floating inputs only (its CUDA one also integers, but not float16).
  if (!is_floating_point(x.dtype()))
    fail<DTypeError>(name, "expected a floating tensor, got ", x.dtype());
  if (bins <= 0) fail<ShapeError>(name, "bins must be > 0, got ", bins);
  double lo = min.to<double>(), hi = max.to<double>();
  if (lo == hi && x.numel() > 0) {
    const std::vector<double> extrema =
        stack({amin(x), amax(x)}).to(kFloat64).cpu().to_vector<double>();
    lo = extrema[0];
    hi = extrema[1];
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  if (!std::isfinite(lo) || !std::isfinite(hi))
    fail<Error>(name, "range of [", lo, ", ", hi, "] is not finite");
  if (!(lo < hi)) fail<Error>(name, "max must be larger than min, got min ", lo, " and max ", hi);
  Tensor out = make_tensor({bins}, x.dtype(), x.device());
  backend_for(x.device()).histc(x.contiguous(), lo, hi, out);
  return out;
}

}  // namespace tensorlet

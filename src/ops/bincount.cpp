// tl::bincount front-end: torch's checks and result dtype, the input's bounds found in one pass
// (one wait on a device), then one kernel adding into zeroed bins.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/ordering.h"

namespace tensorlet {

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  const char* name = "tl::bincount";
  profiler::OpScope scope(name);
  scope.inputs({&x, &weights});
  check_defined(x, name);
  if (!kIntegralDTypes.contains(x.dtype()))
    fail<DTypeError>(name, "expected an integer tensor (uint8, int8, int16, int32 or int64), got ",
                     x.dtype());
  if (minlength < 0) fail<ShapeError>(name, "minlength should be >= 0, got ", minlength);
  const Device device = x.device();
  if (weights.defined() && weights.device() != device)
    fail<DeviceError>(name, "expected weights on the input's device (", device, "), got ",
                      weights.device());
  // torch returns here before looking at the weights: int64 zeros even when weights are given.
  if (x.dim() == 1 && x.numel() == 0) {
    Tensor out = make_tensor({minlength}, kInt64, device);
    if (minlength > 0) backend_for(device).fill(out, 0);
    return out;
  }
  if (x.dim() != 1)
    fail<ShapeError>(name, "expected a 1-D tensor of non-negative integers, got shape ", x.shape());
  // The kernels read int32 or int64; narrower integers are widened once.
  const Tensor index =
      x.dtype() == kInt32 || x.dtype() == kInt64 ? x.contiguous() : x.to(kInt64).contiguous();
  int64_t lo = 0, hi = 0;
  backend_for(device).index_bounds(index, &lo, &hi);
  if (lo < 0) fail<IndexError>(name, "expected non-negative values (the bins' indices), got ", lo);
  if (weights.defined() && (weights.dim() != 1 || weights.shape()[0] != x.shape()[0]))
    fail<ShapeError>(name, "weights should be 1-D and have the input's length ", x.shape()[0],
                     ", got shape ", weights.shape());
  if (hi == std::numeric_limits<int64_t>::max())
    fail<ShapeError>(name, "the largest value ", hi, " + 1 bins overflows int64");
  const int64_t bins = std::max(hi + 1, minlength);
  // torch: float32 weights keep their dtype; every other dtype is converted to float64.
  const DType dtype = !weights.defined()            ? kInt64
                      : weights.dtype() == kFloat32 ? kFloat32
                                                    : kFloat64;
  Tensor out = make_tensor({bins}, dtype, device);
  backend_for(device).fill(out, 0);
  const Tensor w = weights.defined() ? weights.to(dtype).contiguous() : Tensor();
  backend_for(device).bincount(index, w, out);
  return out;
}

}  // namespace tensorlet

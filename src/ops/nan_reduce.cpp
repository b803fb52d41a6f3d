// tl::nansum, tl::nanmean, tl::count_nonzero: composites of sum and elementwise tests, under one
// op scope naming the public function.
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/reduce_mask.h"

namespace tensorlet {

namespace {

// A NaN counts as 0. Integers and bool have none: their nansum is their sum (int64).
Tensor nan_as_zero_sum(const Tensor& x, const DimList& dims, bool keepdim) {
  if (!is_floating_point(x.dtype())) return sum(x, dims, keepdim);
  return sum(where(isnan(x), 0, x), dims, keepdim);
}

}  // namespace

Tensor nansum(const Tensor& x, const DimList& dims, bool keepdim) {
  const char* name = "tl::nansum";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  reduce_mask(x, dims, name);  // checked here so a bad dim names tl::nansum
  return nan_as_zero_sum(x, dims, keepdim);
}

Tensor nanmean(const Tensor& x, const DimList& dims, bool keepdim) {
  const char* name = "tl::nanmean";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  if (!is_floating_point(x.dtype()))
    fail<DTypeError>(name, "expected a floating point input, got ", x.dtype(),
                     "; convert it first, e.g. .to(tl::kFloat32)");
  reduce_mask(x, dims, name);
  // As torch: nansum in x's dtype divided by the count of non-NaN elements (none: 0 / 0, NaN).
  const Tensor count = sum(logical_not(isnan(x)), dims, keepdim);
  return nan_as_zero_sum(x, dims, keepdim) / count;
}

Tensor count_nonzero(const Tensor& x, const DimList& dims) {
  const char* name = "tl::count_nonzero";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  reduce_mask(x, dims, name);
  return sum(x != 0, dims, false);  // a NaN is not zero and counts, as torch
}

}  // namespace tensorlet

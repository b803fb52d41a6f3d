// tl::median front-ends: the dim moved last and made contiguous, then the backend's per-row
// selection (no sort).
#include <limits>
#include <numeric>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/numerics.h"

namespace tensorlet {

namespace {

void check_median_dtype(const Tensor& x, const char* name) {
  if (x.dtype() == kBool)
    fail<DTypeError>(name,
                     "not implemented for dtype bool; convert it first, e.g. "
                     ".to(tl::kUInt8)");
}

Tensor median_all(const Tensor& x) {
  const char* name = "tl::median";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  check_median_dtype(x, name);
  const int64_t n = x.numel();
  // As torch: an empty input gives NaN (converted to an integer dtype as any NaN is).
  if (n == 0)
    return full({}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(kFloat64))
        .to(x.options());
  const Tensor in = x.contiguous().view({1, n});
  Tensor values = make_tensor({1}, x.dtype(), x.device());
  Tensor indices = make_tensor({1}, kInt64, x.device());
  backend_for(x.device()).median(in, values, indices);
  return values.view({});
}

ValuesIndices median_dim(const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = "tl::median";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);  // a 0-dim tensor takes 0 and -1
  check_median_dtype(x, name);
  if (x.dim() == 0) return {x.clone(), full({}, 0, TensorOptions(kInt64).device(x.device()))};
  const int64_t n = x.shape()[d];
  if (n == 0)
    fail<IndexError>(name, "expected reduction dim ", d, " to have non-zero size, got shape ",
                     x.shape());
  // The other dims in order, then d: each row of the contiguous copy is one slice.
  Shape order, kept;
  for (int64_t k = 0; k < x.dim(); ++k)
    if (k != d) {
      order.push_back(k);
      kept.push_back(x.shape()[k]);
    }
  order.push_back(d);
  const int64_t rows = kept.numel();
  Tensor values = make_tensor({rows}, x.dtype(), x.device());
  Tensor indices = make_tensor({rows}, kInt64, x.device());
  if (rows > 0) {
    const Tensor in = x.permute(order).contiguous().view({rows, n});
    backend_for(x.device()).median(in, values, indices);
  }
  Shape shape = kept;
  if (keepdim) shape.insert(d, 1);
  return {values.view(shape), indices.view(shape)};
}

}  // namespace

// median(): the gradient shared among the elements equal to the median, as torch's
// evenly_distribute_backward; with a dim, it goes to the index the median was taken from.
Tensor median(const Tensor& x) {
  if (!autograd::should_record({&x})) return median_all(x);
  Tensor out;
  {
    NoGradGuard below;
    out = median_all(x);
  }
  autograd::record_reduction(autograd::Reduction::Extreme, x, {}, false, out, "MedianBackward0");
  return out;
}

ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim) {
  return autograd::selecting_op("MedianBackward1", x, dim, keepdim,
                                [&] { return median_dim(x, dim, keepdim); });
}

}  // namespace tensorlet

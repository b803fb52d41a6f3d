// tl::unique / unique_consecutive front-ends: the tensor (flattened, or with dim moved first) as
// contiguous rows [n, m] for one backend kernel, and the results put back into torch's shapes.
#include <algorithm>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/ordering.h"

namespace tensorlet {

namespace {

Tensor empty_int64(const Shape& shape, Device device) { return make_tensor(shape, kInt64, device); }

UniqueResult unique_op(const char* name, const Tensor& x, bool consecutive, bool want_inverse,
                       bool want_counts, std::optional<int64_t> dim) {
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const Device device = x.device();
  if (!dim) {
    const int64_t n = x.numel();
    if (n == 0)
      return {make_tensor({0}, x.dtype(), device),
              want_inverse ? empty_int64(x.shape(), device) : Tensor(),
              want_counts ? empty_int64({0}, device) : Tensor()};
    UniqueResult r = backend_for(device).unique(x.contiguous().view({n, 1}), consecutive,
                                                want_inverse, want_counts);
    r.values = r.values.view({r.values.shape()[0]});
    if (want_inverse) r.inverse = r.inverse.view(x.shape());
    return r;
  }
  if (x.dim() == 0)
    fail<IndexError>(name, "dim ", *dim, " given for a 0-dim tensor, which has no dims");
  const int64_t d = wrap_dim(*dim, x.dim(), name);
  const int64_t n = x.shape()[d];
  const auto zero_dims = std::count(x.shape().begin(), x.shape().end(), int64_t{0});
  if (n == 0) {
    // torch: an empty dim gives an empty result of x's shape, unless another dim is empty too.
    if (zero_dims != 1)
      fail<ShapeError>(name, "more than one zero-size dim in shape ", x.shape(),
                       ": unique cannot be applied along dim ", d);
    return {make_tensor(x.shape(), x.dtype(), device),
            want_inverse ? empty_int64({0}, device) : Tensor(),
            want_counts ? empty_int64({0}, device) : Tensor()};
  }
  if (zero_dims > 0)
    fail<ShapeError>(name, "shape ", x.shape(), " has a zero-size dim other than dim ", d,
                     ": unique cannot be applied along dim ", d);
  const Tensor moved = x.movedim(d, 0).contiguous();
  UniqueResult r = backend_for(device).unique(moved.view({n, x.numel() / n}), consecutive,
                                              want_inverse, want_counts);
  Shape shape = moved.shape();
  shape[0] = r.values.shape()[0];
  r.values = r.values.view(shape).movedim(0, d).contiguous();
  return r;
}

}  // namespace

UniqueResult unique(const Tensor& x, bool /*sorted: always*/, bool return_inverse,
                    bool return_counts, std::optional<int64_t> dim) {
  return unique_op("tl::unique", x, false, return_inverse, return_counts, dim);
}

UniqueResult unique_consecutive(const Tensor& x, bool return_inverse, bool return_counts,
                                std::optional<int64_t> dim) {
  return unique_op("tl::unique_consecutive", x, true, return_inverse, return_counts, dim);
}

}  // namespace tensorlet

// masked_scatter: a composite of existing kernels. The mask's inclusive count (cumsum) gives each
// true element its place in source, one wait reads the total (checked against source's size),
// then index_select gathers the values and where writes them over self.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/scan.h"
#include "tensorlet/ops/scatter.h"
#include "tensorlet/ops/scatter_util.h"

namespace tensorlet {

namespace {

using namespace scatter_detail;

Tensor masked_scatter_op(const char* name, const Tensor& self, const Tensor& mask,
                         const Tensor& source, bool in_place) {
  profiler::OpScope scope(name);
  scope.inputs({&self, &mask, &source});
  check_defined(self, name);
  check_defined(mask, name);
  check_defined(source, name);
  check_same_device(name, self, mask, "mask");
  check_same_device(name, self, source, "source");
  if (mask.dtype() != kBool)
    fail<DTypeError>(name, "only supports boolean masks, but got mask with dtype ", mask.dtype());
  if (source.dtype() != self.dtype())
    fail<DTypeError>(name, "expected self and source to have the same dtype, got ", self.dtype(),
                     " and ", source.dtype());
  const Shape shape = broadcast_shapes(self.shape(), mask.shape(), name);
  if (in_place && shape != self.shape())
    fail<ShapeError>(name, "mask of shape ", mask.shape(), " does not broadcast to the shape ",
                     self.shape(), " of the tensor written");
  Tensor target = in_place ? write_target(name, self, true) : self.expand(shape).clone();
  // In place into a tensor outside the graph from a source in it: not differentiable yet.
  if (in_place && autograd::should_record({&source})) autograd::no_derivative(name);
  const int64_t n = target.numel();
  if (n == 0) return target;
  const Tensor flat_mask = mask.expand(shape).contiguous().reshape({n});
  const Tensor count = cumsum(flat_mask, 0);  // int64: true values up to and including each
  const int64_t total = count.select(0, n - 1).item<int64_t>();
  if (total > source.numel())
    fail<ShapeError>(name, "source has ", source.numel(), " elements but the mask has ", total,
                     " true values");
  if (total == 0) return target;
  const Tensor values = unaliased(source, target).contiguous().reshape({source.numel()});
  // A true element takes source[count - 1]; a false one reads any valid place (0) and is not
  // written.
  const Tensor place = maximum(sub(count, Scalar(int64_t{1})), Scalar(int64_t{0}));
  Backend& backend = backend_for(target.device());
  Tensor picked = make_tensor({n}, target.dtype(), target.device());
  backend.index_select(values, 0, place, picked);
  backend.where(flat_mask.reshape(shape), picked.reshape(shape), target, target);
  return target;
}

}  // namespace

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  return autograd::recorded_op(
      {&self, &source},
      [&] { return masked_scatter_op("tl::masked_scatter", self, mask, source, false); },
      [&](const Tensor& out) { autograd::record_masked(1, self, mask, &source, out); });
}

Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return tensorlet::masked_scatter(*this, mask, source);
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  masked_scatter_op("tl::masked_scatter_", *this, mask, source, true);
  return *this;
}

}  // namespace tensorlet

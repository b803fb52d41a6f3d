// Summing a node input's gradient parts (grad_sum.h): held small parts, one add_n per 16.
#include "tensorlet/autograd/grad_sum.h"

#include "tensorlet/tensor/grad_mode.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::autograd {

namespace {

constexpr const char* kAddN = "tl::add_n";

bool small_dense_float(const Tensor& t) {
  return is_floating_point(t.dtype()) && t.numel() <= kMaxHeldGradNumel && t.is_contiguous();
}

}  // namespace

Tensor add_n(const std::vector<Tensor>& parts) {
  profiler::OpScope scope(kAddN);
  scope.inputs_of(parts);
  if (parts.size() < 2) fail<Error>(kAddN, "expected 2 or more tensors, got ", parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = parts[i];
    check_defined(t, kAddN);
    if (!is_floating_point(t.dtype()) || t.dtype() != parts[0].dtype())
      fail<DTypeError>(kAddN, "expected floating tensors of one dtype, got ", parts[0].dtype(),
                       " and ", t.dtype(), " (tensor ", i, ")");
    if (t.shape() != parts[0].shape())
      fail<ShapeError>(kAddN, "expected tensors of one shape, got ", parts[0].shape(), " and ",
                       t.shape(), " (tensor ", i, ")");
    if (t.device() != parts[0].device())
      fail<DeviceError>(kAddN, "expected tensors on one device, got ", parts[0].device(), " and ",
                        t.device(), " (tensor ", i, ")");
    if (!t.is_contiguous()) fail<Error>(kAddN, "expected contiguous tensors (tensor ", i, ")");
  }
  Tensor out = make_tensor(parts[0].shape(), parts[0].dtype(), parts[0].device());
  if (out.numel() > 0) backend_for(out.device()).add_n(parts, out);
  return out;
}

bool GradSum::holds(const Tensor& part) const {
  if (GradMode::is_enabled() || !small_dense_float(part)) return false;
  const Tensor& first = parts_.front();
  return small_dense_float(first) && part.dtype() == first.dtype() &&
         part.shape() == first.shape() && part.device() == first.device();
}

void GradSum::add(const Tensor& part) {
  if (parts_.empty()) {
    parts_.push_back(part);
    return;
  }
  if (holds(part)) {
    parts_.push_back(part);
    if (parts_.size() == kMaxHeldGradParts) parts_ = {add_n(parts_)};
    return;
  }
  const Tensor sum = take();
  parts_ = {tensorlet::add(sum, part)};
}

Tensor GradSum::take() {
  Tensor sum;
  if (parts_.size() == 1)
    sum = std::move(parts_.front());
  else if (parts_.size() > 1)
    sum = add_n(parts_);
  parts_.clear();
  return sum;
}

}  // namespace tensorlet::autograd

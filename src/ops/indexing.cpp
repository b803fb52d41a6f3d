// Indexing front-ends: validation (dtypes, devices, shapes, index ranges) before any kernel runs.
#include "tensorlet/ops/indexing.h"

#include <optional>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/ops/index_range.h"
#include "tensorlet/ops/reduce.h"

namespace tensorlet {

namespace {

void check_same_device(const Tensor& a, const Tensor& other, const char* what, const char* op) {
  if (a.device() != other.device())
    fail<DeviceError>(op, "expected ", what, " on the input's device (", a.device(), "), got ",
                      other.device());
}

}  // namespace

Tensor nonzero(const Tensor& a) {
  profiler::OpScope scope("tl::nonzero");
  scope.inputs({&a});
  check_defined(a, "tl::nonzero");
  return backend_for(a.device()).nonzero(a);
}

std::vector<Tensor> nonzero_tuple(const Tensor& a) {
  profiler::OpScope scope("tl::nonzero_tuple");
  scope.inputs({&a});
  check_defined(a, "tl::nonzero_tuple");
  // As torch: a 0-dim input counts as 1-D with one element, giving one index tensor.
  Tensor input = a.dim() == 0 ? a.reshape({1}) : a;
  Tensor all_indices = backend_for(a.device()).nonzero(input);
  std::vector<Tensor> columns;
  columns.reserve(input.dim());
  for (int64_t d = 0; d < input.dim(); ++d) columns.push_back(all_indices.select(1, d));
  return columns;
}

Tensor masked_select(const Tensor& a, const Tensor& mask) {
  profiler::OpScope scope("tl::masked_select");
  scope.inputs({&a, &mask});
  check_defined(a, "tl::masked_select");
  check_defined(mask, "tl::masked_select");
  if (mask.dtype() != kBool)
    fail<DTypeError>("tl::masked_select", "expected a bool mask, got ", mask.dtype());
  check_same_device(a, mask, "mask", "tl::masked_select");
  const Shape shape = broadcast_shapes(a.shape(), mask.shape(), "tl::masked_select");
  // The kernel reads the broadcast view below autograd; the node reduces back to a's shape.
  return autograd::recorded_op(
      {&a},
      [&] { return backend_for(a.device()).masked_select(a.expand(shape), mask.expand(shape)); },
      [&](const Tensor& out) { autograd::record_masked(2, a, mask, nullptr, out); });
}

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  profiler::OpScope scope("tl::index_select");
  scope.inputs({&a, nullptr, &index});
  const bool record = autograd::should_record({&a});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  check_defined(a, "tl::index_select");
  check_defined(index, "tl::index_select");
  if (index.dtype() != kInt64 && index.dtype() != kInt32)
    fail<DTypeError>("tl::index_select", "expected index of dtype int64 or int32, got ",
                     index.dtype());
  if (index.dim() > 1)
    fail<ShapeError>("tl::index_select", "expected a 1-D or 0-dim index, got shape ",
                     index.shape());
  check_same_device(a, index, "index", "tl::index_select");
  dim = wrap_dim(dim, a.dim(), "tl::index_select");
  // A 0-dim input behaves as 1-D of one element and gives a 0-dim result (torch does the same).
  if (a.dim() == 0) {
    if (index.numel() != 1)
      fail<IndexError>("tl::index_select",
                       "index of a 0-dim input must have exactly one value, got ", index.numel());
    check_index_range("tl::index_select", index, 1, 0);
    Tensor copy = a.clone();
    if (record) autograd::record_to(a, copy, "IndexSelectBackward0");
    return copy;
  }
  const int64_t size = a.shape()[dim];
  check_index_range("tl::index_select", index, size, dim);
  Shape shape = a.shape();
  shape[dim] = index.numel();
  Tensor out = make_tensor(shape, a.dtype(), a.device());
  if (out.numel() > 0)
    backend_for(a.device()).index_select(a, dim, index.to(kInt64).reshape({index.numel()}), out);
  if (record) autograd::record_index(false, a, dim, index.to(kInt64).reshape({index.numel()}), out);
  return out;
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  profiler::OpScope scope("tl::gather");
  scope.inputs({&a, nullptr, &index});
  const bool record = autograd::should_record({&a});
  std::optional<NoGradGuard> below;
  if (record) below.emplace();
  check_defined(a, "tl::gather");
  check_defined(index, "tl::gather");
  if (index.dtype() != kInt64 && index.dtype() != kInt32)
    fail<DTypeError>("tl::gather", "expected index of dtype int64 or int32, got ", index.dtype());
  check_same_device(a, index, "index", "tl::gather");
  if (index.dim() != a.dim())
    fail<ShapeError>("tl::gather", "expected index with as many dims as the input (", a.dim(),
                     "), got shape ", index.shape(), " for input shape ", a.shape());
  dim = wrap_dim(dim, a.dim(), "tl::gather");
  for (int64_t d = 0; d < a.dim(); ++d)
    if (d != dim && index.shape()[d] > a.shape()[d])
      fail<ShapeError>("tl::gather", "expected index size <= input size at every dim but ", dim,
                       ", got index shape ", index.shape(), " and input shape ", a.shape(),
                       " (dim ", d, ")");
  check_index_range("tl::gather", index, a.dim() ? a.shape()[dim] : 1, dim);
  Tensor out = make_tensor(index.shape(), a.dtype(), a.device());
  // The kernels read int64 indices; int32 ones (accepted as torch does) are widened once.
  if (out.numel() > 0)
    backend_for(a.device()).gather(a, dim, index.dtype() == kInt64 ? index : index.to(kInt64), out);
  if (record) autograd::record_index(true, a, dim, index, out);
  return out;
}

}  // namespace tensorlet

// Joining front-ends: every function reduces to one checked cat, which the backend runs as a
// single many-input copy.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/ops/joining.h"

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet {
namespace {

// torch's legacy rule: a 1-D empty tensor joins anything (it is skipped), whatever its ndim.
bool skipped(const Tensor& t) { return t.dim() == 1 && t.shape()[0] == 0; }

void check_list(const char* op, const std::vector<Tensor>& tensors) {
  if (tensors.empty()) fail<ShapeError>(op, "expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!tensors[i].defined()) fail<Error>(op, "tensor ", i, " in the list is undefined");
}

// cat with errors named after `op` (the front-end the user called).
Tensor cat_checked(const char* op, const std::vector<Tensor>& tensors, int64_t dim) {
  check_list(op, tensors);
  const Device device = tensors[0].device();
  DType dtype = tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].device() != device)
      fail<DeviceError>(op, "expected all tensors on the same device, got ", device,
                        " for tensor 0 and ", tensors[i].device(), " for tensor ", i);
    dtype = promote_types(dtype, tensors[i].dtype());
  }
  int64_t ref = -1;
  for (size_t i = 0; i < tensors.size() && ref < 0; ++i)
    if (!skipped(tensors[i])) ref = static_cast<int64_t>(i);
  if (ref < 0) return make_tensor({0}, dtype, device);  // only [0]-shaped inputs

  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].dim() == 0)
      fail<ShapeError>(op, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  const Tensor& first = tensors[ref];
  dim = wrap_dim(dim, first.dim(), op);
  Shape out_shape = first.shape();
  out_shape[dim] = 0;
  std::vector<Tensor> inputs;
  inputs.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    if (t.dim() != first.dim())
      fail<ShapeError>(op, "tensors must have the same number of dimensions: tensor ", ref,
                       " has shape ", first.shape(), " but tensor ", i, " has shape ", t.shape());
    for (int64_t d = 0; d < t.dim(); ++d)
      if (d != dim && t.shape()[d] != first.shape()[d])
        fail<ShapeError>(op, "sizes of tensors must match except in dimension ", dim,
                         ": expected size ", first.shape()[d], " but got size ", t.shape()[d],
                         " in dimension ", d, " for tensor ", i, " (shapes ", first.shape(),
                         " and ", t.shape(), ")");
    // Expanded inputs make huge sizes cheap: the sum must not wrap.
    if (__builtin_add_overflow(out_shape[dim], t.shape()[dim], &out_shape[dim]))
      fail<ShapeError>(op, "the total size of dimension ", dim, " overflows int64 (tensor ", i,
                       " has shape ", t.shape(), ")");
    // The backend takes inputs in out's dtype; only mismatched ones pay a conversion.
    if (t.numel() > 0) inputs.push_back(t.dtype() == dtype ? t : t.to(dtype));
  }
  Tensor out = make_tensor(out_shape, dtype, device);
  if (out.numel() > 0) backend_for(device).cat(inputs, dim, out);
  if (autograd::any_requires_grad(tensors)) autograd::record_cat(tensors, dim, out);
  return out;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  profiler::OpScope scope("tl::cat");
  scope.inputs_of(tensors);
  return cat_checked("tl::cat", tensors, dim);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  profiler::OpScope scope("tl::stack");
  scope.inputs_of(tensors);
  check_list("tl::stack", tensors);
  const Shape& shape = tensors[0].shape();
  for (size_t i = 1; i < tensors.size(); ++i)
    if (tensors[i].shape() != shape)
      fail<ShapeError>("tl::stack", "expected each tensor to be equal size, but got ", shape,
                       " at entry 0 and ", tensors[i].shape(), " at entry ", i);
  dim = wrap_dim(dim, shape.size() + 1, "tl::stack");
  std::vector<Tensor> views;
  views.reserve(tensors.size());
  for (const Tensor& t : tensors) views.push_back(t.unsqueeze(dim));
  return cat_checked("tl::stack", views, dim);
}

Tensor atleast_1d(const Tensor& a) {
  check_defined(a, "tl::atleast_1d");
  return a.dim() == 0 ? a.reshape({1}) : a;
}

Tensor atleast_2d(const Tensor& a) {
  check_defined(a, "tl::atleast_2d");
  if (a.dim() == 0) return a.reshape({1, 1});
  if (a.dim() == 1) return a.unsqueeze(0);
  return a;
}

Tensor atleast_3d(const Tensor& a) {
  check_defined(a, "tl::atleast_3d");
  if (a.dim() == 0) return a.reshape({1, 1, 1});
  if (a.dim() == 1) return a.unsqueeze(0).unsqueeze(2);  // [n] -> [1, n, 1]
  if (a.dim() == 2) return a.unsqueeze(2);               // [m, n] -> [m, n, 1]
  return a;
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  profiler::OpScope scope("tl::vstack");
  scope.inputs_of(tensors);
  check_list("tl::vstack", tensors);
  std::vector<Tensor> views;
  views.reserve(tensors.size());
  for (const Tensor& t : tensors) views.push_back(atleast_2d(t));
  return cat_checked("tl::vstack", views, 0);
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  profiler::OpScope scope("tl::hstack");
  scope.inputs_of(tensors);
  check_list("tl::hstack", tensors);
  std::vector<Tensor> views;
  views.reserve(tensors.size());
  for (const Tensor& t : tensors) views.push_back(atleast_1d(t));
  return cat_checked("tl::hstack", views, views[0].dim() == 1 ? 0 : 1);
}

Tensor dstack(const std::vector<Tensor>& tensors) {
  profiler::OpScope scope("tl::dstack");
  scope.inputs_of(tensors);
  check_list("tl::dstack", tensors);
  std::vector<Tensor> views;
  views.reserve(tensors.size());
  for (const Tensor& t : tensors) views.push_back(atleast_3d(t));
  return cat_checked("tl::dstack", views, 2);
}

}  // namespace tensorlet

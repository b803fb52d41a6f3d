// The out= argument of an op: validation, torch's resizing of an empty destination, and the choice
// between writing into it and computing aside.
#include "tensorlet/ops/out_arg.h"

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/inplace.h"

#include "tensorlet/backends/backend.h"

namespace tensorlet {

bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

bool has_internal_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.shape()[d] > 1) return true;
  return false;
}

void check_writable(const char* op, const Tensor& t, bool differentiable) {
  if (has_internal_overlap(t))
    fail<ShapeError>(op, "cannot write into a tensor with broadcast (stride 0) dims, shape ",
                     t.shape(), " strides ", t.strides());
  if (differentiable)
    autograd::check_inplace_differentiable(op, t);
  else
    autograd::check_inplace(op, t);
}

namespace {

// An input that reads out's memory anywhere but at the element being written: the kernel would
// read values it has already overwritten.
bool reads_across(const Tensor& in, const Tensor& out) {
  if (in.storage() != out.storage() || in.numel() == 0) return false;
  return !(in.data_ptr() == out.data_ptr() && in.shape() == out.shape() &&
           in.strides() == out.strides() && in.dtype() == out.dtype());
}

}  // namespace

Tensor out_target(const char* op, Tensor& out, const Shape& shape, DType dtype, Device device,
                  std::initializer_list<const Tensor*> inputs) {
  check_defined(out, op);
  if (!(out.device() == device))
    fail<DeviceError>(op, "out= is on ", out.device(), " but the result is on ", device);
  if (!can_cast(dtype, out.dtype()))
    fail<DTypeError>(op, "result type ", dtype, " can't be cast to the desired output type ",
                     out.dtype());
  if (out.numel() == 0 && out.shape() != shape)  // torch resizes an empty out
    out.mutable_impl() = make_tensor(shape, out.dtype(), device).impl();
  if (out.shape() != shape)
    fail<ShapeError>(op, "out= has shape ", out.shape(), " but the result has shape ", shape);
  check_writable(op, out);
  // out= forms (and the in-place forms written through here) record nothing: refused when an
  // input requires grad, as torch's, rather than dropping its gradient.
  if (autograd::should_record(inputs))
    fail<Error>(op,
                "functions with out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad.");
  bool direct = out.dtype() == dtype;
  for (const Tensor* in : inputs)
    if (in && reads_across(*in, out)) direct = false;
  return direct ? out : make_tensor(shape, dtype, device);
}

Tensor& finish_out(Tensor& out, const Tensor& target) {
  if (!target.is_same(out) && out.numel() > 0) backend_for(out.device()).copy(target, out);
  return out;
}

}  // namespace tensorlet

// Tensor methods that run a kernel: copies, fills, dtype and device conversions, host read-back.
#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/inplace.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/scalar_check.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Whether writing into `out` could also change `src` before it is read (shared storage).
static bool may_overlap(const Tensor& out, const Tensor& src) {
  return out.storage() == src.storage() && out.numel() > 0 && src.numel() > 0;
}

// True when some element of `t` is reached through two indices (a broadcast dim).
static bool has_internal_overlap(const Tensor& t) {
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.strides()[i] == 0 && t.shape()[i] > 1) return true;
  return false;
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  profiler::OpScope scope("tl::copy_");
  scope.inputs({this, &src});
  check_defined(*this, "tl::copy_");
  check_defined(src, "tl::copy_");
  if (has_internal_overlap(*this))
    fail<ShapeError>("tl::copy_",
                     "cannot write into a tensor with broadcast (stride 0) dims, shape ", shape(),
                     " strides ", strides());
  Tensor source = src;
  if (src.shape() != shape()) {
    try {
      source = src.expand(shape());
    } catch (const ShapeError&) {
      fail<ShapeError>("tl::copy_", "source shape ", src.shape(),
                       " cannot broadcast to destination shape ", shape());
    }
  }
  // As the user's own call, copy_ from a tensor that requires grad would need a node; inside
  // another op (a conversion of its input), the op records its own.
  const char* outer = profiler::user_op();
  const bool user_call = outer && std::string_view(outer) == "tl::copy_";
  // Recorded by autograd (the user's copy_ into or from a graph): self's history becomes the
  // source's (CopyBackwards: the gradient goes back to src's dtype and device; none to self's old
  // value).
  const bool record = user_call && autograd::should_record({this, &src});
  if (record)
    autograd::check_inplace_differentiable("tl::copy_", *this);
  else
    autograd::check_inplace("tl::copy_", *this, {user_call ? &src : nullptr});
  if (record) {
    const autograd::Edge self_edge = autograd::gradient_edge(*this);
    {
      NoGradGuard below;
      copy_(src, non_blocking);  // now not the user's call: plain
    }
    std::shared_ptr<autograd::Node> node;
    if (autograd::requires_grad(source)) {
      autograd::record_to(source, *this, "CopyBackwards");
      node = grad_fn();
    }
    autograd::commit_written(*this, node, self_edge);
    return *this;
  }
  if (numel() == 0) return *this;
  // Overlapping self-copies (x.slice(...).copy_(x.slice(...))) go through a temporary.
  if (may_overlap(*this, source) &&
      !(source.data_ptr() == data_ptr() && source.strides() == strides()))
    source = source.clone();
  backend_for(device(), source.device()).copy(source, *this, non_blocking);
  return *this;
}

Tensor& Tensor::fill_(Scalar value) {
  profiler::OpScope scope("tl::fill_");
  if (has_internal_overlap(*this))
    fail<ShapeError>("tl::fill_", "cannot write into a tensor with broadcast (stride 0) dims");
  // As torch: a fraction is truncated into an integer tensor (fill_(1.5) stores 1), but a value
  // outside the dtype's range is refused rather than wrapped (full({2}, 1e10, kInt32)).
  check_scalar_fits(profiler::user_op_or("tl::fill_"), "fill value", value, dtype());
  // A tensor in a graph filled with a number no longer depends on anything: its history ends
  // (torch's FillBackward gives its old inputs zero gradient; here they get none).
  const bool in_graph = autograd::should_record({this});
  if (in_graph)
    autograd::check_inplace_differentiable(profiler::user_op_or("tl::fill_"), *this);
  else
    autograd::check_inplace(profiler::user_op_or("tl::fill_"), *this);
  const autograd::Edge self_edge = in_graph ? autograd::gradient_edge(*this) : autograd::Edge{};
  if (numel() > 0) backend_for(device()).fill(*this, value);
  if (in_graph) {
    storage()->bump_version();
    autograd::commit_written(*this, nullptr, self_edge);
  }
  return *this;
}

Tensor& Tensor::operator=(const Tensor& src) && { return copy_(src); }
Tensor& Tensor::operator=(Scalar value) && { return fill_(value); }

Tensor Tensor::contiguous() const {
  check_defined(*this, "tl::contiguous");
  if (is_contiguous()) return *this;
  // The copy is an op of its own (as aten::contiguous over aten::clone): its errors name it.
  profiler::OpScope scope("tl::contiguous");
  return clone();
}

Tensor Tensor::clone() const {
  profiler::OpScope scope("tl::clone");
  scope.inputs({this});
  Tensor out = make_tensor(shape(), dtype(), device());
  if (numel() > 0) backend_for(device()).copy(*this, out);
  if (autograd::should_record({this})) autograd::record_to(*this, out, "CloneBackward0");
  return out;
}

// The two halves of to(), without an op scope of their own: to(options) changing both dtype and
// device is one tl::to row, as one call.
static Tensor converted(const Tensor& t, DType dtype) {
  Tensor out = make_tensor(t.shape(), dtype, t.device());
  if (t.numel() > 0) backend_for(t.device()).copy(t, out);
  return out;
}

static Tensor moved(const Tensor& t, Device device, bool non_blocking) {
  // A non-blocking copy to the host lands in pinned memory, so it can run asynchronously.
  const bool pinned = non_blocking && device.is_cpu() && t.is_cuda();
  Tensor out = make_tensor(t.shape(), t.dtype(), device, pinned);
  if (t.numel() > 0) backend_for(device, t.device()).copy(t, out, non_blocking);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  check_defined(*this, "tl::to");
  if (dtype == this->dtype()) return *this;
  profiler::OpScope scope("tl::to");
  scope.inputs({this});
  Tensor out = converted(*this, dtype);
  if (autograd::should_record({this})) autograd::record_to(*this, out);
  return out;
}

Tensor Tensor::to(Device device, bool non_blocking) const {
  check_defined(*this, "tl::to");
  if (device == this->device()) return *this;
  profiler::OpScope scope("tl::to");
  scope.inputs({this});
  Tensor out = moved(*this, device, non_blocking);
  if (autograd::should_record({this})) autograd::record_to(*this, out);
  return out;
}

Tensor Tensor::pin_memory() const {
  profiler::OpScope scope("tl::pin_memory");
  if (!is_cpu())
    fail<DeviceError>("tl::pin_memory", "only CPU tensors can be pinned, not ", device());
  if (is_pinned()) return *this;
  Tensor out = make_tensor(shape(), dtype(), device(), true);
  if (numel() > 0) backend_for(device()).copy(*this, out);
  return out;
}

Tensor Tensor::to(const TensorOptions& options) const {
  check_defined(*this, "tl::to");
  const bool new_dtype = options.has_dtype() && options.dtype() != dtype();
  const bool new_device = options.has_device() && options.device() != device();
  if (!new_dtype && !new_device) return *this;
  profiler::OpScope scope("tl::to");
  scope.inputs({this});
  const Tensor t = new_dtype ? converted(*this, options.dtype()) : *this;
  Tensor out = new_device ? moved(t, options.device(), false) : t;
  if (autograd::should_record({this})) autograd::record_to(*this, out);
  return out;
}

template <ElementType T>
T Tensor::item() const {
  profiler::OpScope scope("tl::item");  // errors of the copy (a CUDA graph capture) name it
  check_defined(*this, "tl::item");
  if (numel() != 1)
    fail<ShapeError>("tl::item", "a Tensor with ", numel(),
                     " elements cannot be converted to a scalar");
  // Read in the tensor's own dtype, then converted as LibTorch's item<T>() (Scalar::to) does: a
  // value that T cannot hold (NaN or 1e10 as int32, 2^40 as int32) is refused, not wrapped.
  Tensor host = make_tensor({}, dtype(), Device::cpu());
  // The 0-d view is made below autograd: reading a value (loss.item()) is no differentiable op.
  backend_for(device()).copy(make_view(*this, {}, {}, offset()), host);
  const Scalar value =
      dispatch_dtype(dtype(), [&]<typename S>() { return Scalar(load<S>(host.data_ptr())); });
  check_scalar_fits(profiler::user_op_or("tl::item"), "value", value, dtype_of_v<T>);
  return value.to<T>();
}

// The host copy is made first, through the capped allocator: a vector of a huge view's size
// would fail as std::bad_alloc (or abort under AddressSanitizer) instead of OutOfMemoryError.
template <ElementType T>
std::vector<T> Tensor::to_vector() const {
  profiler::OpScope scope("tl::to_vector");  // errors (out of memory) name it
  if (numel() == 0) return {};
  Tensor host = make_tensor(shape(), dtype_of_v<T>, Device::cpu());
  backend_for(device()).copy(*this, host);
  const T* p = static_cast<const T*>(host.data_ptr());
  return std::vector<T>(p, p + numel());
}

// std::vector<bool> is bit-packed, so it is built from the host tensor's bytes.
template <>
std::vector<bool> Tensor::to_vector<bool>() const {
  profiler::OpScope scope("tl::to_vector");
  if (numel() == 0) return {};
  Tensor host = make_tensor(shape(), kBool, Device::cpu());
  backend_for(device()).copy(*this, host);
  const uint8_t* p = static_cast<const uint8_t*>(host.data_ptr());
  return std::vector<bool>(p, p + numel());
}

// Every element type of the dtype list. to_vector<bool> is the specialization above; its explicit
// instantiation here has no effect ([temp.explicit]: it follows the specialization).
#define TL_INSTANTIATE(e, T, name, kind) \
  template T Tensor::item<T>() const;    \
  template std::vector<T> Tensor::to_vector<T>() const;
TL_DTYPES(TL_INSTANTIATE)
#undef TL_INSTANTIATE

}  // namespace tensorlet

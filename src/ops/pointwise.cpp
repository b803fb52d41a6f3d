// Front-ends of lerp, isclose and nan_to_num: torch's dtype and shape rules, then one
// backend kernel each (backends/math/pointwise_ops.h holds the element math).
#include "tensorlet/ops/pointwise.h"

#include <limits>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/host_scalar.h"
#include "tensorlet/ops/out_arg.h"

namespace tensorlet {
namespace {

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (!(a.device() == b.device()))
    fail<DeviceError>(op, "expected all tensors to be on the same device, but found ", a.device(),
                      " and ", b.device());
}

// `t` viewed at `shape` (stride 0 on broadcast dims).
Tensor at_shape(const Tensor& t, const Shape& shape) {
  return t.shape() == shape ? t : t.expand(shape);
}

// lerp and lerp_: weight a tensor, or (weight_tensor null) the number `weight`; into: lerp_'s self.
Tensor lerp_op(const Tensor& start, const Tensor& end, const Tensor* weight_tensor, Scalar weight,
               Tensor* into) {
  const char* name = into ? "tl::lerp_" : "tl::lerp";
  profiler::OpScope scope(name);
  scope.inputs({&start, &end, weight_tensor});
  check_defined(start, name);
  check_defined(end, name);
  if (weight_tensor) check_defined(*weight_tensor, name);
  const DType dtype = start.dtype();
  if (!is_floating_point(dtype))
    fail<DTypeError>(name, "expected a floating point tensor, got dtype ", dtype);
  if (end.dtype() != dtype)
    fail<DTypeError>(name, "expected dtype ", dtype, " for `end` but got dtype ", end.dtype());
  if (weight_tensor && weight_tensor->dtype() != dtype)
    fail<DTypeError>(name, "expected dtype ", dtype, " for `weight` but got dtype ",
                     weight_tensor->dtype());
  check_same_device(name, start, end);
  // A 0-dim CPU weight beside device tensors is read on the host and passed as a number, as
  // torch's CUDA lerp does with a CPU scalar weight (start and end are never read that way).
  const bool host_weight = weight_tensor && is_host_scalar(*weight_tensor, start.device());
  if (weight_tensor && !host_weight) check_same_device(name, start, *weight_tensor);
  if (host_weight) weight = host_scalar_value(*weight_tensor);
  Shape shape = broadcast_shapes(start.shape(), end.shape(), name);
  if (weight_tensor) shape = broadcast_shapes(shape, weight_tensor->shape(), name);
  if (into && shape != into->shape())
    fail<ShapeError>(name, "output with shape ", into->shape(),
                     " doesn't match the broadcast shape ", shape);
  const Tensor s = at_shape(start, shape), e = at_shape(end, shape);
  Tensor w;
  if (weight_tensor && !host_weight) w = at_shape(*weight_tensor, shape);
  const ElementwiseArg warg =
      w.defined() ? ElementwiseArg(w)
                  : ElementwiseArg(dispatch_dtype<kFloatingDTypes>(
                        dtype, [&]<typename T>() { return Scalar(weight.to<compute_t<T>>()); }));
  if (into) check_writable(name, *into);
  Tensor out = into ? out_target(name, *into, shape, dtype, start.device(), {&end, weight_tensor})
                    : make_tensor(shape, dtype, start.device());
  if (out.numel() > 0) backend_for(start.device()).lerp(s, e, warg, out);
  return into ? finish_out(*into, out) : out;
}

Tensor nan_to_num_op(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                     std::optional<double> neginf, Tensor* into) {
  const char* name = into ? "tl::nan_to_num_" : "tl::nan_to_num";
  profiler::OpScope scope(name);
  scope.inputs({&a});
  check_defined(a, name);
  if (into) check_writable(name, a);
  if (!is_floating_point(a.dtype()))
    return into ? *into : a.clone();  // nothing to replace, as torch
  // The replacements as values of a's dtype (a double beyond float's range rounds to infinity,
  // as torch's static_cast).
  Scalar fill[3];
  dispatch_dtype<kFloatingDTypes>(a.dtype(), [&]<typename T>() {
    using L = std::numeric_limits<T>;
    fill[0] = Scalar(static_cast<double>(static_cast<compute_t<T>>(convert<T>(nan.value_or(0)))));
    fill[1] = Scalar(posinf ? static_cast<double>(static_cast<compute_t<T>>(convert<T>(*posinf)))
                            : static_cast<double>(static_cast<compute_t<T>>(L::max())));
    fill[2] = Scalar(neginf ? static_cast<double>(static_cast<compute_t<T>>(convert<T>(*neginf)))
                            : static_cast<double>(static_cast<compute_t<T>>(L::lowest())));
  });
  Tensor out = into ? *into : make_tensor(a.shape(), a.dtype(), a.device());
  if (out.numel() > 0) backend_for(a.device()).nan_to_num(a, fill[0], fill[1], fill[2], out);
  return out;
}

}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return autograd::recorded_op(
      {&start, &end, &weight}, [&] { return lerp_op(start, end, &weight, Scalar(), nullptr); },
      [&](const Tensor& out) { autograd::record_lerp(start, end, &weight, 0, out); });
}
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) {
  return autograd::recorded_op(
      {&start, &end}, [&] { return lerp_op(start, end, nullptr, weight, nullptr); },
      [&](const Tensor& out) {
        autograd::record_lerp(start, end, nullptr, weight.to<double>(), out);
      });
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  lerp_op(*this, end, &weight, Scalar(), this);
  return *this;
}
Tensor& Tensor::lerp_(const Tensor& end, Scalar weight) {
  lerp_op(*this, end, nullptr, weight, this);
  return *this;
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  return tensorlet::lerp(*this, end, weight);
}
Tensor Tensor::lerp(const Tensor& end, Scalar weight) const {
  return tensorlet::lerp(*this, end, weight);
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  const char* name = "tl::isclose";
  profiler::OpScope scope(name);
  scope.inputs({&a, &b});
  check_defined(a, name);
  check_defined(b, name);
  if (a.dtype() != b.dtype())
    fail<DTypeError>(name, "expected both inputs to have the same dtype, but got ", a.dtype(),
                     " and ", b.dtype());
  // torch composes isclose from binary ops, so either side may be a 0-dim CPU tensor beside a
  // device one; the kernel reads tensors, so its value is filled into a device one.
  const Device device = common_device_of({&a, &b});
  check_inputs_on(name, device, {&a, &b});
  // Written so that NaN tolerances are refused too.
  if (!(rtol >= 0)) fail<Error>(name, "rtol must be greater than or equal to zero, but got ", rtol);
  if (!(atol >= 0)) fail<Error>(name, "atol must be greater than or equal to zero, but got ", atol);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = make_tensor(shape, kBool, device);
  if (out.numel() == 0) return out;
  const Tensor ta = is_host_scalar(a, device) ? host_scalar_on(a, device, a.dtype()) : a;
  const Tensor tb = is_host_scalar(b, device) ? host_scalar_on(b, device, b.dtype()) : b;
  backend_for(device).isclose(at_shape(ta, shape), at_shape(tb, shape), rtol, atol, equal_nan, out);
  return out;
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return tensorlet::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return tensorlet::allclose(*this, other, rtol, atol, equal_nan);
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  return autograd::recorded_op(
      {&a}, [&] { return nan_to_num_op(a, nan, posinf, neginf, nullptr); },
      [&](const Tensor& out) { autograd::record_nan_to_num(a, out); });
}
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  return tensorlet::nan_to_num(*this, nan, posinf, neginf);
}
Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf,
                            std::optional<double> neginf) {
  nan_to_num_op(*this, nan, posinf, neginf, this);
  return *this;
}

}  // namespace tensorlet

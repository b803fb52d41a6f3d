// Factories: tensors made from a shape and a fill rule, or from host values.
#include "tensor/factories.h"

#include <cmath>
#include <cstring>

#include "backends/dispatch.h"
#include "profiler/op_scope.h"
#include "tensor/convert.h"

namespace tensorlet {

Tensor empty(const Shape& shape, TensorOptions options) {
  profiler::OpScope scope("tl::empty");
  if (options.pinned_memory() && !options.device().is_cpu())
    fail<DeviceError>("tl::empty", "only CPU tensors can be pinned, not ", options.device());
  return make_tensor(shape, options.dtype(), options.device(), options.pinned_memory());
}

Tensor zeros(const Shape& shape, TensorOptions options) {
  profiler::OpScope scope("tl::zeros");
  Tensor t = empty(shape, options);
  t.fill_(0);
  return t;
}

Tensor ones(const Shape& shape, TensorOptions options) {
  profiler::OpScope scope("tl::ones");
  Tensor t = empty(shape, options);
  t.fill_(1);
  return t;
}

Tensor full(const Shape& shape, Scalar value, TensorOptions options) {
  profiler::OpScope scope("tl::full");
  if (!options.has_dtype()) options = options.dtype(default_dtype_for(value.kind()));
  Tensor t = empty(shape, options);
  t.fill_(value);
  return t;
}

Tensor scalar_tensor(Scalar value, TensorOptions options) {
  return full({}, value, options.dtype(options.dtype()));
}

// Writes n host-computed values into a new tensor on options' device.
template <typename Fn>
static Tensor from_host_values(const Shape& shape, const TensorOptions& options,
                               const Fn& value_at) {
  Tensor host = make_tensor(shape, options.dtype(), Device::cpu());
  int64_t n = shape.numel();
  dispatch_dtype(options.dtype(), [&]<typename T>() {
    T* p = static_cast<T*>(host.data_ptr());
    // convert (tensor/convert.h): a value beyond an integer dtype is defined, not undefined.
    for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(value_at(i));
  });
  return host.to(options.device());
}

Tensor arange(Scalar end, TensorOptions options) { return arange(0, end, 1, options); }

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options) {
  profiler::OpScope scope("tl::arange");
  bool integral =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  if (!options.has_dtype()) options = options.dtype(integral ? kInt64 : kFloat32);
  double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
  if (st == 0) fail<Error>("tl::arange", "step must be nonzero");
  if (!std::isfinite(s) || !std::isfinite(e))
    fail<Error>("tl::arange", "unsupported range: ", s, " -> ", e);
  if ((st > 0 && e < s) || (st < 0 && e > s))
    fail<Error>("tl::arange", "upper bound and larger bound inconsistent with step sign: start ", s,
                ", end ", e, ", step ", st);
  int64_t n =
      integral
          ? (std::abs(end.to<int64_t>() - start.to<int64_t>()) + std::abs(step.to<int64_t>()) - 1) /
                std::abs(step.to<int64_t>())
          : static_cast<int64_t>(std::ceil((e - s) / st));
  if (integral && is_integral(options.dtype())) {
    int64_t is = start.to<int64_t>(), ist = step.to<int64_t>();
    return from_host_values({n}, options, [&](int64_t i) { return is + i * ist; });
  }
  return from_host_values({n}, options, [&](int64_t i) { return s + static_cast<double>(i) * st; });
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions options) {
  profiler::OpScope scope("tl::linspace");
  if (steps < 0)
    fail<ShapeError>("tl::linspace", "number of steps must be non-negative, got ", steps);
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0;
  // Computed from both ends, so the last value is exactly `end` (as torch does).
  int64_t half = steps / 2;
  return from_host_values({steps}, options, [&](int64_t i) {
    return i < half || steps == 1 ? start + step * static_cast<double>(i)
                                  : end - step * static_cast<double>(steps - 1 - i);
  });
}

Tensor eye(int64_t n, TensorOptions options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, TensorOptions options) {
  profiler::OpScope scope("tl::eye");
  if (n < 0 || m < 0)
    fail<ShapeError>("tl::eye", "n and m must be non-negative, got ", n, " and ", m);
  return from_host_values({n, m}, options, [m](int64_t i) { return i / m == i % m ? 1 : 0; });
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device) {
  Shape s = shape.empty() ? Shape{static_cast<int64_t>(values.size())} : shape;
  if (s.numel() != static_cast<int64_t>(values.size()))
    fail<ShapeError>("tl::from_vector", "shape ", s, " needs ", s.numel(), " values, got ",
                     values.size());
  Tensor host = make_tensor(s, dtype_of_v<T>, Device::cpu());
  T* p = static_cast<T*>(host.data_ptr());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];  // vector<bool> has no data()
  return host.to(device);
}

template Tensor from_vector(const std::vector<bool>&, const Shape&, Device);
template Tensor from_vector(const std::vector<int32_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<int64_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<float>&, const Shape&, Device);
template Tensor from_vector(const std::vector<double>&, const Shape&, Device);

static TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& options) {
  check_defined(t, "tl::empty_like");
  if (!options) return t.options();
  TensorOptions o = *options;
  if (!o.has_dtype()) o = o.dtype(t.dtype());
  if (!o.has_device()) o = o.device(t.device());
  return o;
}

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) {
  return empty(t.shape(), like_options(t, o));
}
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) {
  return zeros(t.shape(), like_options(t, o));
}
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) {
  return ones(t.shape(), like_options(t, o));
}
Tensor full_like(const Tensor& t, Scalar value, std::optional<TensorOptions> o) {
  return full(t.shape(), value, like_options(t, o));
}

}  // namespace tensorlet

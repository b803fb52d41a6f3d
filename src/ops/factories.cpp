// Factories: tensors made from a shape and a fill rule, or from host values.
#include "tensorlet/ops/factories.h"

#include <cmath>
#include <cstring>

#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/convert.h"

namespace tensorlet {

Tensor empty(IntArrayRef size, TensorOptions options) {
  profiler::OpScope scope("tl::empty");
  if (options.pinned_memory() && !options.device().is_cpu())
    fail<DeviceError>("tl::empty", "only CPU tensors can be pinned, not ", options.device());
  return make_tensor(Shape(size), options.dtype(), options.device(), options.pinned_memory());
}

Tensor zeros(IntArrayRef size, TensorOptions options) {
  profiler::OpScope scope("tl::zeros");
  Tensor t = empty(size, options);
  t.fill_(0);
  return t;
}

Tensor ones(IntArrayRef size, TensorOptions options) {
  profiler::OpScope scope("tl::ones");
  Tensor t = empty(size, options);
  t.fill_(1);
  return t;
}

Tensor full(IntArrayRef size, Scalar value, TensorOptions options) {
  profiler::OpScope scope("tl::full");
  if (!options.has_dtype()) options = options.dtype(default_dtype_for(value.kind()));
  Tensor t = empty(size, options);
  t.fill_(value);
  return t;
}

Tensor scalar_tensor(Scalar value, TensorOptions options) {
  profiler::OpScope scope("tl::scalar_tensor");  // errors name this op, not the full it calls
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

[[noreturn]] static void fail_arange_sign(const Scalar& start, const Scalar& end,
                                          const Scalar& step) {
  fail<Error>("tl::arange", "upper bound and lower bound inconsistent with step sign: start ",
              start, ", end ", end, ", step ", step);
}

// torch's arange_check_bounds: in double on the values as given, whatever the dtype (so
// arange(0, -0.5, 1, kInt64) is refused though both bounds truncate to 0). Bounds print as the
// user gave them: an integer exactly, not through double.
static void check_arange_bounds(const Scalar& start, const Scalar& end, const Scalar& step) {
  double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
  if (st == 0) fail<Error>("tl::arange", "step must be nonzero");
  if (!std::isfinite(st)) fail<Error>("tl::arange", "step must be finite, got ", step);
  if (!std::isfinite(s) || !std::isfinite(e))
    fail<Error>("tl::arange", "unsupported range: ", start, " -> ", end);
  if ((st > 0 && e < s) || (st < 0 && e > s)) fail_arange_sign(start, end, step);
}

[[noreturn]] static void fail_arange_count(const Scalar& start, const Scalar& end,
                                           const Scalar& step, auto n) {
  fail<ShapeError>("tl::arange", "the range [", start, ", ", end, ") with step ", step, " has ", n,
                   " elements, more than int64 can count");
}

// ceil((end - start) / step) in double on the values as given.
static int64_t arange_count_double(const Scalar& start, const Scalar& end, const Scalar& step) {
  const double n = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
  // 2^63 is the first double past int64; inf from a huge range fails here too.
  if (!(n < 9223372036854775808.0)) fail_arange_count(start, end, step, n);
  return static_cast<int64_t>(n);
}

// The count of [s, e) by st in integers, exactly: computed in unsigned 64 bits, so that
// INT64_MIN..INT64_MAX counts 2^64 - 1 and is refused where torch's int64 arithmetic wraps. The
// signs are checked again in integers, which double cannot tell apart past 2^53.
static int64_t arange_count_int64(int64_t s, int64_t e, int64_t st, const Scalar& start,
                                  const Scalar& end, const Scalar& step) {
  if ((st > 0 && e < s) || (st < 0 && e > s)) fail_arange_sign(start, end, step);
  const uint64_t diff = e >= s ? static_cast<uint64_t>(e) - static_cast<uint64_t>(s)
                               : static_cast<uint64_t>(s) - static_cast<uint64_t>(e);
  const uint64_t mag = st > 0 ? static_cast<uint64_t>(st) : -static_cast<uint64_t>(st);
  const uint64_t n = diff / mag + (diff % mag != 0);
  if (n > static_cast<uint64_t>(INT64_MAX)) fail_arange_count(start, end, step, n);
  return static_cast<int64_t>(n);
}

// A bound converted to int64 as torch converts it for an integer dtype (truncated toward zero);
// refuses values int64 cannot hold, as torch's checked conversion does.
static int64_t arange_int_bound(const Scalar& v, const char* name) {
  if (!v.is_floating_point()) return v.to<int64_t>();
  double d = v.to<double>();
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    fail<Error>("tl::arange", name, " ", v, " cannot be converted to int64 without overflow");
  return static_cast<int64_t>(d);
}

// The element count as torch 2.11 computes it (aten/src/ATen/native/RangeUtils.h,
// compute_arange_size): int64 counts the integer range of start, end and step truncated to
// int64, so arange(1, 10.5, 1.0, kInt64) has 9 elements (1..9) and arange(0, 3.3, 1.0, kInt64)
// 3; every other dtype, the integer ones included, counts ceil((end - start) / step) in double on
// the values as given (kInt32: 10 elements, 1..10).
static int64_t arange_count(const Scalar& start, const Scalar& end, const Scalar& step,
                            DType dtype) {
  if (dtype != kInt64) return arange_count_double(start, end, step);
  return arange_count_int64(arange_int_bound(start, "start"), arange_int_bound(end, "end"),
                            arange_int_bound(step, "step"), start, end, step);
}

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options) {
  profiler::OpScope scope("tl::arange");
  bool integral =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  if (!options.has_dtype()) options = options.dtype(integral ? kInt64 : kFloat32);
  if (options.dtype() == kBool) fail<DTypeError>("tl::arange", "bool dtype is not supported");
  check_arange_bounds(start, end, step);
  if (is_integral(options.dtype())) {
    // Every integer dtype steps from start and step truncated to int64, as torch's kernels do
    // (int64 is their accumulate type), wrapping into the dtype; end is converted only to count
    // an int64 range (in torch's order: start, end, step).
    const int64_t is = arange_int_bound(start, "start");
    if (options.dtype() == kInt64) arange_int_bound(end, "end");
    const int64_t ist = arange_int_bound(step, "step");
    // torch 2.11 divides by this 0 for int64 (SIGFPE, pytorch#175761) and repeats start for the
    // other integer dtypes; we refuse it instead.
    if (ist == 0)
      fail<Error>("tl::arange", "step ", step, " is 0 in ", options.dtype(),
                  "; use a floating point dtype or an integer step");
    const int64_t n = arange_count(start, end, step, options.dtype());
    // Wrapping unsigned arithmetic: the true values lie in the range, but i * step may not.
    return from_host_values({n}, options, [&](int64_t i) {
      return static_cast<int64_t>(static_cast<uint64_t>(is) +
                                  static_cast<uint64_t>(i) * static_cast<uint64_t>(ist));
    });
  }
  const int64_t n = arange_count(start, end, step, options.dtype());
  double s = start.to<double>(), st = step.to<double>();
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

template <ElementType T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef shape, Device device) {
  profiler::OpScope scope("tl::from_vector");  // errors of the copy to `device` name this op
  Shape s = shape.empty() ? Shape{static_cast<int64_t>(values.size())} : Shape(shape);
  for (int64_t d : s)
    if (d < 0) fail<ShapeError>("tl::from_vector", "negative dimension ", d, " in shape ", s);
  if (s.numel() != static_cast<int64_t>(values.size()))
    fail<ShapeError>("tl::from_vector", "shape ", s, " needs ", s.numel(), " values, got ",
                     values.size());
  Tensor host = make_tensor(s, dtype_of_v<T>, Device::cpu());
  T* p = static_cast<T*>(host.data_ptr());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];  // vector<bool> has no data()
  return host.to(device);
}

// Every element type of the dtype list.
#define TL_INSTANTIATE(e, T, name, kind) \
  template Tensor from_vector(const std::vector<T>&, IntArrayRef, Device);
TL_DTYPES(TL_INSTANTIATE)
#undef TL_INSTANTIATE

static TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& options,
                                  const char* op) {
  check_defined(t, op);
  if (!options) return t.options();
  TensorOptions o = *options;
  if (!o.has_dtype()) o = o.dtype(t.dtype());
  if (!o.has_device()) o = o.device(t.device());
  return o;
}

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) {
  profiler::OpScope scope("tl::empty_like");
  return empty(t.shape(), like_options(t, o, "tl::empty_like"));
}
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) {
  profiler::OpScope scope("tl::zeros_like");
  return zeros(t.shape(), like_options(t, o, "tl::zeros_like"));
}
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) {
  profiler::OpScope scope("tl::ones_like");
  return ones(t.shape(), like_options(t, o, "tl::ones_like"));
}
Tensor full_like(const Tensor& t, Scalar value, std::optional<TensorOptions> o) {
  profiler::OpScope scope("tl::full_like");
  return full(t.shape(), value, like_options(t, o, "tl::full_like"));
}

}  // namespace tensorlet

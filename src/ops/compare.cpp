// Whole-tensor comparisons that answer on the host: equal and allclose. CPU tensors are compared
// on the host; device tensors on the device, with one synchronizing item() for the answer.
#include <cmath>
#include <utility>

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/host_scalar.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// allclose, as torch's (isclose's binary ops), also takes a 0-dim CPU tensor beside a device one;
// equal does not (torch: "Cannot compare two tensors on different devices").
static void check_pair(const Tensor& a, const Tensor& b, const char* op, bool host_scalars) {
  check_defined(a, op);
  check_defined(b, op);
  const Device device = common_device_of({&a, &b});
  if (!(a.device() == b.device()) &&
      !(host_scalars && (is_host_scalar(a, device) || is_host_scalar(b, device))))
    fail<DeviceError>(op, "expected both tensors on the same device, got ", a.device(), " and ",
                      b.device());
}

// Both tensors in their promoted dtype, as torch.equal compares (an int64 and a float32 tensor
// compare as float32); as they are when the dtypes already match.
static std::pair<Tensor, Tensor> in_comparison_dtype(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return {a, b};
  DType common = promote_types(a.dtype(), b.dtype());
  return {a.to(common), b.to(common)};
}

bool equal(const Tensor& a, const Tensor& b) {
  check_pair(a, b, "tl::equal", false);
  profiler::OpScope scope("tl::equal");
  if (!(a.shape() == b.shape())) return false;
  if (a.numel() == 0) return true;
  auto [x, y] = in_comparison_dtype(a, b);
  if (!a.is_cpu()) return all(eq(x, y)).item<bool>();
  // On the host: float32 widens to float64 and bool to int64 exactly, after the promotion.
  if (is_floating_point(x.dtype()))
    return x.to(kFloat64).to_vector<double>() == y.to(kFloat64).to_vector<double>();  // NaN != NaN
  return x.to(kInt64).to_vector<int64_t>() == y.to(kInt64).to_vector<int64_t>();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_pair(a, b, "tl::allclose", true);
  profiler::OpScope scope("tl::allclose");
  if (a.dtype() != b.dtype())  // as torch ("Long did not match Float")
    fail<DTypeError>("tl::allclose", "expected both tensors to have the same dtype, got ",
                     a.dtype(), " and ", b.dtype());
  Shape shape = broadcast_shapes(a.shape(), b.shape(), "tl::allclose");
  if (!a.is_cpu()) {
    if (shape.numel() == 0) return true;
    Tensor x = a.to(kFloat64), y = b.to(kFloat64);
    // NaN fails the distance test; equal infinities pass through x == y.
    Tensor ok = logical_or(le(abs(x - y), atol + rtol * abs(y)), eq(x, y));
    if (equal_nan) ok = logical_or(ok, logical_and(ne(x, x), ne(y, y)));
    return all(ok).item<bool>();
  }
  std::vector<double> va = a.expand(shape).to(kFloat64).to_vector<double>();
  std::vector<double> vb = b.expand(shape).to(kFloat64).to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) {
    double x = va[i], y = vb[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (equal_nan && std::isnan(x) && std::isnan(y)) continue;
      return false;
    }
    if (x == y) continue;  // equal infinities
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y))) return false;
  }
  return true;
}

}  // namespace tensorlet

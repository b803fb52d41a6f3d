// Whole-tensor comparisons that answer on the host: equal and allclose.
#include <cmath>

#include "tensor/broadcast.h"
#include "tensor/tensor.h"

namespace tensorlet {

static void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  check_defined(a, op);
  check_defined(b, op);
  if (!(a.device() == b.device()))
    fail<DeviceError>(op, "expected both tensors on the same device, got ", a.device(), " and ",
                      b.device());
}

bool equal(const Tensor& a, const Tensor& b) {
  check_pair(a, b, "tl::equal");
  if (!(a.shape() == b.shape())) return false;
  DType common = promote_types(a.dtype(), b.dtype());
  if (is_floating_point(common)) {
    std::vector<double> va = a.to(kFloat64).to_vector<double>(),
                        vb = b.to(kFloat64).to_vector<double>();
    return va == vb;  // NaN != NaN, -0 == 0, as torch.equal
  }
  return a.to(kInt64).to_vector<int64_t>() == b.to(kInt64).to_vector<int64_t>();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_pair(a, b, "tl::allclose");
  Shape shape = broadcast_shapes(a.shape(), b.shape(), "tl::allclose");
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

// Gradients in float32, float16 and bfloat16 against the float64 gradient of the same (rounded)
// inputs, within a rounding bound per dtype, for elementwise ops, reductions, matmul and softmax,
// on every test device.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

using tl_test::random_tensor;
using tl_test::values_of;
using Ts = std::vector<tl::Tensor>;

namespace {

struct Case {
  std::string name;
  std::function<tl::Tensor(const Ts&)> f;
  std::vector<tl::Shape> shapes;
  bool positive = false;  // inputs in [0.5, 2.5) (log, sqrt, div's denominator)
  // Roundings to the dtype on the way from the inputs to a gradient element (forward and backward
  // ops), and the most terms one of them sums (a reduction's or a matmul's length).
  int steps = 4;
  double terms = 1;
};

// The gradients of sum(f(x) * w) with respect to every input, x and w given in any dtype.
Ts gradients(const Case& c, const Ts& inputs, const tl::Tensor& w) {
  Ts leaves;
  for (const tl::Tensor& x : inputs) {
    tl::Tensor l = x.detach();
    l.requires_grad_();
    leaves.push_back(l);
  }
  return tl::autograd::grad({tl::sum(c.f(leaves) * w)}, leaves);
}

// Each input's gradient in `dtype` against float64's from the same values: an element may be off
// by chain_bound(steps, terms) times the largest float64 gradient element (the magnitude the
// rounded terms have; where a formula cancels, as softmax's, the result is smaller than they are).
void check_dtype(const Case& c, tl::DType dtype, tl::Device device) {
  Ts low, high;
  for (const tl::Shape& s : c.shapes) {
    tl::Tensor x = c.positive ? tl::rand(s, dtype) * 2.0 + 0.5 : random_tensor(s, dtype);
    low.push_back(x.to(device));
    high.push_back(x.to(tl::kFloat64).to(device));
  }
  tl::Tensor out_probe;
  {
    tl::NoGradGuard no_grad;
    out_probe = c.f(low);
  }
  REQUIRE(out_probe.dtype() == dtype);
  const tl::Tensor w = random_tensor(out_probe.shape(), dtype).to(device);
  const Ts got = gradients(c, low, w), want = gradients(c, high, w.to(tl::kFloat64));
  const double f =
      tl_test::chain_bound(dtype, c.steps, c.terms, tl_test::partial_roundings(device, dtype));
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].dtype() == dtype);
    CHECK(got[i].device() == device);
    const std::vector<double> g = values_of(got[i]), e = values_of(want[i]);
    double magnitude = 1e-30;
    for (double v : e) magnitude = std::max(magnitude, std::abs(v));
    for (size_t j = 0; j < g.size(); ++j)
      if (!(std::abs(g[j] - e[j]) <=
            f * (std::abs(e[j]) + magnitude) + tl_test::subnormal_rounding(dtype))) {
        FAIL_CHECK(c.name << " " << dtype << " on " << device << ": input " << i << " element " << j
                          << " gradient " << g[j] << ", float64 " << e[j] << " (bound "
                          << f * (std::abs(e[j]) + magnitude) << ")");
        break;
      }
  }
}

}  // namespace

TEST_CASE("autograd dtypes: float32/float16/bfloat16 gradients within their bounds of float64's") {
  const std::vector<Case> cases = {
      {"sigmoid", [](const Ts& t) { return tl::sigmoid(t[0]); }, {{4, 5}}},
      {"tanh", [](const Ts& t) { return tl::tanh(t[0]); }, {{4, 5}}},
      {"exp", [](const Ts& t) { return tl::exp(t[0]); }, {{4, 5}}},
      {"log", [](const Ts& t) { return tl::log(t[0]); }, {{4, 5}}, true},
      {"sqrt", [](const Ts& t) { return tl::sqrt(t[0]); }, {{4, 5}}, true},
      {"gelu", [](const Ts& t) { return tl::gelu(t[0]); }, {{4, 5}}, false, 8},
      {"silu", [](const Ts& t) { return tl::silu(t[0]); }, {{4, 5}}, false, 8},
      {"mul broadcast", [](const Ts& t) { return t[0] * t[1]; }, {{4, 5}, {5}}, false, 4, 4},
      {"div", [](const Ts& t) { return t[0] / t[1]; }, {{4, 5}, {4, 5}}, true, 6},
      {"sum dim", [](const Ts& t) { return tl::sum(t[0] * t[0], 1); }, {{4, 7}}, false, 4, 7},
      {"mean", [](const Ts& t) { return tl::mean(t[0], 0); }, {{6, 3}}, false, 4, 6},
      {"amax", [](const Ts& t) { return tl::amax(t[0], 1); }, {{4, 5}}},
      {"logsumexp", [](const Ts& t) { return tl::logsumexp(t[0], 1); }, {{4, 6}}, false, 8, 6},
      {"var", [](const Ts& t) { return tl::var(t[0], 1); }, {{3, 8}}, false, 8, 8},
      {"norm", [](const Ts& t) { return tl::norm(t[0], 2.0, 1); }, {{3, 8}}, false, 8, 8},
      {"softmax", [](const Ts& t) { return tl::softmax(t[0], 1); }, {{4, 6}}, false, 8, 6},
      {"log_softmax", [](const Ts& t) { return tl::log_softmax(t[0], 0); }, {{5, 3}}, false, 8, 5},
      {"matmul", [](const Ts& t) { return tl::matmul(t[0], t[1]); }, {{5, 8}, {8, 6}}, false, 4, 8},
      {"bmm", [](const Ts& t) { return tl::bmm(t[0], t[1]); }, {{2, 3, 9}, {2, 9, 4}}, false, 4, 9},
      {"linear",
       [](const Ts& t) { return tl::linear(t[0], t[1], t[2]); },
       {{3, 8}, {5, 8}, {5}},
       false,
       4,
       8},
  };
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat32, tl::kFloat16, tl::kBFloat16})
      for (const Case& c : cases) {
        INFO(c.name << " " << dtype << " on " << device);
        check_dtype(c, dtype, device);
      }
}

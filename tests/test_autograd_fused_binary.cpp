// The fused gradient kernels of the binary ops (Backend::binary_backward): equal to the composite
// formula in float64 (broadcast operands, ties, zeros), every layout of grad and the operands,
// float32/float16/bfloat16 within their rounding, every test device; a plain backward runs one
// kernel per gradient, a recording one the composite.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "rounding.h"
#include "tensorlet/autograd/fused_backward.h"
#include "test_util.h"

using tl_test::random_tensor;
using tl_test::values_of;

namespace {

struct OpCase {
  const char* name;
  tl::Tensor (*f)(const tl::Tensor&, const tl::Tensor&);
  tl::BinaryGradient self, other;  // `self` unused where the gradient of a is g itself (fmod)
  bool self_kernel;
  // Operand values where both gradients are finite and away from the op's kinks.
  tl::Tensor (*a_values)(const tl::Shape&);
  tl::Tensor (*b_values)(const tl::Shape&);
};

tl::Tensor any(const tl::Shape& s) { return random_tensor(s, tl::kFloat64); }
tl::Tensor positive(const tl::Shape& s) { return tl::rand(s, tl::kFloat64) * 1.5 + 0.5; }
tl::Tensor exponent(const tl::Shape& s) { return tl::rand(s, tl::kFloat64) * 4.0 - 2.0; }
// Values on a grid of halves: maximum/minimum meet ties.
tl::Tensor grid(const tl::Shape& s) { return tl::round(random_tensor(s, tl::kFloat64) * 2) / 2; }
// Divisors away from 0, of either sign.
tl::Tensor divisor(const tl::Shape& s) {
  const tl::Tensor u = tl::rand(s, tl::kFloat64);
  return tl::where(tl::lt(u, 0.5), u * 2 + 0.75, -(u * 2 + 0.25));
}

const std::vector<OpCase>& op_cases() {
  using G = tl::BinaryGradient;
  using tl::Tensor;
  static const std::vector<OpCase> cases = {
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, G::DivOther, G::DivOther,
       false, any, divisor},
      {"pow", [](const Tensor& a, const Tensor& b) { return tl::pow(a, b); }, G::PowSelf,
       G::PowExponent, true, positive, exponent},
      {"maximum", [](const Tensor& a, const Tensor& b) { return tl::maximum(a, b); },
       G::MaximumSelf, G::MaximumOther, true, grid, grid},
      {"minimum", [](const Tensor& a, const Tensor& b) { return tl::minimum(a, b); },
       G::MinimumSelf, G::MinimumOther, true, grid, grid},
      {"atan2", [](const Tensor& a, const Tensor& b) { return tl::atan2(a, b); }, G::Atan2Self,
       G::Atan2Other, true, any, divisor},
      {"fmod", [](const Tensor& a, const Tensor& b) { return tl::fmod(a, b); }, G::FmodOther,
       G::FmodOther, false, any, divisor},
      {"remainder", [](const Tensor& a, const Tensor& b) { return tl::remainder(a, b); },
       G::RemainderOther, G::RemainderOther, false, any, divisor},
  };
  return cases;
}

// What a kernel of `dtype` may differ from the float64 kernel on the same rounded inputs: a few
// roundings and library calls in the compute type, then the one rounding to dtype.
double bound(tl::DType dtype, double ref) {
  const double u_out = tl_test::unit_roundoff(dtype);
  const double u_compute = dtype == tl::kFloat64 ? u_out : tl_test::unit_roundoff(tl::kFloat32);
  return (2 * u_out + 16 * u_compute) * std::abs(ref) + tl_test::subnormal_rounding(dtype);
}

}  // namespace

TEST_CASE("autograd fused binary: the table covers every gradient kernel") {
  std::vector<tl::BinaryGradient> covered;
  for (const OpCase& c : op_cases()) {
    if (c.self_kernel) covered.push_back(c.self);
    covered.push_back(c.other);
  }
  int kernels = 0;
#define TL_CHECK_COVERED(e, name, Fn)                                                        \
  ++kernels;                                                                                 \
  CHECK_MESSAGE(std::count(covered.begin(), covered.end(), tl::BinaryGradient::e) == 1, #e); \
  CHECK(std::string(tl::binary_gradient_name(tl::BinaryGradient::e)) == "tl::" #name "_backward");
  TL_BINARY_BACKWARD_OPS(TL_CHECK_COVERED)
#undef TL_CHECK_COVERED
  CHECK(static_cast<int>(covered.size()) == kernels);
}

TEST_CASE("autograd fused binary: float64 kernels equal the composite, broadcast, ties, zeros") {
  for (const tl::Device device : tl_test::test_devices())
    for (const OpCase& c : op_cases()) {
      INFO(c.name << " on " << device.str());
      // a [4, 1, 5] against b [3, 1]: both gradients are reduced from [4, 3, 5].
      tl::Tensor a = c.a_values({4, 1, 5}).to(device), b = c.b_values({3, 1}).to(device);
      if (std::string(c.name) == "pow") {
        // torch's conventions at zero: a == 0 with b > 0, b == 0, and 0 ** 0.
        a = tl::cat({a, tl::zeros({4, 1, 1}, tl::TensorOptions(tl::kFloat64).device(device))}, 2);
        b = tl::cat({b, tl::zeros({1, 1}, tl::TensorOptions(tl::kFloat64).device(device))}, 0);
      }
      a.requires_grad_();
      b.requires_grad_();
      const tl::Tensor y = c.f(a, b);
      const tl::Tensor g = random_tensor(y.shape(), tl::kFloat64, device);
      tl::Tensor g_graph = g.detach().clone();
      g_graph.requires_grad_();
      const auto composite = tl::autograd::grad({y}, {a, b}, {g_graph}, true, true);
      const auto fused = tl::autograd::grad({y}, {a, b}, {g}, true, false);
      for (size_t k = 0; k < 2; ++k) {
        INFO("input " << k);
        CHECK(composite[k].requires_grad());
        CHECK_FALSE(fused[k].requires_grad());
        REQUIRE(fused[k].shape() == (k == 0 ? a.shape() : b.shape()));
        const std::vector<double> ref = values_of(composite[k]);
        std::vector<double> tol(ref.size());
        for (size_t i = 0; i < ref.size(); ++i)
          tol[i] = 64 * tl_test::unit_roundoff(tl::kFloat64) * (std::abs(ref[i]) + 1);
        tl_test::check_values_within(fused[k], ref, tol);
      }
    }
}

TEST_CASE("autograd fused binary: a plain backward runs one kernel per gradient") {
  auto ops_of = [](const std::function<void()>& body) {
    tl::profiler::Profile profile;
    body();
    profile.stop();
    std::vector<std::string> names;
    for (const tl::profiler::Event& e : profile.events())
      if (e.kind == tl::profiler::EventKind::Op && e.depth == 2) names.push_back(e.name);
    return names;
  };
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor a = random_tensor({8, 3}, tl::kFloat32, device);
    tl::Tensor b = random_tensor({8, 3}, tl::kFloat32, device) + 3.0f;
    a.requires_grad_();
    b.requires_grad_();
    const tl::Tensor y = a / b;
    const tl::Tensor g = random_tensor({8, 3}, tl::kFloat32, device);
    std::vector<std::string> plain = ops_of([&] {
      tl::autograd::grad({y}, {a, b}, {g}, true, false);
    });
    std::sort(plain.begin(), plain.end());
    CHECK(plain == std::vector<std::string>{"tl::div", "tl::div_other_backward"});
    tl::Tensor g_graph = g.detach().clone();
    g_graph.requires_grad_();
    const std::vector<std::string> recording = ops_of([&] {
      tl::autograd::grad({y}, {a, b}, {g_graph}, true, true);
    });
    CHECK(std::count(recording.begin(), recording.end(), "tl::div_other_backward") == 0);
    CHECK(std::count(recording.begin(), recording.end(), "tl::mul") >= 2);
  }
}

TEST_CASE("autograd fused binary: every layout, dtype and size, into a poisoned out") {
  const tl::DType dtypes[] = {tl::kFloat64, tl::kFloat32, tl::kFloat16, tl::kBFloat16};
  const tl::Shape shapes[] = {{5, 7}, {3, 333}, {40001}, {0, 3}};
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : dtypes)
      for (const OpCase& c : op_cases())
        for (const tl::BinaryGradient which : {c.self, c.other})
          for (const tl::Shape& shape : shapes) {
            INFO(tl::binary_gradient_name(which)
                 << " on " << device.str() << ", " << dtype << ", " << shape);
            const tl::Tensor a = c.a_values(shape).to(dtype), b = c.b_values(shape).to(dtype);
            const tl::Tensor g = random_tensor(shape, dtype);
            const std::vector<tl_test::Layout> gs = tl_test::layouts_of(g),
                                               as = tl_test::layouts_of(a),
                                               bs = tl_test::layouts_of(b);
            for (size_t k = 0; k < gs.size(); ++k) {
              const tl_test::Layout& al = as[(k + 1) % as.size()];
              const tl_test::Layout& bl = bs[(k + 2) % bs.size()];
              INFO("grad " << gs[k].name << ", a " << al.name << ", b " << bl.name);
              const tl::Tensor ref = tl::autograd::binary_backward(
                  which, gs[k].tensor.to(tl::kFloat64), a.to(tl::kFloat64), b.to(tl::kFloat64));
              const tl::Tensor out = tl::full(shape, std::numeric_limits<double>::quiet_NaN(),
                                              tl::TensorOptions(dtype).device(device));
              tl::autograd::binary_backward_out(which,
                                                tl_test::same_layout_on(gs[k].tensor, device),
                                                tl_test::same_layout_on(al.tensor, device),
                                                tl_test::same_layout_on(bl.tensor, device), out);
              const std::vector<double> r = values_of(ref);
              std::vector<double> tol(r.size());
              for (size_t i = 0; i < r.size(); ++i) tol[i] = bound(dtype, r[i]);
              tl_test::check_values_within(out, r, tol);
            }
            if (shape.size() == 2 && shape[0] > 0) {
              // A row of b broadcast down the first dim, a scalar a: stride 0 operands.
              const tl::Tensor b_row = b.slice(0, 0, 1), a_one = a.reshape({-1}).slice(0, 0, 1);
              const tl::Tensor ref = tl::autograd::binary_backward(
                  which, g.to(tl::kFloat64), a_one.to(tl::kFloat64), b_row.to(tl::kFloat64));
              const tl::Tensor got = tl::autograd::binary_backward(
                  which, g.to(device), a_one.to(device), b_row.to(device));
              const std::vector<double> r = values_of(ref);
              std::vector<double> tol(r.size());
              for (size_t i = 0; i < r.size(); ++i) tol[i] = bound(dtype, r[i]);
              tl_test::check_values_within(got, r, tol);
            }
          }
}

TEST_CASE("autograd fused binary: mismatched operands are typed errors") {
  const tl::Tensor g = random_tensor({4, 3}, tl::kFloat32);
  const tl::Tensor a = random_tensor({4, 3}, tl::kFloat32);
  const tl::Tensor b = random_tensor({3}, tl::kFloat32);
  using tl::autograd::binary_backward;
  constexpr tl::BinaryGradient kDiv = tl::BinaryGradient::DivOther;
  tl_test::check_throws<tl::DTypeError>([&] { binary_backward(kDiv, g, a.to(tl::kFloat64), b); },
                                        "one dtype");
  tl_test::check_throws<tl::DTypeError>(
      [&] { binary_backward(kDiv, g.to(tl::kInt32), a.to(tl::kInt32), b.to(tl::kInt32)); },
      "floating point gradient");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        binary_backward(kDiv, g, a, b.reshape({3, 1}));
      },
      "[tl::autograd::binary_backward]");
  tl_test::check_throws<tl::Error>(
      [&] {
        tl::autograd::binary_backward_out(kDiv, g, a, b, tl::empty({3, 4}).t());
      },
      "contiguous");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        tl::autograd::binary_backward_out(kDiv, g, a, b, tl::empty({3, 4}));
      },
      "gradient's shape");
}

TEST_CASE("autograd fused binary: a scalar operand takes the kernel on every device") {
  // atan2(x, 869) in float16: the composite's 869² overflows float16 (the gradient came out 0 on
  // cuda:0, fuzzer seed 2); the kernel computes in float, 1 / 869 at x = 0.
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = tl::zeros({3}, tl::TensorOptions(tl::kFloat16).device(device));
    x.requires_grad_();
    tl::atan2(x, 869.0).sum().backward();
    const std::vector<double> got = values_of(x.grad());
    for (double v : got) CHECK(v == doctest::Approx(1.0 / 869).epsilon(1e-3));
  }
}

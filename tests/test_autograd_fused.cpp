// The fused gradient kernels of the unary ops (Backend::unary_backward): equal to the composite
// formula in float64, every layout of grad and the saved tensor, float32/float16/bfloat16 within
// their rounding, every test device; create_graph still gives a differentiable backward.
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

enum class Domain { Any, Positive, Unit };

struct OpCase {
  tl::UnaryOp op;
  tl::Tensor (*f)(const tl::Tensor&);
  Domain domain;
};

// Every op of TL_UNARY_BACKWARD_OPS, with inputs where its gradient is finite.
const std::vector<OpCase>& op_cases() {
  using tl::Tensor;
  using tl::UnaryOp;
  static const std::vector<OpCase> cases = {
      {UnaryOp::Abs, [](const Tensor& x) { return tl::abs(x); }, Domain::Any},
      {UnaryOp::Exp, [](const Tensor& x) { return tl::exp(x); }, Domain::Any},
      {UnaryOp::Log, [](const Tensor& x) { return tl::log(x); }, Domain::Positive},
      {UnaryOp::Sqrt, [](const Tensor& x) { return tl::sqrt(x); }, Domain::Positive},
      {UnaryOp::Sin, [](const Tensor& x) { return tl::sin(x); }, Domain::Any},
      {UnaryOp::Cos, [](const Tensor& x) { return tl::cos(x); }, Domain::Any},
      {UnaryOp::Tanh, [](const Tensor& x) { return tl::tanh(x); }, Domain::Any},
      {UnaryOp::Sigmoid, [](const Tensor& x) { return tl::sigmoid(x); }, Domain::Any},
      {UnaryOp::Relu, [](const Tensor& x) { return tl::relu(x); }, Domain::Any},
      {UnaryOp::Reciprocal, [](const Tensor& x) { return tl::reciprocal(x); }, Domain::Positive},
      {UnaryOp::Rsqrt, [](const Tensor& x) { return tl::rsqrt(x); }, Domain::Positive},
      {UnaryOp::Log1p, [](const Tensor& x) { return tl::log1p(x); }, Domain::Positive},
      {UnaryOp::Expm1, [](const Tensor& x) { return tl::expm1(x); }, Domain::Any},
      {UnaryOp::Log2, [](const Tensor& x) { return tl::log2(x); }, Domain::Positive},
      {UnaryOp::Log10, [](const Tensor& x) { return tl::log10(x); }, Domain::Positive},
      {UnaryOp::Exp2, [](const Tensor& x) { return tl::exp2(x); }, Domain::Any},
      {UnaryOp::Erf, [](const Tensor& x) { return tl::erf(x); }, Domain::Any},
      {UnaryOp::Erfc, [](const Tensor& x) { return tl::erfc(x); }, Domain::Any},
      {UnaryOp::Tan, [](const Tensor& x) { return tl::tan(x); }, Domain::Unit},
      {UnaryOp::Sinh, [](const Tensor& x) { return tl::sinh(x); }, Domain::Any},
      {UnaryOp::Cosh, [](const Tensor& x) { return tl::cosh(x); }, Domain::Any},
      {UnaryOp::Asin, [](const Tensor& x) { return tl::asin(x); }, Domain::Unit},
      {UnaryOp::Acos, [](const Tensor& x) { return tl::acos(x); }, Domain::Unit},
      {UnaryOp::Atan, [](const Tensor& x) { return tl::atan(x); }, Domain::Any},
      {UnaryOp::Square, [](const Tensor& x) { return tl::square(x); }, Domain::Any},
      {UnaryOp::Silu, [](const Tensor& x) { return tl::silu(x); }, Domain::Any},
      {UnaryOp::Softplus, [](const Tensor& x) { return tl::softplus(x); }, Domain::Any},
      {UnaryOp::Gelu, [](const Tensor& x) { return tl::gelu(x); }, Domain::Any},
      {UnaryOp::GeluTanh, [](const Tensor& x) { return tl::gelu(x, "tanh"); }, Domain::Any},
  };
  return cases;
}

// float64 host values of `shape` in the op's domain: [-2, 2), [0.5, 2.5) or (-0.9, 0.9).
tl::Tensor input_in(Domain d, const tl::Shape& shape) {
  switch (d) {
    case Domain::Positive:
      return tl::rand(shape, tl::kFloat64) * 2.0 + 0.5;
    case Domain::Unit:
      return tl::rand(shape, tl::kFloat64) * 1.8 - 0.9;
    case Domain::Any:
      break;
  }
  return random_tensor(shape, tl::kFloat64);
}

std::string op_name(tl::UnaryOp op) {
  return std::string(tl::unary_op_name(op)) + (op == tl::UnaryOp::GeluTanh ? " (tanh)" : "");
}

// What the kernel of `dtype` may differ from the float64 kernel run on the same (rounded) inputs:
// a few roundings and library calls in the compute type (float for float16/bfloat16), relative to
// the result and, where a formula sums terms that cancel (gelu, silu), to the gradient's size;
// then the one rounding to dtype.
double bound(tl::DType dtype, double ref, double g) {
  const double u_out = tl_test::unit_roundoff(dtype);
  const double u_compute = dtype == tl::kFloat64 ? u_out : tl_test::unit_roundoff(tl::kFloat32);
  return (2 * u_out + 16 * u_compute) * std::abs(ref) + 32 * u_compute * std::abs(g) +
         tl_test::subnormal_rounding(dtype);
}

void check_close(const tl::Tensor& got, const tl::Tensor& ref, const tl::Tensor& g,
                 tl::DType dtype) {
  const std::vector<double> r = values_of(ref), gv = values_of(g);
  std::vector<double> tol(r.size());
  for (size_t i = 0; i < r.size(); ++i) tol[i] = bound(dtype, r[i], gv[i]);
  tl_test::check_values_within(got, r, tol);
}

// The gradient layouts a backward meets: layouts_of's (contiguous, transposed, sliced, offset),
// a row broadcast down the first dim (sum's or a broadcast add's gradient) and one value broadcast
// to every element.
std::vector<tl_test::Layout> gradient_layouts(const tl::Tensor& g) {
  std::vector<tl_test::Layout> out = tl_test::layouts_of(g);
  const tl::Shape& s = g.shape();
  if (s.size() == 2 && s[0] > 0) {
    out.push_back({"row broadcast", g.slice(0, 0, 1).expand(s)});
    out.push_back({"one value broadcast", g.reshape({-1}).slice(0, 0, 1).reshape({}).expand(s)});
  }
  return out;
}

}  // namespace

TEST_CASE("autograd fused: the table covers every op with a backward kernel") {
  int kernels = 0;
#define TL_COUNT(e, saved, Fn) ++kernels;
  TL_UNARY_BACKWARD_OPS(TL_COUNT)
#undef TL_COUNT
  CHECK(static_cast<int>(op_cases().size()) == kernels);
  for (const OpCase& c : op_cases()) CHECK(tl::has_backward_kernel(c.op));
}

TEST_CASE("autograd fused: float64 kernel equals the composite formula, through autograd too") {
  for (const tl::Device device : tl_test::test_devices())
    for (const OpCase& c : op_cases()) {
      INFO(op_name(c.op) << " on " << device.str());
      tl::Tensor x = input_in(c.domain, {6, 9}).to(device);
      x.requires_grad_();
      const tl::Tensor y = c.f(x);
      const tl::Tensor g = random_tensor({6, 9}, tl::kFloat64, device);
      // The composite formula: a backward that records (create_graph, grad requiring grad).
      tl::Tensor g_graph = g.detach().clone();
      g_graph.requires_grad_();
      const tl::Tensor composite = tl::autograd::grad({y}, {x}, {g_graph}, true, true)[0];
      CHECK(composite.requires_grad());
      // The fused kernel, as a plain backward runs it.
      const tl::Tensor fused = tl::autograd::grad({y}, {x}, {g}, true, false)[0];
      CHECK_FALSE(fused.requires_grad());
      CHECK(fused.grad_fn() == nullptr);
      const std::vector<double> ref = values_of(composite), gv = values_of(g);
      std::vector<double> tol(ref.size());
      for (size_t i = 0; i < ref.size(); ++i)
        tol[i] =
            64 * tl_test::unit_roundoff(tl::kFloat64) * (std::abs(ref[i]) + 2 * std::abs(gv[i]));
      tl_test::check_values_within(fused, ref, tol);
    }
}

TEST_CASE("autograd fused: a plain backward runs one op, a recording one the composite") {
  // The ops each backward's node runs, by name, from the profiler (EventKind::Op rows under
  // "autograd::engine::evaluate_function: ..." > "SigmoidBackward0").
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
    tl::Tensor x = random_tensor({8, 3}, tl::kFloat32, device);
    x.requires_grad_();
    const tl::Tensor y = tl::sigmoid(x);
    const tl::Tensor g = random_tensor({8, 3}, tl::kFloat32, device);
    const std::vector<std::string> plain =
        ops_of([&] { tl::autograd::grad({y}, {x}, {g}, true, false); });
    CHECK(plain == std::vector<std::string>{"tl::sigmoid_backward"});
    tl::Tensor g_graph = g.detach().clone();
    g_graph.requires_grad_();
    const std::vector<std::string> recording =
        ops_of([&] { tl::autograd::grad({y}, {x}, {g_graph}, true, true); });
    CHECK(std::count(recording.begin(), recording.end(), "tl::mul") >= 2);
    CHECK(std::count(recording.begin(), recording.end(), "tl::sigmoid_backward") == 0);
  }
}

TEST_CASE("autograd fused: every layout, dtype and size, into a poisoned out") {
  const tl::DType dtypes[] = {tl::kFloat64, tl::kFloat32, tl::kFloat16, tl::kBFloat16};
  // Odd sizes (a vector kernel's tail), a 1-D one past the CPU's grain, and zero elements.
  const tl::Shape shapes[] = {{5, 7}, {3, 333}, {40001}, {0, 3}};
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : dtypes)
      for (const OpCase& c : op_cases())
        for (const tl::Shape& shape : shapes) {
          INFO(op_name(c.op) << " on " << device.str() << ", " << dtype << ", " << shape);
          const tl::Tensor x = input_in(c.domain, shape).to(dtype);
          const bool reads_y = tl::backward_saved(c.op) == tl::math::BackwardSaved::Output;
          const tl::Tensor saved = reads_y ? c.f(x) : x;  // the forward's y, rounded to dtype
          const tl::Tensor g = random_tensor(shape, dtype);
          const std::vector<tl_test::Layout> grads = gradient_layouts(g);
          const std::vector<tl_test::Layout> saves = tl_test::layouts_of(saved);
          for (size_t k = 0; k < grads.size(); ++k) {
            const tl_test::Layout& gl = grads[k];
            const tl_test::Layout& sl = saves[k % saves.size()];
            INFO("grad " << gl.name << ", saved " << sl.name);
            // The reference: the float64 kernel on the host, on the same rounded values.
            const tl::Tensor g64 = gl.tensor.to(tl::kFloat64).contiguous();
            const tl::Tensor ref = tl::autograd::unary_backward(c.op, g64, saved.to(tl::kFloat64));
            const tl::Tensor out = tl::full(shape, std::numeric_limits<double>::quiet_NaN(),
                                            tl::TensorOptions(dtype).device(device));
            tl::autograd::unary_backward_out(c.op, tl_test::same_layout_on(gl.tensor, device),
                                             tl_test::same_layout_on(sl.tensor, device), out);
            check_close(out, ref, g64, dtype);
          }
        }
}

TEST_CASE("autograd fused: mismatched operands are typed errors") {
  const tl::Tensor g = random_tensor({4, 3}, tl::kFloat32);
  const tl::Tensor s = random_tensor({4, 3}, tl::kFloat32);
  using tl::autograd::unary_backward;
  tl_test::check_throws<tl::DTypeError>(
      [&] { unary_backward(tl::UnaryOp::Exp, g, s.to(tl::kFloat64)); }, "one dtype");
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        unary_backward(tl::UnaryOp::Exp, g, s.reshape({3, 4}));
      },
      "one shape");
  tl_test::check_throws<tl::Error>([&] { unary_backward(tl::UnaryOp::Floor, g, s); },
                                   "no backward kernel");
  tl_test::check_throws<tl::Error>(
      [&] {
        tl::autograd::unary_backward_out(tl::UnaryOp::Exp, g, s, tl::empty({3, 4}).t());
      },
      "contiguous");
}

TEST_CASE("autograd fused: create_graph keeps the backward differentiable (second derivatives)") {
  struct Case {
    const char* name;
    tl::Tensor (*f)(const tl::Tensor&);
  };
  const Case cases[] = {
      {"sigmoid", [](const tl::Tensor& x) { return tl::sigmoid(x); }},
      {"tanh", [](const tl::Tensor& x) { return tl::tanh(x); }},
      {"exp", [](const tl::Tensor& x) { return tl::exp(x); }},
      {"silu", [](const tl::Tensor& x) { return tl::silu(x); }},
  };
  constexpr double eps = 1e-6;
  for (const tl::Device device : tl_test::test_devices())
    for (const Case& c : cases) {
      INFO(std::string(c.name) << " on " << device.str());
      const tl::Tensor x0 = random_tensor({4, 5}, tl::kFloat64, device);
      const tl::Tensor g = random_tensor({4, 5}, tl::kFloat64, device);
      const tl::Tensor v = random_tensor({4, 5}, tl::kFloat64, device);
      // The first derivative g * f'(x) at x (its graph recorded) and, plainly, at x +- eps.
      auto first = [&](const tl::Tensor& at, bool create_graph) {
        tl::Tensor leaf = at.detach().clone();
        leaf.requires_grad_();
        return std::make_pair(tl::autograd::grad({c.f(leaf)}, {leaf}, {g}, true, create_graph)[0],
                              leaf);
      };
      auto [d1, leaf] = first(x0, true);
      REQUIRE(d1.requires_grad());
      // d/dx sum(v * g * f'(x)) = v * g * f''(x): the graph of the first derivative's backward.
      const tl::Tensor d2 = tl::autograd::grad({d1}, {leaf}, {v})[0];
      // The elementwise Jacobian is diagonal: central differences of the first derivative.
      const tl::Tensor numeric =
          (first(x0 + eps, false).first - first(x0 - eps, false).first) / (2 * eps) * v;
      tl_test::check_values(d2, values_of(numeric), 1e-5, 1e-6);
    }
}

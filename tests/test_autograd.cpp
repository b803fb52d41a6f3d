// Reverse-mode autograd: the graph API (LibTorch's names), the engine's semantics, and gradcheck
// of every differentiable op against float64 finite differences on every test device.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

using tl_test::check_throws;
using tl_test::gradcheck;
using tl_test::random_tensor;
using tl_test::values_of;

namespace {

tl::Tensor leaf(const tl::Shape& shape, tl::Device device = tl::Device::cpu()) {
  tl::Tensor t = random_tensor(shape, tl::kFloat32, device);
  t.requires_grad_();
  return t;
}

// Positive inputs in [0.5, 2.5), for log, sqrt and friends.
tl::Tensor positive(const tl::Shape& shape) { return tl::rand(shape, tl::kFloat64) * 2.0 + 0.5; }
// Inputs in (-0.9, 0.9), for asin and acos.
tl::Tensor unit(const tl::Shape& shape) { return tl::rand(shape, tl::kFloat64) * 1.8 - 0.9; }
tl::Tensor any(const tl::Shape& shape) { return random_tensor(shape, tl::kFloat64); }

}  // namespace

TEST_CASE("autograd: requires_grad, leaves, grad_fn names and the gradient of x * x") {
  tl::Tensor x = leaf({3, 4});
  CHECK(x.requires_grad());
  CHECK(x.is_leaf());
  CHECK_FALSE(x.grad().defined());
  CHECK(x.grad_fn() == nullptr);
  tl::Tensor y = x * x;
  CHECK(y.requires_grad());
  CHECK_FALSE(y.is_leaf());
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "MulBackward0");
  tl::Tensor loss = y.sum();
  CHECK(loss.grad_fn()->name() == "SumBackward0");
  CHECK(y.t().grad_fn()->name() == "TBackward0");  // t() is its own view, as torch's
  CHECK(y.transpose(0, 1).grad_fn()->name() == "TransposeBackward0");
  CHECK(loss.grad_fn()->next_functions().size() == 1);
  CHECK(loss.grad_fn()->next_functions()[0].function == y.grad_fn());
  // Reading a value out of the graph (loss.item(), as every training loop prints) records
  // nothing and keeps the graph whole.
  double total = 0;
  for (double e : values_of(y)) total += e;
  CHECK(loss.item<double>() == doctest::Approx(total).epsilon(1e-5));
  CHECK(x[0][1].item<float>() == values_of(x)[1]);
  loss.backward();
  REQUIRE(x.grad().defined());
  const std::vector<double> g = values_of(x.grad()), v = values_of(x);
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == doctest::Approx(2 * v[i]));
  // Plain tensors and results of plain tensors do not require grad and make no node.
  tl::Tensor p = random_tensor({3, 4});
  CHECK_FALSE((p * p).requires_grad());
  CHECK((p * p).grad_fn() == nullptr);
  CHECK((p + x).requires_grad());
}

TEST_CASE("autograd: grad mode, NoGradGuard, detach and integer results") {
  tl::Tensor x = leaf({5});
  {
    tl::NoGradGuard no_grad;
    CHECK_FALSE(tl::GradMode::is_enabled());
    tl::Tensor y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    {
      tl::AutoGradMode on(true);
      CHECK((x * 2.0).requires_grad());
    }
  }
  CHECK(tl::GradMode::is_enabled());
  tl::Tensor d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.data_ptr() == x.data_ptr());
  // Comparisons and other non-floating results carry no gradient.
  CHECK_FALSE((x > 0.0).requires_grad());
  check_throws<tl::DTypeError>([] { tl::arange(3).requires_grad_(); }, "floating point");
}

TEST_CASE("autograd: gradients accumulate; a freed graph refuses a second backward") {
  tl::Tensor x = leaf({4});
  tl::Tensor y = (x * 3.0).sum();
  y.backward({}, true);
  y.backward();
  for (double g : values_of(x.grad())) CHECK(g == doctest::Approx(6.0));
  tl::Tensor z = (x * x).sum();
  z.backward();
  check_throws<tl::Error>([&] { z.backward(); }, "second time");
}

TEST_CASE("autograd: autograd::grad, allow_unused, retain_grad and gradients of non-scalars") {
  tl::Tensor x = leaf({3}), w = leaf({3}), unused = leaf({2});
  tl::Tensor h = x * w;
  h.retain_grad();
  tl::Tensor loss = tl::sum(h * h);
  auto g = tl::autograd::grad({loss}, {x, w}, {}, true);
  const std::vector<double> xv = values_of(x), wv = values_of(w);
  for (int i = 0; i < 3; ++i) {
    CHECK(values_of(g[0])[i] == doctest::Approx(2 * xv[i] * wv[i] * wv[i]));
    CHECK(values_of(g[1])[i] == doctest::Approx(2 * xv[i] * xv[i] * wv[i]));
  }
  CHECK_FALSE(x.grad().defined());  // grad() returns, never accumulates
  check_throws<tl::Error>([&] { tl::autograd::grad({loss}, {unused}, {}, true); },
                          "not have been used");
  auto u = tl::autograd::grad({loss}, {unused}, {}, true, false, true);
  CHECK_FALSE(u[0].defined());
  loss.backward();
  REQUIRE(h.grad().defined());
  for (int i = 0; i < 3; ++i) CHECK(values_of(h.grad())[i] == doctest::Approx(2 * xv[i] * wv[i]));
  // A non-scalar output needs its gradient, of its shape.
  tl::Tensor v = x * 2.0;
  check_throws<tl::Error>([&] { v.backward(); }, "implicitly created only for scalar");
  check_throws<tl::ShapeError>([&] { v.backward(tl::ones({4})); }, "Mismatch in shape");
  v.backward(tl::ones({3}));
  check_throws<tl::Error>([&] { tl::autograd::grad({x * 1.0}, {}); }, "scalar");
}

TEST_CASE("autograd: in-place writes, saved tensors and out= forms") {
  tl::Tensor x = leaf({4});
  check_throws<tl::Error>([&] { x.add_(1.0); }, "leaf Variable that requires grad");
  {
    tl::NoGradGuard no_grad;
    x.mul_(1.0);  // allowed without grad mode, as torch
  }
  // A tensor saved for backward, then changed in place: backward names the node.
  tl::Tensor a = random_tensor({4});
  tl::Tensor y = x * a;
  const uint32_t before = a._version();
  a.add_(1.0);
  CHECK(a._version() == before + 1);
  check_throws<tl::Error>([&] { y.sum().backward(); }, "modified by an inplace operation");
  tl::Tensor out = tl::empty({4});
  check_throws<tl::Error>([&] { tl::mul_out(out, x, x); }, "out=");
}

TEST_CASE("autograd: unary ops against finite differences") {
  struct Case {
    const char* name;
    tl::Tensor (*f)(const tl::Tensor&);
    tl::Tensor (*input)(const tl::Shape&);
  };
  const Case cases[] = {
      {"neg", [](const tl::Tensor& x) { return tl::neg(x); }, any},
      {"abs", [](const tl::Tensor& x) { return tl::abs(x); }, any},
      {"exp", [](const tl::Tensor& x) { return tl::exp(x); }, any},
      {"log", [](const tl::Tensor& x) { return tl::log(x); }, positive},
      {"sqrt", [](const tl::Tensor& x) { return tl::sqrt(x); }, positive},
      {"sin", [](const tl::Tensor& x) { return tl::sin(x); }, any},
      {"cos", [](const tl::Tensor& x) { return tl::cos(x); }, any},
      {"tanh", [](const tl::Tensor& x) { return tl::tanh(x); }, any},
      {"sigmoid", [](const tl::Tensor& x) { return tl::sigmoid(x); }, any},
      {"relu", [](const tl::Tensor& x) { return tl::relu(x); }, any},
      {"reciprocal", [](const tl::Tensor& x) { return tl::reciprocal(x); }, positive},
      {"rsqrt", [](const tl::Tensor& x) { return tl::rsqrt(x); }, positive},
      {"log1p", [](const tl::Tensor& x) { return tl::log1p(x); }, positive},
      {"expm1", [](const tl::Tensor& x) { return tl::expm1(x); }, any},
      {"log2", [](const tl::Tensor& x) { return tl::log2(x); }, positive},
      {"log10", [](const tl::Tensor& x) { return tl::log10(x); }, positive},
      {"exp2", [](const tl::Tensor& x) { return tl::exp2(x); }, any},
      {"erf", [](const tl::Tensor& x) { return tl::erf(x); }, any},
      {"erfc", [](const tl::Tensor& x) { return tl::erfc(x); }, any},
      {"tan", [](const tl::Tensor& x) { return tl::tan(x); }, unit},
      {"sinh", [](const tl::Tensor& x) { return tl::sinh(x); }, any},
      {"cosh", [](const tl::Tensor& x) { return tl::cosh(x); }, any},
      {"asin", [](const tl::Tensor& x) { return tl::asin(x); }, unit},
      {"acos", [](const tl::Tensor& x) { return tl::acos(x); }, unit},
      {"atan", [](const tl::Tensor& x) { return tl::atan(x); }, any},
      {"square", [](const tl::Tensor& x) { return tl::square(x); }, any},
      {"silu", [](const tl::Tensor& x) { return tl::silu(x); }, any},
      {"floor", [](const tl::Tensor& x) { return tl::floor(x); }, any},
      {"gelu", [](const tl::Tensor& x) { return tl::gelu(x); }, any},
      {"gelu tanh", [](const tl::Tensor& x) { return tl::gelu(x, "tanh"); }, any},
      {"softplus", [](const tl::Tensor& x) { return tl::softplus(x); }, any},
      {"softplus beta 2", [](const tl::Tensor& x) { return tl::softplus(x, 2.0, 1.0); }, any},
  };
  for (const tl::Device device : tl_test::test_devices())
    for (const Case& c : cases) {
      INFO(c.name);
      // Contiguous, and transposed (a strided input).
      CHECK(gradcheck(
          c.name, [&](const auto& in) { return c.f(in[0]); }, {c.input({3, 5})}, device));
      CHECK(gradcheck(
          c.name, [&](const auto& in) { return c.f(in[0].t()); }, {c.input({4, 2})}, device));
    }
}

TEST_CASE("autograd: binary ops, broadcasting, scalars and promotion against finite differences") {
  for (const tl::Device device : tl_test::test_devices()) {
    using Ts = std::vector<tl::Tensor>;
    CHECK(gradcheck(
        "add", [](const Ts& t) { return t[0] + t[1]; }, {any({3, 4}), any({4})}, device));
    CHECK(gradcheck(
        "add alpha", [](const Ts& t) { return tl::add(t[0], t[1], 2.5); },
        {any({3, 1}), any({1, 4})}, device));
    CHECK(gradcheck(
        "sub alpha", [](const Ts& t) { return tl::sub(t[0], t[1], -1.5); },
        {any({2, 3}), any({2, 3})}, device));
    CHECK(gradcheck(
        "sub scalar", [](const Ts& t) { return 1.0 - t[0]; }, {any({5})}, device));
    CHECK(gradcheck(
        "mul", [](const Ts& t) { return t[0] * t[1]; }, {any({2, 1, 3}), any({4, 1})}, device));
    CHECK(gradcheck(
        "mul scalar", [](const Ts& t) { return t[0] * 3.0; }, {any({4})}, device));
    CHECK(gradcheck(
        "div", [](const Ts& t) { return t[0] / t[1]; }, {any({3, 2}), positive({2})}, device));
    CHECK(gradcheck(
        "scalar / x", [](const Ts& t) { return 2.0 / t[0]; }, {positive({3})}, device));
    CHECK(gradcheck(
        "pow", [](const Ts& t) { return tl::pow(t[0], t[1]); }, {positive({3}), any({3})}, device));
    CHECK(gradcheck(
        "pow scalar", [](const Ts& t) { return tl::pow(t[0], 3.0); }, {any({4})}, device));
    {
      // A bool exponent (true = 1, false = 0): the formula's b - 1 raised in tl::sub (fuzzer
      // seeds 2 and 3); the gradient is 1 where b, 0 where not.
      tl::Tensor x = any({4}).to(device);
      x.requires_grad_();
      const tl::Tensor b = tl::from_vector<bool>({true, false, true, false}, {4}).to(device);
      tl::pow(x, b).sum().backward();
      CHECK(values_of(x.grad()) == std::vector<double>{1, 0, 1, 0});
    }
    CHECK(gradcheck(
        "maximum", [](const Ts& t) { return tl::maximum(t[0], t[1]); }, {any({4}), any({4})},
        device));
    CHECK(gradcheck(
        "minimum", [](const Ts& t) { return tl::minimum(t[0], t[1]); }, {any({2, 3}), any({3})},
        device));
    CHECK(gradcheck(
        "atan2", [](const Ts& t) { return tl::atan2(t[0], t[1]); }, {any({3}), positive({3})},
        device));
    // float32 * float64: the float32 input's gradient comes back as float32.
    tl::Tensor a = random_tensor({3}, tl::kFloat32, device),
               b = random_tensor({3}, tl::kFloat64, device);
    a.requires_grad_();
    (a * b).sum().backward();
    CHECK(a.grad().dtype() == tl::kFloat32);
    CHECK(a.grad().device() == device);
  }
}

TEST_CASE("autograd: sum, mean, matmul, views and to() against finite differences") {
  for (const tl::Device device : tl_test::test_devices()) {
    using Ts = std::vector<tl::Tensor>;
    CHECK(gradcheck(
        "sum", [](const Ts& t) { return t[0].sum(); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "sum dims",
        [](const Ts& t) {
          return tl::sum(t[0], {0, 2});
        },
        {any({2, 3, 2})}, device));
    CHECK(gradcheck(
        "sum keepdim", [](const Ts& t) { return tl::sum(t[0], -1, true); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "mean", [](const Ts& t) { return t[0].mean(); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "mean dim", [](const Ts& t) { return tl::mean(t[0], 1); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "mm", [](const Ts& t) { return tl::matmul(t[0], t[1]); }, {any({3, 4}), any({4, 2})},
        device));
    CHECK(gradcheck(
        "mm transposed", [](const Ts& t) { return tl::matmul(t[0].t(), t[1]); },
        {any({4, 3}), any({4, 2})}, device));
    CHECK(gradcheck(
        "mv", [](const Ts& t) { return tl::matmul(t[0], t[1]); }, {any({3, 4}), any({4})}, device));
    CHECK(gradcheck(
        "vm", [](const Ts& t) { return tl::matmul(t[0], t[1]); }, {any({4}), any({4, 2})}, device));
    CHECK(gradcheck(
        "dot", [](const Ts& t) { return tl::matmul(t[0], t[1]); }, {any({5}), any({5})}, device));
    CHECK(gradcheck(
        "batched, broadcast", [](const Ts& t) { return tl::matmul(t[0], t[1]); },
        {any({2, 3, 4}), any({4, 2})}, device));
    CHECK(gradcheck(
        "batched vector", [](const Ts& t) { return tl::matmul(t[0], t[1]); },
        {any({2, 3, 4}), any({4})}, device));
    CHECK(gradcheck(
        "view/reshape",
        [](const Ts& t) {
          return t[0].view({6, 2}).reshape({3, 4});
        },
        {any({2, 6})}, device));
    CHECK(gradcheck(
        "reshape of a transpose", [](const Ts& t) { return t[0].t().reshape(-1); }, {any({3, 4})},
        device));
    CHECK(gradcheck(
        "permute",
        [](const Ts& t) {
          return t[0].permute({2, 0, 1}) * 1.0;
        },
        {any({2, 3, 4})}, device));
    CHECK(gradcheck(
        "unsqueeze/squeeze", [](const Ts& t) { return t[0].unsqueeze(1).squeeze(); }, {any({3, 2})},
        device));
    CHECK(gradcheck(
        "expand",
        [](const Ts& t) {
          return t[0].expand({3, 4});
        },
        {any({3, 1})}, device));
    CHECK(gradcheck(
        "select", [](const Ts& t) { return t[0].select(1, 2); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "slice", [](const Ts& t) { return t[0].slice(0, 1, 6, 2); }, {any({7, 2})}, device));
    CHECK(gradcheck(
        "narrow", [](const Ts& t) { return t[0].narrow(1, 1, 2); }, {any({2, 4})}, device));
    CHECK(gradcheck(
        "to float32 and back", [](const Ts& t) { return t[0].to(tl::kFloat32).to(tl::kFloat64); },
        {any({4})}, device, 1e-3, 1e-3, 1e-2));
    CHECK(gradcheck(
        "clone", [](const Ts& t) { return t[0].clone() * 2.0; }, {any({3})}, device));
    CHECK(gradcheck(
        "softmax", [](const Ts& t) { return tl::softmax(t[0], 1); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "log_softmax", [](const Ts& t) { return tl::log_softmax(t[0], 0); }, {any({3, 4})},
        device));
    CHECK(gradcheck(
        "mm", [](const Ts& t) { return tl::mm(t[0], t[1]); }, {any({2, 3}), any({3, 2})}, device));
    CHECK(gradcheck(
        "bmm", [](const Ts& t) { return tl::bmm(t[0], t[1]); }, {any({2, 2, 3}), any({2, 3, 2})},
        device));
    CHECK(gradcheck(
        "where", [](const Ts& t) { return tl::where(t[0] > 0.0, t[0], t[1]); },
        {any({3, 4}), any({4})}, device));
    CHECK(gradcheck(
        "where scalar", [](const Ts& t) { return tl::where(t[0] > 0.0, t[0], 2.0); }, {any({5})},
        device));
    CHECK(gradcheck(
        "cat",
        [](const Ts& t) {
          return tl::cat({t[0], t[1], t[0]}, 1);
        },
        {any({2, 3}), any({2, 1})}, device));
    CHECK(gradcheck(
        "stack",
        [](const Ts& t) {
          return tl::stack({t[0], t[1]}, 1);
        },
        {any({2, 3}), any({2, 3})}, device));
    CHECK(gradcheck(
        "clamp", [](const Ts& t) { return tl::clamp(t[0], -0.5, 0.7); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "dot", [](const Ts& t) { return tl::dot(t[0], t[1]); }, {any({4}), any({4})}, device));
    CHECK(gradcheck(
        "linear", [](const Ts& t) { return tl::linear(t[0], t[1], t[2]); },
        {any({3, 4}), any({2, 4}), any({2})}, device));
    CHECK(gradcheck(
        "amax", [](const Ts& t) { return tl::amax(t[0], 1); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "amin keepdim", [](const Ts& t) { return tl::amin(t[0], 0, true); }, {any({3, 4})},
        device));
    CHECK(gradcheck(
        "max", [](const Ts& t) { return t[0].max(); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "cumsum", [](const Ts& t) { return tl::cumsum(t[0], 1); }, {any({3, 4})}, device));
    const tl::Tensor rows = tl::from_vector(std::vector<int64_t>{2, 0, 2}).to(device);
    CHECK(gradcheck(
        "index_select (repeated index)",
        [&](const Ts& t) { return tl::index_select(t[0], 0, rows); }, {any({3, 4})}, device));
    const tl::Tensor picks =
        tl::from_vector(std::vector<int64_t>{1, 1, 0, 3, 2, 2}, {3, 2}).to(device);
    CHECK(gradcheck(
        "gather", [&](const Ts& t) { return tl::gather(t[0], 1, picks); }, {any({3, 4})}, device));
    // A small MLP's loss: every piece above in one graph.
    CHECK(gradcheck(
        "mlp",
        [](const Ts& t) {
          tl::Tensor h = tl::tanh(tl::matmul(t[0], t[1]) + t[2]);
          return tl::mean(tl::sigmoid(tl::matmul(h, t[3])));
        },
        {any({4, 3}), any({3, 5}), any({5}), any({5, 2})}, device));
  }
}

TEST_CASE("autograd: ops without a derivative yet raise instead of dropping the gradient") {
  tl::Tensor x = leaf({4});
  check_throws<tl::Error>([&] { tl::floor_divide(x, 2.0); }, "not implemented");
  check_throws<tl::Error>([&] { x.as_strided({2}, {1}, 0); }, "not implemented");
  // Ties share the gradient of an extreme evenly, as torch's amax.
  tl::Tensor t = tl::from_vector(std::vector<float>{1.0f, 3.0f, 3.0f});
  t.requires_grad_();
  tl::amax(t, 0).backward();
  CHECK(values_of(t.grad()) == std::vector<double>{0.0, 0.5, 0.5});
}

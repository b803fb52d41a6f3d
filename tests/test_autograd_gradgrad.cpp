// Second derivatives: gradgradcheck of the elementwise, reduction, matmul and indexing families,
// Hessian-vector products and a gradient penalty, on every test device (float64).
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

using tl_test::gradgradcheck;
using tl_test::random_tensor;
using tl_test::values_of;
using Ts = std::vector<tl::Tensor>;

namespace {

tl::Tensor any(const tl::Shape& shape) { return random_tensor(shape, tl::kFloat64); }
tl::Tensor positive(const tl::Shape& shape) { return tl::rand(shape, tl::kFloat64) * 2.0 + 0.5; }
// Distinct values (a shuffled range, spread), so that amax picks no ties.
tl::Tensor distinct(const tl::Shape& shape) {
  const int64_t n = shape.numel();
  return (tl::randperm(n).to(tl::kFloat64) * 0.37 - 0.5 * n * 0.37).view(shape);
}
tl::Tensor ints(std::vector<int64_t> v, const tl::Shape& shape, tl::Device device) {
  return tl::from_vector(v, shape).to(device);
}

}  // namespace

TEST_CASE("autograd gradgradcheck: unary elementwise") {
  struct Case {
    const char* name;
    tl::Tensor (*op)(const tl::Tensor&);
    tl::Tensor (*input)(const tl::Shape&);
  };
  const std::vector<Case> cases = {
      {"sigmoid", [](const tl::Tensor& x) { return tl::sigmoid(x); }, any},
      {"tanh", [](const tl::Tensor& x) { return tl::tanh(x); }, any},
      {"exp", [](const tl::Tensor& x) { return tl::exp(x); }, any},
      {"log", [](const tl::Tensor& x) { return tl::log(x); }, positive},
      {"sqrt", [](const tl::Tensor& x) { return tl::sqrt(x); }, positive},
      {"rsqrt", [](const tl::Tensor& x) { return tl::rsqrt(x); }, positive},
      {"reciprocal", [](const tl::Tensor& x) { return tl::reciprocal(x); }, positive},
      {"gelu", [](const tl::Tensor& x) { return tl::gelu(x); }, any},
      {"gelu tanh", [](const tl::Tensor& x) { return tl::gelu(x, "tanh"); }, any},
      {"silu", [](const tl::Tensor& x) { return tl::silu(x); }, any},
      {"softplus", [](const tl::Tensor& x) { return tl::softplus(x); }, any},
      {"sin", [](const tl::Tensor& x) { return tl::sin(x); }, any},
      {"cos", [](const tl::Tensor& x) { return tl::cos(x); }, any},
      {"log1p", [](const tl::Tensor& x) { return tl::log1p(x); }, positive},
      {"abs", [](const tl::Tensor& x) { return tl::abs(x); }, any},
      {"relu", [](const tl::Tensor& x) { return tl::relu(x); }, any},
  };
  for (const tl::Device device : tl_test::test_devices())
    for (const Case& c : cases) {
      INFO(c.name);
      const auto op = c.op;
      CHECK(gradgradcheck(
          c.name, [op](const Ts& t) { return op(t[0]); }, {c.input({3, 4})}, device));
      CHECK(gradgradcheck(
          std::string(c.name) + " transposed", [op](const Ts& t) { return op(t[0].t()); },
          {c.input({4, 3})}, device));
    }
}

TEST_CASE("autograd gradgradcheck: binary elementwise") {
  for (const tl::Device device : tl_test::test_devices()) {
    CHECK(gradgradcheck(
        "mul broadcast", [](const Ts& t) { return t[0] * t[1]; }, {any({3, 4}), any({4})}, device));
    CHECK(gradgradcheck(
        "x * x", [](const Ts& t) { return t[0] * t[0]; }, {any({5})}, device));
    CHECK(gradgradcheck(
        "add/sub alpha", [](const Ts& t) { return tl::sub(t[0], t[1], 2.0) + t[0]; },
        {any({2, 3}), any({3})}, device));
    CHECK(gradgradcheck(
        "div", [](const Ts& t) { return t[0] / t[1]; }, {any({3, 2}), positive({2})}, device));
    CHECK(gradgradcheck(
        "scalar / x", [](const Ts& t) { return 2.0 / t[0]; }, {positive({3})}, device));
    CHECK(gradgradcheck(
        "pow", [](const Ts& t) { return tl::pow(t[0], t[1]); }, {positive({3}), any({3})}, device));
    CHECK(gradgradcheck(
        "pow scalar", [](const Ts& t) { return tl::pow(t[0], 3.0); }, {any({4})}, device));
    CHECK(gradgradcheck(
        "scalar pow", [](const Ts& t) { return tl::pow(2.0, t[0]); }, {any({4})}, device));
    CHECK(gradgradcheck(
        "maximum", [](const Ts& t) { return tl::maximum(t[0], t[1]); }, {any({3, 4}), any({4})},
        device));
    CHECK(gradgradcheck(
        "atan2", [](const Ts& t) { return tl::atan2(t[0], t[1]); }, {any({3}), positive({3})},
        device));
    CHECK(gradgradcheck(
        "where", [&](const Ts& t) { return tl::where(tl::gt(t[0], 0.0), t[0] * t[1], t[1]); },
        {any({3, 4}), any({3, 4})}, device));
  }
}

TEST_CASE("autograd gradgradcheck: reductions, softmax, var/std, norm") {
  for (const tl::Device device : tl_test::test_devices()) {
    CHECK(gradgradcheck(
        "sum of squares", [](const Ts& t) { return tl::sum(t[0] * t[0], 1); }, {any({3, 4})},
        device));
    CHECK(gradgradcheck(
        "mean * x", [](const Ts& t) { return tl::mean(t[0], 0, true) * t[0]; }, {any({3, 4})},
        device));
    CHECK(gradgradcheck(
        "amax of squares", [](const Ts& t) { return tl::amax(t[0] * t[0], 1); },
        {distinct({3, 4}) + 10.0}, device));
    CHECK(gradgradcheck(
        "logsumexp", [](const Ts& t) { return tl::logsumexp(t[0], 1); }, {any({3, 5})}, device));
    CHECK(gradgradcheck(
        "logsumexp all, transposed", [](const Ts& t) { return tl::logsumexp(t[0].t(), {}); },
        {any({4, 3})}, device));
    CHECK(gradgradcheck(
        "softmax", [](const Ts& t) { return tl::softmax(t[0], 1); }, {any({3, 4})}, device));
    CHECK(gradgradcheck(
        "log_softmax", [](const Ts& t) { return tl::log_softmax(t[0], 0); }, {any({3, 4})},
        device));
    CHECK(gradgradcheck(
        "var", [](const Ts& t) { return tl::var(t[0]); }, {any({3, 5})}, device));
    CHECK(gradgradcheck(
        "var dim correction 0 keepdim", [](const Ts& t) { return tl::var(t[0].t(), 1, 0.0, true); },
        {any({5, 3})}, device));
    CHECK(gradgradcheck(
        "std dims",
        [](const Ts& t) {
          return tl::std(t[0], {0, 2});
        },
        {any({2, 3, 4})}, device));
    for (const double p : {2.0, 3.0, 1.5})
      CHECK(gradgradcheck(
          "norm p=" + std::to_string(p), [p](const Ts& t) { return tl::norm(t[0], p, 1, true); },
          {any({3, 5})}, device));
    CHECK(gradgradcheck(
        "norm fro", [](const Ts& t) { return tl::norm(t[0]); }, {any({4, 3})}, device));
  }
}

TEST_CASE("autograd gradgradcheck: mm, matmul, bmm, addmm, linear") {
  for (const tl::Device device : tl_test::test_devices()) {
    CHECK(gradgradcheck(
        "mm", [](const Ts& t) { return tl::mm(t[0], t[1].t()); }, {any({3, 4}), any({5, 4})},
        device));
    CHECK(gradgradcheck(
        "matmul batched broadcast", [](const Ts& t) { return tl::matmul(t[0], t[1]); },
        {any({2, 3, 4}), any({4, 2})}, device));
    CHECK(gradgradcheck(
        "matmul vector", [](const Ts& t) { return tl::matmul(t[0], t[1]); },
        {any({3, 4}), any({4})}, device));
    CHECK(gradgradcheck(
        "bmm", [](const Ts& t) { return tl::bmm(t[0], t[1]); }, {any({2, 3, 4}), any({2, 4, 2})},
        device));
    CHECK(gradgradcheck(
        "addmm", [](const Ts& t) { return tl::addmm(t[0], t[1], t[2], 0.5, -2.0); },
        {any({5}), any({3, 4}), any({4, 5})}, device));
    CHECK(gradgradcheck(
        "linear", [](const Ts& t) { return tl::tanh(tl::linear(t[0], t[1], t[2])); },
        {any({3, 4}), any({2, 4}), any({2})}, device));
  }
}

TEST_CASE("autograd gradgradcheck: index_select, gather, take, index, scatter_add") {
  for (const tl::Device device : tl_test::test_devices()) {
    const tl::Tensor rows = ints({2, 0, 2}, {3}, device);
    CHECK(gradgradcheck(
        "index_select (repeated) squared",
        [&](const Ts& t) { return tl::square(tl::index_select(t[0], 0, rows)); }, {any({3, 4})},
        device));
    const tl::Tensor where = ints({0, 2, 2, 1, 0, 0}, {2, 3}, device);
    CHECK(gradgradcheck(
        "gather * x", [&](const Ts& t) { return tl::gather(t[0], 1, where) * t[0].slice(1, 0, 3); },
        {any({2, 4})}, device));
    const tl::Tensor flat = ints({5, -1, 0, 5}, {2, 2}, device);
    CHECK(gradgradcheck(
        "take cubed", [&](const Ts& t) { return tl::pow(tl::take(t[0].t(), flat), 3.0); },
        {any({4, 3})}, device));
    const tl::Tensor cols = ints({1, 3, 1}, {3}, device);
    CHECK(gradgradcheck(
        "index pairs, sigmoid",
        [&](const Ts& t) {
          return tl::sigmoid(t[0].index({rows, cols}));
        },
        {any({3, 4})}, device));
    const tl::Tensor dup = ints({0, 2, 0, 1, 1, 1}, {2, 3}, device);
    CHECK(gradgradcheck(
        "scatter_add of squares",
        [&](const Ts& t) { return tl::scatter_add(t[0], 1, dup, t[1] * t[1]) * t[0]; },
        {any({2, 4}), any({2, 3})}, device));
  }
}

namespace {

// f(x) = sum(tanh(W x)^2 + x^3 / 3), scalar; a model whose Hessian is dense.
tl::Tensor model(const tl::Tensor& x, const tl::Tensor& w) {
  const tl::Tensor h = tl::tanh(tl::matmul(w, x));
  return tl::sum(h * h) + tl::sum(tl::pow(x, 3.0)) / 3.0;
}

}  // namespace

TEST_CASE("autograd gradgrad: Hessian-vector product vs finite differences of the gradient") {
  for (const tl::Device device : tl_test::test_devices()) {
    const tl::Tensor w = any({3, 4}).to(device);
    const tl::Tensor x0 = any({4}), v = any({4});
    tl::Tensor x = x0.to(device);
    x.requires_grad_();
    const tl::Tensor g = tl::autograd::grad({model(x, w)}, {x}, {}, std::nullopt, true)[0];
    CHECK(g.requires_grad());
    const tl::Tensor hvp = tl::autograd::grad({tl::sum(g * v.to(device))}, {x})[0];
    // Central differences of the gradient along v.
    const double eps = 1e-6;
    auto grad_at = [&](double d) {
      tl::Tensor xs = (x0 + v * d).to(device);
      xs.requires_grad_();
      return values_of(tl::autograd::grad({model(xs, w)}, {xs})[0]);
    };
    const std::vector<double> plus = grad_at(eps), minus = grad_at(-eps), got = values_of(hvp);
    for (size_t i = 0; i < got.size(); ++i) {
      const double numeric = (plus[i] - minus[i]) / (2 * eps);
      CHECK(std::abs(got[i] - numeric) <= 1e-5 + 1e-3 * std::abs(numeric));
    }
  }
}

TEST_CASE("autograd gradgrad: a gradient penalty backpropagated to the parameters") {
  for (const tl::Device device : tl_test::test_devices()) {
    const tl::Tensor x0 = any({4}), w0 = any({3, 4});
    // penalty(w) = ||grad_x f(x, w)||^2, its gradient with respect to w by backward().
    auto penalty = [&](const tl::Tensor& w, bool create_graph) {
      tl::Tensor x = x0.to(device);
      x.requires_grad_();
      const tl::Tensor gx =
          tl::autograd::grad({model(x, w)}, {x}, {}, std::nullopt, create_graph)[0];
      return tl::sum(gx * gx);
    };
    tl::Tensor w = w0.to(device);
    w.requires_grad_();
    penalty(w, true).backward();
    REQUIRE(w.grad().defined());
    const std::vector<double> got = values_of(w.grad());
    const double eps = 1e-6;
    for (int64_t j = 0; j < w0.numel(); ++j) {
      auto at = [&](double d) {
        tl::Tensor moved = w0.clone();
        moved.data<double>()[j] += d;
        tl::Tensor wd = moved.to(device);
        wd.requires_grad_();
        return penalty(wd, false).item<double>();
      };
      const double numeric = (at(eps) - at(-eps)) / (2 * eps);
      CHECK(std::abs(got[j] - numeric) <= 1e-5 + 1e-3 * std::abs(numeric));
    }
  }
}

TEST_CASE("autograd gradgradcheck: views into zeros (select, slice, diagonal), 0-d reductions") {
  for (const tl::Device device : tl_test::test_devices()) {
    CHECK(gradgradcheck(
        "select and slice products",
        [](const Ts& t) { return t[0].select(0, 1) * t[0].slice(0, 0, 1).squeeze(0); },
        {any({3, 4})}, device));
    CHECK(gradgradcheck(
        "strided slice squared", [](const Ts& t) { return tl::square(t[0].slice(1, 0, 5, 2)); },
        {any({2, 5})}, device));
    CHECK(gradgradcheck(
        "diagonal squared", [](const Ts& t) { return tl::square(tl::diagonal(t[0], 1)); },
        {any({3, 4})}, device));
    CHECK(gradgradcheck(
        "sum and mean over dim 0 of a 0-d tensor",
        [](const Ts& t) { return tl::sum(t[0] * t[0], {0}) + tl::mean(t[0], {-1}); }, {any({})},
        device));
  }
}

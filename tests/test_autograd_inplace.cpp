// In-place ops under autograd: torch's rebasing of the written tensor's history, the leaf rule,
// saved values that an in-place write changes, and what is refused (memory shared with a view).
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <functional>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

using tl_test::gradcheck;
using tl_test::random_tensor;
using tl_test::values_of;

namespace {

tl::Tensor leaf(const tl::Shape& shape, tl::Device device) {
  tl::Tensor t = random_tensor(shape, tl::kFloat64, device);
  t.requires_grad_();
  return t;
}

// Throws E mentioning both the call and the reason.
template <class E = tl::Error>
void check_throws2(const std::function<void()>& fn, const std::string& call,
                   const std::string& reason) {
  tl_test::check_throws<E>(fn, reason);
  tl_test::check_throws<E>(fn, call);
}

void check_close(const tl::Tensor& got, const tl::Tensor& want) {
  REQUIRE(got.defined());
  CHECK(got.shape() == want.shape());
  CHECK(tl::allclose(got.to(tl::kFloat64).cpu(), want.to(tl::kFloat64).cpu(), 1e-9, 1e-12));
}

}  // namespace

TEST_CASE("autograd in-place: add_, mul_ and a unary op rebase the tensor's history") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = leaf({3, 4}, device), w = leaf({3, 4}, device);
    tl::Tensor y = x * 2.0;
    y.add_(1.0);
    y.mul_(w);  // saves y's value before the write
    CHECK(y.grad_fn()->name() == "MulBackward0");
    CHECK_FALSE(y.is_leaf());
    tl::sum(y).backward();
    tl::NoGradGuard no_grad;
    check_close(x.grad(), w * 2.0);
    check_close(w.grad(), x * 2.0 + 1.0);
  }
}

TEST_CASE("autograd in-place: a tensor without history takes the operand's") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = leaf({5}, device);
    tl::Tensor a = tl::zeros({5}, tl::TensorOptions(tl::kFloat64).device(device));
    a.add_(x, 3.0);
    CHECK(a.requires_grad());
    CHECK_FALSE(a.is_leaf());
    tl::sum(a * a).backward();
    tl::NoGradGuard no_grad;
    check_close(x.grad(), x * 18.0);  // d/dx sum((3x)^2)
  }
}

TEST_CASE("autograd in-place: gradcheck of chains of in-place ops") {
  for (const tl::Device device : tl_test::test_devices()) {
    CHECK(gradcheck(
        "in-place chain",
        [](const auto& in) {
          tl::Tensor y = in[0] * 1.5;
          y.sin_();
          y.mul_(in[1]);
          y.sub_(in[0], 0.5);
          y.relu_();
          y.div_(2.0);
          return y;
        },
        {random_tensor({3, 5}, tl::kFloat64), random_tensor({3, 5}, tl::kFloat64)}, device));
    CHECK(gradcheck(
        "copy_ into a constant",
        [](const auto& in) {
          tl::Tensor z = tl::zeros({2, 3}, tl::TensorOptions(tl::kFloat64).device(in[0].device()));
          z.copy_(in[0]);  // broadcast from {3}
          return z * z;
        },
        {random_tensor({3}, tl::kFloat64)}, device));
  }
}

TEST_CASE("autograd in-place: copy_ across dtypes and fill_") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = random_tensor({4}, tl::kFloat32, device);
    x.requires_grad_();
    tl::Tensor z = tl::zeros({4}, tl::TensorOptions(tl::kFloat64).device(device));
    z.copy_(x);
    CHECK(z.grad_fn()->name() == "CopyBackwards");
    tl::sum(z * 2.0).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().dtype() == tl::kFloat32);
    CHECK(values_of(x.grad()) == std::vector<double>(4, 2.0));

    tl::Tensor y = x * 2.0;
    y.fill_(1.0);
    CHECK_FALSE(y.requires_grad());
    CHECK(values_of(y) == std::vector<double>(4, 1.0));
  }
}

TEST_CASE("autograd in-place: what is refused, with nothing changed") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::Tensor x = leaf({4}, device);
    const std::vector<double> before = values_of(x);
    // torch's leaf rule; allowed under NoGradGuard.
    check_throws2([&] { x.add_(1.0); }, "tl::add_", "leaf Variable");
    CHECK(values_of(x) == before);
    {
      tl::NoGradGuard no_grad;
      x.mul_(1.0);
    }
    // A view of a tensor in a graph (its base would not see the write).
    tl::Tensor b = x * 2.0;
    tl::Tensor v = b.narrow(0, 0, 2);
    const std::vector<double> b_before = values_of(b);
    check_throws2([&] { v.mul_(3.0); }, "tl::mul_", "view");
    CHECK(values_of(b) == b_before);
    // An output saved for backward (exp keeps its result).
    tl::Tensor e = tl::exp(x);
    check_throws2([&] { e.add_(1.0); }, "tl::add_", "saved for backward");
    // A saved input changed in place: backward names the node that saved it.
    tl::Tensor h = x * 2.0;
    tl::Tensor w = leaf({4}, device);
    tl::Tensor z = h * w;  // saves h
    h.add_(1.0);
    check_throws2([&] { tl::sum(z).backward(); }, "MulBackward0",
                  "modified by an inplace operation");
    // In-place ops without a derivative still refuse a graph.
    tl::Tensor g = x * 1.0;
    check_throws2([&] { g.masked_fill_(tl::gt(g, 0.0), 0.0); }, "masked_fill_", "no derivative");
  }
}

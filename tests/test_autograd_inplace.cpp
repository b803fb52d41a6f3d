// In-place ops under autograd: torch's rebasing of the written tensor's history, the leaf rule,
// saved values that an in-place write changes, writes into views (CopySlices), and what is
// refused.
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
    // A tensor whose memory an untracked alias shares (its history would not see the write),
    // and a view of a leaf.
    tl::Tensor b = x * 2.0;
    const tl::Tensor alias = b.detach();
    const std::vector<double> b_before = values_of(b);
    check_throws2([&] { b.mul_(3.0); }, "tl::mul_", "sharing its memory");
    CHECK(values_of(b) == b_before);
    check_throws2([&] { x.narrow(0, 1, 2).mul_(3.0); }, "tl::mul_", "view of a leaf Variable");
    CHECK(values_of(x) == before);
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

TEST_CASE("autograd in-place: a write into a view rebases its base (CopySlices)") {
  using Ts = std::vector<tl::Tensor>;
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const auto any = [](const tl::Shape& shape) { return random_tensor(shape, tl::kFloat64); };
    CHECK(gradcheck(
        "mul_ into a narrow view",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          b.narrow(0, 1, 2).mul_(in[1]);
          return b;
        },
        {any({5}), any({2})}, device));
    // Views of views made in one expression (the temporaries are alive during the write).
    CHECK(gradcheck(
        "a column through t().select, then a unary op on another column",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          b.t().select(0, 1).mul_(in[1]);
          b.select(1, 0).tanh_();
          return b * 2.0;
        },
        {any({3, 4}), any({3})}, device));
    // Another view of the base, overlapping the one written, remakes its history when next used.
    CHECK(gradcheck(
        "a view read after an overlapping view was written",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          tl::Tensor v1 = b.narrow(0, 0, 3), v2 = b.narrow(0, 2, 3);
          v1.mul_(in[1]);
          return v2 * v2 + b.narrow(0, 1, 3);
        },
        {any({5}), any({3})}, device));
    // A write to the base while views of it live: they make their history again from the
    // base's when next used, one made before the write included (and a view of a view).
    CHECK(gradcheck(
        "the base written while views of it live",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          tl::Tensor v = b.narrow(0, 1, 3);
          tl::Tensor vv = v.narrow(0, 1, 2);
          tl::Tensor before = v * 2.0;
          b.mul_(in[1]);
          // (v * v would save v, which tanh_ then changes: torch refuses that backward too.)
          tl::Tensor after = tl::exp(v);
          b.tanh_();
          return tl::cat({before, after, vv * 3.0, b});
        },
        {any({5}), any({5})}, device));
    // Values that do not read the view's old ones (copy_), or need no gradient (fill_).
    CHECK(gradcheck(
        "copy_ and fill_ into slices",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          b.narrow(0, 0, 2).copy_(in[1] * 3.0);
          b.narrow(0, 3, 1).fill_(0.5);
          return b * b;
        },
        {any({5}), any({2})}, device));
    CHECK(gradcheck(
        "the view on both sides (v.mul_(v))",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          tl::Tensor v = b.narrow(0, 1, 3);
          v.mul_(v);
          return b;
        },
        {any({5})}, device));

    // The nodes are torch's: the base's CopySlices, the view's AsStridedBackward0.
    tl::Tensor x = leaf({4}, device), w = leaf({2}, device);
    tl::Tensor b = x * 1.0;
    tl::Tensor v = b.narrow(0, 2, 2);
    v.mul_(w);
    CHECK(b.grad_fn()->name() == "CopySlices");
    CHECK(v.grad_fn()->name() == "AsStridedBackward0");
    tl::sum(b).backward();
    const std::vector<double> xv = values_of(x), wv = values_of(w);
    check_close(x.grad(), tl::from_vector<double>({1.0, 1.0, wv[0], wv[1]}, {4}).to(device));
    check_close(w.grad(), tl::from_vector<double>({xv[2], xv[3]}, {2}).to(device));

    // Second derivatives go through CopySlices too (its create_graph path records take + put).
    CHECK(tl_test::gradgradcheck(
        "mul_ into a narrow view, squared",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          b.narrow(0, 1, 2).mul_(in[1]);
          return b * b;
        },
        {any({5}), any({2})}, device));
    CHECK(tl_test::gradgradcheck(
        "t().select mul_, tanh_ on a column, copy_ and fill_",
        [](const Ts& in) {
          tl::Tensor b = in[0] * in[0];
          b.t().select(0, 1).mul_(in[1]);
          b.select(1, 0).tanh_();
          b.narrow(0, 2, 1).copy_(in[1].narrow(0, 0, 1).reshape({1, 1}).expand({1, 4}) * 3.0);
          b.narrow(1, 3, 1).fill_(0.5);
          return b * b;
        },
        {any({3, 4}), any({3})}, device));
    CHECK(tl_test::gradgradcheck(
        "the view on both sides (v.mul_(v))",
        [](const Ts& in) {
          tl::Tensor b = in[0] * 1.0;
          tl::Tensor v = b.narrow(0, 1, 3);
          v.mul_(v);
          return b * in[0];
        },
        {any({5})}, device));
    // A Hessian-vector product through CopySlices equals the one of the same function written
    // out of place.
    tl::Tensor c = x * 1.0;
    c.narrow(0, 0, 2).mul_(w);
    const tl::Tensor gx = tl::autograd::grad({tl::sum(c * c)}, {x}, {}, std::nullopt, true)[0];
    CHECK(gx.requires_grad());
    const tl::Tensor u = random_tensor({4}, tl::kFloat64, device);
    const tl::Tensor hv = tl::autograd::grad({tl::sum(gx * u)}, {w})[0];
    // f = sum((x[0:2] w)^2) + sum(x[2:4]^2): df/dx_i = 2 x_i w_i^2 (i < 2), d2f/dx_i dw_i =
    // 4 x_i w_i, so (H u)_w = 4 x_i w_i u_i.
    const std::vector<double> uv = values_of(u);
    check_close(hv,
                tl::from_vector<double>({4 * xv[0] * wv[0] * uv[0], 4 * xv[1] * wv[1] * uv[1]}, {2})
                    .to(device));
    tl::Tensor d = x * 3.0;
    tl::sum(d).backward();
  }
}

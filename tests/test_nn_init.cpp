// tl::nn::init against torch.nn.init's formulas: gains, fans, each initializer's range or spread
// (bounds exact, moments within sampling error), in place on the same tensor outside autograd,
// and its bad inputs.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>

#include "test_util.h"

namespace init = tl::nn::init;
using tl::Tensor;
using tl_test::check_throws;

namespace {

double max_abs(const Tensor& t) { return tl::max(tl::abs(t)).item<double>(); }
double std_of(const Tensor& t) { return tl::std(t.to(tl::kFloat64)).item<double>(); }

}  // namespace

TEST_CASE("nn::init: gains and fans are torch's") {
  CHECK(init::calculate_gain(init::kLinear) == 1.0);
  CHECK(init::calculate_gain(init::kSigmoid) == 1.0);
  CHECK(init::calculate_gain(init::kTanh) == doctest::Approx(5.0 / 3.0));
  CHECK(init::calculate_gain(init::kReLU) == doctest::Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain(init::kLeakyReLU) == doctest::Approx(std::sqrt(2.0 / 1.0001)));
  CHECK(init::calculate_gain(init::kLeakyReLU, std::sqrt(5.0)) ==
        doctest::Approx(std::sqrt(1.0 / 3.0)));
  CHECK(init::calculate_gain(init::kSELU) == 0.75);
  const auto linear = init::calculate_fan_in_and_fan_out(tl::empty({30, 20}));
  CHECK(linear.fan_in == 20);
  CHECK(linear.fan_out == 30);
  const auto conv = init::calculate_fan_in_and_fan_out(tl::empty({8, 3, 5, 5}));
  CHECK(conv.fan_in == 75);
  CHECK(conv.fan_out == 200);
}

TEST_CASE("nn::init: each initializer's range and spread, in place, outside autograd") {
  tl::manual_seed(1);
  Tensor w = tl::empty({200, 300});
  w.requires_grad_();
  const Tensor handle = w;
  init::uniform_(w, -0.5, 0.25);
  CHECK(tl::min(w).item<double>() >= -0.5);
  CHECK(tl::max(w).item<double>() < 0.25);
  CHECK(&handle.impl() == &w.impl());
  CHECK(w.requires_grad());
  CHECK(w.grad_fn() == nullptr);
  init::normal_(w, 2.0, 0.5);
  CHECK(std::abs(tl::mean(w).item<double>() - 2.0) < 0.01);  // 60000 draws: 5 sigma 0.01
  CHECK(std::abs(std_of(w) - 0.5) < 0.01);
  // xavier: bound sqrt(6 / (fan_in + fan_out)) * gain; normal std sqrt(2 / (in + out)) * gain.
  const double xb = 2.0 * std::sqrt(6.0 / 500.0);
  init::xavier_uniform_(w, 2.0);
  CHECK(max_abs(w) <= xb);
  CHECK(max_abs(w) > 0.99 * xb);
  init::xavier_normal_(w);
  CHECK(std::abs(std_of(w) - std::sqrt(2.0 / 500.0)) < 0.02 * std::sqrt(2.0 / 500.0));
  // kaiming_uniform_(a = sqrt(5)) is nn.Linear's: bound 1 / sqrt(fan_in).
  init::kaiming_uniform_(w, std::sqrt(5.0));
  CHECK(max_abs(w) <= 1.0 / std::sqrt(300.0));
  CHECK(max_abs(w) > 0.99 / std::sqrt(300.0));
  init::kaiming_normal_(w, 0, init::kFanOut, init::kReLU);
  CHECK(std::abs(std_of(w) - std::sqrt(2.0 / 200.0)) < 0.02 * std::sqrt(2.0 / 200.0));
  init::constant_(w, 0.125);
  CHECK(tl::equal(w, tl::full({200, 300}, 0.125)));
  init::zeros_(w);
  CHECK(tl::equal(w, tl::zeros({200, 300})));
  init::ones_(w);
  CHECK(tl::equal(w, tl::ones({200, 300})));
  CHECK(w.grad_fn() == nullptr);
  // Any dtype for the constants; an empty tensor has nothing to draw.
  Tensor i = tl::zeros({3}, tl::kInt64);
  CHECK(tl::equal(init::ones_(i), tl::ones({3}, tl::kInt64)));
  CHECK(init::kaiming_uniform_(tl::empty({0, 4})).numel() == 0);
  for (const tl::Device device : tl_test::test_devices()) {
    Tensor d = tl::empty({64, 64}, device);
    init::xavier_uniform_(d);
    CHECK(d.device() == device);
    CHECK(max_abs(d) <= std::sqrt(6.0 / 128.0));
  }
}

TEST_CASE("bad input: nn::init") {
  check_throws<tl::ShapeError>([] { init::xavier_uniform_(tl::empty({5})); },
                               "[tl::nn::init::xavier_uniform_]");
  check_throws<tl::ShapeError>([] { init::kaiming_normal_(tl::empty({5})); },
                               "[tl::nn::init::kaiming_normal_]");
  check_throws<tl::ShapeError>([] { (void)init::calculate_fan_in_and_fan_out(tl::empty({})); },
                               "fewer than 2 dimensions");
  check_throws<tl::DTypeError>(
      [] {
        init::uniform_(tl::zeros({2, 2}, tl::kInt64));
      },
      "[tl::nn::init::uniform_]");
  check_throws<tl::DTypeError>(
      [] {
        init::xavier_normal_(tl::zeros({2, 2}, tl::kInt32));
      },
      "[tl::nn::init::xavier_normal_]");
  check_throws<tl::Error>([] { init::normal_(Tensor()); }, "[tl::nn::init::normal_]");
}

// tl::nn's losses against torch's formulas computed here element by element in float64 (every
// reduction, weights, ignore_index, label smoothing, probability targets, pos_weight, extreme
// logits), gradchecked on every test device, the modules equal to the functions, and the bad
// inputs naming the function called.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

namespace nn = tl::nn;
namespace F = tl::nn::functional;
using tl::Tensor;
using tl_test::check_throws;
using tl_test::random_tensor;
using tl_test::values_of;

namespace {

double value(const Tensor& t) { return t.item<double>(); }

double reduce(const std::vector<double>& e, nn::Reduction r) {
  double s = 0;
  for (double v : e) s += v;
  return r == nn::kSum ? s : s / static_cast<double>(e.size());
}

Tensor labels(std::vector<int64_t> v, const tl::Shape& shape) { return tl::from_vector(v, shape); }

// log_softmax of row n of a [N, C] float64 host tensor.
std::vector<double> log_softmax_row(const std::vector<double>& x, int64_t n, int64_t c) {
  double m = -INFINITY, s = 0;
  for (int64_t k = 0; k < c; ++k) m = std::max(m, x[n * c + k]);
  for (int64_t k = 0; k < c; ++k) s += std::exp(x[n * c + k] - m);
  std::vector<double> out(c);
  for (int64_t k = 0; k < c; ++k) out[k] = x[n * c + k] - m - std::log(s);
  return out;
}

}  // namespace

TEST_CASE("nn losses: mse, l1 and smooth l1 are torch's, every reduction") {
  const Tensor x = random_tensor({4, 5}, tl::kFloat64), y = random_tensor({4, 5}, tl::kFloat64);
  const std::vector<double> xv = values_of(x), yv = values_of(y);
  std::vector<double> se, ae, sl;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double d = std::abs(xv[i] - yv[i]);
    se.push_back(d * d);
    ae.push_back(d);
    sl.push_back(d < 0.5 ? 0.5 * d * d / 0.5 : d - 0.25);
  }
  for (nn::Reduction r : {nn::kMean, nn::kSum}) {
    CHECK(value(F::mse_loss(x, y, r)) == doctest::Approx(reduce(se, r)).epsilon(1e-12));
    CHECK(value(F::l1_loss(x, y, r)) == doctest::Approx(reduce(ae, r)).epsilon(1e-12));
    CHECK(value(F::smooth_l1_loss(x, y, r, 0.5)) == doctest::Approx(reduce(sl, r)).epsilon(1e-12));
  }
  tl_test::check_values(F::mse_loss(x, y, nn::kNone), se);
  CHECK(tl::equal(F::smooth_l1_loss(x, y, nn::kNone, 0.0), F::l1_loss(x, y, nn::kNone)));
  CHECK(tl::equal(nn::MSELoss()(x, y), F::mse_loss(x, y)));
  CHECK(tl::equal(nn::L1Loss(nn::kSum)(x, y), F::l1_loss(x, y, nn::kSum)));
  CHECK(tl::equal(nn::SmoothL1Loss(nn::kMean, 0.5)(x, y), F::smooth_l1_loss(x, y, nn::kMean, 0.5)));
}

TEST_CASE("nn losses: nll_loss and cross_entropy with weights, ignore_index, smoothing") {
  const int64_t n = 6, c = 4;
  const Tensor x = random_tensor({n, c}, tl::kFloat64);
  const Tensor t = labels({0, 3, 1, -100, 2, 3}, {n});
  const Tensor w = tl::from_vector<double>({0.5, 1.0, 2.0, 1.5}, {c});
  const std::vector<double> xv = values_of(x), wv = values_of(w);
  const std::vector<int64_t> tv = {0, 3, 1, -100, 2, 3};
  for (double eps : {0.0, 0.2}) {
    // torch's: (1 - eps) * sum w[t] (-logp[t]) / sum w[t] + eps / C * sum_c w_c (-logp_c) / sum
    // w[t]
    double nll = 0, smooth = 0, wsum = 0;
    std::vector<double> none;
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<double> lp = log_softmax_row(xv, i, c);
      if (tv[i] == -100) {
        none.push_back(0);
        continue;
      }
      double s = 0;
      for (int64_t k = 0; k < c; ++k) s -= wv[k] * lp[k];
      const double e = -wv[tv[i]] * lp[tv[i]];
      nll += e;
      smooth += s;
      wsum += wv[tv[i]];
      none.push_back((1 - eps) * e + eps / c * s);
    }
    INFO("label_smoothing " << eps);
    const double mean = (1 - eps) * nll / wsum + eps / c * smooth / wsum;
    CHECK(value(F::cross_entropy(x, t, w, -100, nn::kMean, eps)) ==
          doctest::Approx(mean).epsilon(1e-12));
    CHECK(value(F::cross_entropy(x, t, w, -100, nn::kSum, eps)) ==
          doctest::Approx((1 - eps) * nll + eps / c * smooth).epsilon(1e-12));
    tl_test::check_values_within(F::cross_entropy(x, t, w, -100, nn::kNone, eps), none,
                                 std::vector<double>(none.size(), 1e-12));
    const nn::CrossEntropyLoss module(nn::CrossEntropyLossOptions().weight(w).label_smoothing(eps));
    CHECK(tl::allclose(module(x, t), F::cross_entropy(x, t, w, -100, nn::kMean, eps), 0, 0));
  }
  // nll_loss on log-probabilities is cross_entropy's first part.
  const Tensor lp = tl::log_softmax(x, 1);
  CHECK(tl::allclose(F::nll_loss(lp, t, w), F::cross_entropy(x, t, w), 1e-14, 1e-14));
  CHECK(tl::allclose(nn::NLLLoss(nn::NLLLossOptions().weight(w))(lp, t), F::nll_loss(lp, t, w), 0,
                     0));
  // Unweighted mean is over the targets kept; [C] input with a 0-d target; [N, C, d] input.
  const std::vector<double> lpv = values_of(lp);
  const double kept = lpv[0] + lpv[1 * c + 3] + lpv[2 * c + 1] + lpv[4 * c + 2] + lpv[5 * c + 3];
  CHECK(value(F::nll_loss(lp, t)) == doctest::Approx(-kept / 5).epsilon(1e-12));
  CHECK(value(F::cross_entropy(x[0], labels({2}, {}).reshape({}))) ==
        doctest::Approx(-log_softmax_row(xv, 0, c)[2]).epsilon(1e-12));
  const Tensor x3 = random_tensor({2, c, 3}, tl::kFloat64);
  const Tensor t3 = labels({0, 1, 2, 3, 3, 1}, {2, 3});
  CHECK(tl::allclose(F::cross_entropy(x3, t3),
                     F::cross_entropy(x3.permute({0, 2, 1}).reshape({6, c}), t3.reshape({6})),
                     1e-14, 1e-14));
  // Class probabilities: -sum_c t_c log p_c per sample, mean over samples.
  const Tensor probs = tl::softmax(random_tensor({n, c}, tl::kFloat64), 1);
  CHECK(tl::allclose(F::cross_entropy(x, probs),
                     tl::mean(-tl::sum(probs * tl::log_softmax(x, 1), {1})), 1e-14, 1e-14));
  const Tensor smoothed = probs * 0.9 + 0.1 / c;
  CHECK(tl::allclose(F::cross_entropy(x, probs, w, -100, nn::kSum, 0.1),
                     tl::sum(-tl::sum(smoothed * tl::log_softmax(x, 1) * w, {1})), 1e-14, 1e-14));
}

TEST_CASE("nn losses: binary cross entropy, from probabilities and from logits") {
  const Tensor p = tl::rand({3, 5}, tl::kFloat64) * 0.98 + 0.01;
  const Tensor y = tl::bernoulli(tl::full({3, 5}, 0.5, tl::kFloat64));
  const Tensor w = tl::rand({5}, tl::kFloat64) + 0.5;
  const std::vector<double> pv = values_of(p), yv = values_of(y), wv = values_of(w);
  std::vector<double> bce;
  for (size_t i = 0; i < pv.size(); ++i)
    bce.push_back(-wv[i % 5] * (yv[i] * std::log(pv[i]) + (1 - yv[i]) * std::log(1 - pv[i])));
  CHECK(value(F::binary_cross_entropy(p, y, w)) ==
        doctest::Approx(reduce(bce, nn::kMean)).epsilon(1e-12));
  CHECK(tl::allclose(nn::BCELoss(w)(p, y), F::binary_cross_entropy(p, y, w), 0, 0));
  // From logits equals bce of the sigmoid; pos_weight weighs the positive term.
  const Tensor z = random_tensor({3, 5}, tl::kFloat64) * 3.0;
  CHECK(tl::allclose(F::binary_cross_entropy_with_logits(z, y, w),
                     F::binary_cross_entropy(tl::sigmoid(z), y, w), 1e-12, 1e-12));
  const Tensor pw = tl::full({5}, 3.0, tl::kFloat64);
  const Tensor s = tl::sigmoid(z);
  const Tensor want = tl::mean(-(y * tl::log(s) * 3.0 + (1.0 - y) * tl::log(1.0 - s)));
  CHECK(tl::allclose(F::binary_cross_entropy_with_logits(z, y, {}, nn::kMean, pw), want, 1e-12,
                     1e-12));
  CHECK(tl::allclose(nn::BCEWithLogitsLoss(Tensor(), nn::kMean, pw)(z, y), want, 1e-12, 1e-12));
  // Extreme logits stay finite (no overflow), as do 0 and 1 probabilities (logs clamped at -100).
  const Tensor big = tl::from_vector<double>({-200.0, 200.0}, {2});
  const Tensor one_zero = tl::from_vector<double>({1.0, 0.0}, {2});
  CHECK(value(F::binary_cross_entropy_with_logits(big, one_zero, {}, nn::kSum)) ==
        doctest::Approx(400.0));
  CHECK(value(F::binary_cross_entropy(one_zero, tl::from_vector<double>({0.0, 1.0}, {2}), {},
                                      nn::kSum)) == doctest::Approx(200.0));
}

TEST_CASE("nn losses: gradients check on every test device") {
  using Ts = std::vector<Tensor>;
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const Tensor t = labels({0, 3, 1, -100, 2}, {5}).to(device);
    const Tensor w = tl::from_vector<double>({0.5, 1.0, 2.0, 1.5}, {4}).to(device);
    CHECK(tl_test::gradcheck(
        "cross_entropy (weight, ignore_index, smoothing)",
        [&](const Ts& in) { return F::cross_entropy(in[0], t, w, -100, nn::kMean, 0.1); },
        {random_tensor({5, 4}, tl::kFloat64)}, device));
    CHECK(tl_test::gradcheck(
        "cross_entropy with probabilities",
        [&](const Ts& in) { return F::cross_entropy(in[0], tl::softmax(in[1], 1)); },
        {random_tensor({3, 4}, tl::kFloat64), random_tensor({3, 4}, tl::kFloat64)}, device));
    CHECK(tl_test::gradcheck(
        "mse, l1, smooth_l1",
        [&](const Ts& in) {
          return F::mse_loss(in[0], in[1]) + F::smooth_l1_loss(in[0], in[1], nn::kSum, 0.7) +
                 F::l1_loss(in[0], in[1] * 3.0, nn::kNone);
        },
        {random_tensor({3, 4}, tl::kFloat64), random_tensor({3, 4}, tl::kFloat64)}, device));
    CHECK(tl_test::gradcheck(
        "bce from logits with pos_weight",
        [&](const Ts& in) {
          return F::binary_cross_entropy_with_logits(in[0], tl::sigmoid(in[1]), {}, nn::kMean, w);
        },
        {random_tensor({3, 4}, tl::kFloat64), random_tensor({3, 4}, tl::kFloat64)}, device));
    CHECK(tl_test::gradcheck(
        "bce",
        [&](const Ts& in) {
          return F::binary_cross_entropy(tl::sigmoid(in[0]), tl::sigmoid(in[1]));
        },
        {random_tensor({3, 4}, tl::kFloat64), random_tensor({3, 4}, tl::kFloat64)}, device));
  }
}

TEST_CASE("bad input: nn losses") {
  const Tensor x = tl::randn({4, 3}), y = tl::randn({4, 3});
  const Tensor t = labels({0, 1, 2, 1}, {4});
  check_throws<tl::ShapeError>(
      [&] {
        (void)F::mse_loss(x, tl::randn({5, 3}));
      },
      "[tl::nn::functional::mse_loss]");
  check_throws<tl::DTypeError>([&] { (void)F::l1_loss(x, y.to(tl::kFloat64)); },
                               "[tl::nn::functional::l1_loss]");
  check_throws<tl::Error>([&] { (void)F::smooth_l1_loss(x, y, nn::kMean, -1.0); }, "beta");
  check_throws<tl::IndexError>(
      [&] {
        (void)F::cross_entropy(x, labels({0, 3, 1, 1}, {4}));
      },
      "[tl::nn::functional::cross_entropy] Target 3 is out of bounds");
  check_throws<tl::IndexError>(
      [&] {
        (void)F::nll_loss(x, labels({0, -2, 1, 1}, {4}));
      },
      "[tl::nn::functional::nll_loss]");
  check_throws<tl::DTypeError>([&] { (void)F::cross_entropy(x, t.to(tl::kInt32)); }, "int64");
  check_throws<tl::Error>([&] { (void)F::cross_entropy(x, Tensor()); },
                          "[tl::nn::functional::cross_entropy] expected a defined tensor");
  check_throws<tl::ShapeError>(
      [&] {
        (void)F::cross_entropy(x, labels({0, 1}, {2}));
      },
      "expected target of shape [4]");
  check_throws<tl::ShapeError>([&] { (void)F::cross_entropy(x, t, tl::ones({4})); },
                               "expected a weight of shape [3]");
  check_throws<tl::ShapeError>(
      [&] {
        (void)F::cross_entropy(x, tl::rand({4, 2}));
      },
      "class probabilities");
  check_throws<tl::Error>([&] { (void)F::cross_entropy(x, t, {}, -100, nn::kMean, 1.5); },
                          "label_smoothing");
  check_throws<tl::ShapeError>([&] { (void)F::cross_entropy(tl::scalar_tensor(1.0), t); }, "0-dim");
  check_throws<tl::Error>(
      [&] {
        (void)F::binary_cross_entropy(x, tl::rand({4, 3}));
      },
      "between 0 and 1");
  check_throws<tl::ShapeError>([&] { (void)F::binary_cross_entropy_with_logits(x, tl::rand({3})); },
                               "[tl::nn::functional::binary_cross_entropy_with_logits]");
  check_throws<tl::Error>([&] { (void)F::mse_loss(Tensor(), y); },
                          "[tl::nn::functional::mse_loss]");
  if (tl::cuda::is_available())
    check_throws<tl::DeviceError>([&] { (void)F::cross_entropy(x.cuda(), t); },
                                  "[tl::nn::functional::cross_entropy]");
  // Still usable after.
  CHECK(std::isfinite(value(F::cross_entropy(x, t))));
}

TEST_CASE(
    "nn losses: ignored elements give 0 whatever their row holds; probabilities refuse "
    "an ignore_index") {
  // Found by the fuzzer (families nll_ignored_nonfinite, cross_entropy_prob_ignore): torch skips
  // an ignored element, so -inf or NaN at class 0 does not make it NaN.
  const Tensor x = tl::from_vector<float>({-INFINITY, 0.0f, 1.0f, 2.0f, NAN, 3.0f}, {3, 2});
  const Tensor t = labels({-100, 1, -100}, {3});
  tl_test::check_values(F::nll_loss(x, t, {}, -100, nn::kNone), {0.0, -2.0, 0.0});
  CHECK(value(F::nll_loss(x, t)) == -2.0);
  CHECK(value(F::nll_loss(x, t, {}, -100, nn::kSum)) == -2.0);
  check_throws<tl::Error>(
      [&] { (void)F::cross_entropy(x, tl::softmax(x, 1), {}, 1); },
      "[tl::nn::functional::cross_entropy] ignore_index is not supported for floating point "
      "target");
}

TEST_CASE("bad input: nn losses, a target out of range on CUDA names the loss") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor x = tl::randn({4, 3}).cuda();
  for (const int64_t bad : {3, -2})
    check_throws<tl::IndexError>(
        [&] {
          (void)F::cross_entropy(x, labels({0, bad, 1, 1}, {4}).cuda()).item<float>();
        },
        "[tl::nn::functional::cross_entropy] Target " + std::to_string(bad) +
            " is out of bounds (3 classes)");
  check_throws<tl::IndexError>(
      [&] {
        (void)F::nll_loss(x, labels({0, 7, 1, 1}, {4}).cuda()).item<float>();
      },
      "[tl::nn::functional::nll_loss] Target out of bounds");
  // The library is usable after: the same call with good targets.
  const Tensor good = labels({0, 2, 1, 1}, {4});
  CHECK(F::cross_entropy(x, good.cuda()).item<double>() ==
        doctest::Approx(F::cross_entropy(x.cpu(), good).item<double>()).epsilon(1e-5));
}

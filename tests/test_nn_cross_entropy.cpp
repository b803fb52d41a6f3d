// The fused cross entropy of class indices (one kernel each way, nn/fused_cross_entropy.h)
// against the composite log_softmax + gather formula in float64 with autograd's gradient: every
// option and reduction, [C], [N, C] and [N, C, d...] inputs, float32/float16/bfloat16 and every
// layout on every test device, the backward kernel into a poisoned output, gradcheck and
// gradgradcheck (create_graph takes the recorded formula), and a device-side target out of range.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gradcheck.h"
#include "rounding.h"
#include "tensorlet/backends/backend.h"
#include "test_util.h"

namespace nn = tl::nn;
namespace F = tl::nn::functional;
using tl::Tensor;
using tl_test::random_tensor;
using tl_test::values_of;

namespace {

struct Options {
  bool weighted = false;
  double smoothing = 0;
  int64_t ignore_index = -100;
  nn::Reduction reduction = nn::kMean;
};

// The composite formula on rows [R, C] of float64: torch's (1 - e) nll + e / C smooth.
Tensor reference_rows(const Tensor& x, const Tensor& t, const Tensor& w, const Options& o) {
  const int64_t c = x.size(1);
  const Tensor logp = tl::log_softmax(x, 1);
  const Tensor counts = tl::ne(t, o.ignore_index);
  const Tensor safe = tl::where(counts, t, int64_t{0});
  Tensor w_t = counts.to(tl::kFloat64);
  if (w.defined()) w_t = w_t * tl::index_select(w, 0, safe);
  const Tensor nll = -tl::gather(logp, 1, safe.unsqueeze(1)).squeeze(1) * w_t;
  const Tensor smooth =
      -tl::sum(w.defined() ? logp * w.unsqueeze(0) : logp, {1}) * counts.to(tl::kFloat64);
  const Tensor rows = nll * (1 - o.smoothing) + smooth * (o.smoothing / static_cast<double>(c));
  if (o.reduction == nn::kSum) return tl::sum(rows);
  if (o.reduction == nn::kMean) return tl::sum(rows) / tl::sum(w_t);
  return rows;
}

// The reference for any input shape: classes moved last, as the fused path does.
Tensor reference(const Tensor& x, const Tensor& t, const Tensor& w, const Options& o) {
  const int64_t c = x.size(x.dim() == 1 ? 0 : 1);
  const Tensor rows = x.dim() == 1   ? x.unsqueeze(0)
                      : x.dim() == 2 ? x
                                     : x.movedim(1, -1).reshape({-1, c});
  const Tensor out = reference_rows(rows, t.reshape({-1}), w, o);
  return o.reduction == nn::kNone ? out.view(t.shape()) : out;
}

// Targets in [0, C) with every third one from the second the ignore_index when `ignoring` (the
// first counts: all ignored, the mean is 0 / 0, whose gradient torch gives as 0, not NaN).
Tensor targets(const tl::Shape& shape, int64_t classes, int64_t ignore_index, bool ignoring) {
  Tensor t = tl::randint(0, classes, shape, tl::kInt64);
  if (t.numel() == 0) return t;
  Tensor flat = t.reshape({-1});
  if (ignoring) flat.slice(0, 1, std::nullopt, 3).fill_(ignore_index);
  if (ignore_index >= 0 && ignore_index < classes && classes > 1)
    flat.slice(0, 0, 1).fill_((ignore_index + 1) % classes);
  return t;
}

// loss and d loss / d x for the scalar sum(loss * r) (r: random float64 values exact in every
// dtype tested, shared by the reference and the call checked, so a none reduction's gradient is
// not uniform).
struct Result {
  Tensor loss, grad;
};
template <class Loss>
Result run(const Loss& loss_fn, const Tensor& x_values, const Tensor& r, tl::Device device) {
  Tensor x = tl_test::same_layout_on(x_values, device).detach();
  x.requires_grad_();
  const Tensor loss = loss_fn(x);
  tl::sum(loss * r.to(loss.dtype()).to(device)).backward();
  return {loss.detach(), x.grad()};
}

// Random weights for run(): multiples of 1/8 in [-2, 2), exact in bfloat16.
Tensor weights_for(const tl::Shape& shape) {
  return tl::round(random_tensor(shape, tl::kFloat64) * 8) / 8;
}

void check_near(const Tensor& got, const Tensor& want, tl::DType dtype, double atol) {
  const std::vector<double> w = values_of(want);
  std::vector<double> tol(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    tol[i] = 4 * tl_test::unit_roundoff(dtype) * std::abs(w[i]) + atol;
  tl_test::check_values_within(got, w, tol);
}

}  // namespace

TEST_CASE("fused cross_entropy: the composite formula in float64, every option and shape") {
  const tl::Shape shapes[] = {{6, 5}, {1, 7}, {7}, {3, 4, 2, 5}, {0, 5}, {9, 1}};
  const nn::Reduction reductions[] = {nn::kMean, nn::kSum, nn::kNone};
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::Shape& shape : shapes)
      for (const bool weighted : {false, true})
        for (const double smoothing : {0.0, 0.2})
          for (const int64_t ignore_index : {int64_t{-100}, int64_t{2}})
            for (const nn::Reduction reduction : reductions) {
              const Options o{weighted, smoothing, ignore_index, reduction};
              const int64_t c = shape[shape.size() == 1 ? 0 : 1];
              INFO(device.str() << " " << shape << " weighted " << weighted << " smoothing "
                                << smoothing << " ignore " << ignore_index << " reduction "
                                << static_cast<int>(reduction));
              std::vector<int64_t> tdims(shape.begin(), shape.end());
              tdims.erase(tdims.begin() + (shape.size() == 1 ? 0 : 1));
              const Tensor t = targets(tl::Shape(tdims), c, ignore_index, shape.size() > 1);
              const Tensor w = weighted ? tl::rand({c}, tl::kFloat64) + 0.5 : Tensor();
              const Tensor x = random_tensor(shape, tl::kFloat64) * 3.0;
              const Tensor r = weights_for(reduction == nn::kNone ? t.shape() : tl::Shape{});
              const Result want = run([&](const Tensor& xs) { return reference(xs, t, w, o); }, x,
                                      r, tl::Device::cpu());
              const Tensor td = t.to(device), wd = weighted ? w.to(device) : Tensor();
              const Result got = run(
                  [&](const Tensor& xs) {
                    return F::cross_entropy(xs, td, wd, ignore_index, reduction, smoothing);
                  },
                  x, r, device);
              CHECK(got.loss.dtype() == tl::kFloat64);
              CHECK(got.loss.shape() == want.loss.shape());
              check_near(got.loss, want.loss, tl::kFloat64, 1e-12);
              check_near(got.grad, want.grad, tl::kFloat64, 1e-12);
            }
}

TEST_CASE("fused cross_entropy: float32, float16, bfloat16, every layout and row length") {
  const int64_t lengths[] = {10, 1000, 1001, 5000, 20000};
  const tl::DType dtypes[] = {tl::kFloat32, tl::kFloat16, tl::kBFloat16};
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : dtypes)
      for (const int64_t c : lengths) {
        const int64_t rows = c >= 5000 ? 5 : 13;
        const Tensor x = (random_tensor({rows, c}, tl::kFloat64) * 3.0).to(dtype);
        const Tensor t = targets({rows}, c, -100, true);
        const Tensor w = (tl::rand({c}, tl::kFloat64) + 0.5).to(dtype);
        for (const double smoothing : {0.0, 0.1})
          for (const tl_test::Layout& layout : tl_test::layouts_of(x)) {
            INFO(device.str() << " " << dtype << " C " << c << " " << layout.name << " smoothing "
                              << smoothing);
            const Options o{true, smoothing, -100, nn::kMean};
            const Tensor r = weights_for({});
            const Result want =
                run([&](const Tensor& xs) { return reference(xs, t, w.to(tl::kFloat64), o); },
                    x.to(tl::kFloat64), r, tl::Device::cpu());
            const Tensor td = t.to(device), wd = w.to(device);
            const Result got = run(
                [&](const Tensor& xs) {
                  return F::cross_entropy(xs, td, wd, -100, nn::kMean, smoothing);
                },
                layout.tensor, r, device);
            CHECK(got.loss.dtype() == dtype);
            CHECK(got.grad.dtype() == dtype);
            check_near(got.loss, want.loss, dtype, 2e-5);
            check_near(got.grad, want.grad, dtype, 2e-6);
          }
      }
}

TEST_CASE("fused cross_entropy: the backward kernel writes every element of a poisoned dx") {
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat32, tl::kBFloat16, tl::kFloat64})
      for (const int64_t c : {int64_t{3}, int64_t{129}, int64_t{4100}}) {
        INFO(device.str() << " " << dtype << " C " << c);
        const int64_t rows = 6;
        const Tensor x = random_tensor({rows, c}, dtype, device);
        const Tensor t = targets({rows}, c, -100, true).to(device);
        const tl::DType acc = dtype == tl::kFloat64 ? tl::kFloat64 : tl::kFloat32;
        const tl::CrossEntropyArgs args{rows, c, -100, 0.05};
        const auto opts = tl::TensorOptions(acc).device(device);
        Tensor loss = tl::full({rows}, NAN, opts), row_w = tl::full({rows}, NAN, opts),
               lse = tl::full({rows}, NAN, opts);
        tl::backend_for(device).cross_entropy_forward(x, t, Tensor(), Tensor(), args, loss, row_w,
                                                      lse);
        const Tensor g = random_tensor({rows}, acc, device);
        Tensor dx = tl::full({rows, c}, NAN, tl::TensorOptions(dtype).device(device));
        tl::backend_for(device).cross_entropy_backward(g, x, t, Tensor(), Tensor(), lse, args, dx);
        // The reference: the same kernels on the CPU, in float64.
        const Tensor x64 = x.to(tl::Device::cpu()).to(tl::kFloat64);
        const Options o{false, 0.05, -100, nn::kNone};
        Tensor xr = x64.detach();
        xr.requires_grad_();
        const Tensor want_loss = reference(xr, t.to(tl::Device::cpu()), Tensor(), o);
        tl::sum(want_loss * g.to(tl::Device::cpu()).to(tl::kFloat64)).backward();
        check_near(loss, want_loss.detach(), acc, 1e-5);
        check_near(dx, xr.grad(), dtype, 2e-6);
        const std::vector<double> lw = values_of(row_w);
        const std::vector<int64_t> tv = t.to(tl::Device::cpu()).to_vector<int64_t>();
        for (int64_t r = 0; r < rows; ++r) CHECK(lw[r] == (tv[r] == -100 ? 0.0 : 1.0));
      }
}

TEST_CASE("fused cross_entropy: gradcheck and gradgradcheck on every test device") {
  using Ts = std::vector<Tensor>;
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const Tensor t = tl::from_vector<int64_t>({0, 3, 1, -100, 2}, {5}).to(device);
    const Tensor w = tl::from_vector<double>({0.5, 1.0, 2.0, 1.5}, {4}).to(device);
    for (const double smoothing : {0.0, 0.3}) {
      INFO("smoothing " << smoothing);
      auto f = [&](const Ts& in) {
        return F::cross_entropy(in[0], t, w, -100, nn::kMean, smoothing);
      };
      CHECK(tl_test::gradcheck("cross_entropy", f, {random_tensor({5, 4}, tl::kFloat64)}, device));
      CHECK(tl_test::gradgradcheck("cross_entropy", f, {random_tensor({5, 4}, tl::kFloat64)},
                                   device));
    }
    // A weight that wants a gradient takes the recorded formula, which differentiates it too.
    CHECK(tl_test::gradcheck(
        "cross_entropy with a learned weight",
        [&](const Ts& in) {
          return F::cross_entropy(in[0], t, in[1] * in[1], -100, nn::kSum, 0.2);
        },
        {random_tensor({5, 4}, tl::kFloat64), random_tensor({4}, tl::kFloat64)}, device));
  }
}

TEST_CASE("fused cross_entropy: NaN and infinite logits as torch") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    // Rows: a NaN logit, a -inf logit that is not the target, a +inf logit, all -inf.
    const Tensor x =
        tl::from_vector<double>({1, NAN, 0, 2, -inf, 1, 0, inf, 1, -inf, -inf, -inf}, {4, 3})
            .to(device);
    const Tensor t = tl::from_vector<int64_t>({0, 0, 1, 2}, {4}).to(device);
    const std::vector<double> got = values_of(F::cross_entropy(x, t, {}, -100, nn::kNone));
    CHECK(std::isnan(got[0]));
    CHECK(got[1] == doctest::Approx(std::log(std::exp(2.0) + std::exp(1.0)) - 2.0));
    CHECK(std::isnan(got[2]));
    CHECK(std::isnan(got[3]));
  }
}

TEST_CASE("fused cross_entropy: a target out of range on a device raises at the next wait") {
  for (const tl::Device device : tl_test::test_devices()) {
    if (device.is_cpu()) continue;
    INFO(device.str());
    const Tensor x = random_tensor({4, 3}, tl::kFloat32, device);
    const Tensor bad = tl::from_vector<int64_t>({0, 7, 1, 1}, {4}).to(device);
    tl_test::check_throws<tl::IndexError>(
        [&] {
          const Tensor loss = F::cross_entropy(x, bad);
          (void)loss.item<float>();
        },
        "[tl::nn::functional::cross_entropy] Target 7 is out of bounds (3 classes)");
    // The library is still usable, and a good call is right.
    const Tensor good = tl::from_vector<int64_t>({0, 2, 1, 1}, {4});
    const double want =
        reference(x.to(tl::Device::cpu()).to(tl::kFloat64), good, Tensor(), Options{})
            .item<double>();
    CHECK(F::cross_entropy(x, good.to(device)).item<double>() ==
          doctest::Approx(want).epsilon(1e-5));
  }
}

// Convolution and pooling: tl::conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d against
// direct loops over float64 host values (strides, padding, dilation, groups, ceil_mode,
// unbatched and empty inputs, every memory layout, every test device); gradcheck and
// gradgradcheck; the nn layers' shapes, initialization and printed forms; LeNet trains; bad input.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "tensorlet/ops/index_range.h"
#include "test_util.h"

namespace nn = tl::nn;
namespace F = tl::nn::functional;
using tl::Tensor;
using tl_test::check_throws;
using tl_test::random_tensor;
using tl_test::values_of;
using Ts = std::vector<Tensor>;

namespace {

struct Geometry {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// out[n][o][i][j] = bias[o] + sum over the group's channels and taps of x * w, in float64.
std::vector<double> conv_reference(const Tensor& x, const Tensor& w, const Tensor& b,
                                   const Geometry& g, int64_t groups, tl::Shape* out_shape) {
  const std::vector<double> xv = values_of(x), wv = values_of(w);
  const std::vector<double> bv = b.defined() ? values_of(b) : std::vector<double>{};
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t o = w.size(0), cg = w.size(1), kh = w.size(2), kw = w.size(3);
  const int64_t oh = (h + 2 * g.ph - g.dh * (kh - 1) - 1) / g.sh + 1;
  const int64_t ow = (wd + 2 * g.pw - g.dw * (kw - 1) - 1) / g.sw + 1;
  *out_shape = tl::Shape{n, o, oh, ow};
  std::vector<double> out;
  const int64_t og = o / groups;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t io = 0; io < o; ++io)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bv.empty() ? 0.0 : bv[io];
          const int64_t group = io / og;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t r = i * g.sh - g.ph + a * g.dh, q = j * g.sw - g.pw + e * g.dw;
                if (r < 0 || r >= h || q < 0 || q >= wd) continue;
                const int64_t ch = group * cg + ic;
                acc +=
                    xv[((in * c + ch) * h + r) * wd + q] * wv[((io * cg + ic) * kh + a) * kw + e];
              }
          out.push_back(acc);
        }
  (void)c;
  return out;
}

enum class Pool { Max, Avg };

// torch's pooling over float64 host values: output sizes with ceil_mode, -inf / zero padding,
// avg divisors with count_include_pad or an override.
std::vector<double> pool_reference(Pool kind, const Tensor& x, int64_t k, int64_t s, int64_t p,
                                   int64_t d, bool ceil_mode, bool count_include_pad,
                                   std::optional<int64_t> divisor, tl::Shape* out_shape) {
  const std::vector<double> xv = values_of(x);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  auto size = [&](int64_t in) {
    int64_t out = (in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (out - 1) * s >= in + p) --out;
    return out;
  };
  const int64_t oh = size(h), ow = size(w);
  *out_shape = tl::Shape{n, c, oh, ow};
  std::vector<double> out;
  for (int64_t plane = 0; plane < n * c; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), total = 0;
        int64_t inside = 0;
        for (int64_t a = 0; a < k; ++a)
          for (int64_t e = 0; e < k; ++e) {
            const int64_t r = i * s - p + a * d, q = j * s - p + e * d;
            if (r < 0 || r >= h || q < 0 || q >= w) continue;
            const double v = xv[(plane * h + r) * w + q];
            best = std::max(best, v);
            total += v;
            ++inside;
          }
        if (kind == Pool::Max) {
          out.push_back(best);
          continue;
        }
        const int64_t h0 = i * s - p, w0 = j * s - p;
        const int64_t h1 = std::min(h0 + k, h + p), w1 = std::min(w0 + k, w + p);
        const double div = divisor             ? static_cast<double>(*divisor)
                           : count_include_pad ? static_cast<double>((h1 - h0) * (w1 - w0))
                                               : static_cast<double>(inside);
        out.push_back(total / div);
      }
  return out;
}

void check_near(const Tensor& got, const tl::Shape& shape, const std::vector<double>& want,
                double tol) {
  REQUIRE(got.shape() == shape);
  const std::vector<double> g = values_of(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i)
    CHECK(g[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
}

template <typename T>
std::string printed(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// Values apart by at least 0.01, so no window of a max pool has a tie (finite differences of a
// max are only defined away from one).
Tensor distinct(const tl::Shape& shape) {
  const int64_t n = shape.numel();
  return (tl::randperm(n).to(tl::kFloat64) * 0.01 - 0.005 * static_cast<double>(n)).view(shape);
}

Tensor any(const tl::Shape& shape) { return random_tensor(shape, tl::kFloat64); }

}  // namespace

TEST_CASE("conv2d: against direct loops, with strides, padding, dilation, groups and layouts") {
  struct Case {
    tl::Shape x, w;
    Geometry g;
    int64_t groups;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 2}, {}, 1, true},
      {{2, 3, 9, 8}, {5, 3, 3, 3}, {2, 1, 1, 2, 2, 1}, 1, true},
      {{3, 4, 6, 5}, {6, 2, 3, 3}, {1, 2, 1, 1, 1, 1}, 2, false},
      {{1, 6, 5, 5}, {6, 1, 3, 3}, {1, 1, 1, 1, 1, 1}, 6, true},    // depthwise
      {{2, 1, 28, 28}, {6, 1, 5, 5}, {1, 1, 2, 2, 1, 1}, 1, true},  // LeNet's first layer
      {{2, 3, 4, 4}, {2, 3, 4, 4}, {}, 1, true},                    // the kernel is the image
      {{2, 3, 5, 7}, {4, 3, 1, 1}, {2, 3, 0, 0, 1, 1}, 1, true},    // 1 x 1, strided
      {{0, 3, 5, 5}, {4, 3, 3, 3}, {}, 1, true},                    // an empty batch
  };
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat64, tl::kFloat32})
      for (const Case& c : cases) {
        INFO(device.str() << " " << dtype << " x " << c.x << " w " << c.w << " groups "
                          << c.groups);
        const Tensor x = any(c.x), w = any(c.w);
        const Tensor b = c.bias ? any({c.w[0]}) : Tensor();
        tl::Shape shape;
        const std::vector<double> want = conv_reference(x, w, b, c.g, c.groups, &shape);
        const double tol = dtype == tl::kFloat64 ? 1e-12 : 2e-5;
        const Tensor wd = w.to(dtype).to(device), bd = c.bias ? b.to(dtype).to(device) : b;
        for (const tl_test::Layout& layout : tl_test::layouts_of(x.to(dtype))) {
          INFO(layout.name);
          const Tensor out = tl::conv2d(layout.tensor.to(device), wd, bd, {c.g.sh, c.g.sw},
                                        {c.g.ph, c.g.pw}, {c.g.dh, c.g.dw}, c.groups);
          CHECK(out.dtype() == dtype);
          CHECK(out.device() == device);
          check_near(out, shape, want, tol);
        }
      }
  // Unbatched input gives unbatched output; one value means both dims.
  const Tensor x = any({3, 6, 6}), w = any({2, 3, 3, 3});
  tl::Shape shape;
  const std::vector<double> want =
      conv_reference(x.unsqueeze(0), w, Tensor(), {2, 2, 1, 1, 1, 1}, 1, &shape);
  const Tensor out = tl::conv2d(x, w, {}, 2, 1);
  CHECK(out.shape() == tl::Shape{2, 3, 3});
  check_near(out.unsqueeze(0), shape, want, 1e-12);
  CHECK(tl::equal(F::conv2d(x, w, {}, 2, 1), out));
}

TEST_CASE("pooling: max, avg and adaptive avg against direct loops") {
  struct Case {
    tl::Shape x;
    int64_t k, s, p, d;
    bool ceil_mode;
  };
  const std::vector<Case> cases = {
      {{2, 3, 8, 8}, 2, 2, 0, 1, false}, {{2, 3, 7, 9}, 3, 2, 1, 1, false},
      {{1, 2, 7, 7}, 3, 2, 1, 1, true},  {{2, 2, 9, 10}, 2, 3, 1, 2, true},
      {{1, 1, 1, 1}, 2, 2, 0, 1, true},  {{0, 2, 4, 4}, 2, 2, 0, 1, false},
  };
  for (const tl::Device device : tl_test::test_devices())
    for (const Case& c : cases) {
      INFO(device.str() << " x " << c.x << " k " << c.k << " s " << c.s << " p " << c.p << " d "
                        << c.d << " ceil " << c.ceil_mode);
      const Tensor x = any(c.x);
      tl::Shape shape;
      for (const tl_test::Layout& layout : tl_test::layouts_of(x)) {
        INFO(layout.name);
        const Tensor xd = layout.tensor.to(device);
        std::vector<double> want = pool_reference(Pool::Max, x, c.k, c.s, c.p, c.d, c.ceil_mode,
                                                  true, std::nullopt, &shape);
        check_near(tl::max_pool2d(xd, c.k, c.s, c.p, c.d, c.ceil_mode), shape, want, 1e-12);
        if (c.d != 1) continue;
        for (const bool include_pad : {true, false}) {
          want = pool_reference(Pool::Avg, x, c.k, c.s, c.p, 1, c.ceil_mode, include_pad,
                                std::nullopt, &shape);
          check_near(tl::avg_pool2d(xd, c.k, c.s, c.p, c.ceil_mode, include_pad), shape, want,
                     1e-12);
        }
        want = pool_reference(Pool::Avg, x, c.k, c.s, c.p, 1, c.ceil_mode, true, 5, &shape);
        check_near(tl::avg_pool2d(xd, c.k, c.s, c.p, c.ceil_mode, true, 5), shape, want, 1e-12);
      }
    }
  // A NaN wins its window, as torch's; the default stride is the kernel.
  Tensor x = any({1, 1, 4, 4});
  x.index_put_({0, 0, 1, 1}, std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> m = values_of(tl::max_pool2d(x, 2));
  CHECK(std::isnan(m[0]));
  CHECK_FALSE(std::isnan(m[1]));
  CHECK(tl::max_pool2d(any({3, 6, 6}), {2, 3}).shape() == tl::Shape{3, 3, 2});

  // Adaptive: torch's windows [floor(i s / n), ceil((i + 1) s / n)), even or not.
  for (const tl::Device device : tl_test::test_devices())
    for (const auto& [shape, out] :
         std::vector<std::pair<tl::Shape, tl::Shape>>{{{2, 3, 5, 7}, {3, 4}},
                                                      {{2, 3, 6, 8}, {3, 4}},
                                                      {{1, 2, 5, 5}, {1, 1}},
                                                      {{1, 2, 3, 3}, {5, 4}}}) {
      INFO(device.str() << " " << shape << " -> " << out);
      const Tensor x = any(shape);
      const std::vector<double> xv = values_of(x);
      std::vector<double> want;
      const int64_t h = shape[2], w = shape[3];
      for (int64_t plane = 0; plane < shape[0] * shape[1]; ++plane)
        for (int64_t i = 0; i < out[0]; ++i)
          for (int64_t j = 0; j < out[1]; ++j) {
            const int64_t r0 = i * h / out[0], r1 = ((i + 1) * h + out[0] - 1) / out[0];
            const int64_t c0 = j * w / out[1], c1 = ((j + 1) * w + out[1] - 1) / out[1];
            double total = 0;
            for (int64_t r = r0; r < r1; ++r)
              for (int64_t q = c0; q < c1; ++q) total += xv[(plane * h + r) * w + q];
            want.push_back(total / static_cast<double>((r1 - r0) * (c1 - c0)));
          }
      check_near(tl::adaptive_avg_pool2d(x.to(device), {out[0], out[1]}),
                 {shape[0], shape[1], out[0], out[1]}, want, 1e-12);
    }
}

TEST_CASE("conv2d and pooling: gradients against finite differences, second ones too") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    CHECK(tl_test::gradcheck(
        "conv2d, stride, padding, dilation, bias",
        [](const Ts& in) {
          return tl::conv2d(in[0], in[1], in[2], {2, 1}, {1, 2}, {1, 2});
        },
        {any({2, 3, 5, 6}), any({4, 3, 2, 3}), any({4})}, device));
    CHECK(tl_test::gradcheck(
        "conv2d, groups", [](const Ts& in) { return tl::conv2d(in[0], in[1], {}, 1, 1, 1, 2); },
        {any({2, 4, 4, 4}), any({2, 2, 3, 3})}, device));
    CHECK(tl_test::gradgradcheck(
        "conv2d, twice", [](const Ts& in) { return tl::conv2d(in[0], in[1], in[2], 1, 1); },
        {any({1, 2, 4, 4}), any({3, 2, 3, 3}), any({3})}, device));
    CHECK(tl_test::gradcheck(
        "max_pool2d, padding and ceil_mode",
        [](const Ts& in) { return tl::max_pool2d(in[0], 3, 2, 1, 1, true); },
        {distinct({2, 2, 6, 7})}, device));
    CHECK(tl_test::gradcheck(
        "avg_pool2d, count_include_pad=false",
        [](const Ts& in) { return tl::avg_pool2d(in[0], 3, 2, 1, true, false); },
        {any({2, 2, 6, 7})}, device));
    CHECK(tl_test::gradcheck(
        "adaptive_avg_pool2d, uneven windows",
        [](const Ts& in) {
          return tl::adaptive_avg_pool2d(in[0], {3, 4});
        },
        {any({2, 2, 5, 7})}, device));
  }
}

TEST_CASE("adaptive_avg_pool2d: NaN and inf stay in the windows that hold them") {
  // Averaging matrices spread them to every window through 0 * inf (the fuzzer's
  // adaptive_nonfinite); torch gives [0, 0, -inf, -inf, -inf] in each of the 3 rows.
  const double inf = std::numeric_limits<double>::infinity();
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const tl::Tensor x = tl::from_vector<float>({0.0f, -INFINITY}, {1, 1, 1, 2}).to(device);
    const std::vector<double> row = {0, 0, -inf, -inf, -inf};
    std::vector<double> want;
    for (int r = 0; r < 3; ++r) want.insert(want.end(), row.begin(), row.end());
    CHECK(values_of(tl::adaptive_avg_pool2d(x, {3, 5})) == want);
    const tl::Tensor n = tl::from_vector<double>({1, NAN, 2, 3, 4, 5}, {1, 2, 3}).to(device);
    const std::vector<double> got = values_of(tl::adaptive_avg_pool2d(n, {2, 2}));
    // windows over W of 3 into 2: {0, 1} and {1, 2}; over H of 2 into 2: one row each
    CHECK(std::isnan(got[0]));
    CHECK(std::isnan(got[1]));
    CHECK(got[2] == doctest::Approx(3.5));
    CHECK(got[3] == doctest::Approx(4.5));
  }
}

TEST_CASE("trusted indices: bounds from the registry until the storage is written") {
  // conv2d's and the pools' im2col index is registered (no range pass, no device wait per call);
  // a write to a trusted index drops the trust, so its values are checked again.
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const tl::TensorOptions ints = tl::TensorOptions(tl::kInt64).device(device);
    const tl::Tensor a = tl_test::random_tensor({10}, tl::kFloat32, device);
    tl::Tensor index = tl::arange(5, ints);
    tl::trust_index_values(index, 0, 4);
    int64_t lo = -1, hi = -1;
    CHECK(tl::trusted_index_bounds(index, &lo, &hi));
    CHECK(lo == 0);
    CHECK(hi == 4);
    CHECK(tl::trusted_index_bounds(index.slice(0, 1, 3), &lo, &hi));  // a view of the storage
    CHECK(values_of(tl::index_select(a, 0, index)) == values_of(a.slice(0, 0, 5)));
    index.fill_(int64_t{20});
    CHECK_FALSE(tl::trusted_index_bounds(index, &lo, &hi));
    tl_test::check_throws<tl::IndexError>([&] { (void)tl::index_select(a, 0, index); },
                                          "out of bounds");
    CHECK_FALSE(tl::trusted_index_bounds(tl::arange(5, ints), &lo, &hi));
  }
  // A convolution's own index is trusted: its gather and its gradient check nothing.
  tl::Tensor x = tl_test::random_tensor({2, 3, 9, 9}, tl::kFloat32);
  x.requires_grad_();
  const tl::Tensor w = tl_test::random_tensor({4, 3, 3, 3}, tl::kFloat32);
  tl::conv2d(x, w, {}, 2, 1).sum().backward();
  CHECK(x.grad().defined());
}

TEST_CASE("nn::Conv2d and the pooling layers: parameters, initialization, printing") {
  tl::manual_seed(5);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 5).stride(2).padding(2));
  CHECK(printed(conv) == "Conv2d(3, 8, kernel_size=(5, 5), stride=(2, 2), padding=(2, 2))");
  CHECK(printed(nn::Conv2d(nn::Conv2dOptions(4, 4, {3, 1}).dilation(2).groups(2).bias(false))) ==
        "Conv2d(4, 4, kernel_size=(3, 1), stride=(1, 1), dilation=(2, 2), groups=2, bias=False)");
  CHECK(conv->weight.shape() == tl::Shape{8, 3, 5, 5});
  CHECK(conv->bias.shape() == tl::Shape{8});
  CHECK(conv->weight.requires_grad());
  CHECK(conv->named_parameters().size() == 2);
  // torch's default: uniform in +-1/sqrt(fan_in), fan_in = 3 * 5 * 5.
  const double bound = 1.0 / std::sqrt(75.0);
  for (const Tensor& p : conv->parameters()) {
    CHECK(tl::max(tl::abs(p)).item<double>() <= bound);
    CHECK(tl::max(tl::abs(p)).item<double>() > 0.5 * bound);
  }
  const Tensor x = random_tensor({2, 3, 9, 9});
  CHECK(conv(x).shape() == tl::Shape{2, 8, 5, 5});
  CHECK(tl::equal(conv(x), tl::conv2d(x, conv->weight, conv->bias, 2, 2)));
  CHECK(conv(x[0]).shape() == tl::Shape{8, 5, 5});

  CHECK(printed(nn::MaxPool2d(2)) ==
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(printed(nn::MaxPool2d(nn::MaxPool2dOptions({3, 2}).stride(1).ceil_mode(true))) ==
        "MaxPool2d(kernel_size=(3, 2), stride=1, padding=0, dilation=1, ceil_mode=True)");
  CHECK(printed(nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(2))) ==
        "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  CHECK(printed(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1}))) ==
        "AdaptiveAvgPool2d(output_size=(1, 1))");
  CHECK(tl::equal(nn::MaxPool2d(2)(x), tl::max_pool2d(x, 2)));
  CHECK(
      tl::equal(nn::AvgPool2d(nn::AvgPool2dOptions(3).padding(1))(x), tl::avg_pool2d(x, 3, 3, 1)));
  CHECK(nn::AdaptiveAvgPool2d(1)(x).shape() == tl::Shape{2, 3, 1, 1});
}

TEST_CASE("nn: a LeNet trains on Fashion-MNIST-shaped data on every test device") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::manual_seed(0);
    // LeNet with ReLU and max pooling (the notebook trains the book's sigmoid one for epochs).
    nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 6, 5).padding(2)), nn::ReLU(),
                       nn::MaxPool2d(2), nn::Conv2d(nn::Conv2dOptions(6, 16, 5)), nn::ReLU(),
                       nn::MaxPool2d(2), nn::Flatten(), nn::Linear(16 * 5 * 5, 120), nn::ReLU(),
                       nn::Linear(120, 84), nn::ReLU(), nn::Linear(84, 10));
    net->to(device);
    // Two classes the net must tell apart: bright left halves, bright right halves.
    Tensor images = tl::rand({64, 1, 28, 28}) * 0.2;
    const Tensor labels = tl::randint(0, 2, {64}, tl::kInt64);
    const Tensor left = (labels == 0).to(tl::kFloat32).view({64, 1, 1, 1});
    images.narrow(3, 0, 14).add_(left * 0.8);
    images.narrow(3, 14, 14).add_((1.0 - left) * 0.8);
    images = images.to(device);
    const Tensor targets = labels.to(device);
    tl::optim::SGD opt(net->parameters(), tl::optim::SGDOptions(0.05).momentum(0.9));
    double first = 0, last = 0;
    for (int step = 0; step < 40; ++step) {
      opt.zero_grad();
      const Tensor loss = F::cross_entropy(net(images), targets);
      loss.backward();
      opt.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    CHECK(last < 0.5 * first);
    const Tensor predicted = tl::argmax(net(images), 1);
    CHECK(tl::mean((predicted == targets).to(tl::kFloat32)).item<double>() > 0.9);
  }
}

TEST_CASE("bad input: conv2d and pooling") {
  const Tensor x = random_tensor({2, 3, 8, 8}), w = random_tensor({4, 3, 3, 3});
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::conv2d(x.view({6, 8, 8}).flatten(), w);
      },
      "[tl::conv2d] Expected 3D (unbatched) or 4D");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w.view({4, 3, 9})); }, "4-D weight");
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::conv2d(random_tensor({2, 2, 8, 8}), w);
      },
      "to have 3 channels, but got 2 channels");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, {}, 1, 0, 1, 2); }, "groups");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, {}, 1, 0, 1, 0); }, "groups");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, random_tensor({3})); },
                               "expected a bias of shape [4]");
  check_throws<tl::DTypeError>([&] { (void)tl::conv2d(x.to(tl::kFloat64), w); },
                               "should be the same");
  check_throws<tl::DTypeError>([&] { (void)tl::conv2d(x.to(tl::kInt32), w.to(tl::kInt32)); },
                               "floating point");
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::conv2d(x, random_tensor({4, 3, 9, 9}));
      },
      "too small");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, {}, 0); }, "stride");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, {}, 1, -1); }, "padding");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, {}, 1, 0, 0); }, "dilation");
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::conv2d(x, w, {}, {1, 1, 1});
      },
      "a single integer or a list of 2");
  check_throws<tl::ShapeError>([&] { (void)tl::conv2d(x, w, {}, 1, 0, int64_t{1} << 62); },
                               "overflows");
  check_throws<tl::ShapeError>([&] { (void)tl::max_pool2d(x, 0); }, "[tl::max_pool2d]");
  check_throws<tl::ShapeError>([&] { (void)tl::max_pool2d(x, 2, 2, 2); },
                               "pad should be at most half");
  check_throws<tl::ShapeError>([&] { (void)tl::max_pool2d(x, 9); }, "too small");
  // torch's half of the kernel, not of the dilated kernel; a weight of no output channels.
  check_throws<tl::ShapeError>([&] { (void)tl::max_pool2d(x, 2, 1, 2, 3); },
                               "pad should be at most half");
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::conv2d(x, tl::empty({0, x.size(1), 1, 1}));
      },
      "at least 1 at dimension 0");
  check_throws<tl::ShapeError>([&] { (void)tl::max_pool2d(x.flatten(), 2); }, "3D or 4D");
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::max_pool2d(random_tensor({2, 3, 0, 4}), 2);
      },
      "non-zero size");
  check_throws<tl::DTypeError>([&] { (void)tl::avg_pool2d(x.to(tl::kInt64), 2); },
                               "[tl::avg_pool2d]");
  check_throws<tl::Error>([&] { (void)tl::avg_pool2d(x, 2, 2, 0, false, true, 0); },
                          "divisor must be not zero");
  check_throws<tl::ShapeError>(
      [&] {
        (void)tl::adaptive_avg_pool2d(x, {0, 2});
      },
      "[tl::adaptive_avg_pool2d]");
  check_throws<tl::ShapeError>([&] { (void)nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); },
                               "[tl::nn::Conv2d] in_channels must be divisible by groups");
  check_throws<tl::ShapeError>([&] { (void)nn::Conv2d(3, 4, 0); }, "kernel_size");
  check_throws<tl::ShapeError>(
      [&] {
        (void)nn::Conv2dOptions(3, 4, {1, 2, 3});
      },
      "[tl::nn::Conv2dOptions]");
  nn::Conv2d conv(2, 4, 3);
  check_throws<tl::ShapeError>([&] { (void)conv(x); },
                               "[tl::nn::Conv2d::forward] expected input [2, 3, 8, 8] to have 2");
  check_throws<tl::DTypeError>(
      [&] {
        (void)conv(random_tensor({1, 2, 5, 5}, tl::kFloat64));
      },
      "[tl::nn::Conv2d::forward]");
}

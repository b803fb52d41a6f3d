// LayerNorm, BatchNorm1d/2d and Embedding against torch's formulas computed here (running
// statistics with momentum and the unbiased variance, eval mode, num_batches_tracked), their
// gradients checked on every test device, printing, and bad inputs naming the layer.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <sstream>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

namespace nn = tl::nn;
namespace F = tl::nn::functional;
using tl::Tensor;
using tl_test::check_throws;
using tl_test::random_tensor;

namespace {

template <typename T>
std::string printed(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

}  // namespace

TEST_CASE("nn::LayerNorm: torch's formula, affine parameters, printing, gradients") {
  const Tensor x = random_tensor({4, 3, 5}, tl::kFloat64);
  nn::LayerNorm ln(std::vector<int64_t>{3, 5}, 1e-5, true, tl::kFloat64);
  {
    tl::NoGradGuard no_grad;
    ln->weight.copy_(random_tensor({3, 5}, tl::kFloat64));
    ln->bias.copy_(random_tensor({3, 5}, tl::kFloat64));
  }
  const Tensor m = tl::mean(x, {1, 2}, true);
  const Tensor v = tl::var(x, {1, 2}, 0, true);
  const Tensor want = (x - m) / tl::sqrt(v + 1e-5) * ln->weight + ln->bias;
  CHECK(tl::allclose(ln(x), want, 1e-12, 1e-12));
  CHECK(printed(ln) == "LayerNorm((3, 5), eps=1e-05, elementwise_affine=True)");
  CHECK(printed(nn::LayerNorm(std::vector<int64_t>{8})) ==
        "LayerNorm((8,), eps=1e-05, elementwise_affine=True)");
  CHECK(ln->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  for (const tl::Device device : tl_test::test_devices())
    CHECK(tl_test::gradcheck(
        "layer_norm",
        [](const std::vector<Tensor>& in) { return F::layer_norm(in[0], {5}, in[1], in[2]); },
        {random_tensor({3, 5}, tl::kFloat64), random_tensor({5}, tl::kFloat64),
         random_tensor({5}, tl::kFloat64)},
        device));
}

TEST_CASE("nn::BatchNorm: batch statistics, running ones with momentum, eval mode") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    nn::BatchNorm2d bn(3, 1e-5, 0.2, true, true, tl::kFloat64);
    bn->to(device);
    const Tensor x = random_tensor({4, 3, 2, 5}, tl::kFloat64, device) * 2.0 + 1.0;
    const Tensor y = bn(x);
    const Tensor m = tl::mean(x, {0, 2, 3}, true);
    const Tensor v = tl::var(x, {0, 2, 3}, 0, true);
    CHECK(tl::allclose(y, (x - m) / tl::sqrt(v + 1e-5), 1e-12, 1e-12));
    // running = 0.8 running + 0.2 batch (unbiased variance: 40 values per channel).
    CHECK(tl::allclose(bn->running_mean, m.view({3}) * 0.2, 1e-12, 1e-12));
    CHECK(tl::allclose(bn->running_var, v.view({3}) * (40.0 / 39.0) * 0.2 + 0.8, 1e-12, 1e-12));
    CHECK(bn->num_batches_tracked.item<int64_t>() == 1);
    bn->eval();
    const Tensor z = bn(x);
    CHECK(tl::allclose(z,
                       (x - bn->running_mean.view({1, 3, 1, 1})) /
                           tl::sqrt(bn->running_var.view({1, 3, 1, 1}) + 1e-5),
                       1e-12, 1e-12));
    CHECK(bn->num_batches_tracked.item<int64_t>() == 1);
    CHECK(tl_test::gradcheck(
        "batch_norm in training",
        [](const std::vector<Tensor>& in) {
          return F::batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true);
        },
        {random_tensor({4, 3, 2}, tl::kFloat64), random_tensor({3}, tl::kFloat64),
         random_tensor({3}, tl::kFloat64)},
        device));
  }
  nn::BatchNorm1d bn1(4);
  CHECK(bn1(tl::randn({8, 4})).shape() == tl::Shape{8, 4});
  CHECK(bn1(tl::randn({8, 4, 6})).shape() == tl::Shape{8, 4, 6});
  CHECK(printed(bn1) ==
        "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  CHECK(bn1->named_buffers().keys() ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  // Without running statistics, eval mode still uses the batch's.
  nn::BatchNorm1d free(4, 1e-5, 0.1, false, false);
  free->eval();
  const Tensor x = tl::randn({8, 4});
  CHECK(tl::allclose(free(x),
                     (x - tl::mean(x, {0}, true)) / tl::sqrt(tl::var(x, {0}, 0, true) + 1e-5), 1e-5,
                     1e-5));
  CHECK(free->parameters().empty());
}

TEST_CASE("nn::Embedding: rows, repeated indices' gradients add up, printing") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    nn::Embedding emb(10, 3);
    emb->to(device);
    const Tensor idx = tl::from_vector<int64_t>({1, 4, 1, 9, 0, 4}, {2, 3}).to(device);
    const Tensor out = emb(idx);
    CHECK(out.shape() == tl::Shape{2, 3, 3});
    CHECK(tl::equal(out[0][0], emb->weight[1]));
    tl::sum(out).backward();
    const Tensor g = emb->weight.grad().cpu();
    CHECK(tl::equal(g[1], tl::full({3}, 2.0f)));
    CHECK(tl::equal(g[2], tl::zeros({3})));
  }
  CHECK(printed(nn::Embedding(10, 3)) == "Embedding(10, 3)");
}

TEST_CASE("bad input: normalization layers and embedding") {
  nn::LayerNorm ln(std::vector<int64_t>{4});
  check_throws<tl::ShapeError>(
      [&] {
        (void)ln(tl::ones({2, 3}));
      },
      "[tl::nn::functional::layer_norm]");
  nn::BatchNorm2d bn(3);
  check_throws<tl::ShapeError>(
      [&] {
        (void)bn(tl::ones({2, 3, 4}));
      },
      "[tl::nn::BatchNorm2d::forward] expected 4D input");
  check_throws<tl::ShapeError>([&] { (void)bn(tl::ones({2, 5, 4, 4})); }, "expected 3 channels");
  check_throws<tl::Error>(
      [&] {
        (void)nn::BatchNorm1d(3)(tl::ones({1, 3}));
      },
      "more than 1 value per channel");
  check_throws<tl::ShapeError>([] { nn::BatchNorm1d(0); }, "[tl::nn::BatchNorm1d]");
  nn::Embedding emb(5, 2);
  check_throws<tl::IndexError>(
      [&] {
        (void)emb(tl::from_vector<int64_t>({0, 5}, {2}));
      },
      "[tl::nn::functional::embedding] index 5");
  check_throws<tl::DTypeError>([&] { (void)emb(tl::ones({2})); }, "int64");
  check_throws<tl::ShapeError>([] { nn::Embedding(-1, 2); }, "[tl::nn::Embedding]");
  // Nothing changed by the failed calls.
  CHECK(bn->num_batches_tracked.item<int64_t>() == 0);
}

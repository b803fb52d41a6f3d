// tl::nn's parameterless layers and containers: each layer equals its functional form and the op
// it wraps, prints as torch prints it; Sequential chains, indexes and prints its modules;
// gradients through a Sequential model match central differences for the input and every
// parameter (float64, every test device); Dropout's mask, scale, eval mode and seeding (the same
// mask on the CPU and CUDA); bad inputs name the layer.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cmath>
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

// Central differences of sum(model(x) * w) in each parameter element, against autograd's.
void check_parameter_gradients(nn::Sequential& model, const Tensor& x) {
  const Tensor w = random_tensor(model(x).shape(), tl::kFloat64, x.device());
  model->zero_grad();
  tl::sum(model(x) * w).backward();
  for (const auto& item : model->named_parameters()) {
    Tensor p = item.value();
    INFO(item.key());
    REQUIRE(p.grad().defined());
    const std::vector<double> analytic = tl_test::values_of(p.grad());
    // Read through values_of: element_at reads host memory, and p may be on a GPU.
    const std::vector<double> originals = tl_test::values_of(p);
    tl::NoGradGuard no_grad;
    Tensor flat = p.view({-1});
    for (int64_t j = 0; j < p.numel(); ++j) {
      const double original = originals[static_cast<size_t>(j)];
      auto loss_at = [&](double value) {
        flat.index_put_({j}, tl::scalar_tensor(value, tl::kFloat64).to(p.device()));
        return tl::sum(model(x) * w).item<double>();
      };
      const double eps = 1e-6;
      const double numeric = (loss_at(original + eps) - loss_at(original - eps)) / (2 * eps);
      loss_at(original);
      CHECK(std::abs(numeric - analytic[j]) <= 1e-6 + 1e-4 * std::abs(numeric));
    }
  }
}

}  // namespace

TEST_CASE("nn layers: each equals its functional form and its op, printed as torch") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const Tensor x = random_tensor({3, 4, 5}, tl::kFloat32, device);
    CHECK(tl::equal(nn::ReLU()(x), tl::relu(x)));
    CHECK(tl::equal(nn::GELU()(x), tl::gelu(x)));
    CHECK(tl::equal(nn::GELU("tanh")(x), F::gelu(x, "tanh")));
    CHECK(tl::equal(nn::SiLU()(x), tl::silu(x)));
    CHECK(tl::equal(nn::Tanh()(x), tl::tanh(x)));
    CHECK(tl::equal(nn::Sigmoid()(x), tl::sigmoid(x)));
    CHECK(tl::equal(nn::Softmax(1)(x), tl::softmax(x, 1)));
    CHECK(tl::equal(nn::Identity()(x), x));
    CHECK(nn::Flatten()(x).shape() == tl::Shape{3, 20});
    CHECK(nn::Flatten(0, 1)(x).shape() == tl::Shape{12, 5});
    CHECK(tl::equal(F::flatten(x), x.reshape({3, 20})));
  }
  CHECK(printed(nn::ReLU()) == "ReLU()");
  CHECK(printed(nn::GELU()) == "GELU(approximate='none')");
  CHECK(printed(nn::GELU("tanh")) == "GELU(approximate='tanh')");
  CHECK(printed(nn::SiLU()) == "SiLU()");
  CHECK(printed(nn::Tanh()) == "Tanh()");
  CHECK(printed(nn::Sigmoid()) == "Sigmoid()");
  CHECK(printed(nn::Softmax(1)) == "Softmax(dim=1)");
  CHECK(printed(nn::Flatten()) == "Flatten(start_dim=1, end_dim=-1)");
  CHECK(printed(nn::Dropout(0.25)) == "Dropout(p=0.25, inplace=False)");
  CHECK(printed(nn::Identity()) == "Identity()");
}

TEST_CASE("nn::Sequential: chains, indexes and prints its modules; gradients check") {
  tl::manual_seed(4);
  nn::Sequential seq(nn::Linear(3, 4, true, tl::kFloat64), nn::Tanh(),
                     nn::Linear(4, 2, true, tl::kFloat64), nn::Softmax(1));
  CHECK(seq->size() == 4);
  CHECK(printed(seq) ==
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): Tanh()\n"
        "  (2): Linear(in_features=4, out_features=2, bias=True)\n"
        "  (3): Softmax(dim=1)\n"
        ")");
  CHECK(seq->named_parameters().keys() ==
        std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  auto& first = seq->at<nn::LinearImpl>(0);
  CHECK(first.in_features() == 3);
  CHECK(seq[1]->name() == "Tanh");
  const Tensor x = random_tensor({5, 3}, tl::kFloat64);
  const Tensor want =
      tl::softmax(seq->at<nn::LinearImpl>(2).forward(tl::tanh(first.forward(x))), 1);
  CHECK(tl::allclose(seq(x), want, 1e-12, 1e-12));
  // Empty: the identity; a named push_back.
  nn::Sequential empty;
  CHECK(tl::equal(empty(x), x));
  empty->push_back("act", nn::ReLU());
  CHECK(empty->named_children().keys() == std::vector<std::string>{"act"});

  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::manual_seed(8);
    nn::Sequential model(nn::Linear(3, 4, true, tl::kFloat64), nn::Tanh(),
                         nn::Linear(4, 2, true, tl::kFloat64), nn::Sigmoid());
    model->to(device);
    CHECK(tl_test::gradcheck(
        "Sequential(Linear, Tanh, Linear, Sigmoid) in its input",
        [&](const std::vector<Tensor>& in) { return model(in[0]); },
        {random_tensor({4, 3}, tl::kFloat64)}, device));
    check_parameter_gradients(model, random_tensor({4, 3}, tl::kFloat64, device));
  }

  nn::ModuleList list(nn::Linear(2, 2), nn::ReLU());
  list->push_back(nn::Tanh());
  CHECK(list->size() == 3);
  CHECK(list[2]->name() == "Tanh");
  CHECK(list->named_parameters().keys() == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK(printed(list) ==
        "ModuleList(\n  (0): Linear(in_features=2, out_features=2, bias=True)\n  (1): ReLU()\n"
        "  (2): Tanh()\n)");
  size_t n = 0;
  for (const auto& m : *list) n += m != nullptr;
  CHECK(n == 3);
}

TEST_CASE("nn::Dropout: mask, scale, eval mode, seeding, the same mask on CPU and CUDA") {
  const Tensor x = tl::rand({200, 50}, tl::kFloat64) + 0.5;
  nn::Dropout drop(0.3);
  tl::manual_seed(12);
  const Tensor y = drop(x);
  const Tensor kept = tl::ne(y, 0.0);
  const double kept_fraction = tl::mean(kept.to(tl::kFloat64)).item<double>();
  CHECK(std::abs(kept_fraction - 0.7) < 0.02);  // 10000 draws: 5 sigma is 0.023
  CHECK(tl::allclose(tl::where(kept, y, x / 0.7), x / 0.7, 1e-12, 1e-12));
  // The same seed, the same mask; the gradient is the mask's scale.
  tl::manual_seed(12);
  Tensor leaf = x.clone();
  leaf.requires_grad_();
  const Tensor again = drop(leaf);
  CHECK(tl::equal(again.detach(), y));
  tl::sum(again).backward();
  CHECK(tl::allclose(leaf.grad(), kept.to(tl::kFloat64) / 0.7, 1e-12, 1e-12));
  // Eval mode, p = 0 and p = 1.
  drop->eval();
  CHECK(tl::equal(drop(x), x));
  CHECK(tl::equal(F::dropout(x, 0.0), x));
  CHECK(tl::equal(F::dropout(x, 1.0), tl::zeros_like(x)));
  if (tl::cuda::is_available()) {
    tl::manual_seed(5);
    const Tensor on_cpu = F::dropout(x, 0.4);
    tl::manual_seed(5);
    const Tensor on_gpu = F::dropout(x.cuda(), 0.4);
    CHECK(tl::equal(on_gpu.cpu(), on_cpu));
  }
}

TEST_CASE("bad input: nn layers") {
  check_throws<tl::Error>([] { nn::Dropout(1.5); }, "[tl::nn::Dropout]");
  check_throws<tl::Error>([] { nn::Dropout(-0.1); }, "between 0 and 1");
  check_throws<tl::Error>([] { (void)F::dropout(tl::ones({2}), 2.0); },
                          "[tl::nn::functional::dropout]");
  check_throws<tl::DTypeError>([] { (void)F::dropout(tl::ones({2}, tl::kInt64), 0.5); },
                               "[tl::nn::functional::dropout]");
  check_throws<tl::Error>([] { nn::GELU("exact"); }, "[tl::nn::GELU]");
  check_throws<tl::Error>([] { (void)F::flatten(tl::Tensor()); }, "[tl::nn::functional::flatten]");
  nn::Sequential seq{nn::ReLU()};
  check_throws<tl::IndexError>([&] { (void)seq[3]; }, "[tl::nn::Sequential]");
  check_throws<tl::Error>([&] { (void)seq->at<nn::LinearImpl>(0); }, "tl::nn::Sequential::at");
  nn::ModuleList list;
  check_throws<tl::IndexError>([&] { (void)list[0]; }, "[tl::nn::ModuleList]");
  // A layer's wrong input names the op it runs (Linear names itself).
  nn::Sequential net(nn::Linear(3, 2), nn::ReLU());
  check_throws<tl::ShapeError>([&] { (void)net(tl::ones({2, 4})); }, "[tl::nn::Linear::forward]");
}

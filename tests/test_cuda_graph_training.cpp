// A whole training step (forward, cross_entropy, backward, optimizer) captured by
// tl::cuda::graphed replays to the eager result, step after step: the graph-captured step of
// issue 33's notebook. Adam's fused step refuses a capture (its step count would be baked in).
// The cases skip without a CUDA device.
#include <vector>

#include "test_util.h"

namespace {

namespace nn = tl::nn;
namespace F = tl::nn::functional;
using tl::Tensor;

const tl::Device kCuda = tl::Device::cuda(0);

nn::Sequential small_net() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::Sigmoid(),
                        nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(2)), nn::Flatten(),
                        nn::Linear(4 * 4 * 4, 10));
}

// b's parameters set to a's values.
void copy_parameters(nn::Sequential& a, nn::Sequential& b) {
  tl::NoGradGuard no_grad;
  const auto pa = a->parameters();
  auto pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) pb[i].copy_(pa[i]);
}

}  // namespace

TEST_CASE("cuda graph: a captured training step replays to the eager steps") {
  TL_TEST_REQUIRE_CUDA();
  for (const bool momentum : {false, true}) {
    INFO("momentum " << momentum);
    nn::Sequential eager = small_net(), captured = small_net();
    eager->to(kCuda);
    captured->to(kCuda);
    copy_parameters(eager, captured);
    auto options = [&] { return tl::optim::SGDOptions(0.5).momentum(momentum ? 0.9 : 0.0); };
    tl::optim::SGD eager_opt(eager->parameters(), options());
    tl::optim::SGD captured_opt(captured->parameters(), options());
    std::vector<Tensor> xs, ys;
    for (int i = 0; i < 5; ++i) {
      xs.push_back(tl_test::random_tensor({8, 1, 8, 8}).to(kCuda));
      ys.push_back(tl::randint(0, 10, {8}, tl::kInt64).to(kCuda));
    }
    std::vector<double> eager_losses;
    for (int i = 0; i < 5; ++i) {
      eager_opt.zero_grad();
      const Tensor loss = F::cross_entropy(eager->forward(xs[i]), ys[i]);
      loss.backward();
      eager_opt.step();
      eager_losses.push_back(loss.item<double>());
    }
    // The step as a function of (images, labels); graphed() runs it once eagerly on its sample
    // inputs (step 1), then captures it; each call after replays one step.
    auto step = tl::cuda::graphed(
        [&](const std::vector<Tensor>& in) {
          captured_opt.zero_grad();
          const Tensor loss = F::cross_entropy(captured->forward(in[0]), in[1]);
          loss.backward();
          captured_opt.step();
          return std::vector<Tensor>{loss.detach()};
        },
        {xs[0], ys[0]});
    for (int i = 1; i < 5; ++i) {
      const std::vector<Tensor> out = step({xs[i], ys[i]});
      CHECK(out[0].item<double>() == doctest::Approx(eager_losses[i]).epsilon(1e-5));
    }
    const auto pe = eager->parameters(), pc = captured->parameters();
    for (size_t i = 0; i < pe.size(); ++i)
      tl_test::check_values(pc[i], tl_test::values_of(pe[i]), 1e-4, 1e-5);
  }
}

TEST_CASE("cuda graph: Adam's fused step refuses a capture, the library still working") {
  TL_TEST_REQUIRE_CUDA();
  nn::Linear net(4, 3);
  net->to(kCuda);
  tl::optim::Adam opt(net->parameters(), tl::optim::AdamOptions(1e-2));
  const Tensor x = tl_test::random_tensor({5, 4}).to(kCuda);
  auto run_step = [&] {
    opt.zero_grad();
    tl::sum(net->forward(x)).backward();
    opt.step();
  };
  run_step();
  tl::cuda::Graph graph;
  tl_test::check_throws<tl::DeviceError>([&] { graph.capture(run_step); }, "capturable");
  run_step();  // still usable eagerly
  CHECK(!graph.is_captured());
}

// Mixed precision: tl::autocast's op lists (the matmul family and conv2d in the autocast dtype,
// torch's float32 list of the device type in float32, float64 and integers untouched, nothing
// outside a guard; the CPU's lists checked against torch 2.15's CPU autocast), its
// values equal to the explicit casts, gradients in each input's own dtype, and tl::GradScaler's
// scaling, unscaling, skipped steps and scale updates; on the CPU (bfloat16, torch's CPU
// autocast) and on cuda:0 (float16 and bfloat16) when present.
#include <cmath>
#include <limits>
#include <vector>

#include "bad_input.h"
#include "test_util.h"

namespace nn = tl::nn;
namespace F = tl::nn::functional;
using tl::Tensor;
using tl_test::random_tensor;

namespace {

struct AmpCase {
  tl::Device device;
  tl::DType dtype;
};

std::vector<AmpCase> amp_cases() {
  std::vector<AmpCase> out{{tl::Device::cpu(), tl::kBFloat16}};
  if (tl::cuda::is_available()) {
    out.push_back({tl::Device::cuda(0), tl::kFloat16});
    out.push_back({tl::Device::cuda(0), tl::kBFloat16});
  }
  return out;
}

}  // namespace

TEST_CASE("autocast: the lower-precision list, the float32 list, and what it leaves alone") {
  for (const AmpCase& c : amp_cases()) {
    INFO(c.device.str() << " " << c.dtype);
    const auto on = [&](const tl::Shape& s, tl::DType d = tl::kFloat32) {
      return random_tensor(s, d, c.device);
    };
    const Tensor a = on({4, 5}), b = on({5, 3}), w = on({3, 5}), bias = on({3});
    const Tensor low = on({4, 6}).to(c.dtype);
    {
      tl::autocast guard(c.device.type(), c.dtype);
      CHECK(tl::is_autocast_enabled(c.device.type()));
      CHECK(tl::get_autocast_dtype(c.device.type()) == c.dtype);
      // Lower precision, the result equal to the product of the cast operands.
      const Tensor m = tl::matmul(a, b);
      CHECK(m.dtype() == c.dtype);
      {
        tl::autocast off(c.device.type(), std::nullopt, false);
        CHECK(tl::equal(m, tl::matmul(a.to(c.dtype), b.to(c.dtype))));
        CHECK(tl::matmul(a, b).dtype() == tl::kFloat32);  // enabled=false inside
      }
      CHECK(tl::mm(a, b).dtype() == c.dtype);
      CHECK(tl::bmm(on({2, 4, 5}), on({2, 5, 3})).dtype() == c.dtype);
      CHECK(tl::linear(a, w, bias).dtype() == c.dtype);
      CHECK(tl::addmm(on({4, 3}), a, b).dtype() == c.dtype);
      CHECK(tl::baddbmm(on({2, 4, 3}), on({2, 4, 5}), on({2, 5, 3})).dtype() == c.dtype);
      CHECK(tl::conv2d(on({2, 3, 6, 6}), on({4, 3, 3, 3}), on({4})).dtype() == c.dtype);
      // A mixed pair is cast to one dtype, not refused.
      CHECK(tl::matmul(a, b.to(c.dtype)).dtype() == c.dtype);
      // float64 and integers are not cast.
      CHECK(tl::matmul(a.to(tl::kFloat64), b.to(tl::kFloat64)).dtype() == tl::kFloat64);
      CHECK(tl::matmul(tl::ones({2, 2}, tl::TensorOptions(tl::kInt64).device(c.device)),
                       tl::ones({2, 2}, tl::TensorOptions(tl::kInt64).device(c.device)))
                .dtype() == tl::kInt64);
      // The float32 list: the losses and prod on both device types, as torch's; the rest on
      // CUDA only (torch's CPU list leaves softmax, sums, norms and the unary ops alone).
      const tl::DType cuda_only = c.device.is_cuda() ? tl::kFloat32 : c.dtype;
      CHECK(tl::softmax(low, 1).dtype() == cuda_only);
      CHECK(tl::log_softmax(low, 1).dtype() == cuda_only);
      CHECK(tl::logsumexp(low, {1}).dtype() == cuda_only);
      CHECK(tl::sum(low).dtype() == cuda_only);
      CHECK(tl::cumsum(low, 1).dtype() == cuda_only);
      CHECK(tl::exp(low).dtype() == cuda_only);
      CHECK(tl::norm(low).dtype() == cuda_only);
      CHECK(F::layer_norm(low, {6}, Tensor(), Tensor(), 1e-5).dtype() == cuda_only);
      CHECK(tl::prod(low).dtype() == tl::kFloat32);
      const Tensor t = tl::randint(0, 6, {4}, tl::kInt64).to(c.device);
      CHECK(F::cross_entropy(low, t).dtype() == tl::kFloat32);
      CHECK(F::nll_loss(low, t).dtype() == tl::kFloat32);
      CHECK(F::mse_loss(low, on({4, 6})).dtype() == tl::kFloat32);
      CHECK(F::l1_loss(low, on({4, 6})).dtype() == tl::kFloat32);
      CHECK(F::binary_cross_entropy_with_logits(low, tl::sigmoid(on({4, 6}))).dtype() ==
            tl::kFloat32);
      // The float32 list leaves float32 alone, and ops on neither list keep their dtype.
      CHECK(tl::softmax(a, 1).dtype() == tl::kFloat32);
      CHECK(tl::sqrt(tl::abs(low)).dtype() == c.dtype);
      CHECK((low + low).dtype() == c.dtype);
      // The values: the float32 list computes from the same low-precision inputs.
      CHECK(tl::allclose(F::cross_entropy(low, t), F::cross_entropy(low.to(tl::kFloat32), t), 1e-6,
                         1e-7));
      // binary_cross_entropy: refused under CUDA autocast, float32 under the CPU's, as torch's.
      if (c.device.is_cuda())
        tl_test::check_throws<tl::Error>(
            [&] { (void)F::binary_cross_entropy(tl::sigmoid(a), tl::sigmoid(a.detach())); },
            "unsafe to autocast");
      else
        CHECK(F::binary_cross_entropy(tl::sigmoid(low), tl::sigmoid(low.detach())).dtype() ==
              tl::kFloat32);
    }
    // Outside the guard, nothing is cast.
    CHECK(!tl::is_autocast_enabled(c.device.type()));
    CHECK(tl::matmul(a, b).dtype() == tl::kFloat32);
    CHECK(tl::softmax(low, 1).dtype() == c.dtype);
    CHECK(tl::prod(low).dtype() == c.dtype);
  }
}

TEST_CASE("autocast: gradients come back in each input's dtype, backward inside the region") {
  for (const AmpCase& c : amp_cases()) {
    INFO(c.device.str() << " " << c.dtype);
    nn::Linear layer(8, 4);
    layer->to(c.device);
    Tensor x = random_tensor({5, 8}, tl::kFloat32, c.device);
    x.requires_grad_();
    const Tensor t = tl::randint(0, 4, {5}, tl::kInt64).to(c.device);
    Tensor loss;
    {
      tl::autocast guard(c.device.type(), c.dtype);
      const Tensor logits = layer(x);
      CHECK(logits.dtype() == c.dtype);
      loss = F::cross_entropy(logits, t);
      CHECK(loss.dtype() == tl::kFloat32);
      loss.backward();
    }
    CHECK(x.grad().dtype() == tl::kFloat32);
    CHECK(layer->weight.grad().dtype() == tl::kFloat32);
    CHECK(layer->bias.grad().dtype() == tl::kFloat32);
    // The same gradient as the explicit casts give.
    Tensor x2 = x.detach().clone();
    x2.requires_grad_();
    const Tensor logits2 = tl::linear(x2.to(c.dtype), layer->weight.detach().to(c.dtype),
                                      layer->bias.detach().to(c.dtype));
    F::cross_entropy(logits2.to(tl::kFloat32), t).backward();
    CHECK(tl::allclose(x.grad(), x2.grad(), 1e-6, 1e-7));
  }
}

TEST_CASE("GradScaler: scales, unscales, skips a step on inf and moves the scale") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    nn::Linear layer(3, 2);
    layer->to(device);
    const Tensor x = random_tensor({4, 3}, tl::kFloat32, device);
    // The plain gradient, for comparison.
    layer->zero_grad();
    tl::sum(layer(x)).backward();
    const Tensor plain = layer->weight.grad().clone();
    const Tensor before = layer->weight.detach().clone();

    tl::optim::SGD opt(layer->parameters(), tl::optim::SGDOptions(0.1));
    tl::GradScaler scaler({.init_scale = 1024.0, .growth_interval = 2});
    CHECK(scaler.get_scale() == 1024.0);
    opt.zero_grad();
    const Tensor scaled = scaler.scale(tl::sum(layer(x)));
    CHECK(scaled.item<double>() == doctest::Approx(tl::sum(layer(x)).item<double>() * 1024.0));
    scaled.backward();
    scaler.unscale_(opt);  // as before clipping
    CHECK(tl::allclose(layer->weight.grad(), plain, 1e-6, 1e-6));
    tl_test::check_throws<tl::Error>([&] { scaler.unscale_(opt); }, "already been called");
    CHECK(scaler.step(opt));
    CHECK(tl::allclose(layer->weight.detach(), before - plain * 0.1, 1e-6, 1e-6));
    scaler.update();
    CHECK(scaler.get_scale() == 1024.0);
    CHECK(scaler.growth_tracker() == 1);

    // A second clean iteration: growth_interval 2 doubles the scale.
    opt.zero_grad();
    scaler.scale(tl::sum(layer(x))).backward();
    CHECK(scaler.step(opt));
    scaler.update();
    CHECK(scaler.get_scale() == 2048.0);
    CHECK(scaler.growth_tracker() == 0);

    // An inf gradient: the step is skipped, the scale halves.
    opt.zero_grad();
    scaler.scale(tl::sum(layer(x))).backward();
    {
      tl::NoGradGuard no_grad;
      layer->bias.mutable_grad().fill_(std::numeric_limits<double>::infinity());
    }
    const Tensor kept = layer->weight.detach().clone();
    CHECK(!scaler.step(opt));
    CHECK(tl::equal(layer->weight.detach(), kept));
    scaler.update();
    CHECK(scaler.get_scale() == 1024.0);

    // update(new_scale), and a disabled scaler passes everything through.
    scaler.update(8.0);
    CHECK(scaler.get_scale() == 8.0);
    tl::GradScaler off({.enabled = false});
    const Tensor l = tl::sum(layer(x));
    CHECK(off.scale(l).is_same(l));
    CHECK(off.get_scale() == 1.0);
    opt.zero_grad();
    l.backward();
    CHECK(off.step(opt));
  }
}

TEST_CASE("bad input: autocast and GradScaler") {
  tl_test::run_bad_inputs({
      TL_BAD(tl::DTypeError, "[tl::autocast] ", "float16 or bfloat16",
             tl::autocast(tl::DeviceType::CPU, tl::kFloat32)),
      TL_BAD(tl::Error, "[tl::GradScaler] ", "init_scale", tl::GradScaler({.init_scale = -1.0})),
      TL_BAD(tl::Error, "[tl::GradScaler] ", "growth_factor",
             tl::GradScaler({.growth_factor = 1.0})),
      TL_BAD(tl::Error, "[tl::GradScaler] ", "backoff_factor",
             tl::GradScaler({.backoff_factor = 1.5})),
      TL_BAD(tl::Error, "[tl::GradScaler] ", "growth_interval",
             tl::GradScaler({.growth_interval = 0})),
      TL_BAD(tl::DTypeError, "[tl::GradScaler::scale] ", "floating",
             tl::GradScaler().scale(tl::ones({2}, tl::kInt64))),
  });
}

TEST_CASE("autocast: a small convolutional net trains under it, with a GradScaler") {
  for (const AmpCase& c : amp_cases()) {
    INFO(c.device.str() << " " << c.dtype);
    tl::manual_seed(3);
    nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::ReLU(), nn::Flatten(),
                       nn::Linear(4 * 6 * 6, 3));
    net->to(c.device);
    tl::optim::SGD opt(net->parameters(), tl::optim::SGDOptions(0.05));
    tl::GradScaler scaler({.init_scale = 256.0});
    const Tensor x = random_tensor({12, 1, 6, 6}, tl::kFloat32, c.device);
    const Tensor t = tl::randint(0, 3, {12}, tl::kInt64).to(c.device);
    double first = 0, last = 0;
    for (int step = 0; step < 30; ++step) {
      opt.zero_grad();
      Tensor loss;
      {
        tl::autocast guard(c.device.type(), c.dtype);
        loss = F::cross_entropy(net(x), t);
      }
      scaler.scale(loss).backward();
      for (const Tensor& p : net->parameters()) CHECK(p.grad().dtype() == tl::kFloat32);
      scaler.step(opt);
      scaler.update();
      (step == 0 ? first : last) = loss.item<double>();
    }
    CHECK(std::isfinite(last));
    CHECK(last < first * 0.8);  // the same fixed batch: the loss falls
  }
}

// tl::optim against torch.optim's update rules computed here in float64 (SGD with momentum,
// dampening, nesterov and weight decay; Adam, AdamW and amsgrad), parameter groups, zero_grad,
// the state_dict round trip, the schedulers' closed forms, a model trained end to end on every
// test device, and the bad inputs naming the optimizer.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "test_util.h"

namespace optim = tl::optim;
namespace nn = tl::nn;
using tl::Tensor;
using tl_test::check_throws;
using tl_test::values_of;

namespace {

Tensor leaf(std::vector<double> v) {
  Tensor t = tl::from_vector(v, {static_cast<int64_t>(v.size())});
  t.requires_grad_();
  return t;
}

// loss = sum(c * p^2 / 2 + p): gradient c * p + 1, different per element.
void set_grad(Tensor& p) {
  tl::NoGradGuard no_grad;
  p.mutable_grad() = p * tl::from_vector<double>({1.0, 2.0, 3.0}, {3}) + 1.0;
}

std::vector<double> grad_of(const std::vector<double>& p) {
  return {p[0] * 1 + 1, p[1] * 2 + 1, p[2] * 3 + 1};
}

void check_near(const Tensor& t, const std::vector<double>& want) {
  tl_test::check_values_within(t, want, std::vector<double>(want.size(), 1e-12));
}

}  // namespace

TEST_CASE("optim::SGD: torch's rule with momentum, dampening, nesterov and weight decay") {
  struct Case {
    double momentum, dampening, weight_decay;
    bool nesterov;
  };
  for (const Case c : {Case{0, 0, 0, false}, Case{0.9, 0, 0, false}, Case{0.9, 0.3, 0.01, false},
                       Case{0.8, 0, 0.1, true}}) {
    INFO("momentum " << c.momentum << " dampening " << c.dampening << " wd " << c.weight_decay
                     << " nesterov " << c.nesterov);
    Tensor p = leaf({0.5, -1.0, 2.0});
    optim::SGD opt({p}, optim::SGDOptions(0.1)
                            .momentum(c.momentum)
                            .dampening(c.dampening)
                            .weight_decay(c.weight_decay)
                            .nesterov(c.nesterov));
    std::vector<double> want = {0.5, -1.0, 2.0}, buf(3);
    for (int step = 0; step < 4; ++step) {
      set_grad(p);
      opt.step();
      std::vector<double> g = grad_of(want);
      for (size_t i = 0; i < 3; ++i) {
        g[i] += c.weight_decay * want[i];
        if (c.momentum != 0) {
          buf[i] = step == 0 ? g[i] : c.momentum * buf[i] + (1 - c.dampening) * g[i];
          g[i] = c.nesterov ? g[i] + c.momentum * buf[i] : buf[i];
        }
        want[i] -= 0.1 * g[i];
      }
      check_near(p, want);
    }
    CHECK(p.is_leaf());
    CHECK(p.grad_fn() == nullptr);
  }
}

TEST_CASE("optim::Adam and AdamW: torch's rule, with amsgrad") {
  for (bool decoupled : {false, true})
    for (bool amsgrad : {false, true}) {
      INFO((decoupled ? "AdamW" : "Adam") << (amsgrad ? " amsgrad" : ""));
      Tensor p = leaf({0.5, -1.0, 2.0});
      const double lr = 0.05, b1 = 0.8, b2 = 0.9, eps = 1e-6, wd = 0.1;
      std::unique_ptr<optim::Optimizer> opt;
      if (decoupled)
        opt = std::make_unique<optim::AdamW>(
            std::vector<Tensor>{p},
            optim::AdamWOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd).amsgrad(amsgrad));
      else
        opt = std::make_unique<optim::Adam>(
            std::vector<Tensor>{p},
            optim::AdamOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd).amsgrad(amsgrad));
      std::vector<double> want = {0.5, -1.0, 2.0}, m(3), v(3), vmax(3);
      for (int step = 1; step <= 4; ++step) {
        set_grad(p);
        opt->step();
        std::vector<double> g = grad_of(want);
        for (size_t i = 0; i < 3; ++i) {
          if (decoupled)
            want[i] *= 1 - lr * wd;
          else
            g[i] += wd * want[i];
          m[i] = b1 * m[i] + (1 - b1) * g[i];
          v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
          vmax[i] = std::max(vmax[i], v[i]);
          const double second = amsgrad ? vmax[i] : v[i];
          const double denom = std::sqrt(second) / std::sqrt(1 - std::pow(b2, step)) + eps;
          want[i] -= lr / (1 - std::pow(b1, step)) * m[i] / denom;
        }
        check_near(p, want);
      }
      CHECK(opt->state(p).at("step").item<double>() == 4);
    }
}

TEST_CASE("optim::SGD fused: many parameters, dtypes and a strided one, on every test device") {
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat32, tl::kFloat64, tl::kBFloat16})
      for (const double momentum : {0.0, 0.9}) {
        INFO(device.str() << " " << dtype << " momentum " << momentum);
        std::vector<Tensor> params;
        for (int i = 0; i < 300; ++i)
          params.push_back(
              tl_test::random_tensor({i == 5 ? 70001 : 1 + (i * 41) % 61}, dtype, device));
        params.push_back(tl_test::random_tensor({4, 3}, dtype, device).t());  // strided: eager
        for (Tensor& p : params) p.requires_grad_();
        const double lr = 0.1, wd = 0.01;
        optim::SGD opt(params, optim::SGDOptions(lr).momentum(momentum).weight_decay(wd).nesterov(
                                   momentum != 0));
        std::vector<std::vector<double>> want, buf;
        for (const Tensor& p : params) {
          want.push_back(values_of(p));
          buf.emplace_back(want.back().size());
        }
        for (int step = 0; step < 3; ++step) {
          {
            tl::NoGradGuard no_grad;
            for (Tensor& p : params)
              p.mutable_grad() = tl_test::random_tensor(p.shape(), dtype, device);
          }
          tl::profiler::Profile profile;
          opt.step();
          profile.stop();
          int fused_rows = 0;
          for (const tl::profiler::Event& e : profile.events())
            if (e.name == "tl::optim::fused_sgd") ++fused_rows;
          CHECK(fused_rows == 1);
          for (size_t k = 0; k < params.size(); ++k) {
            const std::vector<double> g0 = values_of(params[k].grad());
            for (size_t i = 0; i < g0.size(); ++i) {
              double g = g0[i] + wd * want[k][i];
              if (momentum != 0) {
                buf[k][i] = step == 0 ? g : momentum * buf[k][i] + g;
                g = g + momentum * buf[k][i];
              }
              want[k][i] -= lr * g;
            }
            const double tol = dtype == tl::kFloat64 ? 1e-12 : dtype == tl::kFloat32 ? 1e-5 : 0.05;
            const std::vector<double> got = values_of(params[k]);
            bool close = true;
            for (size_t i = 0; i < got.size(); ++i)
              close = close && std::abs(got[i] - want[k][i]) <= tol * (1 + std::abs(want[k][i]));
            CHECK_MESSAGE(close, "parameter " << k << " at step " << step);
            if (dtype == tl::kBFloat16) {
              want[k] = got;
              if (momentum != 0) buf[k] = values_of(opt.state(params[k]).at("momentum_buffer"));
            }
          }
        }
      }
}

TEST_CASE("optim::Adam fused: many parameters, dtypes and a strided one, on every test device") {
  // 300 parameters (more than one CUDA launch's table of 256) of odd sizes, one transposed (it
  // takes the eager ops), in float32, float64 and bfloat16: every one follows the float64 rule.
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : {tl::kFloat32, tl::kFloat64, tl::kBFloat16})
      for (bool amsgrad : {false, true}) {
        INFO(device.str() << " " << dtype << (amsgrad ? " amsgrad" : ""));
        std::vector<Tensor> params;
        for (int i = 0; i < 300; ++i) {
          const int64_t n = i == 7 ? 70001 : 1 + (i * 37) % 53;  // one over a CUDA chunk
          params.push_back(tl_test::random_tensor({n}, dtype, device));
        }
        params.push_back(tl_test::random_tensor({5, 3}, dtype, device).t());  // strided
        for (Tensor& p : params) p.requires_grad_();
        const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.05;
        optim::AdamW opt(
            params,
            optim::AdamWOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd).amsgrad(amsgrad));
        std::vector<std::vector<double>> want, m, v, vmax, grads;
        for (const Tensor& p : params) {
          want.push_back(values_of(p));
          m.emplace_back(want.back().size());
          v.emplace_back(want.back().size());
          vmax.emplace_back(want.back().size());
        }
        const uint32_t version = params[0]._version();
        for (int step = 1; step <= 3; ++step) {
          {
            tl::NoGradGuard no_grad;
            for (Tensor& p : params)
              p.mutable_grad() = tl_test::random_tensor(p.shape(), dtype, device);
          }
          tl::profiler::Profile profile;
          opt.step();
          profile.stop();
          int fused_rows = 0;
          for (const tl::profiler::Event& e : profile.events())
            if (e.name == "tl::optim::fused_adam") ++fused_rows;
          CHECK(fused_rows == 1);  // every contiguous parameter in one pass
          for (size_t k = 0; k < params.size(); ++k) {
            const std::vector<double> g = values_of(params[k].grad());
            for (size_t i = 0; i < g.size(); ++i) {
              want[k][i] *= 1 - lr * wd;
              m[k][i] = b1 * m[k][i] + (1 - b1) * g[i];
              v[k][i] = b2 * v[k][i] + (1 - b2) * g[i] * g[i];
              vmax[k][i] = std::max(vmax[k][i], v[k][i]);
              const double second = amsgrad ? vmax[k][i] : v[k][i];
              const double denom = std::sqrt(second) / std::sqrt(1 - std::pow(b2, step)) + eps;
              want[k][i] -= lr / (1 - std::pow(b1, step)) * m[k][i] / denom;
            }
            // One rounding of each state per step in bfloat16 (the step moves p by about lr).
            const double tol = dtype == tl::kFloat64 ? 1e-12 : dtype == tl::kFloat32 ? 1e-5 : 0.03;
            const std::vector<double> got = values_of(params[k]);
            bool close = true;
            for (size_t i = 0; i < got.size(); ++i)
              close = close && std::abs(got[i] - want[k][i]) <= tol * (1 + std::abs(want[k][i]));
            CHECK_MESSAGE(close, "parameter " << k << " at step " << step);
            if (dtype == tl::kBFloat16) want[k] = got;  // follow its rounding, judge each step
          }
        }
        CHECK(params[0]._version() > version);  // written in place, counted
        CHECK(params[0].is_leaf());
      }
}

TEST_CASE("optim: parameter groups, zero_grad, parameters without a gradient") {
  Tensor a = leaf({1.0, 1.0, 1.0}), b = leaf({1.0, 1.0, 1.0}), idle = leaf({5.0});
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b, idle}, std::make_unique<optim::SGDOptions>(0.5));
  optim::SGD opt(std::move(groups), optim::SGDOptions(0.1));
  CHECK(opt.param_groups().size() == 2);
  CHECK(opt.param_groups()[0].options().get_lr() == 0.1);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.5);
  set_grad(a);
  set_grad(b);
  opt.step();
  check_near(a, {1 - 0.1 * 2, 1 - 0.1 * 3, 1 - 0.1 * 4});
  check_near(b, {1 - 0.5 * 2, 1 - 0.5 * 3, 1 - 0.5 * 4});
  check_near(idle, {5.0});
  opt.zero_grad(false);
  CHECK(tl::equal(a.grad(), tl::zeros({3}, tl::kFloat64)));
  opt.zero_grad();
  CHECK_FALSE(a.grad().defined());
  Tensor c = leaf({2.0});
  opt.add_param_group(optim::OptimizerParamGroup({c}));
  CHECK(opt.param_groups()[2].options().get_lr() == 0.1);  // the defaults
}

TEST_CASE("optim: state_dict round trip continues the same trajectory") {
  for (bool adam : {false, true}) {
    INFO((adam ? "Adam" : "SGD"));
    auto make = [&](Tensor& p) -> std::unique_ptr<optim::Optimizer> {
      if (adam)
        return std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.1));
      return std::make_unique<optim::SGD>(std::vector<Tensor>{p},
                                          optim::SGDOptions(0.1).momentum(0.9));
    };
    Tensor p = leaf({0.5, -1.0, 2.0});
    auto opt = make(p);
    for (int i = 0; i < 3; ++i) {
      set_grad(p);
      opt->step();
    }
    const auto dict = opt->state_dict();
    CHECK(dict.contains("param_groups.0.lr"));
    CHECK(dict.contains("param_groups.0.params"));
    CHECK(dict.contains(adam ? "state.0.exp_avg" : "state.0.momentum_buffer"));
    Tensor q = p.detach().clone();
    q.requires_grad_();
    auto restored = make(q);
    restored->param_groups()[0].options().set_lr(7.0);  // overwritten by the load
    restored->load_state_dict(dict);
    CHECK(restored->param_groups()[0].options().get_lr() == 0.1);
    for (int i = 0; i < 2; ++i) {
      set_grad(p);
      opt->step();
      set_grad(q);
      restored->step();
    }
    CHECK(tl::equal(p, q));
    // A dict of another layout is refused, and nothing changes.
    Tensor r = leaf({1.0});
    Tensor s = leaf({1.0});
    std::vector<optim::OptimizerParamGroup> two;
    two.emplace_back(std::vector<Tensor>{r});
    two.emplace_back(std::vector<Tensor>{s});
    optim::SGD other(std::move(two), optim::SGDOptions(0.1));
    check_throws<tl::Error>([&] { other.load_state_dict(dict); }, "load_state_dict");
  }
}

TEST_CASE("optim schedulers: StepLR, CosineAnnealingLR and LinearLR closed forms") {
  Tensor p = leaf({1.0});
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  {
    optim::StepLR sched(opt, 3, 0.5);
    std::vector<double> lrs;
    for (int e = 0; e < 7; ++e) {
      lrs.push_back(opt.param_groups()[0].options().get_lr());
      sched.step();
    }
    const std::vector<double> want = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025};
    for (size_t i = 0; i < want.size(); ++i) CHECK(lrs[i] == doctest::Approx(want[i]));
  }
  opt.param_groups()[0].options().set_lr(0.1);
  {
    optim::CosineAnnealingLR sched(opt, 10, 0.01);
    for (int e = 0; e < 5; ++e) sched.step();
    CHECK(sched.get_last_lr()[0] ==
          doctest::Approx(0.01 + 0.09 * (1 + std::cos(std::numbers::pi * 5 / 10)) / 2));
    CHECK(sched.last_epoch() == 5);
  }
  opt.param_groups()[0].options().set_lr(0.1);
  {
    optim::LinearLR sched(opt, 0.25, 1.0, 4);
    CHECK(opt.param_groups()[0].options().get_lr() == doctest::Approx(0.025));
    for (int e = 0; e < 2; ++e) sched.step();
    CHECK(sched.get_last_lr()[0] == doctest::Approx(0.1 * (0.25 + 0.75 * 0.5)));
    for (int e = 0; e < 5; ++e) sched.step();
    CHECK(sched.get_last_lr()[0] == doctest::Approx(0.1));
  }
}

TEST_CASE("optim: a classifier trains end to end on every test device") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::manual_seed(2);
    // Two Gaussian blobs per class around 3 centres: separable.
    const Tensor centres = tl::from_vector<float>({2, 0, -2, 2, -2, -2}, {3, 2});
    const Tensor labels = tl::remainder(tl::arange(300), 3);
    const Tensor x = (tl::index_select(centres, 0, labels) + tl::randn({300, 2}) * 0.4).to(device);
    const Tensor y = labels.to(device);
    nn::Sequential model(nn::Linear(2, 16), nn::ReLU(), nn::Linear(16, 3));
    model->to(device);
    optim::AdamW opt(model->parameters(), optim::AdamWOptions(0.05));
    nn::CrossEntropyLoss loss_fn;
    double first = 0, last = 0;
    for (int step = 0; step < 60; ++step) {
      opt.zero_grad();
      const Tensor loss = loss_fn(model(x), y);
      loss.backward();
      opt.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    CHECK(last < 0.2 * first);
    const double accuracy =
        tl::mean(tl::eq(tl::argmax(model(x), 1), y).to(tl::kFloat32)).item<double>();
    CHECK(accuracy > 0.95);
  }
}

TEST_CASE("bad input: optimizers and schedulers") {
  Tensor p = leaf({1.0});
  check_throws<tl::Error>([] { optim::SGD opt(std::vector<Tensor>{}, optim::SGDOptions(0.1)); },
                          "[tl::optim::SGD] optimizer got an empty parameter list");
  check_throws<tl::Error>([&] { optim::SGD opt({p * 2.0}, optim::SGDOptions(0.1)); }, "non-leaf");
  check_throws<tl::Error>([&] { optim::SGD opt({p}, optim::SGDOptions(std::nan(""))); },
                          "Invalid learning rate");
  check_throws<tl::Error>([&] { optim::Adam opt({p}, optim::AdamOptions(-1.0)); },
                          "[tl::optim::Adam] Invalid learning rate");
  check_throws<tl::Error>(
      [&] {
        optim::AdamW opt({p}, optim::AdamWOptions().betas({1.0, 0.9}));
      },
      "[tl::optim::AdamW] Invalid beta parameter at index 0");
  check_throws<tl::Error>([&] { optim::SGD opt({p}, optim::SGDOptions(0.1).nesterov(true)); },
                          "Nesterov");
  check_throws<tl::Error>(
      [&] {
        optim::SGD opt({p, p}, optim::SGDOptions(0.1));
      },
      "more than one parameter group");
  check_throws<tl::DTypeError>(
      [&] { optim::SGD opt({tl::ones({2}, tl::kInt64)}, optim::SGDOptions(0.1)); },
      "floating point");
  check_throws<tl::Error>([&] { optim::SGD opt({Tensor()}, optim::SGDOptions(0.1)); }, "undefined");
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  check_throws<tl::Error>([&] { opt.add_param_group(optim::OptimizerParamGroup({p})); },
                          "more than one parameter group");
  check_throws<tl::Error>([&] { optim::StepLR s(opt, 0); }, "[tl::optim::StepLR]");
  check_throws<tl::Error>([&] { optim::CosineAnnealingLR s(opt, 0); },
                          "[tl::optim::CosineAnnealingLR]");
  check_throws<tl::Error>([&] { optim::LinearLR s(opt, 0.0); }, "[tl::optim::LinearLR]");
  CHECK(opt.param_groups().size() == 1);
}

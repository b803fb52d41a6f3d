// Tensor hooks: register_hook on leaves and non-leaves (order, replacement, retain_grad after),
// post-accumulate hooks, removal by handle and position, and the errors, on every test device.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

using tl_test::check_throws;
using tl_test::random_leaf;
using tl_test::random_tensor;
using tl_test::values_of;

TEST_CASE("autograd hooks: a leaf's hooks run in order before its gradient is accumulated") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor x = random_leaf({2, 3}, device);
    std::vector<std::string> order;
    tl::Tensor seen_by_second;
    x.register_hook([&](const tl::Tensor& g) {
      if (order.empty()) CHECK_FALSE(x.grad().defined());  // not accumulated yet
      order.push_back("double");
      return g * 2.0;
    });
    x.register_hook([&](const tl::Tensor& g) {
      order.push_back("look");
      seen_by_second = g.clone();
    });
    x.register_hook([&](const tl::Tensor&) {
      order.push_back("keep");
      return tl::Tensor();  // undefined: the gradient stays
    });
    (x * x).sum().backward();
    CHECK(order == std::vector<std::string>{"double", "look", "keep"});
    tl_test::check_close_f32(seen_by_second, x.detach() * 4.0);
    tl_test::check_close_f32(x.grad(), x.detach() * 4.0);
    // Each backward runs them again; the replaced gradients accumulate.
    (x * 3.0).sum().backward();
    tl_test::check_close_f32(x.grad(), x.detach() * 4.0 + 6.0);
    CHECK(order.size() == 6);
  }
}

TEST_CASE("autograd hooks: a non-leaf's hook sees its summed gradient before grad_fn does") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor x = random_leaf({4}, device);
    tl::Tensor y = x * 3.0;
    int calls = 0;
    tl::Tensor seen;
    y.register_hook([&](const tl::Tensor& g) {
      ++calls;
      seen = g.clone();
      return g + 1.0;
    });
    y.retain_grad();
    // y reaches the loss twice: the hook runs once, on the sum of both gradients.
    tl::Tensor loss = (y * 2.0).sum() + y.sum();
    loss.backward();
    CHECK(calls == 1);
    tl_test::check_close_f32(seen, tl::full({4}, 3.0, tl::TensorOptions().device(device)));
    // retain_grad stores the hooked gradient (torch runs retains_grad hooks last).
    tl_test::check_close_f32(y.grad(), tl::full({4}, 4.0, tl::TensorOptions().device(device)));
    tl_test::check_close_f32(x.grad(), tl::full({4}, 12.0, tl::TensorOptions().device(device)));
  }
}

TEST_CASE("autograd hooks: autograd::grad runs the hooks and captures the replaced gradient") {
  tl::Tensor x = random_leaf({3}, tl::Device::cpu());
  tl::Tensor h = x * x;
  h.register_hook([](const tl::Tensor& g) { return g * 10.0; });
  x.register_hook([](const tl::Tensor& g) { return g + 1.0; });
  int post = 0;
  x.register_post_accumulate_grad_hook([&](const tl::Tensor&) { ++post; });
  auto g = tl::autograd::grad({h.sum()}, {x, h});
  tl_test::check_close_f32(g[0], x.detach() * 20.0 + 1.0);
  tl_test::check_close_f32(g[1], tl::full({3}, 10.0));
  CHECK_FALSE(x.grad().defined());
  CHECK(post == 0);  // grad() accumulates nothing
}

TEST_CASE("autograd hooks: handles and positions remove hooks; removing twice is harmless") {
  tl::Tensor x = random_leaf({3}, tl::Device::cpu());
  int a = 0, b = 0, c = 0;
  tl::autograd::HookHandle ha = x.register_hook([&](const tl::Tensor&) { ++a; });
  const unsigned pb = x.register_hook([&](const tl::Tensor&) { ++b; });  // LibTorch's unsigned
  tl::autograd::HookHandle hc = x.register_hook([&](const tl::Tensor&) { ++c; });
  CHECK(ha.index() == 0);
  CHECK(pb == 1);
  ha.remove();
  ha.remove();
  x.remove_hook(pb);
  x.remove_hook(pb);
  (x * 2.0).sum().backward();
  CHECK(a == 0);
  CHECK(b == 0);
  CHECK(c == 1);
  x.remove_hook(hc);
  (x * 2.0).sum().backward();
  CHECK(c == 1);
  check_throws<tl::IndexError>([&] { x.remove_hook(7u); }, "no hook at position 7");
  // A handle outliving its tensor does nothing.
  tl::autograd::HookHandle orphan;
  {
    tl::Tensor t = random_leaf({2}, tl::Device::cpu());
    orphan = t.register_hook([](const tl::Tensor& g) { return g; });
  }
  orphan.remove();
  tl::autograd::HookHandle().remove();
}

TEST_CASE("autograd hooks: post-accumulate hooks see the updated grad() of a leaf") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor w = random_leaf({2, 2}, device);
    const tl::Tensor before = w.detach().clone();
    std::vector<double> grads_seen;
    // Optimizer-in-backward: the step runs as soon as the leaf's gradient is complete.
    auto h = w.register_post_accumulate_grad_hook([&](const tl::Tensor& p) {
      REQUIRE(p.grad().defined());
      grads_seen = values_of(p.grad());
      tl::NoGradGuard no_grad;
      p.detach().sub_(p.grad() * 0.5);
    });
    w.register_hook([](const tl::Tensor& g) { return g * 2.0; });  // runs first
    (w * w).sum().backward();
    tl_test::check_close_f32(w.detach(), before - before * 2.0);  // w - 0.5 * (2 * 2w)
    CHECK(grads_seen == values_of(before * 4.0));
    h.remove();
    grads_seen.clear();
    w.sum().backward();
    CHECK(grads_seen.empty());
  }
  tl::Tensor x = random_leaf({2}, tl::Device::cpu());
  check_throws<tl::Error>([&] { (x * 2.0).register_post_accumulate_grad_hook([](auto&) {}); },
                          "cannot be registered on non-leaf tensors");
}

TEST_CASE("autograd hooks: a leaf no gradient reaches keeps grad() and runs no hook") {
  tl::Tensor x = random_leaf({3}, tl::Device::cpu()), w = random_leaf({3}, tl::Device::cpu());
  int calls = 0;
  w.register_hook([&](const tl::Tensor&) { ++calls; });
  w.register_post_accumulate_grad_hook([&](const tl::Tensor&) { ++calls; });
  // backward(inputs=): only x accumulates, w's accumulator does not run.
  (x * w).sum().backward({}, std::nullopt, false, {x});
  tl_test::check_close_f32(x.grad(), w.detach());
  CHECK_FALSE(w.grad().defined());
  CHECK(calls == 0);
}

TEST_CASE("autograd hooks: bad hooks raise naming the call, and the library goes on") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor plain = random_tensor({3}, tl::kFloat32, device);
    check_throws<tl::Error>([&] { plain.register_hook([](const tl::Tensor& g) { return g; }); },
                            "[tl::Tensor::register_hook] cannot register a hook on a tensor that "
                            "doesn't require gradient");
    check_throws<tl::Error>([&] { plain.register_post_accumulate_grad_hook([](auto&) {}); },
                            "doesn't require gradient");
    tl::Tensor x = random_leaf({3}, device);
    auto bad = x.register_hook([](const tl::Tensor& g) { return tl::cat({g, g}); });
    check_throws<tl::ShapeError>([&] { (x * x).sum().backward(); },
                                 "[tl::Tensor::backward] hook 0 (tl::Tensor::register_hook) has "
                                 "changed the size of value");
    CHECK_FALSE(x.grad().defined());
    bad.remove();
    auto wrong_dtype = x.register_hook([](const tl::Tensor& g) { return g.to(tl::kFloat64); });
    check_throws<tl::DTypeError>([&] { tl::autograd::grad({(x * x).sum()}, {x}); },
                                 "[tl::autograd::grad] hook 1");
    wrong_dtype.remove();
    (x * x).sum().backward();
    tl_test::check_close_f32(x.grad(), x.detach() * 2.0);
  }
}

TEST_CASE("autograd hooks: a hook's own ops join the graph under create_graph") {
  tl::Tensor x = random_leaf({3}, tl::Device::cpu());
  // The hook scales the gradient by x: d/dx of (x^2 summed) becomes 2x * x, whose sum's
  // derivative is 6x... taken through the recorded hook.
  x.register_hook([&](const tl::Tensor& g) { return g * x; });
  auto g = tl::autograd::grad({(x * x).sum()}, {x}, {}, std::nullopt, true);
  tl_test::check_close_f32(g[0], x.detach() * x.detach() * 2.0);
  REQUIRE(g[0].requires_grad());
}

// InferenceMode: its thread-local state, which tensors are inference tensors, and what they refuse
// outside the mode (saved for backward, in-place writes, requires_grad_), as torch's.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <thread>
#include <vector>

#include "test_util.h"

using tl::autograd::AutogradContext;
using tl::autograd::variable_list;
using tl_test::check_throws;
using tl_test::random_tensor;
using tl_test::values_of;

namespace {

struct SaveInput : public tl::autograd::Function<SaveInput> {
  static tl::Tensor forward(AutogradContext* ctx, tl::Tensor x, tl::Tensor y) {
    ctx->save_for_backward({y});
    return x * y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0], tl::Tensor()};
  }
};

}  // namespace

TEST_CASE("InferenceMode: thread-local state, nesting and grad mode") {
  CHECK_FALSE(tl::InferenceMode::is_enabled());
  {
    tl::InferenceMode guard;
    CHECK(tl::InferenceMode::is_enabled());
    CHECK_FALSE(tl::GradMode::is_enabled());
    {
      tl::InferenceMode off(false);
      CHECK_FALSE(tl::InferenceMode::is_enabled());
      CHECK(tl::GradMode::is_enabled());
      CHECK_FALSE(tl::ones({2}).is_inference());
    }
    CHECK(tl::InferenceMode::is_enabled());
    // Another thread is not in the mode.
    bool other_mode = true, other_grad = false, other_tensor = true;
    std::thread([&] {
      other_mode = tl::InferenceMode::is_enabled();
      other_grad = tl::GradMode::is_enabled();
      other_tensor = tl::ones({2}).is_inference();
    }).join();
    CHECK_FALSE(other_mode);
    CHECK(other_grad);
    CHECK_FALSE(other_tensor);
  }
  CHECK_FALSE(tl::InferenceMode::is_enabled());
  CHECK(tl::GradMode::is_enabled());
}

TEST_CASE("InferenceMode: new tensors are inference tensors, views follow their memory") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor s = random_tensor({2, 3}, tl::kFloat32, device);
    s.requires_grad_();
    tl::Tensor c, product, view_of_normal;
    {
      tl::InferenceMode guard;
      c = tl::ones({2, 3}, tl::TensorOptions().device(device));
      product = s * s;
      view_of_normal = s.view({3, 2});
      CHECK(c.is_inference());
      CHECK(product.is_inference());
      CHECK_FALSE(product.requires_grad());  // nothing is recorded
      CHECK(product.grad_fn() == nullptr);
      CHECK_FALSE(view_of_normal.is_inference());
      c.add_(1.0);  // writes are fine inside
    }
    CHECK_FALSE(s.is_inference());
    CHECK(c.view({6}).is_inference());  // a view of an inference tensor, made outside
    CHECK_FALSE((c * 2.0).is_inference());
    CHECK_FALSE(tl::Tensor().is_inference());
  }
}

TEST_CASE("InferenceMode: inference tensors refuse to be saved, written or made to require grad") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor s = random_tensor({3}, tl::kFloat32, device);
    s.requires_grad_();
    tl::Tensor c, r;
    {
      tl::InferenceMode guard;
      c = random_tensor({3}, tl::kFloat32, device);
      r = random_tensor({3}, tl::kFloat32, device);
      r.requires_grad_();  // allowed inside the mode
    }
    // add saves neither operand: an inference tensor may take part.
    tl::Tensor sum = c + s;
    CHECK(sum.requires_grad());
    CHECK_FALSE(sum.is_inference());
    sum.sum().backward();
    CHECK(values_of(s.grad()) == std::vector<double>(3, 1.0));
    // mul saves the other operand for s's gradient.
    check_throws<tl::Error>([&] { (void)(c * s); },
                            "Inference tensors cannot be saved for backward");
    check_throws<tl::Error>([&] { (void)SaveInput::apply(s, c); },
                            "[tl::autograd::AutogradContext::save_for_backward] Inference tensors");
    check_throws<tl::Error>([&] { c.requires_grad_(); },
                            "[tl::Tensor::requires_grad_] Setting requires_grad=True on inference "
                            "tensor outside InferenceMode is not allowed");
    c.requires_grad_(false);
    check_throws<tl::Error>([&] { c.add_(1.0); },
                            "Inplace update to inference tensor outside InferenceMode");
    check_throws<tl::Error>([&] { c.copy_(s.detach()); }, "Inplace update to inference tensor");
    check_throws<tl::Error>([&] { (void)c._version(); }, "do not track version counter");
    // An inference leaf made to require grad inside the mode still gets its gradient.
    (r + s).sum().backward();
    REQUIRE(r.grad().defined());
    CHECK(values_of(r.grad()) == std::vector<double>(3, 1.0));
    // A clone is a normal tensor.
    tl::Tensor normal = c.clone();
    CHECK_FALSE(normal.is_inference());
    (normal * s).sum().backward();
  }
}

TEST_CASE("InferenceMode: an in-place write inside it still bumps a saved tensor's version") {
  tl::Tensor s = random_tensor({2, 3});
  s.requires_grad_();
  tl::Tensor a = s * 1.0;
  tl::Tensor out = a * a;
  {
    tl::InferenceMode guard;
    a.mul_(2.0);
  }
  check_throws<tl::Error>([&] { out.sum().backward(); }, "modified by an inplace operation");
}

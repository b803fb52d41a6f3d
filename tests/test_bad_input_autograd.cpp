// Bad-input suite, autograd's API: hooks, custom Functions, requires_grad on non-floating
// tensors and inference tensors. Each row raises its typed error naming the call; the leaves the
// failed backwards ran on are left without a gradient.
#include <vector>

#include "bad_input.h"

using namespace tl_test;

namespace {

using tl::autograd::AutogradContext;
using tl::autograd::variable_list;

// Leaves of the failing backwards, checked after the rows: nothing accumulated.
tl::Tensor g_hooked, g_custom;

// A backward whose leaf hook returns a gradient of another shape.
void backward_with_reshaping_hook() {
  g_hooked = tl::rand({3});
  g_hooked.requires_grad_();
  g_hooked.register_hook([](const tl::Tensor& g) { return g.reshape({3, 1}); });
  (g_hooked * g_hooked).sum().backward();
}

// A custom Function whose backward returns one gradient for two tensor arguments and a double.
struct TooFew : public tl::autograd::Function<TooFew> {
  static tl::Tensor forward(AutogradContext*, tl::Tensor a, tl::Tensor b, double) { return a * b; }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {grad_outputs[0]};
  }
};

void backward_through_too_few() {
  g_custom = tl::rand({2});
  g_custom.requires_grad_();
  TooFew::apply(g_custom, tl::rand({2}), 1.0).sum().backward();
}

tl::Tensor non_leaf() {
  tl::Tensor x = tl::rand({2});
  x.requires_grad_();
  return x * 2.0;
}

tl::Tensor inference_tensor() {
  tl::InferenceMode guard;
  return tl::rand({2});
}

void save_inference_tensor() {
  tl::Tensor w = tl::rand({2});
  w.requires_grad_();
  (void)(inference_tensor() * w);
}

}  // namespace

TEST_CASE("bad input: autograd hooks, custom Functions and requires_grad") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::Tensor::backward] ", "changed the size",
             backward_with_reshaping_hook()),
      TL_BAD(tl::Error, "[tl::Tensor::backward] ", "TooFewBackward returned an incorrect number",
             backward_through_too_few()),
      TL_BAD(tl::DTypeError, "[tl::Tensor::requires_grad_] ", "floating point",
             tl::arange(3).requires_grad_()),
      TL_BAD(tl::DTypeError, "[tl::Tensor::requires_grad_] ", "floating point",
             tl::ones({2}, tl::kBool).requires_grad_()),
      TL_BAD(tl::Error, "[tl::Tensor::register_hook] ", "doesn't require gradient",
             tl::ones({2}).register_hook([](const tl::Tensor& g) { return g; })),
      TL_BAD(tl::Error, "[tl::Tensor::register_post_accumulate_grad_hook] ", "non-leaf",
             non_leaf().register_post_accumulate_grad_hook([](const tl::Tensor&) {})),
      TL_BAD(tl::IndexError, "[tl::Tensor::remove_hook] ", "position 3",
             tl::rand({2}).requires_grad_().remove_hook(3u)),
      TL_BAD(tl::Error, "[tl::Tensor::requires_grad_] ", "inference tensor",
             inference_tensor().requires_grad_()),
      TL_BAD(tl::Error, "[tl::mul] ", "Inference tensors cannot be saved for backward",
             save_inference_tensor()),
      TL_BAD(tl::Error, "[tl::add_] ", "Inplace update to inference tensor",
             inference_tensor().add_(1.0)),
  });
  CHECK_FALSE(g_hooked.grad().defined());
  CHECK_FALSE(g_custom.grad().defined());
  g_hooked = g_custom = tl::Tensor();
}

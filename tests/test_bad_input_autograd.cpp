// Bad-input suite, autograd's API: backward's and grad's arguments, freed graphs, hooks, custom
// Functions, requires_grad on non-floating tensors and inference tensors. Each row raises its
// typed error naming the call; the leaves the failed backwards ran on are left without a gradient.
#include <vector>

#include "bad_input.h"

using namespace tl_test;

namespace {

using tl::autograd::AutogradContext;
using tl::autograd::variable_list;

// Leaves of the failing backwards, checked after the rows: nothing accumulated.
tl::Tensor g_hooked, g_custom, g_leaf;

// y = 2 * g_leaf (shape {3}), a fresh graph per row.
tl::Tensor graph_output() {
  g_leaf = tl::rand({3});
  g_leaf.requires_grad_();
  return g_leaf * 2.0;
}

// A second backward through a graph whose saved tensors the first one freed; the first one's
// gradient is dropped, so that g_leaf checks the failing one accumulated nothing.
void backward_twice() {
  tl::Tensor x = tl::rand({3});
  x.requires_grad_();
  tl::Tensor y = tl::sum(x * x);
  y.backward();
  g_leaf = x;
  x.mutable_grad() = tl::Tensor();
  y.backward();
}

// autograd::grad for an input the output does not depend on.
void grad_of_unused() {
  tl::Tensor unused = tl::rand({2});
  unused.requires_grad_();
  (void)tl::autograd::grad({tl::sum(graph_output())}, {g_leaf, unused});
}

// A backward whose leaf hook returns a gradient of another shape.
void backward_with_reshaping_hook() {
  g_hooked = tl::rand({3});
  g_hooked.requires_grad_();
  g_hooked.register_hook([](const tl::Tensor& g) { return g.reshape({3, 1}); });
  (g_hooked * g_hooked).sum().backward();
}

// A custom Function whose backward returns three gradients for one tensor argument.
struct TooMany : public tl::autograd::Function<TooMany> {
  static tl::Tensor forward(AutogradContext*, tl::Tensor a) { return a * 2.0; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0], g[0]}; }
};

void backward_through_too_many() {
  g_custom = tl::rand({2});
  g_custom.requires_grad_();
  TooMany::apply(g_custom).sum().backward();
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

TEST_CASE("bad input: autograd backward and grad arguments, freed graphs") {
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::Tensor::backward] ", "implicitly created only for scalar outputs",
             graph_output().backward()),
      TL_BAD(tl::Error, "[tl::autograd::backward] ", "implicitly created only for scalar outputs",
             tl::autograd::backward({graph_output()})),
      TL_BAD(tl::Error, "[tl::autograd::grad] ", "implicitly created only for scalar outputs",
             tl::autograd::grad({graph_output()}, {g_leaf})),
      TL_BAD(tl::ShapeError, "[tl::Tensor::backward] ", "Mismatch in shape",
             graph_output().backward(tl::rand({2}))),
      TL_BAD(tl::ShapeError, "[tl::autograd::grad] ", "Mismatch in shape",
             tl::autograd::grad({graph_output()}, {g_leaf}, {tl::rand({3, 1})})),
      TL_BAD(tl::DTypeError, "[tl::Tensor::backward] ", "has dtype int64",
             graph_output().backward(tl::ones({3}, tl::kInt64))),
      TL_BAD(tl::DTypeError, "[tl::autograd::backward] ", "has dtype bool",
             tl::autograd::backward({graph_output()}, {tl::ones({3}, tl::kBool)})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::Tensor::backward] ", "is on cuda:0",
                  graph_output().backward(tl::rand({3}).to(tl::Device::cuda(0)))),
      TL_BAD(tl::Error, "[tl::Tensor::backward] ", "backward through the graph a second time",
             backward_twice()),
      TL_BAD(tl::Error, "[tl::autograd::grad] ", "not have been used in the graph",
             grad_of_unused()),
      TL_BAD(tl::Error, "[tl::autograd::grad] ", "does not require grad",
             tl::autograd::grad({tl::sum(graph_output())}, {tl::rand({2})})),
  });
  CHECK_FALSE(g_leaf.grad().defined());
  g_leaf = tl::Tensor();
}

TEST_CASE("bad input: autograd hooks, custom Functions and requires_grad") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::Tensor::backward] ", "changed the size",
             backward_with_reshaping_hook()),
      TL_BAD(tl::Error, "[tl::Tensor::backward] ", "TooFewBackward returned an incorrect number",
             backward_through_too_few()),
      TL_BAD(tl::Error, "[tl::Tensor::backward] ", "TooManyBackward returned an incorrect number",
             backward_through_too_many()),
      TL_BAD(tl::DTypeError, "[tl::Tensor::requires_grad_] ", "floating point",
             tl::arange(3).requires_grad_()),
      TL_BAD(tl::DTypeError, "[tl::Tensor::requires_grad_] ", "floating point",
             tl::ones({2}, tl::kInt32).requires_grad_()),
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

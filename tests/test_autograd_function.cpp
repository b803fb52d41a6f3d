// Custom autograd Functions (LibTorch's torch::autograd::Function<T>): the custom_kernel notebook's
// add2 made differentiable, saved tensors and values, dirty and non-differentiable outputs,
// materialized gradients, create_graph through a custom backward, and the errors.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

#ifdef TL_TEST_WITH_CUDA_KERNELS
namespace tl_test {
void add2_cuda(tl::Tensor& c, const tl::Tensor& a, const tl::Tensor& b);  // cuda_add2_kernel.cu
}
#endif

using tl::autograd::AutogradContext;
using tl::autograd::Function;
using tl::autograd::variable_list;
using tl_test::check_throws;
using tl_test::random_leaf;
using tl_test::random_tensor;
using tl_test::values_of;

namespace {

// The notebook's op: c = a + b written into a preallocated c by a raw kernel (a plain loop on
// the CPU), which autograd cannot see into.
void add2_raw(tl::Tensor& c, const tl::Tensor& a, const tl::Tensor& b) {
#ifdef TL_TEST_WITH_CUDA_KERNELS
  if (a.is_cuda()) return tl_test::add2_cuda(c, a, b);
#endif
  REQUIRE(a.is_cpu());
  float* pc = c.data<float>();
  const float *pa = a.data<float>(), *pb = b.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) pc[i] = pa[i] + pb[i];
}

// add2 made differentiable: d(a + b)/da = d(a + b)/db = 1.
struct Add2 : public Function<Add2> {
  static tl::Tensor forward(AutogradContext*, const tl::Tensor& a, const tl::Tensor& b) {
    tl::Tensor c = tl::empty_like(a);
    add2_raw(c, a.contiguous(), b.contiguous());
    return c;
  }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {grad_outputs[0], grad_outputs[0]};
  }
};

// LibTorch's documentation example: a non-tensor argument, kept in saved_data; backward returns
// one gradient per argument (undefined for the double).
struct MulConstant : public Function<MulConstant> {
  static tl::Tensor forward(AutogradContext* ctx, tl::Tensor x, double constant) {
    ctx->saved_data["constant"] = constant;
    return x * constant;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), tl::Tensor()};
  }
};

// x * y * y with saved inputs; its backward is written with ops, so create_graph differentiates
// it again. Returns one gradient per tensor argument (also accepted).
struct MulSquare : public Function<MulSquare> {
  static tl::Tensor forward(AutogradContext* ctx, tl::Tensor x, tl::Tensor y) {
    ctx->save_for_backward({x, y});
    return x * y * y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const tl::Tensor &x = saved[0], &y = saved[1], &g = grad_outputs[0];
    return {ctx->needs_input_grad(0) ? g * y * y : tl::Tensor(),
            ctx->needs_input_grad(1) ? g * 2.0 * x * y : tl::Tensor()};
  }
};

// exp(x) saving its output (saved without its own history: no reference cycle).
struct Exp : public Function<Exp> {
  static tl::Tensor forward(AutogradContext* ctx, tl::Tensor x) {
    tl::Tensor y = tl::exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {grad_outputs[0] * ctx->get_saved_variables()[0]};
  }
};

// Two outputs, the second an integer mask marked non-differentiable; `materialize` toggles
// zeros for outputs the loss did not use.
struct SplitSign : public Function<SplitSign> {
  static variable_list forward(AutogradContext* ctx, tl::Tensor x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    tl::Tensor twice = x * 2.0, thrice = x * 3.0, mask = (x > 0.0).to(tl::kInt64);
    ctx->mark_non_differentiable({mask});
    return {twice, thrice, mask};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    ctx->saved_data["defined"] = std::vector<int64_t>{
        grad_outputs[0].defined(), grad_outputs[1].defined(), grad_outputs[2].defined()};
    tl::Tensor g = grad_outputs[0].defined() ? grad_outputs[0] * 2.0 : tl::Tensor();
    if (grad_outputs[1].defined())
      g = g.defined() ? g + grad_outputs[1] * 3.0 : grad_outputs[1] * 3.0;
    return {g, tl::Tensor()};
  }
};

// In place: x *= 2, marked dirty, returned.
struct DoubleInPlace : public Function<DoubleInPlace> {
  static tl::Tensor forward(AutogradContext* ctx, tl::Tensor x) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {grad_outputs[0] * 2.0};
  }
};

// Returns its input unchanged: the output is an alias with the function's node.
struct Identity : public Function<Identity> {
  static tl::Tensor forward(AutogradContext*, tl::Tensor x) { return x; }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return grad_outputs;
  }
};

// Backwards that break the contract.
struct TooFew : public Function<TooFew> {
  static tl::Tensor forward(AutogradContext*, tl::Tensor a, tl::Tensor b, double) { return a + b; }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {grad_outputs[0]};
  }
};
struct WrongShape : public Function<WrongShape> {
  static tl::Tensor forward(AutogradContext*, tl::Tensor x) { return x * 1.0; }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {tl::cat({grad_outputs[0], grad_outputs[0]})};
  }
};
// A gradient of a shape the input broadcasts to (summed back) in another dtype (converted), as
// torch's engine accepts.
struct LooseGrad : public Function<LooseGrad> {
  static tl::Tensor forward(AutogradContext*, tl::Tensor x) { return x.sum(); }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {tl::ones({4, 2, 3}, tl::TensorOptions(tl::kFloat64).device(grad_outputs[0].device()))};
  }
};

}  // namespace

TEST_CASE("autograd Function: the notebook's add2, made differentiable") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor a = random_leaf({4, 5}, device), b = random_leaf({4, 5}, device);
    tl::Tensor c = Add2::apply(a, b);
    tl_test::check_close_f32(c, a.detach() + b.detach());
    REQUIRE(c.grad_fn() != nullptr);
    CHECK(c.grad_fn()->name() == "Add2Backward");
    CHECK(c.grad_fn()->next_functions().size() == 2);
    tl::Tensor w = random_tensor({4, 5}, tl::kFloat32, device);
    (c * w).sum().backward();
    tl_test::check_close_f32(a.grad(), w);
    tl_test::check_close_f32(b.grad(), w);
    // Without an input that requires grad (or in no-grad mode) nothing is recorded.
    const tl::Tensor plain = random_tensor({4, 5}, tl::kFloat32, device);
    CHECK(Add2::apply(plain, plain).grad_fn() == nullptr);
    tl::NoGradGuard no_grad;
    CHECK_FALSE(Add2::apply(a, b).requires_grad());
  }
}

TEST_CASE("autograd Function: saved values and tensors, gradcheck and create_graph") {
  for (const tl::Device device : tl_test::test_devices()) {
    using Ts = std::vector<tl::Tensor>;
    CHECK(tl_test::gradcheck(
        "MulConstant", [](const Ts& t) { return MulConstant::apply(t[0], 2.5); },
        {random_tensor({3, 2}, tl::kFloat64)}, device));
    CHECK(tl_test::gradcheck(
        "MulSquare", [](const Ts& t) { return MulSquare::apply(t[0], t[1]); },
        {random_tensor({3}, tl::kFloat64), random_tensor({3}, tl::kFloat64)}, device));
    CHECK(tl_test::gradcheck(
        "Exp", [](const Ts& t) { return Exp::apply(t[0]); }, {random_tensor({4}, tl::kFloat64)},
        device));
    // create_graph records the custom backward's ops: d/dy of (dL/dx = y^2) summed is 2y.
    tl::Tensor x = random_leaf({3}, device), y = random_leaf({3}, device);
    tl::Tensor out = MulSquare::apply(x, y).sum();
    auto g = tl::autograd::grad({out}, {x}, {}, std::nullopt, true);
    tl_test::check_close_f32(g[0], y.detach() * y.detach());
    REQUIRE(g[0].requires_grad());
    auto gg = tl::autograd::grad({g[0].sum()}, {y});
    tl_test::check_close_f32(gg[0], y.detach() * 2.0);
  }
}

TEST_CASE("autograd: a saved output gets its history back under create_graph") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor x = random_leaf({4}, device);
    const tl::Tensor e = tl::exp(x.detach()), t = tl::tanh(x.detach());
    // d2/dx2 exp = exp, through a custom Function and the built-in op (both save their output).
    for (const bool custom : {true, false}) {
      tl::Tensor y = custom ? Exp::apply(x) : tl::exp(x);
      auto g = tl::autograd::grad({y.sum()}, {x}, {}, std::nullopt, true);
      tl_test::check_close_f32(g[0], e);
      REQUIRE(g[0].requires_grad());
      tl_test::check_close_f32(tl::autograd::grad({g[0].sum()}, {x})[0], e);
    }
    // d2/dx2 tanh = -2 tanh (1 - tanh^2).
    auto g = tl::autograd::grad({tl::tanh(x).sum()}, {x}, {}, std::nullopt, true);
    tl_test::check_close_f32(tl::autograd::grad({g[0].sum()}, {x})[0], t * (t * t - 1.0) * 2.0);
  }
}

TEST_CASE("autograd Function: saved tensors keep torch's version check and are freed") {
  tl::Tensor x = random_leaf({3}, tl::Device::cpu());
  tl::Tensor y = random_tensor({3});
  tl::Tensor out = MulSquare::apply(x, y).sum();
  y.add_(1.0);
  check_throws<tl::Error>([&] { out.backward(); }, "modified by an inplace operation");
  tl::Tensor again = MulSquare::apply(x, random_tensor({3})).sum();
  again.backward();
  check_throws<tl::Error>([&] { again.backward(); }, "second time");
}

TEST_CASE("autograd Function: non-differentiable outputs and materialized gradients") {
  for (const tl::Device device : tl_test::test_devices())
    for (const bool materialize : {true, false}) {
      tl::Tensor x = random_leaf({5}, device);
      variable_list outs = SplitSign::apply(x, materialize);
      REQUIRE(outs.size() == 3);
      CHECK(outs[0].grad_fn()->name() == "SplitSignBackward");
      CHECK(outs[1].grad_fn() == outs[0].grad_fn());
      CHECK(outs[1].output_nr() == 1);
      CHECK_FALSE(outs[2].requires_grad());
      CHECK(outs[2].grad_fn() == nullptr);
      // Only the first output reaches the loss: the others' gradients are zeros or undefined.
      outs[0].sum().backward();
      tl_test::check_close_f32(x.grad(), tl::full({5}, 2.0));
    }
}

TEST_CASE("autograd Function: a dirty input is rebased onto the function's node") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor x = random_leaf({4}, device);
    tl::Tensor h = x * 3.0;  // a non-leaf with memory of its own
    const uint32_t version = h._version();
    tl::Tensor out = DoubleInPlace::apply(h);
    CHECK(out.is_same(h));  // the same tensor, written in place
    CHECK(h._version() > version);
    CHECK(h.grad_fn()->name() == "DoubleInPlaceBackward");
    tl_test::check_close_f32(h, x.detach() * 6.0);
    h.sum().backward();
    tl_test::check_close_f32(x.grad(), tl::full({4}, 6.0));
    // A tensor that needs no gradient may be written too: it joins the graph.
    tl::Tensor buffer = random_tensor({4}, tl::kFloat32, device);
    tl::Tensor joined = DoubleInPlace::apply(buffer);
    CHECK_FALSE(joined.requires_grad());  // nothing required grad: no node
    // A leaf that requires grad, or a view of a graph tensor, is refused (no view tracking yet).
    check_throws<tl::Error>([&] { DoubleInPlace::apply(x); }, "leaf Variable that requires grad");
    tl::Tensor base = x * 1.0;
    tl::Tensor view = base.view({2, 2});
    check_throws<tl::Error>([&] { DoubleInPlace::apply(view); }, "shares its memory");
  }
}

TEST_CASE("autograd Function: an input returned as is comes out as a new alias") {
  tl::Tensor x = random_leaf({3}, tl::Device::cpu());
  tl::Tensor y = Identity::apply(x);
  CHECK_FALSE(y.is_same(x));
  CHECK(y.data_ptr() == x.data_ptr());
  CHECK(y.grad_fn()->name() == "IdentityBackward");
  CHECK(x.is_leaf());
  (y * 2.0).sum().backward();
  tl_test::check_close_f32(x.grad(), tl::full({3}, 2.0));
}

TEST_CASE("autograd Function: backward's gradients are checked as the engine's") {
  for (const tl::Device device : tl_test::test_devices()) {
    tl::Tensor a = random_leaf({3}, device), b = random_leaf({3}, device);
    check_throws<tl::Error>([&] { TooFew::apply(a, b, 1.0).sum().backward(); },
                            "[tl::Tensor::backward] function TooFewBackward returned an incorrect "
                            "number of gradients (expected 3, one per forward argument, or 2");
    check_throws<tl::ShapeError>([&] { WrongShape::apply(a).sum().backward(); },
                                 "Function WrongShapeBackward returned an invalid gradient");
    tl::Tensor m = random_leaf({2, 3}, device);
    // LooseGrad's backward returns float64 ones of [4, 2, 3] for m of [2, 3]: fours in float32.
    LooseGrad::apply(m).backward();
    CHECK(m.grad().dtype() == tl::kFloat32);
    tl_test::check_close_f32(m.grad(), tl::full({2, 3}, 4.0));
    // The library goes on after the errors.
    Add2::apply(a, b).sum().backward();
    tl_test::check_close_f32(a.grad(), tl::ones({3}));
  }
}

TEST_CASE("autograd Function: saved_data holds LibTorch's IValue kinds") {
  AutogradContext ctx;
  ctx.saved_data["i"] = 3;
  ctx.saved_data["l"] = int64_t{1} << 40;
  ctx.saved_data["d"] = 0.5;
  ctx.saved_data["b"] = true;
  ctx.saved_data["s"] = "mean";
  ctx.saved_data["t"] = tl::ones({2});
  ctx.saved_data["dims"] = std::vector<int64_t>{0, 2};
  CHECK(ctx.saved_data["i"].toInt() == 3);
  CHECK(ctx.saved_data["l"].toInt() == (int64_t{1} << 40));
  CHECK(ctx.saved_data["d"].toDouble() == 0.5);
  CHECK(ctx.saved_data["b"].toBool());
  CHECK(ctx.saved_data["s"].toStringRef() == "mean");
  CHECK(ctx.saved_data["t"].toTensor().numel() == 2);
  CHECK(ctx.saved_data["dims"].toIntVector() == std::vector<int64_t>{0, 2});
  CHECK(ctx.saved_data["missing"].isNone());
  check_throws<tl::DTypeError>([&] { ctx.saved_data["i"].toDouble(); },
                               "[tl::IValue::toDouble] Expected Double but got Int");
  check_throws<tl::DTypeError>([&] { ctx.saved_data["d"].toTensor(); }, "got Double");
}

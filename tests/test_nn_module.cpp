// tl::nn::Module: registration and the recursive listings (torch's names and order, each module
// and tensor once), train/eval, moves that keep each tensor's identity (grads included),
// zero_grad, the printed tree, holders, a training step through the parameters' handles, and
// the bad inputs of registration.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace nn = tl::nn;
using tl::Tensor;
using tl_test::check_throws;

namespace {

template <typename T>
std::string printed(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

struct Block : nn::Module {
  Block() {
    scale = register_parameter("scale", tl::ones({3}));
    count = register_buffer("count", tl::zeros({1}, tl::kInt64));
  }
  Tensor forward(const Tensor& x) { return x * scale; }
  Tensor scale, count;
};

struct NetImpl : nn::Module {
  NetImpl() {
    fc = register_module("fc", nn::Linear(2, 3));
    block = register_module("block", std::make_shared<Block>());
    bias = register_parameter("bias", tl::zeros({3}));
    mean = register_buffer("running_mean", tl::zeros({3}));
  }
  Tensor forward(const Tensor& x) { return block->forward(fc->forward(x)) + bias; }
  std::shared_ptr<nn::LinearImpl> fc;
  std::shared_ptr<Block> block;
  Tensor bias, mean;
};
TL_MODULE(Net);

}  // namespace

TEST_CASE("nn::Module: registration order, dotted names, each module and tensor once") {
  Net net;
  CHECK(net->name() == "Net");
  CHECK(net->block->name() == "Block");
  CHECK(net->fc->name() == "Linear");
  CHECK(net->named_parameters().keys() ==
        std::vector<std::string>{"bias", "fc.weight", "fc.bias", "block.scale"});
  CHECK(net->named_parameters(false).keys() == std::vector<std::string>{"bias"});
  CHECK(net->named_buffers().keys() == std::vector<std::string>{"running_mean", "block.count"});
  CHECK(net->named_modules().keys() == std::vector<std::string>{"", "fc", "block"});
  CHECK(net->named_modules("net", false).keys() == std::vector<std::string>{"net.fc", "net.block"});
  CHECK(net->named_children().keys() == std::vector<std::string>{"fc", "block"});
  CHECK(net->children().size() == 2);
  CHECK(net->modules().front().get() == net.get());
  // The listed tensors are the module's own (identity, not copies).
  CHECK(&net->named_parameters()["fc.weight"].impl() == &net->fc->weight.impl());
  CHECK(net->parameters().size() == 4);
  for (const Tensor& p : net->parameters()) CHECK(p.requires_grad());
  CHECK_FALSE(net->mean.requires_grad());
  // A layer without bias lists its weight only (its undefined bias is registered, not listed).
  CHECK(nn::Linear(2, 2, false)->named_parameters().keys() == std::vector<std::string>{"weight"});

  // A module registered twice and a parameter shared by two modules are listed once.
  auto shared = std::make_shared<Block>();
  nn::Module root;
  root.register_module("a", shared);
  root.register_module("b", shared);
  auto other = std::make_shared<Block>();
  other->register_parameter("tied", shared->scale);
  root.register_module("c", other);
  CHECK(root.named_modules({}, false).keys() == std::vector<std::string>{"a", "c"});
  // Listing itself needs a shared module (LibTorch's rule).
  check_throws<tl::Error>([&] { (void)root.modules(); }, "[tl::nn::Module::named_modules]");
  CHECK(root.named_parameters().keys() == std::vector<std::string>{"a.scale", "c.scale"});
  // as<>: the contained type of a holder or a Module subclass.
  CHECK(net->fc->as<nn::Linear>() == net->fc.get());
  CHECK(net->block->as<nn::LinearImpl>() == nullptr);
  // replace and unregister.
  net->replace_module("block", std::make_shared<Block>());
  CHECK(net->named_children()["block"].get() != net->block.get());
  net->unregister_module("block");
  CHECK(net->named_children().keys() == std::vector<std::string>{"fc"});
}

TEST_CASE("nn::Module: train/eval reach every submodule") {
  Net net;
  CHECK(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) CHECK_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) CHECK(m->is_training());
}

TEST_CASE("nn::Module: to() keeps every tensor's identity, converts floating ones only") {
  Net net;
  const std::vector<Tensor> handles = net->parameters();
  const Tensor count = net->block->count;
  tl::sum(net(tl::ones({4, 2}))).backward();
  REQUIRE(net->fc->weight.grad().defined());
  net->to(tl::kFloat64);
  for (const Tensor& p : handles) {
    CHECK(p.dtype() == tl::kFloat64);
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
  }
  CHECK(net->fc->weight.grad().dtype() == tl::kFloat64);  // a grad moves with its parameter
  CHECK(net->mean.dtype() == tl::kFloat64);
  CHECK(count.dtype() == tl::kInt64);  // an integer buffer keeps its dtype
  CHECK(net(tl::ones({1, 2}, tl::kFloat64)).dtype() == tl::kFloat64);
  net->to(tl::Device::cpu(), tl::kFloat32);
  CHECK(handles[1].dtype() == tl::kFloat32);
  if (tl::cuda::is_available()) {
    net->to(tl::Device::cuda(0));
    for (const Tensor& p : handles) CHECK(p.device() == tl::Device::cuda(0));
    CHECK(count.device() == tl::Device::cuda(0));
    CHECK(net(tl::ones({1, 2}, tl::Device::cuda(0))).device() == tl::Device::cuda(0));
  }
}

TEST_CASE("nn::Module: zero_grad clears or zeroes, and a step through the handles trains") {
  tl::manual_seed(3);
  nn::Linear layer(4, 1);
  const Tensor x = tl::randn({64, 4});
  const Tensor y = tl::matmul(x, tl::from_vector<float>({1.f, -2.f, 0.5f, 3.f}, {4, 1})) + 0.25;
  const std::vector<Tensor> params = layer->parameters();
  auto loss_of = [&] {
    const Tensor d = layer(x) - y;
    return tl::mean(d * d);
  };
  const double first = loss_of().item<double>();
  for (int step = 0; step < 200; ++step) {
    layer->zero_grad();
    for (const Tensor& p : params) CHECK_FALSE(p.grad().defined());
    loss_of().backward();
    tl::NoGradGuard no_grad;
    for (Tensor p : params) p.sub_(p.grad() * 0.1);
  }
  CHECK(loss_of().item<double>() < 1e-3 * first);
  layer->zero_grad(false);  // zeroed in place, kept defined
  for (const Tensor& p : params) {
    REQUIRE(p.grad().defined());
    CHECK(tl::equal(p.grad(), tl::zeros_like(p)));
  }
}

TEST_CASE("nn::Module: printed as torch prints the tree") {
  Net net;
  CHECK(printed(net) ==
        "Net(\n"
        "  (fc): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (block): Block\n"
        ")");
  nn::Module outer("Outer");
  outer.register_module("inner", net.ptr());
  CHECK(printed(outer) ==
        "Outer(\n"
        "  (inner): Net(\n"
        "    (fc): Linear(in_features=2, out_features=3, bias=True)\n"
        "    (block): Block\n"
        "  )\n"
        ")");
}

TEST_CASE("bad input: nn::Module registration, OrderedDict and holders") {
  nn::Module m;
  m.register_parameter("w", tl::ones({2}));
  check_throws<tl::Error>([&] { m.register_parameter("", tl::ones({2})); },
                          "[tl::nn::Module::register_parameter]");
  check_throws<tl::Error>([&] { m.register_parameter("a.b", tl::ones({2})); }, "dot");
  check_throws<tl::Error>([&] { m.register_parameter("w", tl::ones({2})); }, "already defined");
  check_throws<tl::Error>([&] { m.register_buffer("w", tl::ones({2})); },
                          "[tl::nn::Module::register_buffer]");
  check_throws<tl::DTypeError>([&] { m.register_parameter("i", tl::ones({2}, tl::kInt64)); },
                               "floating point");
  Tensor leaf = tl::ones({2});
  leaf.requires_grad_();
  check_throws<tl::Error>([&] { m.register_parameter("y", leaf * 2.0); }, "MulBackward0");
  check_throws<tl::Error>([&] { m.register_module("none", std::shared_ptr<Block>()); },
                          "[tl::nn::Module::register_module]");
  check_throws<tl::Error>([&] { m.register_module("w", std::make_shared<Block>()); },
                          "already defined");
  check_throws<tl::Error>([&] { m.replace_module("nope", std::make_shared<Block>()); },
                          "[tl::nn::Module::replace_module]");
  check_throws<tl::Error>([&] { m.unregister_module("nope"); },
                          "[tl::nn::Module::unregister_module]");
  check_throws<tl::IndexError>([&] { (void)m.named_parameters()["nope"]; }, "tl::OrderedDict");
  const nn::Linear empty(nullptr);
  CHECK(empty.is_empty());
  check_throws<tl::Error>([&] { (void)empty->weight; }, "[tl::nn::ModuleHolder]");
  // Nothing was registered by the failed calls.
  CHECK(m.named_parameters().keys() == std::vector<std::string>{"w"});
  CHECK(m.named_children().empty());
}

// tl::nn::Linear against its definition x W^T + b (random inputs of several ranks, with and without
// bias), its initialisation range and seeding, parameters shared with the layer, moves that keep
// each parameter's identity, printing, and tl::DataParallel wrapping the layer (CPU shards; every
// GPU when there are some).
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::Device;
using tl::Tensor;
namespace nn = tl::nn;

template <typename T>
std::string printed(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

// The definition, computed without tl::linear.
Tensor reference(const nn::Linear& layer, const Tensor& x) {
  tl::NoGradGuard no_grad;
  Tensor y = tl::matmul(x, layer->weight.t());
  if (layer->bias.defined()) y = y + layer->bias;
  return y;
}

}  // namespace

TEST_CASE("nn::Linear: shapes, printing and torch's initialisation range") {
  tl::manual_seed(7);
  const nn::Linear net(10, 1);
  CHECK(printed(net) == "Linear(in_features=10, out_features=1, bias=True)");
  CHECK(printed(nn::Linear(3, 4, false)) == "Linear(in_features=3, out_features=4, bias=False)");
  CHECK(net->in_features() == 10);
  CHECK(net->options.out_features() == 1);
  CHECK(net->weight.shape() == tl::Shape{1, 10});
  REQUIRE(net->bias.defined());
  CHECK(net->bias.shape() == tl::Shape{1});
  CHECK(net->weight.dtype() == tl::kFloat32);
  CHECK(net->weight.device() == Device::cpu());
  // Parameters require grad, as torch's; LinearOptions as LibTorch's.
  CHECK(net->weight.requires_grad());
  CHECK(net->weight.is_leaf());
  CHECK(printed(nn::Linear(nn::LinearOptions(2, 3).bias(false))) ==
        "Linear(in_features=2, out_features=3, bias=False)");
  CHECK_FALSE(nn::Linear(nn::LinearOptions(2, 3).bias(false))->bias.defined());

  const nn::Linear wide(400, 30);
  const double bound = 1.0 / std::sqrt(400.0);
  for (const Tensor& p : wide->parameters()) {
    CHECK(tl::max(tl::abs(p)).item<double>() <= bound);
    // 12000 (or 30) uniform draws: the largest reaches past half the bound.
    CHECK(tl::max(tl::abs(p)).item<double>() > 0.5 * bound);
  }
  CHECK(std::abs(tl::mean(wide->weight).item<double>()) < 0.1 * bound);

  // The generator decides the values: the same seed gives the same layer.
  tl::manual_seed(3);
  nn::Linear a(6, 5, true, tl::kFloat64);
  tl::manual_seed(3);
  const nn::Linear b(6, 5, true, tl::kFloat64);
  CHECK(a->weight.dtype() == tl::kFloat64);
  CHECK(tl::equal(a->weight, b->weight));
  CHECK(tl::equal(a->bias, b->bias));
  CHECK_FALSE(tl::equal(a->weight, nn::Linear(6, 5, true, tl::kFloat64)->weight));
  // reset_parameters draws again, in place.
  const Tensor before = a->weight.clone();
  const Tensor handle = a->weight;
  a->reset_parameters();
  CHECK_FALSE(tl::equal(a->weight, before));
  CHECK(tl::equal(handle, a->weight));
}

TEST_CASE("nn::Linear: forward is x W^T + b for inputs of any rank") {
  tl::manual_seed(11);
  for (bool bias : {true, false}) {
    const nn::Linear layer(7, 3, bias, tl::kFloat64);
    for (const tl::Shape& shape : {tl::Shape{7}, tl::Shape{5, 7}, tl::Shape{2, 4, 7},
                                   tl::Shape{0, 7}, tl::Shape{2, 1, 3, 7}}) {
      INFO("bias " << bias << ", input " << shape);
      const Tensor x = tl::randn(shape, tl::kFloat64);
      const Tensor y = layer(x);
      tl::Shape want = shape;
      want[want.size() - 1] = 3;
      CHECK(y.shape() == want);
      CHECK(tl::allclose(y, reference(layer, x), 1e-12, 1e-12));
      CHECK(tl::allclose(layer->forward(layer->parameters(), x), y, 0, 0));
    }
  }
  // No inputs: the output is the bias alone (torch initialises it to 0 then).
  const nn::Linear empty_in(0, 4);
  CHECK(tl::equal(empty_in(tl::ones({3, 0})), tl::zeros({3, 4})));
  // No outputs: an empty last dim.
  CHECK(nn::Linear(5, 0)(tl::ones({2, 5})).shape() == tl::Shape{2, 0});
}

TEST_CASE("nn::Linear: parameters share storage; to() moves in place, keeping each handle") {
  tl::manual_seed(5);
  nn::Linear layer(4, 2);
  std::vector<Tensor> params = layer->parameters();
  REQUIRE(params.size() == 2);
  CHECK(nn::Linear(4, 2, false)->parameters().size() == 1);
  {
    tl::NoGradGuard no_grad;
    params[0].zero_();
    params[1].fill_(1.5);
  }
  CHECK(tl::equal(layer(tl::rand({3, 4})), tl::full({3, 2}, 1.5)));

  // A dtype move converts every parameter, and the handles taken before see it (torch's
  // parameter identity: an optimizer's handles stay valid).
  layer->to(tl::kFloat64);
  CHECK(params[0].dtype() == tl::kFloat64);
  CHECK(layer->weight.dtype() == tl::kFloat64);
  CHECK(params[0].requires_grad());
  CHECK(tl::equal(layer(tl::ones({1, 4}, tl::kFloat64)), tl::full({1, 2}, 1.5, tl::kFloat64)));
  layer->to(tl::kFloat32);
  if (!tl::cuda::is_available()) {
    CHECK_THROWS_AS(layer->to(Device::cuda(0)), tl::DeviceError);
    CHECK(layer->weight.device() == Device::cpu());
    MESSAGE("skipped the GPU part: no CUDA device");
    return;
  }
  tl::manual_seed(9);
  nn::Linear net(10, 3);
  const std::vector<Tensor> handles = net->parameters();
  const Tensor x = tl::randn({8, 10});
  const Tensor on_cpu = net(x);
  tl::sum(on_cpu).backward();
  net->to(Device::cuda(0));
  CHECK(net->weight.device() == Device::cuda(0));
  CHECK(handles[1].device() == Device::cuda(0));
  CHECK(handles[0].grad().device() == Device::cuda(0));  // grads move with their parameters
  CHECK(tl::allclose(net(x.cuda()).cpu(), on_cpu, 1e-5, 1e-6));
  net->to(Device::cpu());
  CHECK(handles[0].device() == Device::cpu());
}

TEST_CASE("nn::Linear in tl::DataParallel: the same output as the layer, printed as torch does") {
  tl::manual_seed(21);
  const nn::Linear net(10, 1, true, tl::kFloat64);
  for (const std::vector<Device>& devices :
       {std::vector<Device>{}, std::vector<Device>{Device::cpu(), Device::cpu()}}) {
    tl::DataParallel model =
        devices.empty() ? tl::DataParallel(net) : tl::DataParallel(net, devices);
    INFO(model.devices().size() << " replicas on " << model.devices()[0]);
    CHECK(printed(model) ==
          "DataParallel(\n  (module): Linear(in_features=10, out_features=1, bias=True)\n)");
    CHECK(model.params().size() == 2);
    for (int64_t rows : {1, 7, 64, 0}) {
      const Tensor batch = tl::randn({rows, 10}, tl::kFloat64);
      const Tensor got = model(batch);
      CHECK(got.shape() == tl::Shape{rows, 1});
      CHECK(tl::allclose(got.cpu(), net(batch), 1e-12, 1e-12));
    }
  }
  // A function has no printed form.
  const tl::DataParallel fn(
      [](const std::vector<Tensor>& p, const Tensor& x) { return tl::matmul(x, p[0]); },
      {tl::ones({2, 2})}, {Device::cpu()});
  CHECK(printed(fn) == "DataParallel(\n  (module): <function>\n)");
  // The layer's checks run on every replica: a wrong width names the layer.
  tl::DataParallel model(net, {Device::cpu(), Device::cpu()});
  CHECK_THROWS_WITH_AS(model(tl::randn({4, 9}, tl::kFloat64)),
                       doctest::Contains("[tl::nn::Linear::forward]"), tl::ShapeError);
}

TEST_CASE("nn::Linear in tl::DataParallel on every GPU") {
  TL_TEST_REQUIRE_CUDA();
  tl::manual_seed(22);
  nn::Linear net(10, 1);
  const Tensor batch = tl::randn({33, 10});
  const Tensor want = net(batch);
  net->to(Device::cuda(0));
  tl::DataParallel model(net);
  CHECK(model.devices().size() == static_cast<size_t>(tl::cuda::device_count()));
  CHECK(model.output_device() == Device::cuda(0));
  const Tensor got = model(batch.cuda());
  CHECK(got.device() == Device::cuda(0));
  CHECK(tl::allclose(got.cpu(), want, 1e-5, 1e-6));
}

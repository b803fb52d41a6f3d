// Module::state_dict and load_state_dict: PyTorch's keys (parameters and buffers, nested and
// shared modules), a round trip through a safetensors file on every test device that gives the
// same outputs, in-place copies that keep an optimizer's handles, and the strict checks' errors.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace nn = tl::nn;
using tl::Tensor;
using tl_test::check_throws;

namespace {

struct ConvNetImpl : nn::Module {
  ConvNetImpl() {
    features = register_module("features",
                               nn::Sequential(nn::Conv2d(1, 2, 3), nn::ReLU(), nn::BatchNorm2d(2)));
    fc = register_module("fc", nn::Linear(2 * 4 * 4, 3));
  }
  Tensor forward(const Tensor& x) { return fc->forward(features->forward(x).flatten(1)); }
  std::shared_ptr<nn::SequentialImpl> features;
  std::shared_ptr<nn::LinearImpl> fc;
};
TL_MODULE(ConvNet);

std::vector<std::string> keys_of(const tl::TensorMap& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

}  // namespace

TEST_CASE("nn state_dict: torch's keys, detached tensors sharing the module's memory") {
  tl::manual_seed(1);
  ConvNet net;
  const tl::TensorMap state = net->state_dict();
  CHECK(keys_of(state) == std::vector<std::string>{"fc.bias", "fc.weight", "features.0.bias",
                                                   "features.0.weight", "features.2.bias",
                                                   "features.2.num_batches_tracked",
                                                   "features.2.running_mean",
                                                   "features.2.running_var", "features.2.weight"});
  const Tensor& w = state.at("fc.weight");
  CHECK_FALSE(w.requires_grad());
  CHECK(w.data_ptr() == net->fc->weight.data_ptr());
  // A layer without bias has no bias key; a module registered twice is listed under both names.
  nn::Sequential shared(nn::Linear(2, 2, false));
  nn::Module root;
  root.register_module("a", shared.ptr());
  root.register_module("b", shared.ptr());
  CHECK(keys_of(root.state_dict()) == std::vector<std::string>{"a.0.weight", "b.0.weight"});
}

TEST_CASE("nn state_dict: a safetensors round trip gives the same outputs on every device") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tl_state_dict_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "net.safetensors").string();
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    tl::manual_seed(2);
    ConvNet trained;
    trained->to(device);
    // Batch statistics move the running buffers, so they are part of what is saved.
    (void)trained(tl::rand({4, 1, 6, 6}).to(device));
    trained->eval();
    tl::save_safetensors(path, trained->state_dict());

    tl::manual_seed(3);
    ConvNet fresh;
    fresh->to(device);
    fresh->eval();
    tl::optim::SGD opt(fresh->parameters(), tl::optim::SGDOptions(0.1));
    const Tensor handle = fresh->fc->weight;
    const Tensor x = tl::rand({2, 1, 6, 6}).to(device);
    CHECK_FALSE(tl::equal(fresh(x), trained(x)));
    const nn::Module::LoadResult r = fresh->load_state_dict(tl::load_safetensors(path));
    CHECK(r.missing_keys.empty());
    CHECK(r.unexpected_keys.empty());
    CHECK(tl::equal(fresh(x), trained(x)));
    // In place: the optimizer's handles and the module's own still alias it, on its device.
    CHECK(&handle.impl() == &fresh->fc->weight.impl());
    CHECK(fresh->fc->weight.device() == device);
    CHECK(fresh->fc->weight.requires_grad());
    CHECK(tl::equal(handle, trained->fc->weight));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad input: load_state_dict lists missing, unexpected and mis-shaped keys") {
  tl::manual_seed(4);
  ConvNet net;
  tl::TensorMap state = net->state_dict();
  const Tensor before = net->fc->weight.clone();
  tl::TensorMap missing = state;
  missing.erase("fc.bias");
  missing["extra.weight"] = tl::ones({2});
  check_throws<tl::Error>([&] { (void)net->load_state_dict(missing); },
                          "[tl::nn::Module::load_state_dict] Error(s) in loading state_dict for "
                          "ConvNet:\n\tUnexpected key(s) in state_dict: \"extra.weight\".\n\t"
                          "Missing key(s) in state_dict: \"fc.bias\".");
  // Not strict: the keys left out come back, the rest is loaded.
  missing["fc.weight"] = tl::zeros({3, 32});
  const nn::Module::LoadResult r = net->load_state_dict(missing, false);
  CHECK(r.missing_keys == std::vector<std::string>{"fc.bias"});
  CHECK(r.unexpected_keys == std::vector<std::string>{"extra.weight"});
  CHECK(tl::equal(net->fc->weight, tl::zeros({3, 32})));
  // A shape mismatch is an error strict or not, and nothing is copied.
  tl::TensorMap wrong = state;
  wrong["fc.weight"] = tl::zeros({3, 31});
  wrong["features.0.bias"] = tl::ones({2});
  {
    tl::NoGradGuard no_grad;
    net->fc->weight.copy_(before);
  }
  for (const bool strict : {true, false})
    check_throws<tl::Error>(
        [&] { (void)net->load_state_dict(wrong, strict); },
        "size mismatch for fc.weight: copying a param with shape [3, 31] from checkpoint, the "
        "shape in current model is [3, 32].");
  CHECK(tl::equal(net->fc->weight, before));
  CHECK_FALSE(tl::equal((*net->features)[0]->named_parameters()["bias"], tl::ones({2})));
}

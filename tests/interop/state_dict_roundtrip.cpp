// The other half of state_dict_torch.py: loads each model's PyTorch state_dict (written by
// safetensors.torch.save_file) into the same tensorlet architecture and writes its eval output
// for PyTorch's input, and one SGD training step's loss, gradients and new state; then writes a
// tensorlet model's own state_dict and output for PyTorch to load and compare. usage:
// state_dict_roundtrip DIR DEVICE (cpu or cuda:0).
#include <cstdio>
#include <exception>
#include <string>

#include <tensorlet/tensorlet.h>

#include "models.h"

namespace nn = tl::nn;
namespace F = tl::nn::functional;

namespace {

// The book's LeNet (examples/common/models.h): keys 0.weight ... 11.bias, as torch's
// nn.Sequential.
using tl_example::lenet;

// Batch norm's buffers too: running_mean, running_var, num_batches_tracked (int64).
nn::Sequential with_batch_norm() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4),
                        nn::ReLU(), nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})),
                        nn::Flatten(), nn::Linear(4, 10));
}

tl::TensorMap on_cpu(const tl::TensorMap& state) {
  tl::TensorMap out;
  for (const auto& [key, value] : state) out[key] = value.cpu().contiguous();
  return out;
}

void run(const std::string& name, nn::Sequential (*make)(), const std::string& dir,
         tl::Device device) {
  const tl::Tensor x = tl::load_safetensors(dir + "/input_" + name + ".safetensors").at("x");
  // PyTorch's weights in our model.
  nn::Sequential net = make();
  net->to(device);
  net->load_state_dict(tl::load_safetensors(dir + "/torch_" + name + ".safetensors", device));
  net->eval();
  {
    tl::NoGradGuard no_grad;
    tl::save_safetensors(dir + "/ours_out_" + name + ".safetensors",
                         {{"y", net->forward(x.to(device)).cpu()}});
  }
  // Training from PyTorch's weights: the first step's loss and gradients, and the state after two
  // steps of SGD with momentum (batch norm's running statistics move too).
  net->train();
  const tl::Tensor labels = tl::load_safetensors(dir + "/input_" + name + ".safetensors").at("t");
  // lr 0.01: with 0.1 a batch of 2 moves ResNet-18 so far in one step (loss 2.27 to 0.24) that
  // differences of 1e-6 after the first step (rounding) grew to 1e-3 after the second.
  tl::optim::SGD opt(net->parameters(), tl::optim::SGDOptions(0.01).momentum(0.9));
  opt.zero_grad();
  const tl::Tensor loss = F::cross_entropy(net->forward(x.to(device)), labels.to(device));
  loss.backward();
  tl::TensorMap grads{{"loss", loss.detach().cpu()}};
  for (const auto& item : net->named_parameters())
    grads["grad." + item.key()] = item.value().grad().cpu().contiguous();
  tl::save_safetensors(dir + "/ours_grads_" + name + ".safetensors", grads);
  opt.step();
  // A second step, so that the momentum buffers count.
  opt.zero_grad();
  F::cross_entropy(net->forward(x.to(device)), labels.to(device)).backward();
  opt.step();
  tl::save_safetensors(dir + "/ours_stepped_" + name + ".safetensors", on_cpu(net->state_dict()));
  // Our weights (after a training-mode forward, so batch norm's buffers moved) for PyTorch.
  tl::manual_seed(7);
  nn::Sequential own = make();
  own->to(device);
  {
    tl::NoGradGuard no_grad;
    (void)own->forward(x.to(device));
    own->eval();
    tl::save_safetensors(dir + "/ours_" + name + ".safetensors", on_cpu(own->state_dict()));
    tl::save_safetensors(dir + "/ours_own_out_" + name + ".safetensors",
                         {{"y", own->forward(x.to(device)).cpu()}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: state_dict_roundtrip DIR DEVICE\n");
    return 2;
  }
  try {
    const std::string dir = argv[1];
    const tl::Device device = tl::Device::parse(argv[2]);
    run("lenet", lenet, dir, device);
    run("bn", with_batch_norm, dir, device);
    run("resnet18", tl_example::resnet18, dir, device);
    std::printf("state_dict_roundtrip %s: ok\n", device.str().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "state_dict_roundtrip: %s\n", e.what());
    return 1;
  }
  return 0;
}

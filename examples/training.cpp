// Notebook "training": the book's LeNet (Dive into Deep Learning, 7.6) trained on Fashion-MNIST
// with tl::nn, tl::optim and tl::data, on the CPU and on cuda:0: loss and accuracies per epoch,
// examples per second, the profiler's table of one step, and a chart of the throughput.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "chart.h"
#include "models.h"
namespace tl = tensorlet;
namespace nn = tl::nn;
namespace F = tl::nn::functional;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

struct Epoch {
  double loss = 0, train_acc = 0, test_acc = 0, seconds = 0, examples_per_s = 0;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// PyTorch's numbers from bench/torch_lenet.py --summary (TL_TORCH_SUMMARY names the file): per
// device type, the best epoch's seconds and the final test accuracy.
struct TorchRun {
  double best_seconds = 0, test_acc = 0;
};
std::map<std::string, TorchRun> torch_summary() {
  std::map<std::string, TorchRun> out;
  const char* path = std::getenv("TL_TORCH_SUMMARY");
  if (!path || !*path) return out;
  std::ifstream in(path);
  std::string device;
  TorchRun r;
  while (in >> device >> r.best_seconds >> r.test_acc) out[device] = r;
  return out;
}

double best_seconds(const std::vector<Epoch>& epochs) {
  double b = epochs.front().seconds;
  for (const Epoch& e : epochs) b = std::min(b, e.seconds);
  return b;
}

using tl_example::init_weights;
using tl_example::lenet;

struct Run {
  std::string device;
  std::vector<Epoch> epochs;
  std::string step_table;
};

// Test accuracy over the loader's batches (the first max_batches of them when >= 0).
double accuracy(nn::Sequential& net, tl::data::DataLoader& loader, int64_t max_batches = -1) {
  tl::NoGradGuard no_grad;
  net->eval();
  tl::Tensor correct;
  int64_t total = 0, batches = 0;
  for (const tl::data::Example& batch : loader) {
    if (max_batches >= 0 && batches++ == max_batches) break;
    const tl::Tensor hits = tl::sum(tl::argmax(net(batch.data), 1) == batch.target);
    correct = correct.defined() ? correct + hits : hits;
    total += batch.target.size(0);
  }
  net->train();
  return static_cast<double>(correct.item<int64_t>()) / static_cast<double>(total);
}

// One SGD step of `net` on (x, y), returning the loss and the logits.
struct StepOut {
  tl::Tensor loss, logits;
};
StepOut sgd_step(nn::Sequential& net, tl::optim::SGD& opt, const tl::Tensor& x,
                 const tl::Tensor& y) {
  opt.zero_grad();
  const tl::Tensor logits = net(x);
  const tl::Tensor loss = F::cross_entropy(logits, y);
  loss.backward();
  opt.step();
  return {loss.detach(), logits.detach()};
}

// graphed: on CUDA, after two eager steps, the whole step (forward, backward, SGD) is captured
// once into a tl::cuda::Graph on static input tensors; each full batch after that is copied in
// and replayed as one launch (the last, partial batch of an epoch runs eagerly).
// A model of the book with its learning rate (SGD, batch 256, xavier init: d2l's train_ch6).
struct Model {
  const char* name;
  nn::Sequential (*make)();
  double lr;
};
const Model kLeNet{"LeNet", lenet, 0.9};
const Model kResNet{"ResNet-18", tl_example::resnet18, 0.05};

Run train(tl::Device device, const std::shared_ptr<const tl::data::Dataset>& train_set,
          const std::shared_ptr<const tl::data::Dataset>& test_set, int epochs, uint64_t seed = 0,
          bool verbose = true, bool graphed = false, const Model& model = kLeNet,
          int64_t max_batches = -1) {
  tl::manual_seed(seed);
  nn::Sequential net = model.make();
  init_weights(net);
  net->to(device);
  tl::optim::SGD opt(net->parameters(), tl::optim::SGDOptions(model.lr));
  tl::data::DataLoader loader(
      train_set, tl::data::DataLoaderOptions().batch_size(256).shuffle(true).device(device));
  tl::data::DataLoader test_loader(test_set,
                                   tl::data::DataLoaderOptions().batch_size(256).device(device));
  const bool gpu = device.is_cuda();
  Run run{device.str() + (graphed ? " graphed" : "") +
              (&model == &kLeNet ? "" : std::string(" ") + model.name),
          {},
          {}};
  tl::cuda::Graph graph;
  tl::Tensor static_x, static_y;
  StepOut static_out;
  int eager_steps = 0;
  for (int e = 0; e < epochs; ++e) {
    if (gpu) tl::cuda::synchronize();
    const auto start = Clock::now();
    // Sums stay on the device: reading them each batch would wait for the GPU every step.
    tl::Tensor loss_sum, hit_sum;
    int64_t seen = 0;
    int64_t batches = 0;
    for (const tl::data::Example& batch : loader) {
      // max_batches >= 0: only the epoch's first batches (the ResNet on a CPU).
      if (max_batches >= 0 && batches++ == max_batches) break;
      const int64_t n = batch.target.size(0);
      StepOut out;
      if (!graphed || n != 256 || eager_steps < 2) {
        out = sgd_step(net, opt, batch.data, batch.target);
        ++eager_steps;
      } else {
        if (!graph.is_captured()) {
          static_x = batch.data.clone();
          static_y = batch.target.clone();
          graph.capture([&] { static_out = sgd_step(net, opt, static_x, static_y); });
        } else {
          static_x.copy_(batch.data);
          static_y.copy_(batch.target);
        }
        graph.replay();
        out = static_out;  // read below, in stream order, before the next replay writes it
      }
      tl::NoGradGuard no_grad;
      const tl::Tensor batch_loss = out.loss * static_cast<double>(n);
      const tl::Tensor hits = tl::sum(tl::argmax(out.logits, 1) == batch.target);
      loss_sum = loss_sum.defined() ? loss_sum + batch_loss : batch_loss;
      hit_sum = hit_sum.defined() ? hit_sum + hits : hits;
      seen += n;
    }
    Epoch ep;
    ep.loss = loss_sum.item<double>() / static_cast<double>(seen);
    ep.train_acc = static_cast<double>(hit_sum.item<int64_t>()) / static_cast<double>(seen);
    if (gpu) tl::cuda::synchronize();
    ep.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ep.examples_per_s = static_cast<double>(seen) / ep.seconds;
    ep.test_acc = accuracy(net, test_loader, max_batches);
    if (verbose) {
      std::printf(
          "  %-7s epoch %2d  loss %.3f  train acc %.3f  test acc %.3f  %6.2f s  %8.0f "
          "examples/s\n",
          run.device.c_str(), e + 1, ep.loss, ep.train_acc, ep.test_acc, ep.seconds,
          ep.examples_per_s);
      std::fflush(stdout);
    }
    run.epochs.push_back(ep);
  }
  if (!verbose || graphed || max_batches >= 0) return run;

  // One more step under the profiler: where a step's time goes.
  prof::ProfileOptions options;
  if (gpu) options.activities = {prof::Activity::CPU, prof::Activity::CUDA};
  tl::data::Example batch = *loader.begin();
  {
    prof::Profile profile(options);
    opt.zero_grad();
    const tl::Tensor loss = F::cross_entropy(net(batch.data), batch.target);
    loss.backward();
    opt.step();
    if (gpu) tl::cuda::synchronize();
    profile.stop();
    run.step_table =
        profile.key_averages().table({.sort_by = gpu ? "cuda_time_total" : "cpu_time_total",
                                      .row_limit = &model == &kLeNet ? 12 : 24});
  }
  return run;
}

}  // namespace

int main() {
  try {
    std::printf("# Training LeNet on Fashion-MNIST\n\n");
    // TL_FASHION_MNIST: another folder with the four files (a machine without the package).
    const char* root_env = std::getenv("TL_FASHION_MNIST");
    const std::string root =
        root_env && *root_env ? root_env : tl::data::datasets::kFashionMnistRoot;
    if (!std::filesystem::exists(root + "/train-images-idx3-ubyte.gz") &&
        !std::filesystem::exists(root + "/train-images-idx3-ubyte")) {
      std::printf(
          "Fashion-MNIST is not in %s (Debian's dataset-fashion-mnist, which ./run "
          "installs): nothing to train on here.\n",
          root.c_str());
      return 0;
    }
    using tl::data::datasets::MNIST;
    auto train_full = std::make_shared<MNIST>(root, MNIST::Mode::kTrain);
    auto test_set = std::make_shared<MNIST>(root, MNIST::Mode::kTest);
    std::printf(
        "%lld training and %lld test images of 28x28, 10 classes; the book's LeNet "
        "(sigmoid, average pooling), SGD lr 0.9, batch 256, xavier init.\n\n",
        static_cast<long long>(train_full->size()), static_cast<long long>(test_set->size()));

    const bool gpu = tl::cuda::is_available();
    // The book's 10 epochs on both (a few seconds each on a 2-core CPU); TL_TRAIN_EPOCHS and
    // TL_TRAIN_CPU_EPOCHS change them.
    const int gpu_epochs = env_int("TL_TRAIN_EPOCHS", 10);
    const int cpu_epochs = env_int("TL_TRAIN_CPU_EPOCHS", 10);
    std::vector<Run> runs;
    if (cpu_epochs > 0) runs.push_back(train(tl::Device::cpu(), train_full, test_set, cpu_epochs));
    if (gpu && gpu_epochs > 0)
      runs.push_back(train(tl::Device::cuda(0), train_full, test_set, gpu_epochs));
    // TL_TRAIN_SEEDS=k: k - 1 more GPU runs from other seeds, for the final test accuracy's spread
    // (with lr 0.9 it moves by points from one epoch and one seed to the next; bench T1 compares
    // the mean with PyTorch's over the same number of seeds).
    const int seeds = env_int("TL_TRAIN_SEEDS", 1);
    if (gpu && gpu_epochs > 0 && seeds > 1) {
      std::vector<double> finals{runs.back().epochs.back().test_acc};
      for (int s = 1; s < seeds; ++s)
        finals.push_back(train(tl::Device::cuda(0), train_full, test_set, gpu_epochs,
                               static_cast<uint64_t>(s), false)
                             .epochs.back()
                             .test_acc);
      double mean = 0;
      std::printf("\ncuda:0 test accuracy after %d epochs, seeds 0..%d:", gpu_epochs, seeds - 1);
      for (double a : finals) {
        std::printf(" %.3f", a);
        mean += a / static_cast<double>(finals.size());
      }
      std::printf("; mean %.3f\n", mean);
    }
    // The same training with the step captured once and replayed (TL_TRAIN_GRAPHED=0: not run).
    if (gpu && gpu_epochs > 0 && env_int("TL_TRAIN_GRAPHED", 1) != 0)
      runs.push_back(train(tl::Device::cuda(0), train_full, test_set, gpu_epochs, 0, true, true));
    // The book's ResNet-18 (the 28x28 variant) on cuda:0: TL_TRAIN_RESNET_EPOCHS (default 1;
    // the book trains 10), eager. Its epochs print as they end.
    const int resnet_epochs = gpu ? env_int("TL_TRAIN_RESNET_EPOCHS", 1) : 0;
    std::optional<Run> resnet;
    if (resnet_epochs > 0) {
      std::printf("\nResNet-18 (3x3 first convolution, batch norm, no max-pool), SGD lr 0.05:\n");
      resnet =
          train(tl::Device::cuda(0), train_full, test_set, resnet_epochs, 0, true, false, kResNet);
    }
    // The same ResNet on the CPU, on the first TL_TRAIN_RESNET_CPU_BATCHES batches (default 4)
    // of one epoch and as many test batches: a whole epoch is 235 steps of several seconds each
    // on a few cores.
    const int resnet_cpu_batches = env_int("TL_TRAIN_RESNET_CPU_BATCHES", 4);
    std::optional<Run> resnet_cpu;
    if (resnet_cpu_batches > 0 && cpu_epochs > 0) {
      std::printf("\nResNet-18 on the CPU, the first %d batches of an epoch:\n",
                  resnet_cpu_batches);
      resnet_cpu = train(tl::Device::cpu(), train_full, test_set, 1, 0, true, false, kResNet,
                         resnet_cpu_batches);
      const Epoch& e = resnet_cpu->epochs.back();
      std::printf(
          "  %.2f s per step of 256 images on %d threads: a whole epoch (235 steps) would take "
          "about %.0f s here.\n",
          e.seconds / resnet_cpu_batches, tl::get_num_threads(),
          e.seconds / resnet_cpu_batches * 235);
    }
    if (runs.empty()) {
      std::printf("No epochs asked for (TL_TRAIN_EPOCHS, TL_TRAIN_CPU_EPOCHS).\n");
      return 0;
    }

    std::printf("\n## One training step in the profiler\n");
    for (const Run& r : runs)
      if (!r.step_table.empty()) std::printf("\n%s:\n%s\n", r.device.c_str(), r.step_table.c_str());
    if (resnet && !resnet->step_table.empty())
      std::printf("\n%s:\n%s\n", resnet->device.c_str(), resnet->step_table.c_str());

    std::vector<tl_example::Bar> bars;
    for (const Run& r : runs) {
      std::vector<double> rates;
      for (const Epoch& e : r.epochs) rates.push_back(e.examples_per_s);
      bars.push_back({r.device, *std::max_element(rates.begin(), rates.end())});
    }
    const std::string chart = tl_example::write_chart(
        "training.svg",
        tl_example::bar_chart_svg("LeNet on Fashion-MNIST: training throughput (best epoch)",
                                  "examples/s", bars));

    std::printf("\n## What the numbers say\n\n");
    const bool has_cpu = runs.front().device == "cpu";
    const Epoch cpu_last = has_cpu ? runs.front().epochs.back() : Epoch{};
    if (has_cpu)
      std::printf(
          "On the CPU, %zu epoch(s) reached test accuracy %.3f at %.0f examples/s (%.1f "
          "s per epoch).\n",
          runs.front().epochs.size(), cpu_last.test_acc, cpu_last.examples_per_s, cpu_last.seconds);
    const Run* graphed_run = runs.back().device == "cuda:0 graphed" ? &runs.back() : nullptr;
    const Run* cuda_run = nullptr;
    for (const Run& r : runs)
      if (r.device == "cuda:0") cuda_run = &r;
    if (cuda_run) {
      const Run& cuda = *cuda_run;
      const Epoch& last = cuda.epochs.back();
      double best = 0;
      for (const Epoch& e : cuda.epochs) best = std::max(best, e.examples_per_s);
      std::printf(
          "On cuda:0, %zu epochs reached test accuracy %.3f (the book reports about "
          "0.83 after 10) at up to %.0f examples/s, %.1f s per epoch (the book: about "
          "3.0 s on its GPU).\n",
          cuda.epochs.size(), last.test_acc, best, last.seconds);
      if (has_cpu)
        std::printf("That is %.1fx the CPU's throughput.\n", best / cpu_last.examples_per_s);
      std::printf(
          "A LeNet step is many small kernels (batch 256, at most 16 channels), so the "
          "GPU is bound by launches rather than arithmetic: the profiler's table above "
          "shows which ops take the time.\n");
      if (graphed_run) {
        // Best epochs: the first one of each pays for start-up (and, graphed, the capture).
        const double eager_s = best_seconds(cuda.epochs),
                     graphed_s = best_seconds(graphed_run->epochs);
        std::printf(
            "With the whole step captured once and replayed as one CUDA graph launch per "
            "batch, the best epoch took %.2f s against %.2f s eager (%.2fx), and the final "
            "test accuracy was %.3f (eager %.3f): the host no longer issues each kernel.\n",
            graphed_s, eager_s, graphed_s / eager_s, graphed_run->epochs.back().test_acc,
            last.test_acc);
      }
    } else {
      std::printf(
          "No GPU here, so no cuda:0 run. The book reports about 0.83 test accuracy "
          "after 10 epochs and 3.0 s per epoch on its GPU: %.3f and %.1f s here on %d "
          "CPU threads.\n",
          cpu_last.test_acc, cpu_last.seconds, tl::get_num_threads());
    }
    // Beside PyTorch (bench/torch_lenet.py --summary on the same machine, TL_TORCH_SUMMARY).
    const std::map<std::string, TorchRun> torch_runs = torch_summary();
    // Each run with its key in the summary: the device type, "-resnet" for the ResNet's.
    std::vector<std::pair<Run, std::string>> all;
    for (const Run& r : runs)
      all.emplace_back(r, r.device.substr(0, r.device.find(':')) == "cuda" ? "cuda" : "cpu");
    if (resnet) all.emplace_back(*resnet, "cuda-resnet");
    if (resnet_cpu) all.emplace_back(*resnet_cpu, "cpu-resnet");
    for (const auto& [r, key] : all) {
      const auto it = torch_runs.find(key);
      if (it == torch_runs.end() || r.epochs.empty()) continue;
      const double ours = best_seconds(r.epochs);
      std::printf(
          "Beside PyTorch on %s: best epoch %.2f s against %.2f s (%.2fx PyTorch's time), final "
          "test accuracy %.3f against %.3f.\n",
          r.device.c_str(), ours, it->second.best_seconds, ours / it->second.best_seconds,
          r.epochs.back().test_acc, it->second.test_acc);
    }
    if (torch_runs.empty())
      std::printf(
          "(PyTorch's side: bench/torch_lenet.py FOLDER --summary FILE, then TL_TORCH_SUMMARY=FILE "
          "here prints the two side by side.)\n");
    if (resnet) {
      const Epoch& last = resnet->epochs.back();
      std::printf(
          "ResNet-18 on cuda:0: %zu epoch(s), test accuracy %.3f, %.1f s per epoch (%.0f "
          "examples/s); its convolutions run %s.\n",
          resnet->epochs.size(), last.test_acc, last.seconds, last.examples_per_s,
          tl::cuda::cudnn_is_available() ? "on cuDNN, as PyTorch's"
                                         : "as im2col and a GEMM (no cuDNN in this build), "
                                           "PyTorch's on cuDNN");
    }
    std::printf("\nChart: %s\n", chart.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "training: %s\n", e.what());
    return 1;
  }
}

// Notebook "autograd": a gradient checked against finite differences, the tape in the profiler,
// what recording and backward cost per op (CPU and cuda:0), and hooks / no_grad / InferenceMode.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "chart.h"
namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Where the example writes its files: $TL_CHARTS_DIR (as its chart), else the working directory.
std::string output_path(const std::string& file_name) {
  const char* dir = std::getenv("TL_CHARTS_DIR");
  const std::filesystem::path base = dir && *dir ? std::filesystem::path(dir) : ".";
  std::filesystem::create_directories(base);
  return (base / file_name).string();
}

double max_abs(const tl::Tensor& t) { return tl::amax(tl::abs(t)).item<double>(); }

// ---- 1. a gradient against finite differences ------------------------------------------------

// The 2-layer MLP of sections 1 and 2: loss = mean((W2 sigmoid(W1 x + b1) + b2 - target)^2),
// written with mm and t() so the profiler rows name the ops (tl::mm, tl::sigmoid, ...).
struct Mlp {
  tl::Tensor w1, b1, w2, b2;
  std::vector<tl::Tensor*> params() { return {&w1, &b1, &w2, &b2}; }
  static constexpr const char* kNames[] = {"W1", "b1", "W2", "b2"};
};

tl::Tensor mlp_loss(const Mlp& m, const tl::Tensor& x, const tl::Tensor& target) {
  const tl::Tensor h = tl::sigmoid(tl::mm(x, m.w1.t()) + m.b1);
  const tl::Tensor out = tl::mm(h, m.w2.t()) + m.b2;
  const tl::Tensor d = out - target;
  return tl::mean(d * d);
}

Mlp make_mlp(int64_t in, int64_t hidden, int64_t out, tl::TensorOptions options) {
  // Uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)), nn.Linear's initialisation.
  auto uniform = [&](std::vector<int64_t> shape, int64_t fan_in) {
    return (tl::rand(shape, options) * 2.0 - 1.0) / std::sqrt(static_cast<double>(fan_in));
  };
  return {uniform({hidden, in}, in), uniform({hidden}, in), uniform({out, hidden}, hidden),
          uniform({out}, hidden)};
}

// A copy of `m` on `options` whose tensors are leaves that require grad.
Mlp leaves_of(const Mlp& m, tl::TensorOptions options) {
  Mlp copy;
  const std::vector<const tl::Tensor*> from = {&m.w1, &m.b1, &m.w2, &m.b2};
  const std::vector<tl::Tensor*> to = copy.params();
  for (size_t i = 0; i < from.size(); ++i) {
    *to[i] = from[i]->to(options).detach();
    to[i]->requires_grad_();
  }
  return copy;
}

// Autograd's gradient of every parameter, on the host in float64.
std::vector<tl::Tensor> autograd_gradients(const Mlp& m, const tl::Tensor& x,
                                           const tl::Tensor& target, tl::TensorOptions options) {
  Mlp leaves = leaves_of(m, options);
  mlp_loss(leaves, x.to(options), target.to(options)).backward();
  std::vector<tl::Tensor> grads;
  for (tl::Tensor* p : leaves.params()) grads.push_back(p->grad().to(tl::kFloat64).cpu());
  return grads;
}

// Central differences in float64 on the host, one parameter element at a time:
// (L(p + h) - L(p - h)) / 2h. Truncation error ~h^2 L''' / 6, rounding ~1e-16 L / h.
std::vector<tl::Tensor> finite_differences(const Mlp& m, const tl::Tensor& x,
                                           const tl::Tensor& target, double h) {
  tl::NoGradGuard no_grad;
  Mlp moved = m;
  std::vector<tl::Tensor> grads;
  const std::vector<tl::Tensor*> params = moved.params();
  for (tl::Tensor* p : params) {
    const tl::Tensor original = *p;
    tl::Tensor g = tl::empty_like(original);
    for (int64_t j = 0; j < original.numel(); ++j) {
      auto loss_at = [&](double delta) {
        *p = original.clone();
        p->data<double>()[j] += delta;
        return mlp_loss(moved, x, target).item<double>();
      };
      g.data<double>()[j] = (loss_at(h) - loss_at(-h)) / (2 * h);
    }
    *p = original;
    grads.push_back(g);
  }
  return grads;
}

// Returns false when autograd and the finite differences disagree beyond gradcheck's tolerance.
bool section_gradcheck(bool gpu) {
  std::printf(
      "1. A gradient checked against finite differences\n\n"
      "   loss = mean((W2 sigmoid(W1 x + b1) + b2 - target)^2), x: 8x5, W1: 12x5, W2: 3x12,\n"
      "   random data. Autograd's gradient of each parameter (one backward) against float64\n"
      "   central differences (two forwards per element, h = 1e-6).\n\n");
  const auto f64 = tl::TensorOptions(tl::kFloat64);
  const Mlp m = make_mlp(5, 12, 3, f64);
  const tl::Tensor x = tl::randn({8, 5}, f64), target = tl::randn({8, 3}, f64);
  const std::vector<tl::Tensor> numeric = finite_differences(m, x, target, 1e-6);
  const std::vector<tl::Tensor> exact = autograd_gradients(m, x, target, f64);
  const std::vector<tl::Tensor> single =
      autograd_gradients(m, x, target, tl::TensorOptions(tl::kFloat32));

  double worst = 0, scale = 0, worst32 = 0;
  int64_t elements = 0;
  std::printf("   %-4s %8s %14s %20s %22s\n", "", "elements", "max |grad|", "max |autograd - fd|",
              "float32 vs float64");
  for (size_t i = 0; i < numeric.size(); ++i) {
    const double diff = max_abs(exact[i] - numeric[i]);
    const double d32 = max_abs(single[i] - exact[i]);
    const double size = max_abs(exact[i]);
    std::printf("   %-4s %8lld %14.3e %20.3e %22.3e\n", Mlp::kNames[i],
                static_cast<long long>(exact[i].numel()), size, diff, d32);
    worst = std::max(worst, diff);
    worst32 = std::max(worst32, d32);
    scale = std::max(scale, size);
    elements += exact[i].numel();
  }
  // torch.autograd.gradcheck's default tolerance: |a - n| <= atol + rtol |n|.
  constexpr double kAtol = 1e-5, kRtol = 1e-3;
  const double tolerance = kAtol + kRtol * scale;
  const bool ok = worst <= tolerance;
  std::printf(
      "\n   Over all %lld elements the largest difference is %.2e, %s gradcheck's\n"
      "   tolerance (atol 1e-5 + rtol 1e-3 x %.2e = %.2e)",
      static_cast<long long>(elements), worst, ok ? "well inside" : "OUTSIDE", scale, tolerance);
  if (ok)
    std::printf(
        ", more than 10^%d times below it.\n"
        "   What is left is the finite differences' own error (h^2 truncation, rounding of order\n"
        "   1e-16 / h = 1e-10), not autograd's: its gradient is exact up to float64 rounding.\n",
        static_cast<int>(std::floor(std::log10(tolerance / std::max(worst, 1e-300)))));
  else
    std::printf(": a wrong derivative.\n");
  std::printf(
      "   The same backward in float32 differs from float64's by at most %.2e, %.1f float32\n"
      "   epsilons (1.19e-7) of the largest gradient: float32's rounding, not a formula.\n",
      worst32, worst32 / (1.19e-7 * scale));
  if (gpu) {
    const std::vector<tl::Tensor> on_gpu =
        autograd_gradients(m, x, target, f64.device(tl::Device::cuda(0)));
    double gpu_diff = 0;
    for (size_t i = 0; i < on_gpu.size(); ++i)
      gpu_diff = std::max(gpu_diff, max_abs(on_gpu[i] - exact[i]));
    std::printf(
        "   On cuda:0 (float64) the gradients differ from the CPU's by at most %.2e (reductions\n"
        "   summed in another order).\n",
        gpu_diff);
    if (gpu_diff > tolerance) return false;
  }
  std::printf("\n");
  return ok;
}

// ---- 2. the tape in the profiler -------------------------------------------------------------

const prof::EventAverage* row_named(const prof::KeyAverages& averages, const std::string& key) {
  for (const auto& r : averages.rows())
    if (r.key == key) return &r;
  return nullptr;
}

void section_profile(bool gpu) {
  const tl::Device device = gpu ? tl::Device::cuda(0) : tl::Device::cpu();
  constexpr int64_t kBatch = 256, kIn = 512, kHidden = 1024, kOut = 10;
  std::printf(
      "2. The tape in the profiler\n\n"
      "   The same MLP, %lldx%lld -> %lld -> %lld float32 on %s: a forward (its ops record the\n"
      "   graph) and loss.backward() (the engine runs one node per recorded op), inside a\n"
      "   tl::profiler::Profile, each half in a user scope.\n\n",
      static_cast<long long>(kBatch), static_cast<long long>(kIn), static_cast<long long>(kHidden),
      static_cast<long long>(kOut), device.str().c_str());
  const Mlp m = leaves_of(make_mlp(kIn, kHidden, kOut, tl::TensorOptions(tl::kFloat32)), device);
  const tl::Tensor x = tl::randn({kBatch, kIn}, device), target = tl::randn({kBatch, kOut}, device);
  auto step = [&] {
    tl::Tensor loss;
    {
      prof::RecordFunction scope("FORWARD");
      loss = mlp_loss(m, x, target);
    }
    prof::RecordFunction scope("BACKWARD");
    loss.backward();
    if (gpu) tl::cuda::synchronize();
  };
  step();  // warm-up: first-use costs (cuBLAS handles, the allocator) stay out of the table

  prof::ProfileOptions options;
  if (gpu) options.activities = {prof::Activity::CPU, prof::Activity::CUDA};
  prof::Profile profile(options);
  step();
  profile.stop();

  const prof::KeyAverages averages = profile.key_averages();
  std::printf("%s\n", averages
                          .table({.sort_by = gpu ? "cuda_time_total" : "cpu_time_total",
                                  .row_limit = 32,
                                  .max_name_column_width = 55})
                          .c_str());

  // Read off the rows: the two scopes, and the costliest node of the backward.
  const auto* fwd = row_named(averages, "FORWARD");
  const auto* bwd = row_named(averages, "BACKWARD");
  const std::string prefix = "autograd::engine::evaluate_function: ";
  const prof::EventAverage* heaviest = nullptr;
  int nodes = 0;
  for (const auto& r : averages.rows())
    if (r.key.rfind(prefix, 0) == 0) {
      nodes += static_cast<int>(r.count);
      if (!heaviest || r.cpu_time_total_ns > heaviest->cpu_time_total_ns) heaviest = &r;
    }
  if (fwd && bwd && heaviest) {
    const double f = fwd->cpu_time_total_ns / 1e6, b = bwd->cpu_time_total_ns / 1e6;
    std::printf(
        "   Read off the rows: FORWARD took %.3f ms of CPU time, BACKWARD %.3f ms (%.2fx the\n"
        "   forward), running %d nodes, each as an 'evaluate_function: <node>' row around the\n"
        "   node's own row and the ops of its formula. The costliest node is\n"
        "   %s: %.3f ms, %.0f%% of the backward.\n",
        f, b, b / f, nodes, heaviest->key.substr(prefix.size()).c_str(),
        heaviest->cpu_time_total_ns / 1e6,
        100.0 * heaviest->cpu_time_total_ns / std::max<int64_t>(bwd->cpu_time_total_ns, 1));
    if (gpu && fwd->cuda_time_total_ns > 0)
      std::printf(
          "   On the GPU's clock: the forward's kernels %.3f ms, the backward's %.3f ms (%.2fx):\n"
          "   each mm of the forward costs two in the backward (the gradients of both operands).\n",
          fwd->cuda_time_total_ns / 1e6, bwd->cuda_time_total_ns / 1e6,
          static_cast<double>(bwd->cuda_time_total_ns) /
              std::max<int64_t>(fwd->cuda_time_total_ns, 1));
  }
  // The chrome trace's fwdbwd arrows: a forward op that made a node starts one, the
  // evaluate_function scope that ran the node ends it.
  std::set<int64_t> forward_ops;
  for (const prof::Event& e : profile.events())
    if (e.sequence_nr >= 0 && !e.backward) forward_ops.insert(e.sequence_nr);
  int arrows = 0;
  std::set<std::string> unpaired;  // nodes whose backward scope no profiled forward op points at
  for (const prof::Event& e : profile.events())
    if (e.sequence_nr >= 0 && e.backward) {
      if (forward_ops.count(e.sequence_nr))
        ++arrows;
      else
        unpaired.insert(e.name.rfind(prefix, 0) == 0 ? e.name.substr(prefix.size()) : e.name);
    }
  std::string names;
  for (const std::string& n : unpaired) names += (names.empty() ? "" : ", ") + n;
  const std::string trace = output_path("autograd_trace.json");
  profile.export_chrome_trace(trace);
  std::printf(
      "   Chrome trace: %s\n"
      "   (open it in https://ui.perfetto.dev): %d 'fwdbwd' flow arrows, each from a forward op\n"
      "   to the backward scope that ran the node it recorded.%s%s%s\n\n",
      trace.c_str(), arrows, names.empty() ? "" : "\n   No arrow reaches the scopes of\n     ",
      names.c_str(),
      names.empty()
          ? ""
          : "\n   A leaf's AccumulateGrad and a view's node have no forward op scope to start\n"
            "   one; another name here is an op whose forward event lacks its node's number.");
}

// ---- 3. what autograd costs per op -----------------------------------------------------------

constexpr int kChain = 200;

// bench/libtorch/autograd_vs_libtorch.cpp's chain (row A1): *w, +b, tanh, -w, repeated.
tl::Tensor chain(const tl::Tensor& x, const tl::Tensor& w, const tl::Tensor& b) {
  tl::Tensor y = x;
  for (int i = 0; i < kChain; ++i) {
    switch (i % 4) {
      case 0:
        y = y * w;
        break;
      case 1:
        y = y + b;
        break;
      case 2:
        y = tl::tanh(y);
        break;
      default:
        y = y - w;
        break;
    }
  }
  return y;
}

struct ChainCost {
  std::string device;
  double plain_us = 0, recording_us = 0, backward_us = 0;  // per op: fwd, fwd, fwd + bwd
};

// Microseconds per op of `f` (a 200-op chain): median of 15 samples of 10 calls, after 20.
double us_per_op(const std::function<void()>& f) {
  for (int i = 0; i < 20; ++i) f();
  std::vector<double> samples;
  for (int s = 0; s < 15; ++s) {
    const auto t0 = Clock::now();
    for (int c = 0; c < 10; ++c) f();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 10);
  }
  return median(samples) / kChain;
}

ChainCost chain_cost(const tl::Device& device) {
  const bool cuda = device.is_cuda();
  auto leaf = [&] {
    tl::Tensor t = (tl::rand({10, 10}) * 0.5 + 0.25).to(device);
    t.requires_grad_();
    return t;
  };
  const tl::Tensor x = leaf(), w = leaf(), b = leaf();
  ChainCost cost{device.str()};
  cost.plain_us = us_per_op([&] {
    tl::NoGradGuard no_grad;
    (void)chain(x, w, b);
    if (cuda) tl::cuda::synchronize();
  });
  cost.recording_us = us_per_op([&] {
    (void)chain(x, w, b);  // the graph is made, then dropped with the result
    if (cuda) tl::cuda::synchronize();
  });
  cost.backward_us = us_per_op([&] {
    tl::sum(chain(x, w, b)).backward();
    if (cuda) tl::cuda::synchronize();
  });
  return cost;
}

std::vector<tl_example::Bar> section_cost(bool gpu) {
  std::printf(
      "3. What autograd costs per op\n\n"
      "   A chain of %d elementwise ops (*w, +b, tanh, -w, repeated) on 10x10 float32 tensors\n"
      "   that require grad: tiny tensors, so the times are the per-op overhead, not the math.\n"
      "   Microseconds per op, median of 15 samples of 10 chains after 20 warm-up chains.\n\n",
      kChain);
  std::vector<ChainCost> costs{chain_cost(tl::Device::cpu())};
  if (gpu) costs.push_back(chain_cost(tl::Device::cuda(0)));
  std::printf("   %-8s %22s %22s %22s\n", "", "forward, NoGradGuard", "forward, recording",
              "forward + backward");
  std::vector<tl_example::Bar> bars;
  for (const ChainCost& c : costs) {
    std::printf("   %-8s %19.2f us %19.2f us %19.2f us\n", c.device.c_str(), c.plain_us,
                c.recording_us, c.backward_us);
    bars.push_back({c.device + ": forward, no grad", c.plain_us});
    bars.push_back({c.device + ": forward, recording", c.recording_us});
    bars.push_back({c.device + ": forward + backward", c.backward_us});
  }
  std::printf("\n");
  for (const ChainCost& c : costs) {
    const double record = c.recording_us - c.plain_us, backward = c.backward_us - c.recording_us;
    std::printf(
        "   %s: recording the graph costs %.2f us per op (%.2fx the plain forward: a node, its\n"
        "   saved tensors and edges); the backward adds %.2f us per op, so forward + backward is\n"
        "   %.2fx the plain forward.\n",
        c.device.c_str(), record, c.recording_us / c.plain_us, backward,
        c.backward_us / c.plain_us);
  }
  if (gpu)
    std::printf(
        "   On cuda:0 every op and every backward formula is a kernel launch (a few us of host\n"
        "   time each), which is why its per-op times sit above the CPU's on 100 elements.\n");
  std::printf(
      "   For comparison, bench/libtorch/autograd_vs_libtorch.cpp (row A1) measured this chain's\n"
      "   forward + backward against LibTorch's on an H200 machine (2026-11-28): 2.28 us vs\n"
      "   6.80 us per op on the CPU (0.34x), 15.55 us vs 32.55 us on cuda:0 (0.48x). Those are\n"
      "   the bench's numbers, not this run's.\n\n");
  return bars;
}

// ---- 4. hooks, no_grad and InferenceMode -----------------------------------------------------

std::string str(const tl::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

void section_hooks() {
  std::printf("4. Hooks, NoGradGuard and InferenceMode\n\n");
  tl::Tensor x = tl::randn({6});
  x.requires_grad_();
  std::printf("   x = %s, requires_grad\n", str(x.detach()).c_str());
  const tl::Tensor y = x * 2.0;
  // dL/dy = 2y = 4x for L = sum(y^2); the hook clips it to [-3, 3] before it flows on to x.
  int clipped = 0;
  double largest = 0;
  auto handle = y.register_hook([&](const tl::Tensor& g) {
    clipped = static_cast<int>((tl::abs(g) > 3.0).sum().item<int64_t>());
    largest = max_abs(g);
    return tl::clamp(g, -3.0, 3.0);
  });
  const tl::Tensor loss = (y * y).sum();
  loss.backward({}, /*retain_graph=*/true);  // kept for the second backward below
  const tl::Tensor expected = tl::clamp(x.detach() * 4.0, -3.0, 3.0) * 2.0;
  const bool hook_ok = tl::allclose(x.grad(), expected);
  std::printf(
      "   y = x * 2 (grad_fn %s), L = sum(y^2). A hook on y, y.register_hook(g -> clamp(g,\n"
      "   -3, 3)), saw dL/dy = 4x with largest |g| = %.2f and clipped %d of 6 elements; x.grad\n"
      "   is 2 x the clipped gradient: %s\n",
      y.grad_fn()->name().c_str(), largest, clipped, hook_ok ? "yes" : "NO");
  handle.remove();
  x.mutable_grad() = tl::Tensor();
  loss.backward();
  std::printf("   After handle.remove(), max |x.grad| is %.2f (unclipped: 8 |x|).\n",
              max_abs(x.grad()));

  {
    tl::NoGradGuard no_grad;
    const tl::Tensor z = x * 2.0;
    std::printf(
        "   Under tl::NoGradGuard, z = x * 2: requires_grad %s, grad_fn %s (nothing recorded).\n",
        z.requires_grad() ? "true" : "false", z.grad_fn() ? z.grad_fn()->name().c_str() : "null");
  }
  tl::Tensor inference;
  {
    tl::InferenceMode guard;
    inference = x * 2.0;
    std::printf(
        "   Under tl::InferenceMode, z = x * 2: requires_grad %s, grad_fn %s, is_inference %s.\n",
        inference.requires_grad() ? "true" : "false",
        inference.grad_fn() ? inference.grad_fn()->name().c_str() : "null",
        inference.is_inference() ? "true" : "false");
  }
  try {
    inference.requires_grad_();
    std::printf("   Outside the mode, z.requires_grad_() was accepted (unexpected).\n");
  } catch (const tl::Error& e) {
    std::printf("   Outside the mode, z.requires_grad_() raises:\n     %s\n", e.what());
  }
  std::printf("\n");
}

}  // namespace

int main() try {
  const bool gpu = tl::cuda::is_available();
  tl::manual_seed(0);
  std::printf("Autograd: reverse mode with LibTorch's names (requires_grad_, backward, grad).\n");
  if (gpu) {
    std::printf("Running on the CPU and cuda:0; the profile records CPU and CUDA activities.\n\n");
  } else {
    std::printf(
        "No CUDA GPU (%s):\n"
        "every section runs on the CPU. On a GPU machine section 1 also checks cuda:0's\n"
        "gradients, section 2 profiles on cuda:0 with CUDA time columns, section 3 adds a cuda:0\n"
        "row.\n\n",
        tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no device answers"
                             : "tensorlet was built without its CUDA backend");
  }
  const bool ok = section_gradcheck(gpu);
  section_profile(gpu);
  const std::vector<tl_example::Bar> bars = section_cost(gpu);
  section_hooks();
  const std::string path = tl_example::write_chart(
      "autograd.svg",
      tl_example::bar_chart_svg("200-op chain on 10x10 float32: microseconds per op "
                                "(median of 15 x 10 chains)",
                                "us", bars));
  std::printf("chart: %s\n", path.c_str());
  return ok ? 0 : 1;
} catch (const std::exception& e) {  // tl::Error, or a file that cannot be written
  std::fprintf(stderr, "autograd: %s\n", e.what());
  return 1;
}

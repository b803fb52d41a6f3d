// Issue 32's A1 and A2 in one process: tensorlet's autograd against LibTorch's on the same
// workloads, interleaved, medians after warm-up (built and run by scripts/gpu-check --libtorch,
// against the LibTorch inside python3's torch; LibTorch is not a dependency of tensorlet).
//   A1: a chain of 200 elementwise ops on 10x10 float32 tensors that require grad, forward +
//       backward, per op, on the CPU and cuda:0 (host cost; target <= 0.5x LibTorch).
//   A2: a 4-layer MLP 4096 wide, batch 4096, float32 and bfloat16, forward + backward on cuda:0:
//       step time (target <= LibTorch's) and peak allocated memory (<= torch's).
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace tl = tensorlet;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of each function, measured in alternation (samples of `calls` calls).
std::pair<double, double> interleaved(const std::function<void()>& ours,
                                      const std::function<void()>& theirs, int warmup, int samples,
                                      int calls) {
  for (int i = 0; i < warmup; ++i) {
    ours();
    theirs();
  }
  std::vector<double> a, b;
  for (int s = 0; s < samples; ++s) {
    for (int which = 0; which < 2; ++which) {
      const auto& f = which == 0 ? ours : theirs;
      const auto t0 = Clock::now();
      for (int c = 0; c < calls; ++c) f();
      const double dt = std::chrono::duration<double>(Clock::now() - t0).count() / calls;
      (which == 0 ? a : b).push_back(dt);
    }
  }
  return {median(a), median(b)};
}

constexpr int kChain = 200;

// ---- A1 --------------------------------------------------------------------------------------

void a1(bool cuda) {
  const tl::Device dev = cuda ? tl::Device::cuda(0) : tl::Device::cpu();
  const torch::Device tdev = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  auto ours_leaf = [&] {
    tl::Tensor t = (tl::rand({10, 10}) * 0.5 + 0.25).to(dev);
    t.requires_grad_();
    return t;
  };
  tl::Tensor x = ours_leaf(), w = ours_leaf(), b = ours_leaf();
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(tdev);
  torch::Tensor tx = (torch::rand({10, 10}, opts) * 0.5 + 0.25).requires_grad_();
  torch::Tensor tw = (torch::rand({10, 10}, opts) * 0.5 + 0.25).requires_grad_();
  torch::Tensor tb = (torch::rand({10, 10}, opts) * 0.5 + 0.25).requires_grad_();
  auto ours = [&] {
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
    tl::sum(y).backward();
    if (cuda) tl::cuda::synchronize();
  };
  auto theirs = [&] {
    torch::Tensor y = tx;
    for (int i = 0; i < kChain; ++i) {
      switch (i % 4) {
        case 0:
          y = y * tw;
          break;
        case 1:
          y = y + tb;
          break;
        case 2:
          y = torch::tanh(y);
          break;
        default:
          y = y - tw;
          break;
      }
    }
    y.sum().backward();
    if (cuda) torch::cuda::synchronize();
  };
  // The forward alone, for what autograd adds per op.
  tl::Tensor xc = x.detach();
  auto ours_fwd = [&] {
    tl::NoGradGuard no_grad;
    tl::Tensor y = xc;
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
    if (cuda) tl::cuda::synchronize();
  };
  auto theirs_fwd = [&] {
    torch::NoGradGuard no_grad;
    torch::Tensor y = tx;
    for (int i = 0; i < kChain; ++i) {
      switch (i % 4) {
        case 0:
          y = y * tw;
          break;
        case 1:
          y = y + tb;
          break;
        case 2:
          y = torch::tanh(y);
          break;
        default:
          y = y - tw;
          break;
      }
    }
    if (cuda) torch::cuda::synchronize();
  };
  const auto [o, t] = interleaved(ours, theirs, 20, 15, 10);
  const auto [of, tf] = interleaved(ours_fwd, theirs_fwd, 20, 15, 10);
  const double per = 1e6 / kChain;
  std::printf(
      "A1 %-6s fwd+bwd per op: tensorlet %6.2f us, LibTorch %6.2f us, ratio %.2f (target <= 0.50)"
      " | forward alone: %5.2f vs %5.2f us\n",
      cuda ? "cuda:0" : "cpu", o * per, t * per, o / t, of * per, tf * per);
}

// ---- A2 --------------------------------------------------------------------------------------

void a2(bool bf16) {
  constexpr int64_t kWidth = 4096, kBatch = 4096, kLayers = 4;
  // Each case starts from empty caches on both sides: tensorlet's caching allocator does not split
  // blocks yet, so the bfloat16 case's 32 MiB tensors would sit in the float32 case's cached
  // 64 MiB blocks (a block up to twice the request is reused whole) and its peak would read the
  // float32 case's; PyTorch's allocator splits them.
  tl::cuda::empty_cache();
  c10::cuda::CUDACachingAllocator::emptyCache();
  const tl::Device dev = tl::Device::cuda(0);
  const tl::DType dt = bf16 ? tl::kBFloat16 : tl::kFloat32;
  const auto tdt = bf16 ? torch::kBFloat16 : torch::kFloat32;
  auto topts = torch::TensorOptions().dtype(tdt).device(torch::kCUDA, 0);
  std::vector<tl::Tensor> ws, bs;
  std::vector<torch::Tensor> tws, tbs;
  const double scale = 1.0 / std::sqrt(static_cast<double>(kWidth));
  for (int l = 0; l < kLayers; ++l) {
    tl::Tensor w = ((tl::rand({kWidth, kWidth}) * 2.0 - 1.0) * scale).to(dt).to(dev);
    tl::Tensor b = ((tl::rand({kWidth}) * 2.0 - 1.0) * scale).to(dt).to(dev);
    w.requires_grad_();
    b.requires_grad_();
    ws.push_back(w);
    bs.push_back(b);
    tws.push_back(((torch::rand({kWidth, kWidth}, topts) * 2 - 1) * scale).requires_grad_());
    tbs.push_back(((torch::rand({kWidth}, topts) * 2 - 1) * scale).requires_grad_());
  }
  tl::Tensor x = tl::rand({kBatch, kWidth}).to(dt).to(dev);
  torch::Tensor tx = torch::rand({kBatch, kWidth}, topts);
  auto ours = [&] {
    for (int l = 0; l < kLayers; ++l) {
      ws[l].mutable_grad() = tl::Tensor();
      bs[l].mutable_grad() = tl::Tensor();
    }
    tl::Tensor h = x;
    for (int l = 0; l < kLayers; ++l) {
      h = tl::linear(h, ws[l], bs[l]);
      if (l + 1 < kLayers) h = tl::relu(h);
    }
    tl::mean(h).backward();
    tl::cuda::synchronize();
  };
  auto theirs = [&] {
    for (int l = 0; l < kLayers; ++l) {
      tws[l].mutable_grad() = torch::Tensor();
      tbs[l].mutable_grad() = torch::Tensor();
    }
    torch::Tensor h = tx;
    for (int l = 0; l < kLayers; ++l) {
      h = torch::linear(h, tws[l], tbs[l]);
      if (l + 1 < kLayers) h = torch::relu(h);
    }
    h.mean().backward();
    torch::cuda::synchronize();
  };
  // Peak memory of one step, parameters and input included (torch's max_memory_allocated),
  // measured first, after one warm-up step each.
  ours();
  theirs();
  tl::cuda::reset_peak_stats(0);
  const int64_t our_before = tl::cuda::memory_stats(0).allocated;
  ours();
  const int64_t our_peak = tl::cuda::memory_stats(0).peak_allocated;
  std::printf("A2 %-8s tensorlet allocated before the step %.0f MiB, peak in it %.0f MiB\n",
              bf16 ? "bfloat16" : "float32", our_before / 1048576.0, our_peak / 1048576.0);
  c10::cuda::CUDACachingAllocator::resetPeakStats(0);
  theirs();
  const int64_t their_peak =
      c10::cuda::CUDACachingAllocator::getDeviceStats(0)
          .allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
          .peak;
  const auto [o, t] = interleaved(ours, theirs, 3, 11, 3);
  std::printf(
      "A2 %-8s MLP step: tensorlet %7.3f ms, LibTorch %7.3f ms, speed %.2fx (target >= 1.00)"
      " | peak memory %.0f vs %.0f MiB, ratio %.2f (target <= 1.00)\n",
      bf16 ? "bfloat16" : "float32", o * 1e3, t * 1e3, t / o, our_peak / 1048576.0,
      their_peak / 1048576.0, static_cast<double>(our_peak) / static_cast<double>(their_peak));
}

}  // namespace

int main() {
  torch::globalContext().setAllowTF32CuBLAS(false);
  a1(false);
  if (torch::cuda::is_available()) {
    a1(true);
    a2(false);
    a2(true);
  }
  return 0;
}

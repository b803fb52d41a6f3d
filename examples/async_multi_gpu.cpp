// Notebook "async_multi_gpu": asynchronous and automatic parallel computation on several GPUs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <tensorlet.h>
namespace tl = tensorlet;

namespace {

using Clock = std::chrono::steady_clock;

// Waits for every stream of every listed GPU (nothing for the CPU).
void synchronize_all(int gpus) {
  for (int d = 0; d < gpus; ++d) tl::cuda::synchronize(d);
}

// Seconds `work` takes with the GPUs idle before the clock starts and after it stops, so the time
// is that of the work, not of enqueueing it. Best of `reps` runs after one warm-up run.
double seconds(int gpus, int reps, const std::function<void()>& work) {
  double best = 1e300;
  for (int r = 0; r <= reps; ++r) {
    synchronize_all(gpus);
    const auto start = Clock::now();
    work();
    synchronize_all(gpus);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (r > 0) best = std::min(best, s);
  }
  return best;
}

// ---- (a) the same work on GPU 0, on GPU 1, and on both ----------------------------------------

void parallel_devices(int gpus) {
  constexpr int kMatmuls = 20000;
  constexpr int kRound = 100;  // matmuls per device before the host turns to the other one
  std::printf("(a) %d matmuls of 100x100 float32 on one GPU, then on two at once\n", kMatmuls);
  if (gpus == 0) {
    std::printf(
        "   needs a CUDA GPU (two to show them working at once). What it shows: an op only\n"
        "   enqueues its kernel on its device's stream and returns, so one host thread can keep\n"
        "   two GPUs busy, and the work of both takes about as long as that of one.\n\n");
    return;
  }
  std::vector<tl::Tensor> x;
  for (int d = 0; d < std::min(gpus, 2); ++d)
    x.push_back(tl::rand({100, 100}, tl::Device::cuda(d)));
  // `count` matmuls on device d; the device is made current once, not switched for every op.
  auto run_on = [&](int d, int count) {
    tl::cuda::DeviceGuard on(d);
    for (int i = 0; i < count; ++i) (void)tl::matmul(x[d], x[d]);
  };
  const double t0 = seconds(gpus, 3, [&] { run_on(0, kMatmuls); });
  std::printf("   GPU 0 alone:                         %8.2f ms  (%.2f us per matmul)\n", t0 * 1e3,
              t0 * 1e6 / kMatmuls);
  if (gpus < 2) {
    std::printf(
        "   GPU 1: this machine has one GPU, so running on two at once cannot be shown here.\n\n");
    return;
  }
  const double t1 = seconds(gpus, 3, [&] { run_on(1, kMatmuls); });
  std::printf("   GPU 1 alone:                         %8.2f ms\n", t1 * 1e3);
  // Both from one thread, handing each device a round of work in turn.
  const double both = seconds(gpus, 3, [&] {
    for (int done = 0; done < kMatmuls; done += kRound) {
      run_on(0, kRound);
      run_on(1, kRound);
    }
  });
  // The order of the original notebook: everything for GPU 0, then everything for GPU 1.
  const double naive = seconds(gpus, 3, [&] {
    run_on(0, kMatmuls);
    run_on(1, kMatmuls);
  });
  std::printf("   both, in rounds of %d per GPU:       %8.2f ms  = %.2f x (GPU 0 + GPU 1)\n",
              kRound, both * 1e3, both / (t0 + t1));
  std::printf("   both, all of GPU 0's work first:     %8.2f ms  = %.2f x (GPU 0 + GPU 1)\n",
              naive * 1e3, naive / (t0 + t1));
  std::printf(
      "   Why: each matmul returns as soon as its kernel is queued, so while GPU 0 works through\n"
      "   its queue the host already feeds GPU 1, and the two run at the same time. The queue of\n"
      "   pending launches per device is bounded (about a thousand), so a host that queues all\n"
      "   %d matmuls for GPU 0 first blocks until GPU 0 has nearly finished, and the devices\n"
      "   then take turns; handing out work in rounds keeps both queues filled.\n\n",
      kMatmuls);
}

// ---- (b) computation overlapped with copies to the host --------------------------------------

void overlap_copies(int gpus) {
  constexpr int64_t kN = 4096;
  constexpr int kSteps = 10;
  std::printf("(b) %d steps of a %lldx%lld matmul, each result copied to the host\n", kSteps,
              static_cast<long long>(kN), static_cast<long long>(kN));
  if (gpus == 0) {
    std::printf(
        "   needs a CUDA GPU. What it shows: a copy to pinned host memory on a second stream,\n"
        "   started by an event once its result exists, runs while the next matmul computes.\n\n");
    return;
  }
  const tl::Device gpu = tl::Device::cuda(0);
  tl::cuda::DeviceGuard on(0);
  const tl::Tensor x = tl::rand({kN, kN}, gpu);
  // Two pinned buffers used in turn: the side stream runs its copies in order, so the copy into
  // one never starts before the previous copy into it finished.
  std::vector<tl::Tensor> host{tl::empty({kN, kN}, tl::TensorOptions().pinned_memory(true)),
                               tl::empty({kN, kN}, tl::TensorOptions().pinned_memory(true))};
  const tl::cuda::Stream main = tl::cuda::Stream::current(0);
  const tl::cuda::Stream side = tl::cuda::Stream::create(0);
  tl::Tensor y;

  const double compute = seconds(1, 2, [&] {
    for (int i = 0; i < kSteps; ++i) y = tl::matmul(x, x);
  });
  const double copies = seconds(1, 2, [&] {
    for (int i = 0; i < kSteps; ++i) host[i % 2].copy_(y, /*non_blocking=*/true);
  });
  const double sequential = seconds(1, 2, [&] {
    for (int i = 0; i < kSteps; ++i) {
      y = tl::matmul(x, x);
      host[i % 2].copy_(y);  // blocking: the host waits, then enqueues the next matmul
    }
  });
  tl::cuda::Event produced;  // re-recorded every step: a wait uses the latest record
  const double overlapped = seconds(1, 2, [&] {
    for (int i = 0; i < kSteps; ++i) {
      y = tl::matmul(x, x);  // main stream
      produced.record(main);
      tl::cuda::StreamGuard on_side(side);
      produced.wait(side);  // the copy starts once this step's matmul is done
      host[i % 2].copy_(y, /*non_blocking=*/true);
      // y is read on the side stream: its memory must not go back to the main stream's next
      // matmul before the copy ran.
      tl::cuda::record_stream(y, side);
    }
  });
  const bool same = tl::equal(host[(kSteps - 1) % 2], y.cpu());
  std::printf("   matmuls alone:                %8.2f ms\n", compute * 1e3);
  std::printf("   copies alone (%3.0f MB each):   %8.2f ms  (%.1f GB/s)\n",
              static_cast<double>(y.nbytes()) / 1e6, copies * 1e3,
              static_cast<double>(y.nbytes()) * kSteps / copies / 1e9);
  std::printf("   one after the other:          %8.2f ms  = %.2f x (matmuls + copies)\n",
              sequential * 1e3, sequential / (compute + copies));
  std::printf("   overlapped on two streams:    %8.2f ms  = %.2f x (matmuls + copies)\n",
              overlapped * 1e3, overlapped / (compute + copies));
  std::printf("   last copy equals the result: %s\n", same ? "yes" : "NO");
  std::printf(
      "   Why: the copy engine and the SMs are separate hardware. On one stream (or with a\n"
      "   blocking copy) each waits for the other; on two streams ordered only where the data\n"
      "   requires it (an event per result), the copy of step i runs during matmul i + 1.\n\n");
}

// ---- (c) data-parallel linear regression -------------------------------------------------------

// Sums the tensors (one per device) and leaves the sum in each of them: the all-reduce of data
// parallelism, done here with plain copies through the first device.
//
// The fallback: the sum gathered on the first device and copied back to every device.
void all_reduce_by_copies(std::vector<tl::Tensor>& tensors) {
  const tl::Device first = tensors[0].device();
  tl::Tensor total = tensors[0].clone();
  for (size_t i = 1; i < tensors.size(); ++i) total += tensors[i].to(first);
  for (tl::Tensor& t : tensors) t.copy_(total);  // asynchronous between GPUs
}

// Sums the per-device tensors in place with NCCL's all-reduce when the devices are distinct GPUs
// and tensorlet has NCCL (one Communicator per process, made on first use); otherwise through the
// first device with plain copies (the CPU, one GPU, or no NCCL).
void all_reduce_sum(std::vector<tl::Tensor>& tensors) {
  bool distinct_gpus = tensors.size() > 1;
  std::vector<int> indices;
  for (const tl::Tensor& t : tensors) {
    distinct_gpus = distinct_gpus && t.device().is_cuda();
    for (int seen : indices) distinct_gpus = distinct_gpus && seen != t.device().index();
    indices.push_back(t.device().index());
  }
  if (distinct_gpus && tl::distributed::is_available()) {
    static tl::distributed::Communicator comm = tl::distributed::Communicator::local(indices);
    comm.all_reduce(tensors, tl::distributed::ReduceOp::Sum).wait();
    return;
  }
  all_reduce_by_copies(tensors);
}

struct Problem {
  tl::Tensor X, y, w_true;
};

Problem make_problem(int64_t n, int64_t d) {
  tl::manual_seed(42);
  Problem p;
  p.X = tl::randn({n, d});
  p.w_true = tl::randn({d, 1});
  p.y = tl::matmul(p.X, p.w_true) + tl::randn({n, 1}) * 0.01;
  return p;
}

// Full-batch gradient descent on the mean squared error with the batch split over `devices`;
// returns the loss before each step and leaves the final weights (of the first device) in w.
std::vector<double> train(const Problem& p, const std::vector<tl::Device>& devices, int steps,
                          double lr, bool print, tl::Tensor* w_out) {
  const int64_t n = p.X.size(0), d = p.X.size(1);
  const std::vector<tl::Tensor> X = tl::parallel::scatter(p.X, devices);
  const std::vector<tl::Tensor> y = tl::parallel::scatter(p.y, devices);
  const size_t k = X.size();
  std::vector<tl::Tensor> w, grad(k), loss(k);
  for (size_t i = 0; i < k; ++i) w.push_back(tl::zeros({d, 1}, devices[i]));
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    // Every device's share is only enqueued here, so the devices compute at the same time.
    for (size_t i = 0; i < k; ++i) {
      const tl::Tensor r = tl::matmul(X[i], w[i]) - y[i];
      grad[i] = tl::matmul(X[i].t(), r) * (2.0 / static_cast<double>(n));  // its part of the sum
      loss[i] = tl::sum(r * r, {0}) / static_cast<double>(n);
    }
    all_reduce_sum(grad);
    all_reduce_sum(loss);
    for (size_t i = 0; i < k; ++i) w[i] -= grad[i] * lr;
    bool identical = true;
    for (size_t i = 1; i < k; ++i) identical = identical && tl::equal(w[i].to(devices[0]), w[0]);
    losses.push_back(loss[0].item<float>());
    if (print)
      std::printf("   step %2d  loss %.6e  weights identical on every device: %s\n", step,
                  losses.back(), identical ? "yes" : "NO");
  }
  if (w_out) *w_out = w[0];
  return losses;
}

void data_parallel_regression(int gpus) {
  constexpr int64_t kRows = 1 << 16, kFeatures = 64;
  constexpr int kSteps = 8;
  constexpr double kLr = 0.4;
  std::vector<tl::Device> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(tl::Device::cuda(i));
  const bool on_cpu = devices.empty();
  if (on_cpu) devices = {tl::Device::cpu(), tl::Device::cpu()};  // two shards, one processor
  std::printf("(c) data-parallel linear regression, y = X w* + noise, X %lld x %lld\n",
              static_cast<long long>(kRows), static_cast<long long>(kFeatures));
  if (on_cpu)
    std::printf(
        "   no GPU: the batch is split into two shards that both live on the CPU, to show the\n"
        "   arithmetic; on GPUs each shard lives on its own device and they compute at once.\n");
  else if (gpus == 1)
    std::printf(
        "   one GPU: the whole batch on cuda:0, so the all-reduce has nothing to add up; with\n"
        "   more GPUs the same code splits the batch over all of them.\n");
  else
    std::printf("   the batch split over %d GPUs, %lld rows each\n", gpus,
                static_cast<long long>((kRows + gpus - 1) / gpus));
  std::printf(
      "   Each device computes the gradient of its shard, 2/n X_i^T (X_i w - y_i); an all-reduce\n"
      "   sums them (NCCL's all-reduce through tl::distributed on two or more GPUs, else copies\n"
      "   through the first device), and every device takes the same step.\n");
  const Problem p = make_problem(kRows, kFeatures);
  tl::Tensor w;
  const std::vector<double> losses = train(p, devices, kSteps, kLr, true, &w);
  // The reference: one device, no split.
  const std::vector<tl::Device> one{devices[0]};
  if (devices.size() > 1) {
    const std::vector<double> ref = train(p, one, kSteps, kLr, false, nullptr);
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i)
      worst = std::max(worst, std::abs(losses[i] - ref[i]) / std::max(ref[i], 1e-30));
    const bool close = tl::allclose(tl::from_vector(losses), tl::from_vector(ref), 1e-4, 1e-9);
    std::printf("   losses equal to those of one %s (allclose): %s (largest relative gap %.1e)\n",
                on_cpu ? "shard" : "GPU", close ? "yes" : "NO", worst);
  }
  std::printf("   distance to w*: %.2e\n",
              tl::sqrt(tl::sum((w.cpu() - p.w_true) * (w.cpu() - p.w_true))).item<float>());
  // Predictions for the whole batch through tl::DataParallel: scatter, run, gather.
  tl::DataParallel predict([](const std::vector<tl::Tensor>& params,
                              const tl::Tensor& x) { return tl::matmul(x, params[0]); },
                           {w}, devices, tl::Device::cpu());
  const tl::Tensor pred = predict(p.X);
  std::printf("   DataParallel predictions equal X w on the CPU (allclose): %s\n\n",
              tl::allclose(pred, tl::matmul(p.X, w.cpu()), 1e-4, 1e-4) ? "yes" : "NO");
}

}  // namespace

int main() {
  // NCCL's NVLink multicast (NVLS) stays off: not every machine that lists it can use it.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  const int gpus = tl::cuda::device_count();
  std::printf("Asynchronous and automatic parallelism: ");
  if (gpus >= 2)
    std::printf("%d CUDA devices.\n", gpus);
  else if (gpus == 1)
    std::printf("one CUDA device. Work on two GPUs at once cannot be shown here; the rest runs.\n");
  else
    std::printf("no CUDA GPU (%s).\nWhat needs a GPU is described; the CPU version of (c) runs.\n",
                tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no device answers"
                                     : "tensorlet was built without its CUDA backend");
  if (gpus > 0) {
    std::printf("Times are taken with every GPU synchronized before and after.\n");
    for (int a = 0; a < gpus; ++a)
      for (int b = 0; b < gpus; ++b)
        if (a != b)
          std::printf("cuda:%d reads cuda:%d %s\n", a, b,
                      tl::cuda::can_access_peer(a, b)
                          ? "directly (peer access)"
                          : "through pinned host memory (no peer access)");
  }
  std::printf("\n");
  try {
    parallel_devices(gpus);
    overlap_copies(gpus);
    data_parallel_regression(gpus);
  } catch (const tl::Error& e) {
    std::fprintf(stderr, "async_multi_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Notebook "async_multi_gpu": asynchronous and automatic parallel computation on several GPUs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "chart.h"
namespace tl = tensorlet;

namespace {

using Clock = std::chrono::steady_clock;
using tl_example::Span;

double ms_since(Clock::time_point origin) {
  return std::chrono::duration<double, std::milli>(Clock::now() - origin).count();
}

// ---- the devices, as nvidia-smi lists them ------------------------------------------------------

void list_devices(int gpus) {
  if (gpus == 0) {
    std::printf(
        "nvidia-smi (the notebook's `! nvidia-smi`): no CUDA device to list. On a GPU machine\n"
        "this prints each device's name, memory used / total (tl::cuda::mem_get_info), SM count\n"
        "and compute capability (tl::cuda::get_device_properties).\n\n");
    return;
  }
  std::printf("The devices, as nvidia-smi lists them (the notebook's `! nvidia-smi`):\n");
  const char* rule =
      "+------------------------------------------------------------------------------+\n";
  std::printf(
      "%s| GPU  Name                              Memory-Usage          SMs  Capability |\n%s",
      rule, rule);
  for (int d = 0; d < gpus; ++d) {
    const tl::cuda::DeviceProperties p = tl::cuda::get_device_properties(d);
    const auto [free, total] = tl::cuda::mem_get_info(d);
    const double mib = 1024.0 * 1024.0;
    char usage[48];
    std::snprintf(usage, sizeof usage, "%.0fMiB / %.0fMiB", static_cast<double>(total - free) / mib,
                  static_cast<double>(total) / mib);
    char capability[16];
    std::snprintf(capability, sizeof capability, "%d.%d", p.major, p.minor);
    std::printf("| %3d  %-33.33s %-20s %4d  %10s |\n", d, p.name.c_str(), usage,
                p.multi_processor_count, capability);
  }
  std::printf(
      "%s(Used memory counts every process on the device and each CUDA context, this one's\n"
      "included: the notebook's K80s showed 7695MiB / 11441MiB used by other jobs.)\n\n",
      rule);
}

// ---- (0) imperative programming -----------------------------------------------------------------

void imperative() {
  std::printf("(0) imperative programming: fancy_func(1, 2, 3, 4)\n");
  auto add = [](const tl::Tensor& a, const tl::Tensor& b) { return a + b; };
  auto fancy_func = [&](const tl::Tensor& a, const tl::Tensor& b, const tl::Tensor& c,
                        const tl::Tensor& d) {
    const tl::Tensor e = add(a, b);
    const tl::Tensor f = add(c, d);
    return add(e, f);
  };
  const tl::Tensor g = fancy_func(tl::scalar_tensor(1.0), tl::scalar_tensor(2.0),
                                  tl::scalar_tensor(3.0), tl::scalar_tensor(4.0));
  std::printf(
      "   = %g. Each add ran when it was called (on a GPU: was enqueued when called), as in\n"
      "   PyTorch; like the notebook we skip the symbolic version: tensorlet has none.\n"
      "   Asynchronous computation: on a GPU an op returns once its kernel is queued, and only\n"
      "   what the host must see (item(), .cpu(), printing) waits. TL_LAUNCH_BLOCKING=1 (PyTorch:\n"
      "   CUDA_LAUNCH_BLOCKING=1) makes every launch wait, so a kernel's error names its op.\n\n",
      g.item<double>());
}

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

// One run of `work` traced per device: each device's span runs from the host's first enqueue on
// it (the GPU is idle, so its first kernel starts then) to the moment an event recorded behind
// its last kernel completes, found by polling every device's event. Spans are appended to `out`,
// shifted by `offset` ms; returns the run's end (ms after its start).
struct Trace {
  Clock::time_point origin;
  std::vector<double> first_enqueue;  // ms after origin, -1: nothing enqueued on the device
};

double traced_run(int gpus, const char* label, double offset, Trace& trace,
                  const std::function<void()>& work, std::vector<Span>& out) {
  synchronize_all(gpus);
  trace.first_enqueue.assign(gpus, -1.0);
  trace.origin = Clock::now();
  work();
  std::vector<tl::cuda::Event> done;
  for (int d = 0; d < gpus; ++d) {
    done.emplace_back();
    done.back().record(tl::cuda::Stream::current(d));
  }
  std::vector<double> end(gpus, -1.0);
  for (int left = gpus; left > 0;)
    for (int d = 0; d < gpus; ++d)
      if (end[d] < 0 && done[d].query()) {
        end[d] = ms_since(trace.origin);
        --left;
      }
  double last = 0;
  for (int d = 0; d < gpus; ++d) {
    if (trace.first_enqueue[d] < 0) continue;
    out.push_back(
        {"cuda:" + std::to_string(d), label, offset + trace.first_enqueue[d], offset + end[d]});
    last = std::max(last, end[d]);
  }
  return last;
}

// One size of (a): `count` n x n matmuls on GPU 0, on GPU 1, then on both from this thread.
struct Split {
  double t0 = 0, t1 = 0, both = 0, naive = 0;  // seconds
  double launch_us = 0;  // the host's time to enqueue one matmul (a batch well under the queue)
  // The same work as CUDA graphs of kRound matmuls, one per GPU (0: not run).
  double g0 = 0, g1 = 0, g_both = 0;
};

// Not in the notebook: the same matmuls as CUDA graphs of `round` matmuls, one per GPU, captured
// after the eager runs set up cuBLAS; alone, then replayed alternately from this thread.
template <class Untraced>
void graph_split(const std::vector<tl::Tensor>& x, int count, int round, Untraced& untraced,
                 Split& r) {
  std::vector<tl::cuda::Graph> graphs(x.size());
  for (size_t d = 0; d < x.size(); ++d)
    graphs[d].capture({static_cast<int>(d)}, [&] {
      for (int i = 0; i < round; ++i) (void)tl::matmul(x[d], x[d]);
    });
  auto replay_on = [&](size_t d) {
    for (int done = 0; done < count; done += round) graphs[d].replay();
  };
  r.g0 = untraced([&] { replay_on(0); });
  if (x.size() < 2) return;
  r.g1 = untraced([&] { replay_on(1); });
  r.g_both = untraced([&] {
    for (int done = 0; done < count; done += round) {
      graphs[0].replay();
      graphs[1].replay();
    }
  });
}

// Each run is also drawn on `timeline` when it is given; `graphs`: also as CUDA graphs.
Split run_split(int gpus, int n, int count, std::vector<Span>* timeline, bool graphs) {
  constexpr int kRound = 100;  // matmuls per device before the host turns to the other one
  std::vector<tl::Tensor> x;
  for (int d = 0; d < std::min(gpus, 2); ++d) x.push_back(tl::rand({n, n}, tl::Device::cuda(d)));
  Trace trace;
  // `count` matmuls on device d; the device is made current once, not switched for every op.
  auto run_on = [&](int d, int k) {
    if (!trace.first_enqueue.empty() && trace.first_enqueue[d] < 0)
      trace.first_enqueue[d] = ms_since(trace.origin);
    tl::cuda::DeviceGuard on(d);
    for (int i = 0; i < k; ++i) (void)tl::matmul(x[d], x[d]);
  };
  auto untraced = [&](const std::function<void()>& work) {
    trace.first_enqueue.clear();
    return seconds(gpus, 3, work);
  };
  const int used = std::min(gpus, 2);
  double offset = 0;
  auto trace_once = [&](const char* label, const std::function<void()>& work) {
    if (timeline == nullptr) return;
    offset += traced_run(used, label, offset, trace, work, *timeline) + 2.0;  // 2 ms apart
  };
  Split r;
  auto alone0 = [&] { run_on(0, count); };
  r.t0 = untraced(alone0);  // also warms up: cuBLAS picks its kernel for the size once
  trace_once("GPU 0 alone", alone0);
  // The host alone: 200 launches return long before the launch queue (about a thousand) fills.
  trace.first_enqueue.clear();
  synchronize_all(gpus);
  const auto start = Clock::now();
  run_on(0, 200);
  r.launch_us = ms_since(start) * 1e3 / 200;
  synchronize_all(gpus);
  if (gpus < 2) {
    if (graphs) graph_split(x, count, kRound, untraced, r);
    return r;
  }
  auto alone1 = [&] { run_on(1, count); };
  r.t1 = untraced(alone1);
  trace_once("GPU 1 alone", alone1);
  auto rounds = [&] {  // both from one thread, a round of work to each device in turn
    for (int done = 0; done < count; done += kRound) {
      run_on(0, std::min(kRound, count - done));
      run_on(1, std::min(kRound, count - done));
    }
  };
  auto in_order = [&] {  // the notebook's order: everything for GPU 0, then for GPU 1
    run_on(0, count);
    run_on(1, count);
  };
  r.both = untraced(rounds);
  trace_once("both, in rounds", rounds);
  r.naive = untraced(in_order);
  trace_once("both, GPU 0's first", in_order);
  if (graphs) graph_split(x, count, kRound, untraced, r);
  return r;
}

// The words follow the ratios: near 0.5 the devices overlapped fully, near 1 they took turns.
const char* overlap_verdict(double r) {
  return r < 0.6   ? "the two GPUs ran at the same time almost throughout"
         : r < 0.9 ? "the two GPUs overlapped part of the time"
                   : "the two GPUs took turns: no overlap";
}

// Part (a)'s graph lines, after the eager ones.
void print_graphs(const Split& r, int count) {
  if (r.g0 <= 0) return;
  std::printf(
      "   As CUDA graphs of 100 matmuls, one per GPU (not in the notebook):\n"
      "   GPU 0 alone:                         %8.2f ms  (%.2f us per matmul; %.2fx eager)\n",
      r.g0 * 1e3, r.g0 * 1e6 / count, r.t0 / r.g0);
  if (r.g1 <= 0) return;
  const double ratio = r.g_both / (r.g0 + r.g1);
  std::printf("   GPU 1 alone:                         %8.2f ms\n", r.g1 * 1e3);
  std::printf("   both, replayed alternately:          %8.2f ms  = %.2f x (GPU 0 + GPU 1)\n",
              r.g_both * 1e3, ratio);
  std::printf(
      "   With graphs the host launches 100 matmuls in one call, so it no longer sets the\n"
      "   pace: %s (%.2f x)%s.\n",
      overlap_verdict(ratio), ratio,
      ratio < 0.75 ? ": two GPUs take about the time of one, as the notebook claims"
                   : "; the notebook's claim does not hold here even so");
}

void print_split(const Split& r, int n, int count) {
  const double per_us = r.t0 * 1e6 / count;
  std::printf(
      "   GPU 0 alone:                         %8.2f ms  (%.2f us per matmul; the host\n"
      "                                                   launches one in %.2f us)\n",
      r.t0 * 1e3, per_us, r.launch_us);
  if (r.t1 <= 0) return print_graphs(r, count);
  std::printf("   GPU 1 alone:                         %8.2f ms\n", r.t1 * 1e3);
  const double r_both = r.both / (r.t0 + r.t1), r_naive = r.naive / (r.t0 + r.t1);
  std::printf("   both, in rounds of 100 per GPU:      %8.2f ms  = %.2f x (GPU 0 + GPU 1)\n",
              r.both * 1e3, r_both);
  std::printf("   both, all of GPU 0's work first:     %8.2f ms  = %.2f x (GPU 0 + GPU 1)\n",
              r.naive * 1e3, r_naive);
  std::printf("   %dx%d, in rounds: %s (%.2f x);\n   GPU 0's work first: %s (%.2f x).\n", n, n,
              overlap_verdict(r_both), r_both, overlap_verdict(r_naive), r_naive);
  if (r_both >= 0.9 && r.launch_us >= 0.75 * per_us) {
    std::printf(
        "   Why: the host is the bottleneck. A matmul this small costs the host %.2f us to\n"
        "   launch and the GPU no more than that (%.2f us each, GPU 0 alone), so each GPU\n"
        "   waits for its next kernel and the one host thread that feeds both cannot go\n"
        "   faster for having two: the total is the host's, %d launches long. The\n"
        "   notebook's K80s took 63 us per matmul, far more than a launch, so they overlapped.\n",
        r.launch_us, per_us, 2 * count);
  } else if (r_both >= 0.75 && r.launch_us >= 0.75 * per_us) {
    std::printf(
        "   Why only partly: each matmul returns as soon as its kernel is queued, so the host\n"
        "   feeds GPU 1 while GPU 0 works; but a launch costs the host %.2f us against %.2f us\n"
        "   of GPU work, so one thread cannot keep two GPUs fed and each waits for its next\n"
        "   kernel part of the time. The graphs below launch 100 matmuls per call.\n",
        r.launch_us, per_us);
  } else if (r_both < 0.9) {
    std::printf(
        "   Why: each matmul returns as soon as its kernel is queued (%.2f us of host time\n"
        "   against %.2f us of GPU work), so while GPU 0 works through its queue the host\n"
        "   already feeds GPU 1.%s\n",
        r.launch_us, per_us,
        r_naive > r_both + 0.05
            ? " The queue of pending launches per device is bounded (about a\n"
              "   thousand), so a host that queues all of GPU 0's matmuls first blocks until\n"
              "   GPU 0 has nearly finished before it reaches GPU 1 (the chart shows when each\n"
              "   GPU got its first kernel); handing out work in rounds keeps both queues filled."
            : "");
  } else {
    std::printf(
        "   Why not: the host launches a matmul in %.2f us against %.2f us of GPU work, yet\n"
        "   the GPUs did not overlap; something else serialized them (a shared resource, or\n"
        "   the launch queue).\n",
        r.launch_us, per_us);
  }
  print_graphs(r, count);
}

void parallel_devices(int gpus, std::vector<Span>& timeline) {
  constexpr int kSmall = 20000, kLarge = 2000;
  std::printf("(a) %d matmuls of 100x100 float32 on one GPU, then on two at once\n", kSmall);
  if (gpus == 0) {
    std::printf(
        "   needs a CUDA GPU (two to show them working at once). What it shows: an op only\n"
        "   enqueues its kernel on its device's stream and returns, so one host thread can keep\n"
        "   two GPUs busy, and the work of both takes about as long as that of one.\n"
        "   The notebook's two K80s: 1.2626 s and 1.1179 s alone, 1.8384 s for both (0.77x\n"
        "   their sum). On a GPU the same work also runs as CUDA graphs of 100 matmuls, which\n"
        "   the host launches in one call each.\n\n");
    return;
  }
  const Split small = run_split(gpus, 100, kSmall, nullptr, true);
  print_split(small, 100, kSmall);
  if (gpus < 2)
    std::printf(
        "   GPU 1: this machine has one GPU, so running on two at once cannot be shown here.\n");
  std::printf(
      "   The notebook (two K80s, GPU 0's work first): 1.8384 s = 0.77 x (1.2626 + 1.1179 s).\n");
  std::printf(
      "\n(a') the same with %d matmuls of 1000x1000: each gives the GPU more work than a "
      "launch\n",
      kLarge);
  const Split large =
      run_split(gpus, 1000, kLarge, &timeline, false);  // the chart: where they overlap
  print_split(large, 1000, kLarge);
  if (gpus < 2)
    std::printf("   (with one GPU there is nothing to overlap; two GPUs would halve this)\n");
  std::printf("\n");
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
  const double saved = 1.0 - overlapped / sequential;
  if (saved > 0.05)
    std::printf(
        "   Overlapping saved %.0f%% of the sequential time (%.2f ms of the %.2f ms copies).\n",
        100.0 * saved, (sequential - overlapped) * 1e3, copies * 1e3);
  else
    std::printf(
        "   Overlapping saved nothing measurable here (%.0f%%): the copies are too short next to\n"
        "   the matmuls, or the copy engine was busy with other work.\n",
        100.0 * saved);
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
// On the CPU, `timeline` (when given) gets each shard's gradient, the all-reduce and the update of
// every step as spans of host time: CPU ops run when called, so host time is their run time.
std::vector<double> train(const Problem& p, const std::vector<tl::Device>& devices, int steps,
                          double lr, bool print, tl::Tensor* w_out,
                          std::vector<Span>* timeline = nullptr) {
  const auto origin = Clock::now();
  double mark = 0;
  // Closes the span that began at `mark` on `lane`.
  auto span = [&](const std::string& lane, const std::string& label) {
    const double now = ms_since(origin);
    if (timeline) timeline->push_back({lane, label, mark, now});
    mark = now;
  };
  const int64_t n = p.X.size(0), d = p.X.size(1);
  const std::vector<tl::Tensor> X = tl::parallel::scatter(p.X, devices);
  const std::vector<tl::Tensor> y = tl::parallel::scatter(p.y, devices);
  const size_t k = X.size();
  std::vector<tl::Tensor> w, grad(k), loss(k);
  for (size_t i = 0; i < k; ++i) w.push_back(tl::zeros({d, 1}, devices[i]));
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    // Every device's share is only enqueued here, so the devices compute at the same time.
    mark = ms_since(origin);
    for (size_t i = 0; i < k; ++i) {
      const tl::Tensor r = tl::matmul(X[i], w[i]) - y[i];
      grad[i] = tl::matmul(X[i].t(), r) * (2.0 / static_cast<double>(n));  // its part of the sum
      loss[i] = tl::sum(r * r, {0}) / static_cast<double>(n);
      span("cpu: shard " + std::to_string(i), "grad " + std::to_string(step));
    }
    all_reduce_sum(grad);
    all_reduce_sum(loss);
    span("cpu: all-reduce", "sum");
    for (size_t i = 0; i < k; ++i) w[i] -= grad[i] * lr;
    span("cpu: update", "step");
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

void data_parallel_regression(int gpus, std::vector<Span>& timeline) {
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
  const std::vector<double> losses =
      train(p, devices, kSteps, kLr, true, &w, on_cpu ? &timeline : nullptr);
  if (on_cpu) {
    // The chart's numbers: time per step in each lane, and whether the shards ever overlapped.
    double shard0 = 0, shard1 = 0, reduce = 0, overlap = 0;
    for (const Span& a : timeline) {
      const double d = a.end - a.start;
      if (a.lane == "cpu: shard 0") shard0 += d;
      if (a.lane == "cpu: shard 1") shard1 += d;
      if (a.lane == "cpu: all-reduce") reduce += d;
      for (const Span& b : timeline)
        if (a.lane == "cpu: shard 0" && b.lane == "cpu: shard 1")
          overlap += std::max(0.0, std::min(a.end, b.end) - std::max(a.start, b.start));
    }
    std::printf(
        "   Per step on the CPU: shard 0 %.2f ms, shard 1 %.2f ms, all-reduce %.3f ms; the shards\n"
        "   overlapped %.2f ms in all: one host thread runs CPU ops as they are called, so the\n"
        "   shards take turns (the chart); on GPUs the same loop only enqueues and they overlap.\n",
        shard0 / kSteps, shard1 / kSteps, reduce / kSteps, overlap);
  }
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

// ---- (d) the notebook's nn.Linear(10, 1) wrapped in DataParallel -------------------------------

void linear_data_parallel(int gpus) {
  std::printf(
      "(d) the notebook's net = torch.nn.Linear(10, 1).cuda(), then torch.nn.DataParallel(net)\n");
  tl::manual_seed(0);
  tl::nn::Linear net(10, 1);
  if (gpus > 0) net->to(tl::Device::cuda(0));
  std::ostringstream printed_net, printed_model;
  printed_net << net;
  std::printf("   net (on %s):\n   %s\n", gpus > 0 ? "cuda:0" : "the CPU: no GPU",
              printed_net.str().c_str());
  tl::DataParallel model(net);  // every GPU, as torch's device_ids=None; the CPU without
  printed_model << model;
  std::string shown = printed_model.str();
  for (size_t at = shown.find('\n'); at != std::string::npos; at = shown.find('\n', at + 4))
    shown.replace(at, 1, "\n   ");
  std::printf("   DataParallel(net):\n   %s\n", shown.c_str());
  constexpr int64_t kRows = 1000;
  const tl::Tensor batch = tl::rand({kRows, 10}, net->weight.device());
  const tl::Tensor out = model(batch);
  const size_t k = model.devices().size();
  const int64_t chunk = (kRows + static_cast<int64_t>(k) - 1) / static_cast<int64_t>(k);
  std::string split;
  for (int64_t done = 0; done < kRows; done += chunk)
    split += (split.empty() ? "" : " + ") + std::to_string(std::min(chunk, kRows - done));
  std::printf(
      "   model(batch of %lld x 10): output [%lld, %lld] on %s;\n"
      "   rows split over %zu device%s as %s; equal to net(batch) (allclose): %s\n",
      static_cast<long long>(kRows), static_cast<long long>(out.size(0)),
      static_cast<long long>(out.size(1)), out.device().str().c_str(), k, k == 1 ? "" : "s",
      split.c_str(), tl::allclose(out, net(batch), 1e-5, 1e-6) ? "yes" : "NO");
  std::printf(
      "   DataParallel copies the layer's weight and bias to each device once, then every call\n"
      "   scatters the batch, runs the layer on each slice (only enqueued on GPUs, so they\n"
      "   compute at once) and gathers the outputs on the first device.%s\n\n",
      gpus < 2 ? "\n   With fewer than two GPUs there is one replica (torch's DataParallel too)."
               : "");
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
    list_devices(gpus);
    imperative();
    std::vector<Span> gpu_timeline, cpu_timeline;
    parallel_devices(gpus, gpu_timeline);
    overlap_copies(gpus);
    data_parallel_regression(gpus, cpu_timeline);
    linear_data_parallel(gpus);
    // The chart: what each GPU did in (a'), to scale; without GPUs, what the CPU did in (c).
    const std::string path =
        gpus > 0 ? tl_example::write_chart(
                       "async_multi_gpu.svg",
                       tl_example::timeline_svg("(a') 2000 matmuls of 1000x1000: when each GPU "
                                                "was busy (first enqueue to last kernel done)",
                                                "ms", gpu_timeline))
                 : tl_example::write_chart(
                       "async_multi_gpu.svg",
                       tl_example::timeline_svg("(c) no GPU: two data-parallel shards take turns "
                                                "on one CPU (8 steps)",
                                                "ms", cpu_timeline));
    std::printf("chart: %s\n", path.c_str());
  } catch (const std::exception& e) {  // tl::Error, or a chart that cannot be written
    std::fprintf(stderr, "async_multi_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}

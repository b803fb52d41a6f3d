// Profiler overhead benchmark: docs/DESIGN.md rows P1 and P2 — the cost per op of 10x10 adds with
// no profiler, a CPU-only profiler, CPU + CUDA activities (P1) and a CPU profiler with C++
// call-site stacks (with_stack, P2), on CPU tensors and (with a GPU) CUDA tensors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "bench_util.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/profiler/recorder.h"

namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCalls = 20000;  // adds per timed repetition
constexpr int kWarmup = 2;
constexpr int kReps = 41;

// Keeps results alive so the compiler cannot drop the work that made them.
volatile double g_sink = 0;

// One configuration: `setup` and `teardown` run outside the clock (starting a profile, freeing
// its events); `body` is timed, and `finish` (stopping the profile: flushing and correlating
// activity records) is timed on its own, since a profiler can shift work from the ops to stop().
struct Workload {
  std::function<void()> setup = [] {};
  std::function<void()> body;
  std::function<void()> finish = [] {};
  std::function<void()> teardown = [] {};
};

struct Timing {
  double body_s = 0;    // median seconds of `body`
  double finish_s = 0;  // median seconds of `finish`
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using tl_bench::median;

// Each round runs every workload once, so the configurations see the same machine state (clock,
// cache, neighbours) and slow drift cancels out of their differences.
std::vector<Timing> interleaved_medians(const std::vector<Workload>& workloads) {
  std::vector<std::vector<double>> body(workloads.size()), finish(workloads.size());
  for (int r = 0; r < kWarmup + kReps; ++r)
    for (size_t w = 0; w < workloads.size(); ++w) {
      workloads[w].setup();
      auto start = Clock::now();
      workloads[w].body();
      const double b = seconds_since(start);
      start = Clock::now();
      workloads[w].finish();
      const double f = seconds_since(start);
      workloads[w].teardown();
      if (r >= kWarmup) {
        body[w].push_back(b);
        finish[w].push_back(f);
      }
    }
  std::vector<Timing> out;
  for (size_t w = 0; w < workloads.size(); ++w) out.push_back({median(body[w]), median(finish[w])});
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

using tl_bench::fmt;

void header() {
  std::printf("%-3s %-36s %-12s %-12s %-12s %-10s %s\n", "id", "workload", "per op", "added",
              "stop()/op", "target", "met");
}

// What a row's target bounds: the time added per op plus stop()'s share (P1), or the time added
// per op while recording (P2: symbolizing the stacks is deferred to stop() by design, and its
// share is printed beside it).
enum class Bound { AddedAndStop, Added };

// `target_us` < 0: no target for this row (printed for reference).
void row(const char* id, const char* workload, double per_op_us, std::optional<double> added_us,
         double stop_us, double target_us, Bound bound = Bound::AddedAndStop) {
  const std::string added = added_us ? fmt("%+.3f us", *added_us) : "-";
  const std::string target = target_us < 0 ? "-" : fmt("<= %.1f us", target_us);
  const std::string stop = added_us ? fmt("%.3f us", stop_us) : "-";
  const char* met = "-";
  if (target_us >= 0 && added_us) {
    const double bounded = *added_us + (bound == Bound::AddedAndStop ? stop_us : 0.0);
    met = bounded <= target_us ? "yes" : "NO";
  }
  std::printf("%-3s %-36s %-12s %-12s %-12s %-10s %s\n", id, workload,
              fmt("%.3f us", per_op_us).c_str(), added.c_str(), stop.c_str(), target.c_str(), met);
}

// The three configurations on tensors of one device; `sync` waits for the device so a
// repetition's time is that of its work, not of enqueueing it.
void measure(const char* device_name, tl::Device device, bool has_cuda,
             const std::function<void()>& sync) {
  const tl::Tensor a = tl::rand({10, 10}, device), b = tl::rand({10, 10}, device);
  auto adds = [&, sync] {
    sync();
    for (int i = 0; i < kCalls; ++i) g_sink = g_sink + static_cast<double>(tl::add(a, b).numel());
    sync();
  };
  // The profile lives between setup and teardown; finish stops it (waiting for the device, and
  // with CUDA activity, gathering its records).
  // Each stop()'s phases, per configuration, for the breakdown printed under the rows.
  auto phases = std::make_shared<std::vector<std::vector<prof::detail::StopPhases>>>();
  auto profiled = [&](std::vector<prof::Activity> activities, bool with_stack = false) {
    auto profile = std::make_shared<std::unique_ptr<prof::Profile>>();
    phases->emplace_back();
    const size_t slot = phases->size() - 1;
    Workload w;
    w.setup = [profile, activities, with_stack] {
      *profile = std::make_unique<prof::Profile>(
          prof::ProfileOptions{.activities = activities, .with_stack = with_stack});
    };
    w.body = adds;
    w.finish = [profile, phases, slot] {
      (*profile)->stop();
      (*phases)[slot].push_back(prof::detail::last_stop_phases());
    };
    w.teardown = [profile] { profile->reset(); };
    return w;
  };
  std::vector<Workload> workloads;
  workloads.push_back(Workload{.body = adds});
  workloads.push_back(profiled({prof::Activity::CPU}));
  workloads.push_back(profiled({prof::Activity::CPU}, /*with_stack=*/true));
  if (has_cuda) workloads.push_back(profiled({prof::Activity::CPU, prof::Activity::CUDA}));
  const auto t = interleaved_medians(workloads);

  const double none_us = t[0].body_s / kCalls * 1e6;
  auto per_op = [](const Timing& x) { return x.body_s / kCalls * 1e6; };
  auto stop_per_op = [](const Timing& x) { return x.finish_s / kCalls * 1e6; };
  const std::string what = std::string("10x10 add, ") + device_name;
  row("P1", (what + ", no profiler").c_str(), none_us, std::nullopt, 0.0, -1);
  row("P1", (what + ", CPU profiler").c_str(), per_op(t[1]), per_op(t[1]) - none_us,
      stop_per_op(t[1]), -1);
  if (has_cuda)
    row("P1", (what + ", CPU + CUDA").c_str(), per_op(t[3]), per_op(t[3]) - none_us,
        stop_per_op(t[3]), 1.5);
  row("P2", (what + ", CPU, with_stack").c_str(), per_op(t[2]), per_op(t[2]) - none_us,
      stop_per_op(t[2]), prof::call_stacks_available() ? 2.0 : -1, Bound::Added);
  // Where stop() goes with CUDA activity (medians per phase, per op recorded).
  if (has_cuda && !phases->back().empty()) {
    const auto& p = phases->back();  // the CPU + CUDA configuration, added last
    auto phase_us = [&](int64_t prof::detail::StopPhases::*field) {
      std::vector<double> v;
      for (const auto& x : p) v.push_back(static_cast<double>(x.*field) * 1e-3 / kCalls);
      return median(v);
    };
    using SP = prof::detail::StopPhases;
    std::printf(
        "    stop()/op with CPU + CUDA on %s: device sync %.3f us, CUPTI flush %.3f us, parse "
        "%.3f us, CPU events %.3f us, GPU merge %.3f us\n",
        device_name, phase_us(&SP::sync_ns), phase_us(&SP::flush_ns), phase_us(&SP::parse_ns),
        phase_us(&SP::events_ns), phase_us(&SP::merge_ns));
  }
}

// The hook every op opens, alone: with no profiler running it should cost about one relaxed
// atomic load and a few thread-local stores, i.e. around a nanosecond. The same loop without the
// hook is timed interleaved with it and subtracted (the sink's volatile add is most of the loop).
double hook_ns() {
  constexpr int kHooks = 10000000;
  std::vector<double> with_hook, without;
  for (int r = 0; r < kWarmup + kReps / 4; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < kHooks; ++i) {
      prof::OpScope scope("bench::hook");
      g_sink = g_sink + (scope.active() ? 1.0 : 0.0);
    }
    const double h = seconds_since(start);
    start = Clock::now();
    for (int i = 0; i < kHooks; ++i) g_sink = g_sink + (i < 0 ? 1.0 : 0.0);
    const double n = seconds_since(start);
    if (r >= kWarmup) {
      with_hook.push_back(h);
      without.push_back(n);
    }
  }
  return (median(with_hook) - median(without)) / kHooks * 1e9;
}

}  // namespace

int main() {
  const bool gpu = tl::cuda::is_available();
  std::printf("tensorlet profiler overhead (docs/DESIGN.md P1, P2): %d threads, %s%s\n",
              tl::get_num_threads(), cpu_model().c_str(), gpu ? ", cuda:0" : ", no CUDA GPU");
  std::printf(
      "%d adds per repetition; medians of %d interleaved repetitions after %d warm-up "
      "(steady_clock)\n",
      kCalls, kReps, kWarmup);
  std::printf(
      "added = per op minus the same run's no-profiler per op; stop()/op = stopping the profile, "
      "per op recorded.\nP1's target applies to added + stop()/op with CPU + CUDA activities; "
      "P2's to added (capturing\nreturn addresses per op; stop() symbolizes them, its share "
      "printed beside). %s\n\n",
      prof::call_stacks_available()
          ? "This build symbolizes C++ call sites (libdw)."
          : "This build has no libdw: with_stack records scope names only, P2 has no target.");
  header();
  measure("CPU", tl::Device::cpu(), true, [] {});
  if (gpu) measure("cuda:0", tl::Device::cuda(0), true, [] { tl::cuda::synchronize(); });

  const double hook = hook_ns();
  std::printf(
      "\nThe op hook alone, no profiler running: %.2f ns per op (its loop minus the same loop "
      "without it; about 0: it hides in the loop's own latency).\n",
      hook);
  if (!gpu)
    std::printf(
        "CUDA tensor rows need a CUDA GPU; the CPU rows above include the CPU + CUDA "
        "configuration on CPU ops.\n");
  return 0;
}

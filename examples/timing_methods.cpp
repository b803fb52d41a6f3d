// Notebook "timing_methods": three ways to time asynchronous GPU code, and the Timer beside them.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include <tensorlet.h>
namespace tl = tensorlet;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kIterations = 10;

// The work being timed: four elementwise ops, ten times. On a GPU each op only enqueues a kernel
// and returns, so the host finishes this loop long before the device does.
void four_ops(const tl::Tensor& a, const tl::Tensor& b) {
  for (int i = 0; i < kIterations; ++i) {
    tl::Tensor c = a * b;
    tl::Tensor d = a + b;
    tl::Tensor e = tl::sin(a);
    tl::Tensor f = tl::cos(b);
  }
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// One run timed three ways at once: host clock at A, B (loop returned) and C (device idle again),
// and CUDA events D (before A) and E (after B) on the stream the ops go to.
struct ThreeWays {
  double a_to_b = 0;
  double a_to_c = 0;
  std::optional<double> d_to_e;  // only with a GPU
};

ThreeWays time_three_ways(const tl::Tensor& a, const tl::Tensor& b, bool gpu) {
  ThreeWays t;
  std::optional<tl::cuda::Event> d, e;
  if (gpu) {
    tl::cuda::synchronize();  // start from an idle device, so earlier work is not counted
    d.emplace(true);
    e.emplace(true);
    d->record();
  }
  const Clock::time_point A = Clock::now();
  four_ops(a, b);
  const Clock::time_point B = Clock::now();
  if (gpu) {
    e->record();
    tl::cuda::synchronize();
  }
  const Clock::time_point C = Clock::now();
  t.a_to_b = ms_between(A, B);
  t.a_to_c = ms_between(A, C);
  if (gpu) t.d_to_e = d->elapsed_time(*e);
  return t;
}

void print_three_ways(const ThreeWays& t, bool gpu) {
  std::printf("  (A->B) host clock, no synchronize : %9.3f ms  %s\n", t.a_to_b,
              gpu ? "the time the host took to enqueue the kernels; the GPU was still busy at B."
                  : "CPU ops finish before they return, so this is already the whole time.");
  std::printf(
      "  (A->C) host clock, synchronize    : %9.3f ms  %s\n", t.a_to_c,
      gpu ? "the wall time until the GPU finished: what the caller waits, overheads included."
          : "the same as A->B on the CPU: there is nothing in flight to wait for.");
  if (t.d_to_e) {
    std::printf(
        "  (D->E) CUDA events                : %9.3f ms  %s\n", *t.d_to_e,
        "the device's own clock between two events on the stream: the GPU time of the work.");
  } else {
    std::printf("  (D->E) CUDA events                : %9s     %s\n", "-",
                "needs a CUDA GPU (events are recorded by the device).");
  }
}

}  // namespace

int main() {
  const bool gpu = tl::cuda::is_available();
  // 512^3 float32 is 512 MiB per tensor: fine on a GPU, too slow for a lesson on a CPU (64^3 keeps
  // the CPU version to a few seconds, Timer included).
  const int64_t n = gpu ? 512 : 64;
  const tl::Device device = gpu ? tl::Device::cuda(0) : tl::Device::cpu();
  std::printf(
      "Four elementwise ops (a*b, a+b, sin(a), cos(b)) on two %lldx%lldx%lld float32 "
      "tensors on %s, %d times.\n",
      static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
      device.str().c_str(), kIterations);
  if (!gpu) {
    std::printf(
        "No CUDA GPU here: this is the CPU version on smaller tensors. The lesson proper\n"
        "(host clock without vs with synchronize, and CUDA events) needs a CUDA GPU.\n");
  }
  tl::Tensor a = tl::rand({n, n, n}, device);
  tl::Tensor b = tl::rand({n, n, n}, device);
  if (gpu) tl::cuda::synchronize();

  // A process has one first run, so the cold timing is taken now, before anything ran these ops;
  // it is printed second, after the warm one.
  const ThreeWays cold = time_three_ways(a, b, gpu);
  four_ops(a, b);  // warm-up: kernels loaded, allocator cache filled, threads started
  const ThreeWays warm = time_three_ways(a, b, gpu);

  std::printf("\n1. After a warm-up run\n");
  print_three_ways(warm, gpu);

  // The Timer does what A->C does right (synchronize before starting and before stopping the
  // clock), after its own warm-up, over many blocks, and reports the median.
  tl::bench::Timer timer("10 x (a*b, a+b, sin a, cos b)", [&] { four_ops(a, b); },
                         {.sub_label = device.str(), .device = device});
  const tl::bench::Measurement m = timer.blocked_autorange(0.5);
  std::printf(
      "  tl::bench::Timer                  : %9.3f ms  median of %zu block%s of %lld "
      "call%s, IQR %.3f ms%s\n",
      m.median() * 1e3, m.raw_times.size(), m.raw_times.size() == 1 ? "" : "s",
      static_cast<long long>(m.number_per_run), m.number_per_run == 1 ? "" : "s", m.iqr() * 1e3,
      gpu ? ", device synchronized around each block." : ".");
  if (gpu) {
    const std::vector<double> q =
        tl::bench::do_bench([&] { four_ops(a, b); }, {.rep_ms = 300, .quantiles = {0.5}});
    std::printf(
        "  tl::bench::do_bench               : %9.3f ms  median device time per call "
        "(CUDA events, L2 flushed between calls).\n",
        q[0]);
  } else {
    std::printf(
        "  tl::bench::do_bench               : %9s     needs a CUDA GPU (it times with "
        "CUDA events).\n",
        "-");
  }

  std::printf("\n2. Without warm-up (the first run of the process)\n");
  print_three_ways(cold, gpu);
  std::printf("  %s\n",
              gpu ? "The first run also pays one-time costs (kernels loaded onto the GPU, the "
                    "allocator's cudaMalloc\n  calls for the outputs); a benchmark without "
                    "warm-up reports them as if every run paid them."
                  : "The first run also pays one-time costs (fresh pages of memory for the "
                    "outputs, threads\n  starting); a benchmark without warm-up reports them as "
                    "if every run paid them.");

  std::printf("\nFull Timer measurement:\n");
  std::cout << m;
  return 0;
}

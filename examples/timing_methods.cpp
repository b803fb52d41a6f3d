// Notebook 002 ("measuring run time"): host clock with and without synchronize, CUDA events.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <chart.h>
#include <tensorlet/tensorlet.h>
namespace tl = tensorlet;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRepeat = 10;  // the notebook's repeat
constexpr int kWarmup = 5;   // and warmup

// One iteration of the notebook's loop body. On a GPU each op only enqueues a kernel and
// returns, so the host finishes the loop long before the device does.
void four_ops(const tl::Tensor& a, const tl::Tensor& b) {
  tl::Tensor c = a * b;
  tl::Tensor d = a + b;
  tl::Tensor e = tl::sin(a);
  tl::Tensor f = tl::cos(b);
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// One measurement, the notebook's points in ms from A: B (host loop returned), C (after
// synchronize), and E - D from the CUDA events (GPU only).
struct Points {
  int repeat = 0;
  double b = 0, c = 0;
  std::optional<double> d_to_e;
  // Per-iteration averages, as the notebook prints them.
  double cpu_average() const { return b / repeat; }
  double gpu_average() const { return c / repeat; }
  std::optional<double> event_average() const {
    if (!d_to_e) return std::nullopt;
    return *d_to_e / repeat;
  }
};

// The notebook's order: A, D.record(), the loop, E.record(), B, synchronize, C. The events are
// created before A (the notebook creates them after A, which puts their creation in B - A).
Points measure(const tl::Tensor& a, const tl::Tensor& b, bool gpu, int repeat) {
  Points p;
  p.repeat = repeat;
  std::optional<tl::cuda::Event> start_event, end_event;
  if (gpu) {
    tl::cuda::synchronize();  // earlier work is not counted
    start_event.emplace(true);
    end_event.emplace(true);
  }
  const Clock::time_point A = Clock::now();
  if (gpu) start_event->record();
  for (int i = 0; i < repeat; ++i) four_ops(a, b);
  if (gpu) end_event->record();
  const Clock::time_point B = Clock::now();
  if (gpu) tl::cuda::synchronize();
  const Clock::time_point C = Clock::now();
  p.b = ms_between(A, B);
  p.c = ms_between(A, C);
  if (gpu) p.d_to_e = start_event->elapsed_time(*end_event);
  return p;
}

std::string ms_cell(std::optional<double> ms) {
  if (!ms) return "(needs a GPU)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f ms", *ms);
  return buf;
}

// The notebook's three lines, each with its published number beside it.
void print_averages(const Points& p, const char* nb_cpu, const char* nb_gpu, const char* nb_event) {
  std::printf("   Average CPU time span:   %14s   (notebook: %s)   B - A: loop returned\n",
              ms_cell(p.cpu_average()).c_str(), nb_cpu);
  std::printf("   Average GPU time span:   %14s   (notebook: %s)   C - A: after synchronize\n",
              ms_cell(p.gpu_average()).c_str(), nb_gpu);
  std::printf("   Average CUDA event span: %14s   (notebook: %s)   E - D: CUDA events\n",
              ms_cell(p.event_average()).c_str(), nb_event);
}

void explain_warm(const Points& p, bool gpu) {
  const double enqueue_share = p.b / p.c;
  if (!gpu) {
    std::printf(
        "   B - A is %.1f%% of C - A: CPU ops finish before they return, so there is nothing to\n"
        "   wait for at the synchronize. On a GPU, B - A is only the enqueueing (the notebook's\n"
        "   0.05 ms against 9.74 ms): never a measure of the work.\n",
        enqueue_share * 100);
    return;
  }
  std::printf(
      "   B - A is %.1f%% of C - A: %s\n   C - A exceeds E - D by %.1f%%: the synchronize and the "
      "gap before the first kernel.\n",
      enqueue_share * 100,
      enqueue_share < 0.5 ? "the host returned long before the GPU finished, so B - A measures "
                            "enqueueing, not the work."
                          : "the host waited on the GPU while enqueueing (a full launch queue), "
                            "so B - A nears C - A here.",
      (p.c / *p.d_to_e - 1) * 100);
}

// `spread`: the Timer's IQR / median, this machine's run-to-run noise.
void explain_cold(const Points& cold, const Points& warm, bool gpu, double spread) {
  const double ratio = cold.c / warm.c;
  std::printf(
      "   Without warm-up C - A took %.2fx the warmed-up run (notebook: 13.68 / 9.74 = 1.40x).\n",
      ratio);
  if (ratio > 1 + std::max(0.1, spread)) {
    std::printf("   The first run pays one-time costs (%s):\n   warm up before measuring.\n",
                gpu ? "kernels loaded onto the GPU, the caching allocator's first cudaMalloc calls"
                    : "fresh pages for the outputs, the thread pool starting");
  } else {
    std::printf(
        "   Too little to tell from this machine's noise (the Timer's IQR is %.0f%% of its "
        "median;\n"
        "   only more than %.0f%% counts here): one-time costs, if any, are lost in it.\n",
        spread * 100, std::max(0.1, spread) * 100);
    if (!gpu)
      std::printf("   On a GPU the first run also loads kernels and fills the allocator.\n");
  }
}

// ---- more repetitions: the host clock approaches the events -------------------------------

// How (C - A)/repeat moved from 1 to 100 repetitions on the CPU, against the machine's noise.
std::string steadiness(double first, double last, double spread) {
  const double change = last / first - 1, noise = std::max(0.1, spread);
  char buf[200];
  if (std::abs(change) <= noise)
    std::snprintf(buf, sizeof buf, "within the noise (%.0f%%): the CPU has no queue to fill",
                  noise * 100);
  else if (change < 0)
    std::snprintf(buf, sizeof buf, "%.0f%% less: one-off costs, averaged away", -change * 100);
  else
    std::snprintf(buf, sizeof buf,
                  "%.0f%% more, which no fixed cost explains (it weighs only on few\n"
                  "   repetitions): the load of this machine changed between the runs",
                  change * 100);
  return buf;
}

// `spread`: the Timer's IQR / median, this machine's run-to-run noise.
void repetitions(const tl::Tensor& a, const tl::Tensor& b, bool gpu, double spread) {
  const std::vector<int> repeats = {1, 10, 100};
  std::printf("\n3. More repetitions (the notebook: the gap between C - A and E - D shrinks)\n");
  std::printf("   %7s %16s %16s %18s\n", "repeat", "(C - A)/repeat", "(E - D)/repeat",
              "gap per iteration");
  std::vector<double> gaps, per_iter;
  for (const int r : repeats) {
    const Points p = measure(a, b, gpu, r);
    per_iter.push_back(p.gpu_average());
    std::string gap = "(needs a GPU)";
    if (p.d_to_e) {
      gaps.push_back((p.c - *p.d_to_e) / r);
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.4f ms (%.2f%%)", gaps.back(), (p.c / *p.d_to_e - 1) * 100);
      gap = buf;
    }
    std::printf("   %7d %16s %16s %18s\n", r, ms_cell(p.gpu_average()).c_str(),
                ms_cell(p.event_average()).c_str(), gap.c_str());
  }
  if (gaps.empty()) {
    std::printf(
        "   Here (C - A)/repeat went from %.3f ms (1 repetition) to %.3f ms (100):\n   %s.\n",
        per_iter.front(), per_iter.back(),
        steadiness(per_iter.front(), per_iter.back(), spread).c_str());
    std::printf(
        "   Without events only C - A is measured here. On a GPU the gap is a fixed cost per\n"
        "   measurement (reaching the first kernel, returning from the synchronize), so per\n"
        "   iteration it shrinks about as 1/repeat.\n");
  } else if (gaps.back() < gaps.front()) {
    std::printf(
        "   The gap per iteration fell %.0fx from 1 to 100 repetitions: a fixed cost per\n"
        "   measurement, spread over more iterations.\n",
        gaps.front() / std::max(gaps.back(), 1e-9));
  } else {
    std::printf(
        "   The gap did not shrink here (%.4f -> %.4f ms): noise outweighs the fixed cost.\n",
        gaps.front(), gaps.back());
  }
}

// ---- the Timer and do_bench beside them ----------------------------------------------------

tl::bench::Measurement timer_and_do_bench(const tl::Tensor& a, const tl::Tensor& b, bool gpu,
                                          const tl::Device& device) {
  tl::bench::Timer timer("a*b, a+b, sin a, cos b", [&] { four_ops(a, b); },
                         {.sub_label = device.str(), .device = device});
  const tl::bench::Measurement m = timer.blocked_autorange(0.5);
  std::printf("   tl::bench::Timer:        %11.6f ms per iteration, median of %zu blocks%s\n",
              m.median() * 1e3, m.raw_times.size(), gpu ? ", synchronized around each block" : "");
  if (gpu) {
    const std::vector<double> q =
        tl::bench::do_bench([&] { four_ops(a, b); }, {.rep_ms = 300, .quantiles = {0.5}});
    std::printf("   tl::bench::do_bench:     %11.6f ms per iteration, CUDA events, L2 flushed\n",
                q[0]);
  } else {
    std::printf("   tl::bench::do_bench:     (needs a GPU: it times with CUDA events)\n");
  }
  return m;
}

// ---- the chart: the A-E timeline to scale --------------------------------------------------

void add_spans(std::vector<tl_example::Span>& spans, const std::string& run, const Points& p) {
  // On a GPU the loop only enqueues; on the CPU it runs the ops.
  spans.push_back({run + ": host clock", p.d_to_e ? "A-B enqueue" : "A-B ops run", 0, p.b});
  spans.push_back({run + ": host clock", "B-C synchronize", p.b, p.c});
  // D is recorded right after A on an idle device, so the events are drawn from A.
  if (p.d_to_e) spans.push_back({run + ": CUDA events", "D-E kernels", 0, *p.d_to_e});
}

void write_timeline(const Points& warm, const Points& cold, bool gpu) {
  std::vector<tl_example::Span> spans;
  add_spans(spans, "warm", warm);
  add_spans(spans, "no warm-up", cold);
  const std::string title = std::string("10 x (a*b, a+b, sin a, cos b): A to E to scale") +
                            (gpu ? "" : " (no GPU: no events)");
  std::printf("chart: %s\n", tl_example::write_chart("timing_methods.svg",
                                                     tl_example::timeline_svg(title, "ms", spans))
                                 .c_str());
}

}  // namespace

int main() {
  const bool gpu = tl::cuda::is_available();
  // The notebook's 512^3 float32 is 512 MiB per tensor: fine on a GPU; on a CPU, 64^3 keeps the
  // example to seconds.
  const int64_t dim = gpu ? 512 : 64;
  const tl::Device device = gpu ? tl::Device::cuda(0) : tl::Device::cpu();
  std::printf(
      "Timing a*b, a+b, sin(a), cos(b) on two randn(%lld, %lld, %lld) float32 tensors on %s,\n"
      "repeat %d, warmup %d; times are per iteration, as the notebook prints them.\n",
      static_cast<long long>(dim), static_cast<long long>(dim), static_cast<long long>(dim),
      device.str().c_str(), kRepeat, kWarmup);
  if (!gpu)
    std::printf(
        "No CUDA GPU: dim reduced from 512 to 64 (1/512 of the elements, so the CPU finishes in\n"
        "seconds), and no CUDA events (E - D), which only a device records.\n");
  const tl::Tensor a = tl::randn({dim, dim, dim}, device);
  const tl::Tensor b = tl::randn({dim, dim, dim}, device);

  // A process has one first run: the no-warm-up measurement is taken now, printed second.
  const Points cold = measure(a, b, gpu, kRepeat);
  for (int i = 0; i < kWarmup; ++i) four_ops(a, b);
  const Points warm = measure(a, b, gpu, kRepeat);

  std::printf("\n1. After %d warm-up iterations\n", kWarmup);
  print_averages(warm, "0.051276 ms", "9.741018 ms", "9.733418 ms");
  explain_warm(warm, gpu);
  if (!gpu)
    std::printf("   (At this rate the notebook's 512^3 would take ~%.1f s per iteration here.)\n",
                warm.gpu_average() * 512 / 1e3);
  const tl::bench::Measurement m = timer_and_do_bench(a, b, gpu, device);

  std::printf("\n2. Without warm-up (the first run of the process)\n");
  print_averages(cold, "4.782449 ms", "13.679880 ms", "13.671930 ms");
  explain_cold(cold, warm, gpu, m.relative_iqr());

  repetitions(a, b, gpu, m.relative_iqr());

  std::printf("\n");
  write_timeline(warm, cold, gpu);
  std::printf("\nFull Timer measurement:\n");
  std::cout << m;
  return 0;
}

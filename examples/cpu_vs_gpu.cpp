// Notebook 000, first half: the profiler, and where the GPU loses (tiny matmuls) or wins (big).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <chart.h>
#include <tensorlet/tensorlet.h>
namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

// ---- timing helpers -----------------------------------------------------------------------------

// Seconds `work` takes. On the GPU the clock starts and stops with the device idle, so the time
// is that of the work, not of enqueueing it (ops only enqueue kernels and return).
double seconds(bool gpu, const std::function<void()>& work) {
  if (gpu) tl::cuda::synchronize();
  const auto start = Clock::now();
  work();
  if (gpu) tl::cuda::synchronize();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One profiled run of `work`, as the notebook's `with torch.profiler.profile(...) as p:` blocks.
struct Profiled {
  double wall_s = 0;       // host clock around the block (device synchronized at both ends)
  double self_cpu_s = 0;   // the table's "Self CPU time total"
  double self_cuda_s = 0;  // its "Self CUDA time total" (0 when no GPU time was recorded)
  std::string table;       // key_averages().table(), unsorted, as the notebook prints it
};

// `with_cuda`: the notebook's activities=[CPU, CUDA]; without a GPU the table says why it has no
// CUDA columns. The device is synchronized inside the profile so the kernels' time is recorded.
Profiled profile_run(bool with_cuda, bool gpu, const std::function<void()>& work) {
  prof::ProfileOptions options;
  if (with_cuda) options.activities = {prof::Activity::CPU, prof::Activity::CUDA};
  Profiled r;
  if (gpu) tl::cuda::synchronize();
  const auto start = Clock::now();
  {
    prof::Profile p(options);
    work();
    if (gpu) tl::cuda::synchronize();
    r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    p.stop();
    const prof::KeyAverages averages = p.key_averages();
    for (const prof::EventAverage& row : averages.rows()) {
      r.self_cpu_s += row.self_cpu_time_total_ns * 1e-9;
      if (row.is_device) r.self_cuda_s += row.self_cuda_time_total_ns * 1e-9;
    }
    r.table = averages.table();
  }
  return r;
}

// "3.2x slower" or "3.2x faster": how taking `t` compares with taking `other`.
std::string ratio_words(double t, double other) {
  char buf[48];
  if (t >= other)
    std::snprintf(buf, sizeof buf, "%.1fx slower", t / other);
  else
    std::snprintf(buf, sizeof buf, "%.1fx faster", other / t);
  return buf;
}

std::string time_str(double s) {
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

// ---- 1. the profiler on a tiny loop -------------------------------------------------------------

void profiler_intro() {
  std::printf(
      "1. The profiler: 100 x (y = x @ x.T; z = y * y; w = z + x) on a 3x3 x, unsorted table\n");
  const tl::Tensor x = tl::rand({3, 3});
  const Profiled p = profile_run(false, false, [&] {
    for (int i = 0; i < 100; ++i) {
      tl::Tensor y = tl::matmul(x, x.t());
      tl::Tensor z = y * y;
      tl::Tensor w = z + x;
    }
  });
  std::printf("%s", p.table.c_str());
  std::printf(
      "   Rows in order of first appearance, as print(prof.key_averages().table()) shows them;\n"
      "   x.T is a view (no kernel, no copy), so it has no row; each of the 300 ops took %s\n"
      "   of self CPU time on average.\n\n",
      time_str(p.self_cpu_s / 300).c_str());
}

// ---- 2. a tiny matmul, 10 000 times: cold first run, warm run, CPU vs GPU ---------------------

constexpr int kTinyCalls = 10000;

std::function<void()> tiny_loop(const tl::Tensor& x) {
  return [x] {
    for (int i = 0; i < kTinyCalls; ++i) (void)tl::matmul(x, x.t());
  };
}

// The notebook's cells run more than once: the first run of a process pays one-time costs. A
// third run measures how much two warm runs differ, the noise a cold start must stand out of.
struct ColdWarm {
  Profiled cold, warm, again;
  double noise() const {
    return std::abs(warm.wall_s - again.wall_s) / std::min(warm.wall_s, again.wall_s);
  }
};

ColdWarm cold_and_warm(bool gpu, const tl::Tensor& x) {
  ColdWarm r;
  r.cold = profile_run(true, gpu, tiny_loop(x));
  r.warm = profile_run(true, gpu, tiny_loop(x));
  r.again = profile_run(true, gpu, tiny_loop(x));
  return r;
}

void print_cold_warm(const char* where, const ColdWarm& r) {
  std::printf(
      "   %s: first run %s (Self CPU total %s),\n   second run %s (Self CPU total %s),"
      " third %s\n",
      where, time_str(r.cold.wall_s).c_str(), time_str(r.cold.self_cpu_s).c_str(),
      time_str(r.warm.wall_s).c_str(), time_str(r.warm.self_cpu_s).c_str(),
      time_str(r.again.wall_s).c_str());
}

// `costs`: what the first run pays on this kind of run.
void explain_cold(const ColdWarm& r, const char* costs) {
  const double ratio = r.cold.wall_s / r.warm.wall_s, noise = r.noise();
  if (ratio > 1 + std::max(0.2, 2 * noise))
    std::printf(
        "   The first run took %.1fx the second (warm runs differ by %.0f%%):\n   it paid %s.\n",
        ratio, noise * 100, costs);
  else
    std::printf(
        "   The first run took %.2fx the second (warm runs differ by %.0f%%):\n"
        "   no cold start worth the name here.\n",
        ratio, noise * 100);
}

// Median seconds of three runs of `work` on the GPU (device idle at both ends), after one more.
double gpu_median(const std::function<void()>& work) {
  work();
  std::array<double, 3> t{};
  for (double& v : t) v = seconds(true, work);
  std::sort(t.begin(), t.end());
  return t[1];
}

// The same loop without the host's cost per op (not in the notebook): captured once as a CUDA
// graph and replayed, and as one batched matmul of kTinyCalls views of x.
void tiny_matmuls_without_launches(const tl::Tensor& x_gpu) {
  auto loop = [&] {
    for (int i = 0; i < kTinyCalls; ++i) (void)tl::matmul(x_gpu, x_gpu.t());
  };
  tl::cuda::Graph graph;
  graph.capture(loop);
  const tl::Tensor batch = x_gpu.expand({kTinyCalls, 3, 3});
  const double eager = gpu_median(loop);
  const double replay = gpu_median([&] { graph.replay(); });
  const double batched = gpu_median([&] { (void)tl::matmul(batch, batch.transpose(1, 2)); });
  std::printf(
      "   Without a launch per product (not in the notebook), unprofiled: the %d products\n"
      "   eager %s, replayed as one CUDA graph %s, as one batched matmul %s.\n",
      kTinyCalls, time_str(eager).c_str(), time_str(replay).c_str(), time_str(batched).c_str());
  if (replay < eager)
    std::printf(
        "   The graph is %s than the eager loop: one call launches all %d kernels, so the\n"
        "   host's cost per op is gone and each product costs only the GPU's time per kernel\n"
        "   (%s). Batching is %s than the graph: one kernel does them all.\n\n",
        ratio_words(replay, eager).c_str(), kTinyCalls, time_str(replay / kTinyCalls).c_str(),
        ratio_words(batched, replay).c_str());
  else
    std::printf(
        "   Here the graph is %s than the eager loop: each kernel's GPU time (%s) outweighs\n"
        "   the launch it saves. Batching is %s than the graph: one kernel does them all.\n\n",
        ratio_words(replay, eager).c_str(), time_str(replay / kTinyCalls).c_str(),
        ratio_words(batched, replay).c_str());
}

void tiny_matmuls(bool gpu_ok) {
  std::printf("2. x @ x.T for a 3x3 x, %d times, profiled with activities CPU and CUDA\n",
              kTinyCalls);
  const tl::Tensor x = tl::rand({3, 3});
  const ColdWarm cpu = cold_and_warm(false, x);
  print_cold_warm("CPU tensor", cpu);
  explain_cold(cpu, gpu_ok ? "for CUPTI and the CUDA context, which the CUDA activity starts"
                           : "for the profiler's first buffers and first-touched memory");
  if (!gpu_ok)
    std::printf(
        "   The notebook's slow first run is CUDA's initialization (context, CUPTI), which\n"
        "   only a machine with a GPU pays.\n");
  std::printf("   The second CPU run's table:\n%s", cpu.warm.table.c_str());
  if (!gpu_ok) {
    std::printf(
        "   x_gpu = x.cuda() needs a CUDA GPU; here x.device() is %s. On a GPU the same loop\n"
        "   shows a small Self CUDA total (27 multiply-adds per kernel) under a larger Self CPU\n"
        "   total than the CPU run's %s (%s per matmul here): a kernel launch alone\n"
        "   costs the host microseconds.\n\n",
        x.device().str().c_str(), time_str(cpu.warm.self_cpu_s).c_str(),
        time_str(cpu.warm.self_cpu_s / kTinyCalls).c_str());
    return;
  }
  const tl::Tensor x_gpu = x.cuda();
  std::printf("   x_gpu = x.cuda(); x_gpu.device() is %s\n", x_gpu.device().str().c_str());
  const ColdWarm gpu = cold_and_warm(true, x_gpu);
  print_cold_warm("GPU tensor", gpu);
  explain_cold(gpu, "for the cuBLAS handle, loading kernels and the allocator's first blocks");
  std::printf("   The second GPU run's table:\n%s", gpu.warm.table.c_str());
  std::printf(
      "   Warm, the GPU loop is %s than the CPU loop; its Self CUDA total is %s against\n"
      "   %s of Self CPU: %s\n",
      ratio_words(gpu.warm.wall_s, cpu.warm.wall_s).c_str(), time_str(gpu.warm.self_cuda_s).c_str(),
      time_str(gpu.warm.self_cpu_s).c_str(),
      gpu.warm.wall_s > cpu.warm.wall_s
          ? "the kernels are fast, the host work around each launch is what costs, as the\n"
            "   notebook found."
          : "unlike the notebook, the launch path here is cheaper than the CPU matmul.");
  tiny_matmuls_without_launches(x_gpu);
}

// ---- 3. time per product against size (the crossover) -----------------------------------------

struct Point {
  int64_t n = 0;
  double seconds = 0;  // per product
};

// Seconds per x @ x.T: one untimed run (first-use costs, and an estimate), then the best of 5
// blocks of enough products to last ~20 ms.
double per_product(bool gpu, const tl::Tensor& x) {
  auto product = [&] { (void)tl::matmul(x, x.t()); };
  const double first = seconds(gpu, product);
  const int calls = static_cast<int>(std::clamp(0.02 / std::max(first, 1e-8), 1.0, 10000.0));
  double best = 1e300;
  for (int r = 0; r < 5; ++r) {
    best = std::min(best, seconds(gpu, [&] {
                            for (int i = 0; i < calls; ++i) product();
                          }) / calls);
  }
  return best;
}

const std::vector<int64_t> kSizes = {3, 10, 32, 100, 316, 1000, 3162, 10000};
constexpr double kCpuBudget = 1.0;  // seconds one CPU product may take in the sweep

std::vector<Point> sweep(bool gpu) {
  std::vector<Point> points;
  for (const int64_t n : kSizes) {
    if (!gpu && !points.empty()) {
      const Point& last = points.back();
      const double predicted = last.seconds * std::pow(static_cast<double>(n) / last.n, 3);
      if (predicted > kCpuBudget) {
        std::printf(
            "   (CPU sweep stops at n=%lld: n=%lld would take ~%s per product on %d threads;\n"
            "    capped at %.0f s so the example stays short on a small machine)\n",
            static_cast<long long>(last.n), static_cast<long long>(n), time_str(predicted).c_str(),
            tl::get_num_threads(), kCpuBudget);
        break;
      }
    }
    const tl::Tensor x = tl::rand({n, n}, gpu ? tl::Device::cuda(0) : tl::Device::cpu());
    points.push_back({n, per_product(gpu, x)});
  }
  return points;
}

std::optional<double> at(const std::vector<Point>& points, int64_t n) {
  for (const Point& p : points)
    if (p.n == n) return p.seconds;
  return std::nullopt;
}

std::string ratio_cell(std::optional<double> gpu, std::optional<double> cpu) {
  if (!gpu || !cpu) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3gx", *gpu / *cpu);
  return buf;
}

void print_sweep(const std::vector<Point>& cpu, const std::vector<Point>& gpu) {
  std::printf("   %7s %14s %14s %10s\n", "n", "CPU / product", "GPU / product", "GPU/CPU");
  for (const int64_t n : kSizes) {
    const auto c = at(cpu, n), g = at(gpu, n);
    if (!c && !g) continue;
    std::printf("   %7lld %14s %14s %10s\n", static_cast<long long>(n),
                c ? time_str(*c).c_str() : "-", g ? time_str(*g).c_str() : "-",
                ratio_cell(g, c).c_str());
  }
}

void explain_crossover(const std::vector<Point>& cpu, const std::vector<Point>& gpu) {
  if (gpu.empty()) {
    const double time_ratio = cpu.back().seconds / cpu.front().seconds;
    const double flop_ratio = std::pow(static_cast<double>(cpu.back().n) / cpu.front().n, 3);
    std::printf(
        "   Measured on the CPU only: time per product grows from %s (n=%lld) to %s (n=%lld),\n"
        "   %.3gx for %.3gx more flops%s\n",
        time_str(cpu.front().seconds).c_str(), static_cast<long long>(cpu.front().n),
        time_str(cpu.back().seconds).c_str(), static_cast<long long>(cpu.back().n), time_ratio,
        flop_ratio,
        time_ratio < flop_ratio / 10
            ? ":\n   at small n a fixed cost per op, not the arithmetic, sets the time."
            : ".");
    std::printf(
        "   On a GPU the curve starts flat at the launch cost (a few microseconds, above the\n"
        "   CPU's %s at n=3) and crosses below the CPU where the CPU's n^3 work outgrows it.\n",
        time_str(cpu.front().seconds).c_str());
    return;
  }
  for (const Point& c : cpu) {
    const auto g = at(gpu, c.n);
    if (g && *g < c.seconds) {
      std::printf(
          "   The GPU first wins at n=%lld (%s there); below it the launch cost (GPU at n=3:\n"
          "   %s) exceeds the CPU's work.\n",
          static_cast<long long>(c.n), ratio_words(*g, c.seconds).c_str(),
          time_str(gpu.front().seconds).c_str());
      return;
    }
  }
  std::printf("   The GPU won at no size the CPU sweep reached (n <= %lld).\n",
              static_cast<long long>(cpu.back().n));
}

void write_sweep_chart(const std::vector<Point>& cpu, const std::vector<Point>& gpu) {
  auto series = [](const char* name, const std::vector<Point>& points) {
    tl_example::Series s{name, {}, {}};
    for (const Point& p : points) {
      s.x.push_back(static_cast<double>(p.n));
      s.y.push_back(p.seconds * 1e6);
    }
    return s;
  };
  std::vector<tl_example::Series> all = {series("CPU", cpu)};
  if (!gpu.empty()) all.push_back(series("GPU (cuda:0)", gpu));
  const std::string title = gpu.empty() ? "x @ x.T, time per product (CPU only: no GPU here)"
                                        : "x @ x.T, time per product: CPU vs GPU";
  std::printf(
      "chart: %s\n",
      tl_example::write_chart("cpu_vs_gpu.svg", tl_example::log_log_chart_svg(
                                                    title, "n (x is n x n)", "us per product", all))
          .c_str());
}

// ---- 4. a large matmul, 10 times (the notebook's positive example) ----------------------------

constexpr int64_t kLargeN = 10000;
constexpr int kLargeCalls = 10;
// Below this many threads the CPU runs one product instead of ten: a 10000^2 product is 2 x 10^12
// flops, tens of seconds on a small machine.
constexpr int kThreadsForAllCalls = 8;

// `calls` products x @ x.T, profiled as the notebook's cell.
Profiled large_products(bool gpu, const tl::Tensor& x, int calls) {
  return profile_run(true, gpu, [&] {
    for (int i = 0; i < calls; ++i) (void)tl::matmul(x, x.t());
  });
}

void large_matmuls(bool gpu_ok) {
  std::printf(
      "4. x @ x.T for a 10000x10000 x, %d times (notebook: CPU 11 to 13 s; GPU Self CPU total\n"
      "   2.533 s, Self CUDA total 2.527 s)\n",
      kLargeCalls);
  const double flop_each = 2.0 * kLargeN * kLargeN * kLargeN;
  const int threads = tl::get_num_threads();
  const int cpu_calls = threads >= kThreadsForAllCalls ? kLargeCalls : 1;
  const tl::Tensor x = tl::rand({kLargeN, kLargeN});
  std::printf("   x = tl::rand({10000, 10000}) on the CPU, %d threads, GEMM by %s\n", threads,
              tl::cpu_blas().c_str());
  const Profiled cpu = large_products(false, x, cpu_calls);
  std::printf("%s", cpu.table.c_str());
  const double cpu_rate = flop_each * cpu_calls / cpu.wall_s;
  const double cpu_s = cpu.wall_s * kLargeCalls / cpu_calls;  // the notebook's ten products
  if (cpu_calls == kLargeCalls)
    std::printf("   CPU: %s for the %d products (%.1f GFLOP/s)\n", time_str(cpu_s).c_str(),
                kLargeCalls, cpu_rate / 1e9);
  else
    std::printf(
        "   CPU: %s for 1 product (%.1f GFLOP/s); the notebook's %d would take ~%s. This\n"
        "   machine gives tensorlet %d threads: the example runs all %d products from %d on.\n",
        time_str(cpu.wall_s).c_str(), cpu_rate / 1e9, kLargeCalls, time_str(cpu_s).c_str(), threads,
        kLargeCalls, kThreadsForAllCalls);
  if (!gpu_ok) {
    std::printf(
        "   GPU: needs a CUDA GPU. At an H100's float32 peak (about 60 TFLOP/s without TF32)\n"
        "   these 2 x 10^13 flops take 0.3 to 0.4 s, %.0fx less than this CPU: big products keep\n"
        "   every GPU core busy and the launch cost vanishes. The notebook's GPU needed 2.5 s;\n"
        "   its CPU 11 to 13 s.\n\n",
        cpu_s / 0.35);
    return;
  }
  const tl::Tensor x_gpu = x.cuda();
  std::printf("   x_gpu = x.cuda(); x_gpu.device() is %s\n", x_gpu.device().str().c_str());
  (void)seconds(true, [&] { (void)tl::matmul(x_gpu, x_gpu.t()); });  // warm-up
  const Profiled gpu = large_products(true, x_gpu, kLargeCalls);
  std::printf("%s", gpu.table.c_str());
  std::printf("   Side by side, %d products of 10000x10000:\n", kLargeCalls);
  std::printf("   %-5s %12s %12s %16s %16s\n", "", "wall", "TFLOP/s", "Self CPU total",
              "Self CUDA total");
  std::printf("   %-5s %12s %12.2f %16s %16s%s\n", "CPU", time_str(cpu_s).c_str(), cpu_rate / 1e12,
              time_str(cpu.self_cpu_s * kLargeCalls / cpu_calls).c_str(), "-",
              cpu_calls == kLargeCalls ? "" : "  (10 x the one product run)");
  std::printf("   %-5s %12s %12.2f %16s %16s\n", "GPU", time_str(gpu.wall_s).c_str(),
              flop_each * kLargeCalls / gpu.wall_s / 1e12, time_str(gpu.self_cpu_s).c_str(),
              time_str(gpu.self_cuda_s).c_str());
  std::printf("   The GPU is %s than the CPU (notebook: 2.5 s against 11 to 13 s, ~5x).\n",
              ratio_words(gpu.wall_s, cpu_s).c_str());
  std::printf(
      "   %s\n\n",
      gpu.wall_s < cpu_s
          ? "The GPU suits large parallel work, as the notebook concludes: 2 x 10^12 flops per\n"
            "   product keep its cores busy, and the launch cost is nothing beside them."
          : "Here the GPU did not win, against the notebook's conclusion: check both runs.");
}

}  // namespace

int main() {
  const bool gpu_ok = tl::cuda::is_available();
  std::printf("CPU vs GPU: %d CPU threads; ", tl::get_num_threads());
  if (gpu_ok)
    std::printf("%d CUDA device(s), using cuda:0.\n", tl::cuda::device_count());
  else
    std::printf("no CUDA GPU (%s).\nThe CPU parts run below; each GPU part says what it shows.\n",
                tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no device answers"
                                     : "tensorlet was built without its CUDA backend");
  std::printf("\n");
  tl::manual_seed(0);
  profiler_intro();
  tiny_matmuls(gpu_ok);
  std::printf("3. Time per x @ x.T against n: where the GPU overtakes the CPU\n");
  const std::vector<Point> cpu = sweep(false);
  const std::vector<Point> gpu = gpu_ok ? sweep(true) : std::vector<Point>{};
  print_sweep(cpu, gpu);
  explain_crossover(cpu, gpu);
  write_sweep_chart(cpu, gpu);
  std::printf("\n");
  large_matmuls(gpu_ok);
  std::printf(
      "The notebook's loop of small GPU ops against batched ones is in examples/vectorization.\n");
  return 0;
}

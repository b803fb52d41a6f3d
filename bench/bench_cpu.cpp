// CPU benchmark: DESIGN.md rows C1-C3, each against a floor measured in the same run.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <tensorlet.h>

namespace tl = tensorlet;

namespace {

// Median wall time of `reps` calls of f, in seconds, after `warmup` untimed calls.
template <typename F>
double median_seconds(int reps, int warmup, F&& f) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Keeps results alive so the compiler cannot drop the work that made them.
volatile float g_sink = 0;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

void row(const char* id, const char* workload, const std::string& measured,
         const std::string& floor, double ratio, const char* target, bool met) {
  std::printf("%-3s %-34s %-16s %-34s %7.2f  %-12s %s\n", id, workload, measured.c_str(),
              floor.c_str(), ratio, target, met ? "yes" : "NO");
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

int main() {
  const int threads = tl::get_num_threads();
  std::printf("tensorlet CPU benchmark: %d threads (Eigen %d), %s\n", threads, Eigen::nbThreads(),
              cpu_model().c_str());
  std::printf("each figure is the median of several repetitions after warm-up (steady_clock)\n\n");
  std::printf("%-3s %-34s %-16s %-34s %7s  %-12s %s\n", "id", "workload", "measured",
              "floor (same run)", "ratio", "target", "met");

  // ---- C1: per-op time of tiny ops, output allocation included ----
  {
    constexpr int kCalls = 100000;
    tl::Tensor a = tl::rand({3, 3}), b = tl::rand({3, 3});
    auto per_op = [&](auto&& op) {
      return median_seconds(7, 1,
                            [&] {
                              for (int i = 0; i < kCalls; ++i) op();
                            }) /
             kCalls * 1e6;
    };
    // The floor: allocating the 3x3 output every op must do anyway.
    double alloc_us = per_op([&] {
      g_sink = g_sink + static_cast<float>(tl::empty({3, 3}).numel());
    });
    double add_us = per_op([&] { g_sink = g_sink + static_cast<float>(tl::add(a, b).numel()); });
    double mm_us = per_op([&] { g_sink = g_sink + static_cast<float>(tl::matmul(a, b).numel()); });
    std::string floor = fmt("empty(3x3) %.3f us", alloc_us);
    row("C1", "3x3 float32 add, per op", fmt("%.3f us", add_us), floor, add_us / alloc_us,
        "<= 0.3 us", add_us <= 0.3);
    row("C1", "3x3 float32 matmul, per op", fmt("%.3f us", mm_us), floor, mm_us / alloc_us,
        "<= 0.4 us", mm_us <= 0.4);
  }

  // ---- C2: bandwidth of a large add into a fresh output vs memcpy ----
  {
    constexpr int64_t n = 16 << 20;
    const size_t bytes = n * sizeof(float);
    tl::Tensor a = tl::rand({n}), b = tl::rand({n});
    double add_s =
        median_seconds(7, 2, [&] { g_sink = g_sink + tl::add(a, b).data<float>()[n - 1]; });
    // memcpy between two buffers that are already paged in, on one thread and split over all
    // threads; the faster is the floor.
    std::vector<float> src(n, 1.0f), dst(n, 0.0f);
    double copy1_s = median_seconds(7, 2, [&] {
      std::memcpy(dst.data(), src.data(), bytes);
      g_sink = g_sink + dst[n - 1];
    });
    double copyt_s = median_seconds(7, 2, [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int t = 0; t < threads; ++t) {
        size_t begin = bytes / threads * t,
               end = t == threads - 1 ? bytes : bytes / threads * (t + 1);
        std::memcpy(reinterpret_cast<char*>(dst.data()) + begin,
                    reinterpret_cast<const char*>(src.data()) + begin, end - begin);
      }
      g_sink = g_sink + dst[n - 1];
    });
    // Bytes moved: add reads two inputs and writes one output; memcpy reads one and writes one.
    double add_gbs = 3.0 * bytes / add_s / 1e9;
    double copy_gbs = 2.0 * bytes / std::min(copy1_s, copyt_s) / 1e9;
    double ratio = add_gbs / copy_gbs;
    row("C2", "16M float32 add, fresh output", fmt("%.1f GB/s", add_gbs),
        fmt("memcpy %.1f GB/s", copy_gbs) + fmt(" (1 thr %.1f)", 2.0 * bytes / copy1_s / 1e9),
        ratio, ">= 0.8x", ratio >= 0.8);
    std::printf("    (add %.2f ms; memcpy %.2f ms on 1 thread, %.2f ms on %d)\n", add_s * 1e3,
                copy1_s * 1e3, copyt_s * 1e3, threads);
  }

  // ---- C3: large GEMM vs raw Eigen with the same thread count ----
  {
    constexpr int64_t n = 1024;
    tl::Tensor a = tl::rand({n, n}), b = tl::rand({n, n});
    double tl_s =
        median_seconds(7, 2, [&] { g_sink = g_sink + tl::matmul(a, b).data<float>()[0]; });
    Eigen::MatrixXf ea = Eigen::MatrixXf::Random(n, n), eb = Eigen::MatrixXf::Random(n, n),
                    ec(n, n);
    double eigen_s = median_seconds(7, 2, [&] {
      ec.noalias() = ea * eb;
      g_sink = g_sink + ec(0, 0);
    });
    double flop = 2.0 * n * n * n;
    double ratio = eigen_s / tl_s;
    row("C3", "1024^2 float32 matmul", fmt("%.1f GFLOP/s", flop / tl_s / 1e9),
        fmt("Eigen MatrixXf %.1f GFLOP/s", flop / eigen_s / 1e9), ratio, ">= 0.95x", ratio >= 0.95);
  }
  std::printf(
      "\nratios: C1 = time / allocation floor (informational; the target is absolute),\n"
      "        C2 = add GB/s / memcpy GB/s, C3 = tensorlet GFLOP/s / Eigen GFLOP/s\n");
  return 0;
}

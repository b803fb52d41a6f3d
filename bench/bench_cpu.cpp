// CPU benchmark: DESIGN.md rows C1-C3, each against a floor measured in the same run, and issue
// 14's O6 (softmax, cumsum, sort of 16M float32 on all threads; bench/torch_reference.py times
// PyTorch's CPU on the same workloads and pairs the rows).
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "bench_util.h"

namespace tl = tensorlet;

namespace {

// Median wall time of each workload over `reps` rounds after `warmup` (tl_bench's interleaving).
std::vector<double> interleaved_medians(int reps, int warmup,
                                        const std::vector<std::function<void()>>& workloads) {
  std::vector<tl_bench::Timed> timed;
  for (const auto& w : workloads) timed.push_back(tl_bench::wall_timed(w));
  return tl_bench::interleaved_medians(reps, warmup, timed);
}

// Keeps results alive so the compiler cannot drop the work that made them.
volatile double g_sink = 0;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

using tl_bench::fmt;
using tl_bench::row;

}  // namespace

int main() {
  const int threads = tl::get_num_threads();
  std::printf("tensorlet CPU benchmark: %d threads (Eigen %d), %s\n", threads, Eigen::nbThreads(),
              cpu_model().c_str());
  std::printf("medians of interleaved repetitions after warm-up (steady_clock)\n\n");
  std::printf("%-3s %-30s %-14s %-30s %6s  %-10s %s\n", "id", "workload", "measured",
              "floor (same run)", "ratio", "target", "met");

  // ---- C1: per-op time of tiny ops, output allocation included ----
  {
    constexpr int kCalls = 100000;
    tl::Tensor a = tl::rand({3, 3}), b = tl::rand({3, 3});
    auto calls = [&](auto op) {
      return [op] {
        for (int i = 0; i < kCalls; ++i) g_sink = g_sink + static_cast<double>(op().numel());
      };
    };
    // The floor: allocating the 3x3 output, which every op must do anyway.
    auto t = interleaved_medians(
        7, 1,
        {calls([] {
           return tl::empty({3, 3});
         }),
         calls([&] { return tl::add(a, b); }), calls([&] { return tl::matmul(a, b); })});
    const double alloc_us = t[0] / kCalls * 1e6, add_us = t[1] / kCalls * 1e6,
                 mm_us = t[2] / kCalls * 1e6;
    const std::string floor = fmt("empty(3x3) %.3f us", alloc_us);
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
    // memcpy between two buffers that are already paged in, on one thread and split over all
    // threads; the faster of the two is the floor.
    std::vector<float> src(n, 1.0f), dst(n, 0.0f);
    auto add = [&] { g_sink = g_sink + tl::add(a, b).data<float>()[n - 1]; };
    auto copy1 = [&] {
      std::memcpy(dst.data(), src.data(), bytes);
      g_sink = g_sink + dst[n - 1];
    };
    auto copyt = [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int t = 0; t < threads; ++t) {
        const size_t begin = bytes / threads * t,
                     end = t == threads - 1 ? bytes : bytes / threads * (t + 1);
        std::memcpy(reinterpret_cast<char*>(dst.data()) + begin,
                    reinterpret_cast<const char*>(src.data()) + begin, end - begin);
      }
      g_sink = g_sink + dst[n - 1];
    };
    auto t = interleaved_medians(9, 2, {add, copy1, copyt});
    // Bytes moved: add reads two inputs and writes one output; memcpy reads one and writes one.
    const double add_gbs = 3.0 * bytes / t[0] / 1e9;
    const double copy_gbs = 2.0 * bytes / std::min(t[1], t[2]) / 1e9;
    const double ratio = add_gbs / copy_gbs;
    row("C2", "16M float32 add, fresh output", fmt("%.1f GB/s", add_gbs),
        fmt("memcpy %.1f GB/s", copy_gbs), ratio, ">= 0.8x", ratio >= 0.8);
    std::printf("    add %.2f ms; memcpy %.2f ms on 1 thread (%.1f GB/s), %.2f ms on %d\n",
                t[0] * 1e3, t[1] * 1e3, 2.0 * bytes / t[1] / 1e9, t[2] * 1e3, threads);
  }

  // ---- C3: large GEMM vs raw Eigen with the same thread count ----
  {
    constexpr int64_t n = 1024;
    tl::Tensor a = tl::rand({n, n}), b = tl::rand({n, n});
    Eigen::MatrixXf ea = Eigen::MatrixXf::Random(n, n), eb = Eigen::MatrixXf::Random(n, n);
    Eigen::MatrixXf ec(n, n);
    auto t = interleaved_medians(9, 2,
                                 {[&] { g_sink = g_sink + tl::matmul(a, b).data<float>()[0]; },
                                  [&] {
                                    ec.noalias() = ea * eb;
                                    g_sink = g_sink + ec(0, 0);
                                  }});
    const double flop = 2.0 * n * n * n;
    const double ratio = t[1] / t[0];
    row("C3", "1024^2 float32 matmul", fmt("%.1f GFLOP/s", flop / t[0] / 1e9),
        fmt("Eigen MatrixXf %.1f GFLOP/s", flop / t[1] / 1e9), ratio, ">= 0.95x", ratio >= 0.95);
  }
  // ---- O6: softmax, cumsum and sort of 16M float32 on all threads (PyTorch: torch_reference) ----
  {
    constexpr int64_t n = 16 << 20;
    tl::Tensor m = tl::rand({4096, 4096}), v = tl::rand({n});
    std::vector<float> src(n, 1.0f), dst(n, 0.0f);
    auto copyt = [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int t = 0; t < threads; ++t) {
        const int64_t begin = n / threads * t, end = t == threads - 1 ? n : n / threads * (t + 1);
        std::memcpy(dst.data() + begin, src.data() + begin, (end - begin) * sizeof(float));
      }
      g_sink = g_sink + dst[n - 1];
    };
    auto t =
        interleaved_medians(7, 1,
                            {copyt, [&] { g_sink = g_sink + tl::softmax(m, -1).data<float>()[0]; },
                             [&] { g_sink = g_sink + tl::cumsum(v, 0).data<float>()[n - 1]; },
                             [&] { g_sink = g_sink + tl::sort(v).values.data<float>()[0]; }});
    const std::string floor = fmt("memcpy 64 MiB %.2f ms", t[0] * 1e3);
    const char* names[] = {"softmax(-1) of [4096, 4096] float32", "cumsum of 16M float32",
                           "sort of 16M float32"};
    // The target is against PyTorch's CPU (torch_reference.py's O6 rows, same machine and run);
    // the ratio here is the memcpy floor's time over the op's.
    for (int i = 0; i < 3; ++i)
      std::printf("%-3s %-34s %-16s %-34s %6.2f  %-12s %s\n", "O6", names[i],
                  fmt("%.3f ms", t[i + 1] * 1e3).c_str(), floor.c_str(), t[0] / t[i + 1],
                  ">=0.8x torch", "see torch_reference");
  }
  std::printf(
      "\nratio: C1 = time / allocation floor (for reference; the target is absolute),\n"
      "       C2 = add GB/s / memcpy GB/s, C3 = tensorlet GFLOP/s / Eigen GFLOP/s\n");
  return 0;
}

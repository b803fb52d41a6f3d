// CPU benchmark: docs/DESIGN.md rows C1-C3 against floors measured in the same run, and the rows
// whose target is PyTorch's CPU (C4-C6 of issue 15, O6 of issue 14, C8 of issue 30):
// bench/torch_reference.py times PyTorch on the same workloads and pairs the rows.
#include <Eigen/Core>
#ifdef TL_WITH_BLAS
#include <cblas.h>
#endif
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
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

using tl_bench::vs_torch_row;

// 1, 2 and all threads (each once).
std::vector<int> thread_counts(int all) {
  std::vector<int> counts = {1};
  if (all >= 2) counts.push_back(2);
  if (all > 2) counts.push_back(all);
  return counts;
}

// The bandwidth floor of C4-C6: memcpy of 64 MiB split over all threads, buffers paged in.
constexpr size_t kCopyBytes = size_t{64} << 20;
std::function<void()> copy_all_threads() {
  auto src = std::make_shared<std::vector<char>>(kCopyBytes, 1);
  auto dst = std::make_shared<std::vector<char>>(kCopyBytes, 0);
  return [src, dst] {
    const int threads = tl::get_num_threads();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
      const size_t begin = kCopyBytes / threads * t,
                   end = t == threads - 1 ? kCopyBytes : kCopyBytes / threads * (t + 1);
      std::memcpy(dst->data() + begin, src->data() + begin, end - begin);
    }
    g_sink = g_sink + (*dst)[kCopyBytes - 1];
  };
}

// C3's floor: the BLAS tensorlet's GEMM runs on, called directly on row-major buffers (Eigen's
// product when the build has no BLAS), with the thread count tensorlet uses.
#ifdef TL_WITH_BLAS
constexpr const char* kRawGemm = "cblas_sgemm";
void raw_sgemm(int64_t n, const float* a, const float* b, float* c) {
  const auto ni = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, c,
              ni);
}
#else
constexpr const char* kRawGemm = "Eigen";
void raw_sgemm(int64_t n, const float* a, const float* b, float* c) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> ma(a, n, n), mb(b, n, n);
  Eigen::Map<RowMajor> mc(c, n, n);
  mc.noalias() = ma * mb;
}
#endif

}  // namespace

int main() {
  const int threads = tl::get_num_threads();
  std::printf("tensorlet CPU benchmark: %d threads (Eigen %d), %s\n", threads, Eigen::nbThreads(),
              cpu_model().c_str());
  std::printf("kernels for %s, GEMM on %s\n", tl::cpu_capability().c_str(), tl::cpu_blas().c_str());
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

  // ---- C3: a 4096^2 GEMM vs the same BLAS (or, without one, Eigen) called directly ----
  {
    constexpr int64_t n = 4096;
    tl::Tensor a = tl::rand({n, n}), b = tl::rand({n, n});
    std::vector<float> ra(n * n), rb(n * n), rc(n * n);
    std::memcpy(ra.data(), a.data<float>(), ra.size() * sizeof(float));
    std::memcpy(rb.data(), b.data<float>(), rb.size() * sizeof(float));
    auto raw = [&] {
      raw_sgemm(n, ra.data(), rb.data(), rc.data());
      g_sink = g_sink + rc[0];
    };
    auto t = interleaved_medians(
        5, 1, {[&] { g_sink = g_sink + tl::matmul(a, b).data<float>()[0]; }, raw});
    const double flop = 2.0 * n * n * n;
    const double ratio = t[1] / t[0];
    row("C3", "4096^2 float32 matmul", fmt("%.1f GFLOP/s", flop / t[0] / 1e9),
        std::string(kRawGemm) + fmt(" %.1f GFLOP/s", flop / t[1] / 1e9), ratio, ">= 0.9x",
        ratio >= 0.9);
  }

  // ---- C4: row and column sums of [4096, 4096] float32 (PyTorch: torch_reference) ----
  {
    tl::Tensor m = tl::rand({4096, 4096});
    const double bytes = 4096.0 * 4096 * sizeof(float);
    // The floor apart, the two sums interleaved as torch_reference times them (a 64 MiB memcpy
    // between them would flush the caches PyTorch's back-to-back sums keep).
    const double copy = interleaved_medians(9, 2, {copy_all_threads()})[0];
    auto sums = interleaved_medians(9, 2,
                                    {[&] { g_sink = g_sink + tl::sum(m, {1}).data<float>()[0]; },
                                     [&] { g_sink = g_sink + tl::sum(m, {0}).data<float>()[0]; }});
    const std::vector<double> t = {copy, sums[0], sums[1]};
    const std::string floor = fmt("memcpy 64 MiB %.1f GB/s", 2 * kCopyBytes / t[0] / 1e9);
    vs_torch_row("C4", "row sums of [4096, 4096] float32", fmt("%.1f GB/s", bytes / t[1] / 1e9),
                 floor, t[0] / t[1], ">=0.9x torch");
    vs_torch_row("C4", "column sums of [4096, 4096] float32", fmt("%.1f GB/s", bytes / t[2] / 1e9),
                 floor, t[0] / t[2], ">=0.9x torch");
  }

  // ---- C5: exp, tanh, sigmoid of 16M float32 into a fresh output (PyTorch: torch_reference) ----
  {
    constexpr int64_t n = 16 << 20;
    tl::Tensor v = tl::randn({n});
    const double bytes = 2.0 * n * sizeof(float);  // one read, one write
    // The floor apart, as in C4.
    const double copy = interleaved_medians(7, 2, {copy_all_threads()})[0];
    auto ops = interleaved_medians(7, 2,
                                   {[&] { g_sink = g_sink + tl::exp(v).data<float>()[0]; },
                                    [&] { g_sink = g_sink + tl::tanh(v).data<float>()[0]; },
                                    [&] { g_sink = g_sink + tl::sigmoid(v).data<float>()[0]; }});
    const std::vector<double> t = {copy, ops[0], ops[1], ops[2]};
    const std::string floor = fmt("memcpy 64 MiB %.1f GB/s", 2 * kCopyBytes / t[0] / 1e9);
    const char* names[] = {"exp of 16M float32", "tanh of 16M float32", "sigmoid of 16M float32"};
    for (int i = 0; i < 3; ++i)
      vs_torch_row("C5", names[i], fmt("%.1f GB/s", bytes / t[i + 1] / 1e9), floor, t[0] / t[i + 1],
                   ">=1.0x torch");
  }

  // ---- C6: small ops per op on 1, 2 and all threads (PyTorch: torch_reference) ----
  {
    // The [1, 512] operand sits at 8 offsets 512 B apart in one buffer, cycled through: on one
    // core the time of the add varies by up to 25% with where its input lies against its output
    // (measured on the H200 host: 30-45 µs for us, 26-43 µs for PyTorch, by offset), so one
    // layout would be a lottery; torch_reference cycles through the same offsets.
    tl::Tensor col = tl::rand({512, 1}), lines = tl::rand({1, 512 + 7 * 128});
    std::vector<tl::Tensor> line;
    for (int64_t k = 0; k < 8; ++k) line.push_back(lines.slice(1, 128 * k, 128 * k + 512));
    tl::Tensor a = tl::rand({3, 3}), b = tl::rand({3, 3});
    constexpr int kBroadcastCalls = 2000, kTinyCalls = 100000;
    for (const int k : thread_counts(threads)) {
      tl::set_num_threads(k);
      auto t = interleaved_medians(
          7, 2,
          {[&] {
             for (int i = 0; i < kBroadcastCalls; ++i)
               g_sink = g_sink + static_cast<double>(tl::add(col, line[i % 8]).numel());
           },
           [&] {
             for (int i = 0; i < kTinyCalls; ++i)
               g_sink = g_sink + static_cast<double>(tl::add(a, b).numel());
           }});
      const double bcast_us = t[0] / kBroadcastCalls * 1e6, tiny_us = t[1] / kTinyCalls * 1e6;
      vs_torch_row("C6", fmt("[512,1] + [1,512] add, %.0f thr", k), fmt("%.3f us", bcast_us),
                   "PyTorch (torch_reference)", 1.0, "<=1.0x torch");
      vs_torch_row("C6", fmt("3x3 add, %.0f thr", k), fmt("%.3f us", tiny_us),
                   "PyTorch (torch_reference)", 1.0, "<=1.0x torch");
    }
    tl::set_num_threads(threads);
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
  // ---- C7: a loop over an accessor against the same loop over a raw pointer ----
  {
    // One thread, a plain sum (not vectorized in either: float addition is not reassociated), so
    // the loops differ only in how an element is found: a[i] / a[i][j] through the accessor's
    // strides against p[i] / p[i * cols + j].
    constexpr int64_t rows = 4096, cols = 4096, n = rows * cols;
    tl::Tensor v = tl::rand({rows, cols});
    const float* p = v.data<float>();
    auto flat = v.view({n});
    auto a1 = flat.accessor<float, 1>();
    auto a2 = v.accessor<float, 2>();
    auto t = interleaved_medians(9, 2,
                                 {[&] {
                                    float s = 0;
                                    for (int64_t i = 0; i < n; ++i) s += p[i];
                                    g_sink = g_sink + s;
                                  },
                                  [&] {
                                    float s = 0;
                                    for (int64_t i = 0; i < n; ++i) s += a1[i];
                                    g_sink = g_sink + s;
                                  },
                                  [&] {
                                    float s = 0;
                                    for (int64_t i = 0; i < rows; ++i)
                                      for (int64_t j = 0; j < cols; ++j) s += p[i * cols + j];
                                    g_sink = g_sink + s;
                                  },
                                  [&] {
                                    float s = 0;
                                    for (int64_t i = 0; i < rows; ++i)
                                      for (int64_t j = 0; j < cols; ++j) s += a2[i][j];
                                    g_sink = g_sink + s;
                                  }});
    row("C7", "accessor<float,1> sum of 16M", fmt("%.2f ms", t[1] * 1e3),
        fmt("raw pointer loop %.2f ms", t[0] * 1e3), t[0] / t[1], ">=0.9", t[0] / t[1] >= 0.9);
    row("C7", "accessor<float,2> sum of 4096^2", fmt("%.2f ms", t[3] * 1e3),
        fmt("raw pointer loop %.2f ms", t[2] * 1e3), t[2] / t[3], ">=0.9", t[2] / t[3] >= 0.9);
  }
  // ---- C8: square float32 matmul, n = 16 to 1024, all threads (PyTorch: torch_reference) ----
  {
    // Threads by size must leave no cliff between sizes (issue 30: on 16 threads 100^2 ran at 41
    // GFLOP/s, what one thread did at 32^2, where 316^2 reached 330). The floor is the BLAS called
    // directly on the same buffers with its own choice of threads (what tl::matmul did before);
    // the target is PyTorch's CPU.
    const std::vector<int64_t> sizes = {16,  24,  32,  48,  64,  96,  100, 128,
                                        192, 256, 316, 384, 512, 768, 1024};
    std::vector<tl::Tensor> as, bs;
    std::vector<std::vector<float>> raw_c;
    std::vector<int> calls;
    std::vector<std::function<void()>> work;
    for (const int64_t n : sizes) {
      as.push_back(tl::rand({n, n}));
      bs.push_back(tl::rand({n, n}));
      raw_c.emplace_back(n * n);
      // Products per repetition: about 2^28 multiply-adds (torch_reference.py uses the same).
      calls.push_back(
          static_cast<int>(std::clamp<int64_t>((int64_t{1} << 28) / (n * n * n), 1, 4000)));
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      const tl::Tensor &a = as[i], &b = bs[i];
      const int count = calls[i];
      work.push_back([&a, &b, count] {
        for (int c = 0; c < count; ++c) g_sink = g_sink + tl::matmul(a, b).data<float>()[0];
      });
      const int64_t n = sizes[i];
      float* c = raw_c[i].data();
      work.push_back([&a, &b, c, n, count] {
        for (int r = 0; r < count; ++r) {
          raw_sgemm(n, a.data<float>(), b.data<float>(), c);
          g_sink = g_sink + c[0];
        }
      });
    }
    const auto t = interleaved_medians(7, 2, work);
    for (size_t i = 0; i < sizes.size(); ++i) {
      const double n = static_cast<double>(sizes[i]);
      const double ours_us = t[2 * i] / calls[i] * 1e6, raw_us = t[2 * i + 1] / calls[i] * 1e6;
      const double gflops = 2.0 * n * n * n / (ours_us * 1e3);
      std::printf(
          "%-3s %-34s %-26s %-34s %6.2f  %-12s %s\n", "C8",
          fmt("float32 matmul n=%.0f, ", n).append(std::to_string(threads)).append(" thr").c_str(),
          fmt("%.3f us", ours_us).append(fmt(" %.1f GFLOP/s", gflops)).c_str(),
          (std::string(kRawGemm) + fmt(" own threads %.3f us", raw_us)).c_str(), raw_us / ours_us,
          ">=1.0x torch", "see torch_reference");
    }
    std::fflush(stdout);
  }
  std::printf(
      "\nratio: C1 = time / allocation floor (for reference; the target is absolute),\n"
      "       C2 = add GB/s / memcpy GB/s, C3 = tensorlet GFLOP/s / direct BLAS GFLOP/s,\n"
      "       C4, C5 = time of the memcpy floor / time of the op (for reference; the target is\n"
      "       PyTorch), C6: the target is PyTorch's time per op,\n"
      "       C7 = raw pointer loop time / accessor loop time,\n"
      "       C8 = direct BLAS time (its own threads) / tl::matmul time (for reference; the\n"
      "       target is PyTorch)\n");
  return 0;
}

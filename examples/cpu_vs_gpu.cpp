// Notebook "cpu_vs_gpu": where the GPU loses (tiny ops, loops) and where it wins (big matmuls).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include <tensorlet.h>
namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

// Seconds `work` takes. On the GPU the clock starts and stops with the device idle, so the time
// is that of the work, not of enqueueing it (ops only enqueue kernels and return).
double seconds(bool gpu, const std::function<void()>& work) {
  if (gpu) tl::cuda::synchronize();
  auto start = Clock::now();
  work();
  if (gpu) tl::cuda::synchronize();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The faster of `reps` timed runs after one untimed warm-up run (first-use costs: the CUDA
// context, cuBLAS handles, the caching allocator filling up, OpenMP threads starting).
double best_seconds(bool gpu, int reps, const std::function<void()>& work) {
  seconds(gpu, work);
  double best = 1e300;
  for (int r = 0; r < reps; ++r) best = std::min(best, seconds(gpu, work));
  return best;
}

const char* kNeedsGpu = "(needs a CUDA GPU)";

// Runs `work` once more under the profiler and prints its key_averages table, as the classic
// notebook does after each run: which ops ran, how many times, and where the time went. A separate
// run, so the profiler's own cost stays out of the times printed above it.
void print_profile(const char* what, bool gpu, const std::function<void()>& work) {
  prof::ProfileOptions options;
  if (gpu) options.activities = {prof::Activity::CPU, prof::Activity::CUDA};
  if (gpu) tl::cuda::synchronize();
  prof::Profile profile(options);
  work();
  if (gpu) tl::cuda::synchronize();
  profile.stop();
  const char* sort_by = gpu ? "self_cuda_time_total" : "self_cpu_time_total";
  std::printf("   Profile of %s, sorted by %s:\n%s\n", what, sort_by,
              profile.key_averages().table({.sort_by = sort_by, .row_limit = 5}).c_str());
}

// "the GPU is 12.3x slower" or "... faster": how `name` (taking t) compares with taking `other`.
std::string verdict(const char* name, double t, double other) {
  char buf[64];
  if (t >= other)
    std::snprintf(buf, sizeof buf, "%s is %.1fx slower", name, t / other);
  else
    std::snprintf(buf, sizeof buf, "%s is %.1fx faster", name, other / t);
  return buf;
}

// ---- 1. a tiny matmul, many times -------------------------------------------------------------

void tiny_matmuls(bool gpu_ok) {
  constexpr int kCalls = 10000;
  std::printf("1. x @ x.T for a 3x3 x, %d times in a row\n", kCalls);
  tl::Tensor x = tl::rand({3, 3});
  auto loop = [](const tl::Tensor& t) {
    return [t] {
      for (int i = 0; i < kCalls; ++i) (void)tl::matmul(t, t.t());
    };
  };
  const double cpu = best_seconds(false, 3, loop(x));
  std::printf("   CPU: %8.2f ms  (%.2f us per matmul)\n", cpu * 1e3, cpu * 1e6 / kCalls);
  print_profile("the CPU loop", false, loop(x));
  if (!gpu_ok) {
    std::printf("   GPU: %s\n\n", kNeedsGpu);
    return;
  }
  const tl::Tensor xg = x.cuda();
  const double gpu = best_seconds(true, 3, loop(xg));
  std::printf("   GPU: %8.2f ms  (%.2f us per matmul): %s\n", gpu * 1e3, gpu * 1e6 / kCalls,
              verdict("the GPU", gpu, cpu).c_str());
  print_profile("the GPU loop", true, loop(xg));
  std::printf(
      "   Why: 27 multiply-adds take the CPU nanoseconds, while every GPU op costs a kernel\n"
      "   launch, microseconds of driver work on the host, whatever the size of the kernel.\n\n");
}

// ---- 2. a large matmul ------------------------------------------------------------------------

void large_matmuls(bool gpu_ok) {
  constexpr int64_t kN = 10000;
  constexpr int kCalls = 10;
  // The CPU would need minutes to hours for 10 products of 10 000 x 10 000, so it runs one
  // smaller product and the total is extrapolated at the throughput it reached (flops grow as n^3).
  constexpr int64_t kCpuN = 2048;
  std::printf("2. x @ x.T for a %lldx%lld float32 x, %d times\n", static_cast<long long>(kN),
              static_cast<long long>(kN), kCalls);
  const double flop = 2.0 * kN * kN * kN * kCalls;
  tl::Tensor xc = tl::rand({kCpuN, kCpuN});
  const double cpu_small = best_seconds(false, 2, [&] { (void)tl::matmul(xc, xc.t()); });
  const double cpu_rate = 2.0 * kCpuN * kCpuN * kCpuN / cpu_small;
  const double cpu = flop / cpu_rate;
  std::printf("   CPU: ~%.0f s, extrapolated, not run: one %lldx%lld product took %.3f s\n", cpu,
              static_cast<long long>(kCpuN), static_cast<long long>(kCpuN), cpu_small);
  std::printf("        (%.1f GFLOP/s on %d threads), and these %d products are %.0fx more flops\n",
              cpu_rate / 1e9, tl::get_num_threads(), kCalls, cpu / cpu_small);
  if (!gpu_ok) {
    std::printf("   GPU: %s\n\n", kNeedsGpu);
    return;
  }
  tl::Tensor xg = tl::rand({kN, kN}, tl::Device::cuda(0));
  auto products = [&] {
    for (int i = 0; i < kCalls; ++i) (void)tl::matmul(xg, xg.t());
  };
  const double gpu = best_seconds(true, 1, products);
  std::printf("   GPU: %8.3f s  (%.1f TFLOP/s, float32 without TF32): %s\n", gpu, flop / gpu / 1e12,
              verdict("the GPU", gpu, cpu).c_str());
  print_profile("the GPU products", true, products);
  std::printf(
      "   Why: 2 x 10^12 flops per product keep the GPU's thousands of cores busy for tens of\n"
      "   milliseconds, so the launch costs nothing next to it, and the GPU's arithmetic\n"
      "   throughput and memory bandwidth are orders of magnitude above a few CPU cores'.\n\n");
}

// ---- 3. a loop of small ops vs one batched op -----------------------------------------------

void loop_vs_batched(bool gpu_ok) {
  constexpr int kItems = 20000;
  std::printf(
      "3. %d x (x = rand(10, 10); x * x) in a loop, vs one rand(%d, 10, 10) and one multiply\n",
      kItems, kItems);
  auto loop = [](tl::Device d) {
    return [d] {
      for (int i = 0; i < kItems; ++i) {
        tl::Tensor x = tl::rand({10, 10}, d);
        (void)(x * x);
      }
    };
  };
  auto batched = [](tl::Device d) {
    return [d] {
      tl::Tensor x = tl::rand({kItems, 10, 10}, d);
      (void)(x * x);
    };
  };
  const double cpu_loop = best_seconds(false, 3, loop(tl::Device::cpu()));
  const double cpu_batched = best_seconds(false, 3, batched(tl::Device::cpu()));
  std::printf("   CPU: loop %8.2f ms, batched %8.3f ms: %s\n", cpu_loop * 1e3, cpu_batched * 1e3,
              verdict("batched", cpu_batched, cpu_loop).c_str());
  print_profile("the CPU loop", false, loop(tl::Device::cpu()));
  if (!gpu_ok) {
    std::printf("   GPU: %s\n\n", kNeedsGpu);
    return;
  }
  const tl::Device gpu = tl::Device::cuda(0);
  const double gpu_loop = best_seconds(true, 3, loop(gpu));
  const double gpu_batched = best_seconds(true, 3, batched(gpu));
  std::printf("   GPU: loop %8.2f ms, batched %8.3f ms: %s\n", gpu_loop * 1e3, gpu_batched * 1e3,
              verdict("batched", gpu_batched, gpu_loop).c_str());
  print_profile("the GPU loop", true, loop(gpu));
  print_profile("the GPU batched version", true, batched(gpu));
  std::printf(
      "   Why: the loop launches %d kernels of 100 elements each, so it runs at the speed of\n"
      "   kernel launches; the batched version launches two kernels over 2 million elements,\n"
      "   which the GPU spreads over all its cores. On the GPU, batching is worth far more than\n"
      "   on the CPU, where a small op costs a fraction of a microsecond.\n\n",
      2 * kItems);
}

}  // namespace

int main() {
  const bool gpu_ok = tl::cuda::is_available();
  std::printf("CPU vs GPU: %d CPU threads; ", tl::get_num_threads());
  if (gpu_ok)
    std::printf("%d CUDA device(s), using cuda:0.\n", tl::cuda::device_count());
  else
    std::printf(
        "no CUDA GPU (%s).\nThe CPU half runs below; the GPU half needs a machine with an NVIDIA "
        "GPU.\n",
        tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no device answers"
                             : "tensorlet was built without its CUDA backend");
  if (gpu_ok) std::printf("GPU times are taken with the device synchronized before and after.\n");
  std::printf("\n");
  tl::manual_seed(0);
  tiny_matmuls(gpu_ok);
  large_matmuls(gpu_ok);
  loop_vs_batched(gpu_ok);
  return 0;
}

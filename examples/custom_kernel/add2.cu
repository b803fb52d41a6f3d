// Notebook "custom_kernel": a hand-written CUDA add on tensors, next to tl::add, timed four ways.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <tensorlet_cuda.h>

namespace {

// One thread per element, grid-stride so any grid covers any n.
__global__ void add2_kernel(const float* a, const float* b, float* out, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    out[i] = a[i] + b[i];
}

// The op a user would write: float32 tensors of one shape on one device in, their sum out.
tl::Tensor add2(const tl::Tensor& a, const tl::Tensor& b) {
  TL_CHECK(a.shape() == b.shape() && a.device() == b.device() && a.dtype() == tl::kFloat32 &&
               b.dtype() == tl::kFloat32 && a.is_cuda(),
           tl::Error, "add2", "expected two float32 CUDA tensors of one shape");
  // Raw pointers see memory, not strides: contiguous() is free for tensors that already are.
  tl::Tensor ac = a.contiguous(), bc = b.contiguous();
  tl::Tensor out = tl::empty(a.shape(), a.options());
  const int64_t n = out.numel();
  constexpr int kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
  tl::cuda::DeviceGuard on(a.device().index());
  tl::cuda::launch("add2", add2_kernel, dim3(blocks), dim3(kThreads), 0, ac.data<float>(),
                   bc.data<float>(), out.data<float>(), n);
  return out;
}

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr int kReps = 50;

// Median microseconds of `op` timed on the host clock, synchronizing before the clock starts
// and/or before it stops. Every repetition first enqueues `earlier` (work a real program would
// still have in flight) and ends with an untimed synchronize, so the repetitions are alike.
template <typename Op, typename Earlier>
double host_us(bool sync_before, bool sync_after, Op op, Earlier earlier) {
  std::vector<double> us;
  for (int r = 0; r < kReps + 3; ++r) {
    earlier();
    if (sync_before) tl::cuda::synchronize();
    auto start = Clock::now();
    tl::Tensor out = op();
    if (sync_after) tl::cuda::synchronize();
    const double t = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    tl::cuda::synchronize();
    if (r >= 3) us.push_back(t);
  }
  return median(us);
}

// Median microseconds of `op` on the GPU's clock: events recorded on the stream around it. The
// start event is recorded behind `earlier`, so the GPU is still busy when op's kernel is enqueued
// and the interval holds the kernel, not the host's launch latency.
template <typename Op, typename Earlier>
double event_us(Op op, Earlier earlier) {
  std::vector<double> us;
  tl::cuda::Event start(true), stop(true);
  for (int r = 0; r < kReps + 3; ++r) {
    earlier();
    start.record();
    tl::Tensor out = op();
    stop.record();
    stop.synchronize();
    if (r >= 3) us.push_back(1e3 * start.elapsed_time(stop));
  }
  return median(us);
}

}  // namespace

int main() {
  if (!tl::cuda::is_available()) {
    std::printf(
        "custom_kernel: no CUDA device here (%s), so there is no kernel to time.\n"
        "On a machine with an NVIDIA GPU this example launches a hand-written add through\n"
        "tl::cuda::launch and times it four ways.\n",
        tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no GPU answers"
                             : "tensorlet was built without CUDA");
    return 0;
  }
  cudaDeviceProp prop{};
  TL_CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess, tl::CudaError, "custom_kernel",
           "cudaGetDeviceProperties failed");

  constexpr int64_t n = 1 << 20;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::manual_seed(0);
  tl::Tensor a = tl::rand({n}, gpu), b = tl::rand({n}, gpu);
  // Earlier work for every repetition: a 16M-element multiply, tens of microseconds of GPU
  // time that is still running when the timed launch is enqueued.
  tl::Tensor big = tl::rand({int64_t{16} << 20}, gpu);
  auto earlier = [&] { (void)tl::mul(big, big); };
  auto nothing = [] {};

  tl::Tensor mine = add2(a, b), theirs = tl::add(a, b);
  const bool same = tl::equal(mine.cpu(), theirs.cpu());

  std::printf("Custom kernel: out[i] = a[i] + b[i] on two %lld-element float32 tensors, %s.\n",
              static_cast<long long>(n), prop.name);
  std::printf("add2 (our __global__ kernel via tl::cuda::launch) equals tl::add: %s\n\n",
              same ? "yes" : "NO");

  auto run_add2 = [&] { return add2(a, b); };
  auto run_add = [&] { return tl::add(a, b); };
  const double both = host_us(true, true, run_add2, earlier);
  const double before = host_us(true, false, run_add2, earlier);
  const double after = host_us(false, true, run_add2, earlier);
  const double neither = host_us(false, false, run_add2, earlier);
  const double kernel = event_us(run_add2, earlier);
  const double add_both = host_us(true, true, run_add, nothing);
  const double add_kernel = event_us(run_add, earlier);
  const double big_kernel = event_us([&] { return tl::mul(big, big); }, nothing);

  std::printf(
      "add2 timed on the host clock, median of %d (before each, a 16M-element multiply taking\n"
      "%.1f us of GPU time is enqueued, as a real program has earlier work in flight):\n\n",
      kReps, big_kernel);
  struct Way {
    const char* name;
    double us;
    const char* why;
  };
  const Way ways[] = {
      {"synchronize before and after", both,
       "the GPU is idle when the clock starts and done when it stops: launch + kernel + one\n"
       "    sync. The only way of the four that measures the kernel."},
      {"synchronize only before", before,
       "the clock stops as soon as the launch is enqueued: this is the host's launch cost,\n"
       "    the kernel may not even have started."},
      {"synchronize only after", after,
       "the clock also runs while the earlier multiply finishes: whatever was queued before\n"
       "    the launch is counted as the kernel's time."},
      {"synchronize neither", neither,
       "the launch cost again, enqueued behind busy work: it says nothing about the kernel."},
  };
  for (const Way& w : ways) std::printf("  %-30s %8.1f us\n    %s\n", w.name, w.us, w.why);

  std::printf("\nOn the GPU's own clock (CUDA events recorded around the launch):\n");
  std::printf("  add2 kernel  %8.1f us  (%.0f GB/s, counting 12 bytes per element)\n", kernel,
              12.0 * n / (kernel * 1e3));
  std::printf("  tl::add      %8.1f us  (%.1f us synchronized before and after)\n", add_kernel,
              add_both);
  std::printf(
      "\nWhy: a launch only enqueues the kernel and returns, so a host clock measures GPU work\n"
      "only when the GPU is idle at the start and finished at the end. CUDA events time the\n"
      "stream itself and need no synchronization around the work, only before reading them.\n");
  return same ? 0 : 1;
}

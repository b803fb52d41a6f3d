// Notebook "custom_kernel": the notebook's add2 CUDA kernel on tensors, next to tl::add, timed its
// four ways (synchronize before and/or after the host clock) inside NVTX ranges for Nsight Systems;
// then add2 made differentiable with tl::autograd::Function, its gradient checked and profiled.
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include <tensorlet/tensorlet_cuda.h>

#include "chart.h"

namespace {

// The notebook's kernel, as written there: c[i] = a[i] + b[i], grid-stride.
__global__ void add2_kernel(float* c, const float* a, const float* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}

// torch_launch_add2(c, a, b, n): writes a + b into the preallocated `c`, as the notebook's op does,
// so nothing is allocated when it runs. The raw path: c.data<float>() is the device address of
// c's first element and the kernel writes there; raw pointers see memory, not strides, hence the
// contiguity check (tensors from factories and ops are contiguous).
void add2(tl::Tensor& c, const tl::Tensor& a, const tl::Tensor& b) {
  TL_CHECK(a.is_cuda() && a.dtype() == tl::kFloat32 && a.is_contiguous(), tl::Error, "add2",
           "expected a contiguous float32 CUDA tensor a, got ", a.dtype(), " on ", a.device());
  for (const tl::Tensor* t : std::initializer_list<const tl::Tensor*>{&b, &c})
    TL_CHECK(t->shape() == a.shape() && t->device() == a.device() && t->dtype() == tl::kFloat32 &&
                 t->is_contiguous(),
             tl::Error, "add2", "expected b and c like a (", a.shape(), " float32 on ", a.device(),
             "), got ", t->shape(), " ", t->dtype(), " on ", t->device());
  TL_CHECK(a.numel() <= INT32_MAX, tl::Error, "add2", "the kernel indexes with int: at most ",
           INT32_MAX, " elements");
  const int n = static_cast<int>(a.numel());
  tl::cuda::DeviceGuard on(a.device().index());
  // The notebook's launch: blocks of 1024 threads, enough blocks to cover n.
  tl::cuda::launch("add2", add2_kernel, dim3((n + 1023) / 1024), dim3(1024), 0, c.data<float>(),
                   a.data<float>(), b.data<float>(), n);
}

// add2 made differentiable (torch::autograd::Function's C++ form): autograd cannot see into the
// kernel, so the Function says what its gradient is. d(a + b)/da = d(a + b)/db = 1: backward
// hands the output's gradient to both inputs. Its node is named "Add2Backward".
struct Add2 : tl::autograd::Function<Add2> {
  static tl::Tensor forward(tl::autograd::AutogradContext*, const tl::Tensor& a,
                            const tl::Tensor& b) {
    tl::Tensor c = tl::empty_like(a);
    add2(c, a.contiguous(), b.contiguous());
    return c;
  }
  static tl::autograd::variable_list backward(tl::autograd::AutogradContext*,
                                              tl::autograd::variable_list grad_outputs) {
    return {grad_outputs[0], grad_outputs[0]};
  }
};

// An NVTX range for a scope: it shows as a bar on the NVTX row of Nsight Systems' timeline.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

using Clock = std::chrono::steady_clock;

// The notebook's show_time: 10 warm-up calls (not synchronized), then 10 timed calls, each timed
// on the host clock with torch.cuda.synchronize() before and/or after as the way says. Returns
// the 10 times in microseconds. Ends synchronized (untimed), so one way does not leak into the
// next.
struct Way {
  const char* name;
  const char* short_name;  // for the chart's labels
  bool sync_before, sync_after;
};
constexpr Way kWays[] = {{"synchronize before and after", "sync both", true, true},
                         {"synchronize only before", "sync before", true, false},
                         {"synchronize only after", "sync after", false, true},
                         {"synchronize neither", "sync neither", false, false}};
constexpr int kWarmup = 10, kTimed = 10;

std::vector<double> show_time(const char* op, const Way& way, const std::function<void()>& func) {
  NvtxRange range(std::string(op) + ": " + way.name);
  {
    NvtxRange warm("warm-up x10");
    for (int i = 0; i < kWarmup; ++i) func();
  }
  std::vector<double> us;
  for (int i = 0; i < kTimed; ++i) {
    NvtxRange run("run " + std::to_string(i));
    if (way.sync_before) tl::cuda::synchronize();
    const auto start = Clock::now();
    func();
    if (way.sync_after) tl::cuda::synchronize();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  tl::cuda::synchronize();
  return us;
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// Median microseconds of `func` on the GPU's own clock: CUDA events recorded on the stream
// around it, the stream kept busy before the start event so the interval holds the kernel and
// not the host's launch latency.
double event_us(const std::function<void()>& func, const std::function<void()>& busy) {
  NvtxRange range("CUDA events");
  std::vector<double> us;
  tl::cuda::Event start(true), stop(true);
  for (int r = 0; r < 53; ++r) {
    busy();
    start.record();
    func();
    stop.record();
    stop.synchronize();
    if (r >= 3) us.push_back(1e3 * start.elapsed_time(stop));
  }
  return median(us);
}

// Add2 through autograd: the gradient of sum(add2(a, b) * w) is w for both inputs, checked
// element for element (the backward passes w through, so it must be equal, not close) and
// against tl::add's own gradient; then one forward + backward profiled, showing the custom
// node's row. Returns whether the gradients are right.
bool differentiable_add2(const tl::Tensor& a_values, const tl::Tensor& b_values) {
  std::printf("\nDifferentiable add2 (tl::autograd::Function<Add2>):\n");
  tl::Tensor a = a_values.detach().clone(), b = b_values.detach().clone();
  a.requires_grad_();
  b.requires_grad_();
  const tl::Tensor w = tl::rand(a.shape(), a.device());
  const tl::Tensor c = Add2::apply(a, b);
  (c * w).sum().backward();
  const bool values = tl::equal(c.detach().cpu(), tl::add(a_values, b_values).cpu());
  const bool grad_a = tl::equal(a.grad().cpu(), w.cpu()),
             grad_b = tl::equal(b.grad().cpu(), w.cpu());
  // The same loss through tl::add, whose gradient autograd derives itself (AddBackward0).
  tl::Tensor ra = a_values.detach().clone(), rb = b_values.detach().clone();
  ra.requires_grad_();
  rb.requires_grad_();
  (tl::add(ra, rb) * w).sum().backward();
  const double diff = std::max(tl::amax(tl::abs(ra.grad() - a.grad())).item<double>(),
                               tl::amax(tl::abs(rb.grad() - b.grad())).item<double>());
  std::printf(
      "  c = Add2::apply(a, b): grad_fn %s, values equal to tl::add: %s\n"
      "  gradient of sum(c * w) (w random): a.grad == w: %s, b.grad == w: %s (element for\n"
      "  element, %lld each); against tl::add's autograd gradient the largest difference is %g.\n",
      c.grad_fn() ? c.grad_fn()->name().c_str() : "(none)", values ? "yes" : "NO",
      grad_a ? "yes" : "NO", grad_b ? "yes" : "NO", static_cast<long long>(a.numel()), diff);

  namespace prof = tl::profiler;
  prof::Profile profile({.activities = {prof::Activity::CPU, prof::Activity::CUDA}});
  {
    a.mutable_grad() = tl::Tensor();
    b.mutable_grad() = tl::Tensor();
    (Add2::apply(a, b) * w).sum().backward();
    tl::cuda::synchronize();
  }
  profile.stop();
  const prof::KeyAverages averages = profile.key_averages();
  std::printf("%s\n", averages.table({.sort_by = "cpu_time_total", .row_limit = 14}).c_str());
  const std::string scope = "autograd::engine::evaluate_function: Add2Backward";
  for (const auto& r : averages.rows())
    if (r.key == scope)
      std::printf(
          "  The custom node runs as PyTorch's rows: '%s'\n"
          "  around 'Add2Backward', %.1f us of CPU time: the backward only hands the gradient on\n"
          "  (no kernel of its own); the multiply's node (MulBackward0) makes w * grad.\n",
          scope.c_str(), r.cpu_time_total_ns / 1e3);
  return values && grad_a && grad_b && diff == 0;
}

}  // namespace

int main() try {
  if (!tl::cuda::is_available()) {
    std::printf(
        "custom_kernel: no CUDA device here (%s), so there is no kernel to time.\n"
        "On a machine with an NVIDIA GPU this example launches the notebook's add2 kernel\n"
        "through tl::cuda::launch and times it and tl::add four ways, then makes add2\n"
        "differentiable (tl::autograd::Function<Add2>) and checks and profiles its gradient.\n",
        tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no GPU answers"
                             : "tensorlet was built without CUDA");
    return 0;
  }
  const tl::cuda::DeviceProperties prop = tl::cuda::get_device_properties(0);

  // The notebook's data: n = 1024 * 1024, a, b and the output c made once on cuda:0.
  constexpr int64_t n = 1024 * 1024;
  const tl::Device gpu = tl::Device::cuda(0);
  tl::manual_seed(0);
  const tl::Tensor a = tl::rand({n}, gpu), b = tl::rand({n}, gpu);
  tl::Tensor c = tl::rand({n}, gpu);

  add2(c, a, b);
  const bool same = tl::equal(c.cpu(), tl::add(a, b).cpu());
  std::printf("Custom kernel: c[i] = a[i] + b[i] on %lld-element float32 tensors, %s.\n",
              static_cast<long long>(n), prop.name.c_str());
  std::printf(
      "add2 (the notebook's __global__ kernel, launched through tl::cuda::launch, writing into\n"
      "a preallocated c through c.data<float>()) equals tl::add: %s\n\n",
      same ? "yes" : "NO");

  // run_cuda: add2 into c, nothing allocated. run_torch: a + b, whose result is dropped at once
  // (the caching allocator hands the same block back on the next call, no cudaMalloc).
  const std::function<void()> run_add2 = [&] { add2(c, a, b); };
  const std::function<void()> run_add = [&] { (void)tl::add(a, b); };

  struct Row {
    const Way* way;
    std::vector<double> add2_us, add_us;
  };
  std::vector<Row> rows;
  for (const Way& way : kWays)
    rows.push_back({&way, show_time("add2", way, run_add2), show_time("tl::add", way, run_add)});

  std::printf(
      "Timed the notebook's way: %d warm-up calls, then %d calls on the host clock; the notebook\n"
      "prints the mean, we print the median of the same %d calls beside it (one slow call moves\n"
      "the mean, not the median).\n\n",
      kWarmup, kTimed, kTimed);
  std::printf("  %-30s %11s %11s   %11s %11s\n", "", "add2 mean", "median", "tl::add mean",
              "median");
  for (const Row& r : rows)
    std::printf("  %-30s %8.1f us %8.1f us   %8.1f us %8.1f us\n", r.way->name, mean(r.add2_us),
                median(r.add2_us), mean(r.add_us), median(r.add_us));
  std::printf("  (the notebook, on its GPU: about 29 us, 8 us, 130 us for the first call, 7 us)\n");

  // The GPU's own clock, behind a 16M-element multiply so the stream is busy at the start event.
  const tl::Tensor big = tl::rand({int64_t{16} << 20}, gpu);
  const std::function<void()> busy = [&] { (void)tl::mul(big, big); };
  const double k_add2 = event_us(run_add2, busy);
  const double k_add = event_us(run_add, busy);
  std::printf("\nOn the GPU's own clock (CUDA events around the launch, median of 50):\n");
  std::printf("  add2 kernel   %6.1f us  (%.0f GB/s, 12 bytes per element)\n", k_add2,
              12.0 * n / (k_add2 * 1e3));
  std::printf("  tl::add       %6.1f us  (%.0f GB/s)\n", k_add, 12.0 * n / (k_add * 1e3));

  // What each way measured, read off this run's numbers.
  const Row& both = rows[0];
  const Row& before = rows[1];
  const Row& after = rows[2];
  const Row& neither = rows[3];
  const double m_both = median(both.add2_us), m_before = median(before.add2_us);
  std::printf("\nWhat each way measured (add2):\n");
  std::printf(
      "- before and after: %.1f us = the launch + the kernel (%.1f us of it on the GPU clock) +\n"
      "  the closing synchronize's wake-up. The only way of the four that includes the kernel\n"
      "  every time; it is %.1fx the kernel alone, since a 4 MB add is short next to a launch.\n",
      m_both, k_add2, m_both / k_add2);
  std::printf(
      "- only before: %.1f us: the clock stops once the launch is enqueued, so this is the\n"
      "  host's launch cost (%.0f%% of the synchronized time), not the kernel's.\n",
      m_before, 100.0 * m_before / m_both);
  std::printf("- only after, call by call:");
  for (double t : after.add2_us) std::printf(" %.1f", t);
  std::printf(" us\n");
  const double first = after.add2_us[0];
  const double rest = median(std::vector<double>(after.add2_us.begin() + 1, after.add2_us.end()));
  if (first > 1.5 * rest)
    std::printf(
        "  only the first call is slow (%.1f us, %.1fx the others' %.1f us): it starts with the\n"
        "  10 unsynchronized warm-up calls still queued and waits for them too; from then on each\n"
        "  call's closing synchronize is the next call's opening one, so the rest time like\n"
        "  'before and after' (%.1f us). The notebook's first call took 130 us for the same\n"
        "  reason.\n",
        first, first / rest, rest, m_both);
  else
    std::printf(
        "  the first call (%.1f us) is not much slower than the others (%.1f us) here: the\n"
        "  GPU had run the 10 warm-up kernels by the time the host had launched them, so\n"
        "  there was little left to wait for (the notebook's first call took 130 us). From the\n"
        "  second call on, each call's closing synchronize is the next call's opening one.\n",
        first, rest);
  std::printf(
      "- neither: %.1f us, the launch cost again (the notebook: 7 us); the kernels pile up\n"
      "  behind each other and the clock never sees them.\n",
      median(neither.add2_us));
  std::printf(
      "tl::add follows the same pattern (%.1f / %.1f / first %.1f then %.1f / %.1f us): its\n"
      "launch goes through the op front-end and allocates its result from the cache.\n",
      median(both.add_us), median(before.add_us), after.add_us[0],
      median(std::vector<double>(after.add_us.begin() + 1, after.add_us.end())),
      median(neither.add_us));
  std::printf(
      "\nNsight Systems: every way, warm-up and call above is an NVTX range. Run\n"
      "  nsys profile -t cuda,nvtx -o add2 build/examples/custom_kernel\n"
      "then open add2.nsys-rep in nsys-ui: the NVTX row names each range, the CUDA API row shows\n"
      "each launch and cudaDeviceSynchronize, the GPU row each kernel under it (the notebook's\n"
      "screenshots). `nsys stats -r nvtx_sum add2.nsys-rep` lists the ranges' times as text.\n");

  const bool grads_ok = differentiable_add2(a, b);

  std::vector<tl_example::Bar> bars;
  for (const Row& r : rows)
    bars.push_back({std::string("add2, ") + r.way->short_name, mean(r.add2_us)});
  for (const Row& r : rows)
    bars.push_back({std::string("tl::add, ") + r.way->short_name, mean(r.add_us)});
  const std::string path = tl_example::write_chart(
      "custom_kernel.svg",
      tl_example::bar_chart_svg(
          "host-clock time per call, the notebook's mean of 10 (" + prop.name + ")", "us", bars));
  std::printf("chart: %s\n", path.c_str());
  return same && grads_ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "custom_kernel: %s\n", e.what());
  return 1;
}

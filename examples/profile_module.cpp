// Notebook "profile_module": the torch.profiler recipe — profile a module, find its slow part in
// the key_averages table, fix it twice (float32 mask, then nonzero on the device) and re-profile.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <tensorlet.h>
namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

// How MASK INDICES finds the indices: the recipe's slow way (copy the mask to the host and search
// it there, then send the indices back), or nonzero where the mask lives.
enum class Search { OnHost, OnDevice };

// The recipe's module: a linear layer 500 -> 10 and a mask search whose threshold comes from the
// layer's output, each in its own user scope so the table shows the two halves apart.
class MaskModule {
 public:
  explicit MaskModule(tl::Device device) {
    // nn.Linear's default initialisation: uniform in [-1/sqrt(in), 1/sqrt(in)).
    const double bound = 1.0 / std::sqrt(static_cast<double>(kIn));
    weight_ = ((tl::rand({kOut, kIn}) * 2.0 - 1.0) * bound).to(device);
    bias_ = ((tl::rand({kOut}) * 2.0 - 1.0) * bound).to(device);
  }

  struct Output {
    double threshold = 0;
    int64_t indices = 0;  // rows of the nonzero result: every version must find the same
  };

  Output forward(const tl::Tensor& input, const tl::Tensor& mask, Search search) const {
    tl::Tensor out;
    {
      prof::RecordFunction scope("LINEAR PASS");
      out = tl::linear(input, weight_, bias_);
    }
    prof::RecordFunction scope("MASK INDICES");
    const double threshold = tl::mean(out).item<float>();  // synchronizes: it is a host value
    tl::Tensor indices;
    if (search == Search::OnHost) {
      // A whole copy of the mask crosses to the host so the host can search it; the indices
      // then travel back to where the module runs.
      tl::Tensor host_mask = mask.cpu();
      indices = tl::nonzero(host_mask > threshold).to(mask.device());
    } else {
      indices = tl::nonzero(mask > threshold);
    }
    return {threshold, indices.shape()[0]};
  }

  static constexpr int64_t kIn = 500, kOut = 10;

 private:
  tl::Tensor weight_, bias_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// What one version measured: its forward's wall time (median of unprofiled runs) and output.
struct StepResult {
  double forward_ms = 0;
  MaskModule::Output output;
};

const prof::EventAverage* top_row(const std::vector<prof::EventAverage>& rows,
                                  int64_t prof::EventAverage::*field) {
  const prof::EventAverage* best = nullptr;
  for (const auto& r : rows)
    if (!best || r.*field > best->*field) best = &r;
  return best;
}

std::string format_bytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// One sentence read off the (ungrouped) rows: the op or scope that costs the most self CPU time
// and the one that allocates the most, so the narrative names what this run's table shows.
void summarize(const prof::KeyAverages& averages, bool gpu) {
  const auto& rows = averages.rows();
  int64_t self_cpu_total = 0;
  for (const auto& r : rows) self_cpu_total += r.self_cpu_time_total_ns;
  const auto* slowest = top_row(rows, &prof::EventAverage::self_cpu_time_total_ns);
  const auto* host_alloc = top_row(rows, &prof::EventAverage::self_cpu_memory_usage);
  if (!slowest || self_cpu_total == 0) return;
  std::printf("   Read off the rows: %s takes the most self CPU time (%.0f%% of %.3f ms)",
              slowest->key.c_str(),
              100.0 * static_cast<double>(slowest->self_cpu_time_total_ns) / self_cpu_total,
              self_cpu_total / 1e6);
  if (host_alloc && host_alloc->self_cpu_memory_usage > 0)
    std::printf(", and %s allocates the most host memory (%s)", host_alloc->key.c_str(),
                format_bytes(host_alloc->self_cpu_memory_usage).c_str());
  if (gpu) {
    const auto* dev_alloc = top_row(rows, &prof::EventAverage::self_cuda_memory_usage);
    if (dev_alloc && dev_alloc->self_cuda_memory_usage > 0)
      std::printf("; %s allocates the most device memory (%s)", dev_alloc->key.c_str(),
                  format_bytes(dev_alloc->self_cuda_memory_usage).c_str());
  }
  std::printf(".\n");
}

// Runs one version: a warm-up forward (first-use costs stay out of the table, as the recipe's
// warm-up call does), three timed unprofiled forwards, then one profiled forward whose tables
// are printed.
StepResult run_step(const char* title, const char* lesson, const MaskModule& model,
                    const tl::Tensor& input, const tl::Tensor& mask, Search search, bool gpu) {
  std::printf("%s\n\n", title);
  auto timed_forward = [&] {
    if (gpu) tl::cuda::synchronize();
    const auto start = Clock::now();
    const MaskModule::Output out = model.forward(input, mask, search);
    if (gpu) tl::cuda::synchronize();
    return std::make_pair(std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
                          out);
  };
  StepResult result;
  result.output = timed_forward().second;
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) times.push_back(timed_forward().first);
  result.forward_ms = median(times);

  prof::ProfileOptions options{.record_shapes = true, .profile_memory = true, .with_stack = true};
  if (gpu) options.activities = {prof::Activity::CPU, prof::Activity::CUDA};
  prof::Profile profile(options);
  model.forward(input, mask, search);
  if (gpu) tl::cuda::synchronize();
  profile.stop();

  // The recipe's view: rows grouped by the innermost 5 frames of their user-scope stack.
  const prof::KeyAverages grouped = profile.key_averages({.group_by_stack_n = 5});
  std::printf("%s\n", grouped.table({.sort_by = "self_cpu_time_total", .row_limit = 5}).c_str());
  if (gpu)
    std::printf("%s\n", grouped.table({.sort_by = "self_cuda_time_total", .row_limit = 5}).c_str());
  // The module's two scopes side by side: top-level rows only, so LINEAR PASS shows even when its
  // ops are too cheap to reach the top five above.
  std::printf("%s\n", profile.key_averages()
                          .table({.sort_by = gpu ? "cuda_time_total" : "cpu_time_total",
                                  .row_limit = 5,
                                  .header = "The module's scopes (top-level rows only)",
                                  .top_level_events_only = true})
                          .c_str());
  summarize(profile.key_averages(), gpu);
  std::printf("   %s\n", lesson);
  std::printf(
      "   Forward: %.3f ms (median of 3 unprofiled runs); threshold %.4f, %lld indices (%.1f%% of "
      "the mask).\n\n",
      result.forward_ms, result.output.threshold, static_cast<long long>(result.output.indices),
      100.0 * static_cast<double>(result.output.indices) / static_cast<double>(mask.numel()));
  return result;
}

// `same_mask`: both versions searched the same values, so they must find the same indices. The
// float32 mask is the float64 one rounded, so an element within rounding of the threshold may
// flip between them; their counts are not compared.
void speedup(const char* what, const StepResult& before, const StepResult& after, bool same_mask) {
  const bool differ = same_mask && before.output.indices != after.output.indices;
  std::printf("   %s: %.3f ms -> %.3f ms, %.1fx faster%s\n", what, before.forward_ms,
              after.forward_ms, before.forward_ms / after.forward_ms,
              differ ? " (WARNING: different indices found)" : "");
}

}  // namespace

int main() {
  const bool gpu = tl::cuda::is_available();
  const tl::Device device = gpu ? tl::Device::cuda(0) : tl::Device::cpu();
  // 500^3 as in the recipe on a GPU (1 GB of float64); the CPU-only run keeps its host copies
  // and searches small enough for a laptop.
  const int64_t side = gpu ? 500 : 200;

  std::printf(
      "Profiling a module: linear %lld->%lld on a 128x%lld input, then the indices where a "
      "%lld^3 mask\n(uniform in [-1, 1), so about half of it passes) exceeds the output's mean.\n",
      static_cast<long long>(MaskModule::kIn), static_cast<long long>(MaskModule::kOut),
      static_cast<long long>(MaskModule::kIn), static_cast<long long>(side));
  if (gpu) {
    std::printf("Running on cuda:0; the profiles record CPU and CUDA activities.\n\n");
  } else {
    std::printf(
        "No CUDA GPU (%s): the module runs on the CPU with a %lld^3 mask.\n"
        "What needs a GPU: the copy of the mask from the device to the host (most of step 1's\n"
        "cost there), the CUDA time and memory columns, and step 3 (nonzero on the device), which\n"
        "on the CPU would be step 2 again since the mask already lives on the host.\n\n",
        tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no device answers"
                             : "tensorlet was built without its CUDA backend",
        static_cast<long long>(side));
  }

  tl::manual_seed(0);
  const MaskModule model(device);
  const tl::Tensor input = tl::rand({128, MaskModule::kIn}, device);
  // The layer's output mean is near 0 with nn.Linear's initialisation, so a mask centred on 0
  // makes the search find about half its elements (the G6 benchmark's workload), not all of them.
  const tl::Tensor mask64 =
      tl::rand({side, side, side}, tl::TensorOptions(tl::kFloat64).device(device)) * 2.0 - 1.0;

  const StepResult slow = run_step(
      "1. float64 mask, copied to the host and searched there",
      gpu ? "What to look for: the top rows are all inside MASK INDICES (Source Location): tl::to, "
            "the mask's copy to the host (CPU Mem: the whole float64 mask) and the indices' copy "
            "back, and the host's tl::gt and tl::nonzero; LINEAR PASS costs next to nothing."
          : "The top rows are tl::nonzero and tl::gt, both inside MASK INDICES (Source Location): "
            "the search over the float64 mask is the slow part, and tl::gt's Self CPU Mem is the "
            "bool mask it writes, one byte per element.",
      model, input, mask64, Search::OnHost, gpu);

  const tl::Tensor mask32 = mask64.to(tl::kFloat32);
  const StepResult half = run_step(
      "2. float32 mask (half the bytes), still searched on the host",
      gpu ? "What to look for: tl::to's CPU Mem is half of step 1's and its time shorter, but the "
            "mask still crosses to the host and nonzero still runs there, so the same rows lead."
          : "tl::gt now reads half the bytes, so its self CPU time drops; tl::nonzero scans the "
            "same bool mask and writes the same indices as in step 1, so it stays on top.",
      model, input, mask32, Search::OnHost, gpu);
  std::printf("Speed-up so far:\n");
  speedup("float64 -> float32", slow, half, false);
  std::printf("\n");

  if (!gpu) {
    std::printf(
        "3. nonzero on the device: needs a CUDA GPU (on the CPU the mask is already where nonzero "
        "runs, so this is step 2).\n");
    return 0;
  }
  const StepResult fast = run_step(
      "3. float32 mask searched on the device with nonzero",
      "What to look for: no tl::to of the mask any more; tl::gt and tl::nonzero run on the GPU "
      "(their CUDA columns), and only nonzero's count crosses to the host.",
      model, input, mask32, Search::OnDevice, gpu);
  std::printf("Speed-ups:\n");
  speedup("float32 host search -> device nonzero", half, fast, true);
  speedup("overall, step 1 -> step 3", slow, fast, false);
  return 0;
}

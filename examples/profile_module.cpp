// Notebook "profile_module": the torch.profiler recipe — profile a module, find its slow part in
// the key_averages table, fix it twice (float32 mask, then nonzero on the device), re-profile,
// then profile its forward + backward under a loss.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "chart.h"
namespace tl = tensorlet;
namespace prof = tl::profiler;

namespace {

using Clock = std::chrono::steady_clock;

// How MASK INDICES finds the indices: the recipe's first version (the threshold read to the host
// with .item(), the mask copied to the host and searched there, the indices sent back), or its
// final one (the threshold kept on the device as a 0-d tensor, nonzero where the mask lives).
enum class Search { OnHost, OnDevice };

// The recipe's MyModule: self.linear = nn.Linear(500, 10) and a mask search whose threshold
// comes from the layer's output, each half in its own user scope so the table shows them apart.
class MaskModule {
 public:
  explicit MaskModule(tl::Device device) : linear_(kIn, kOut) { linear_->to(device); }

  struct Output {
    tl::Tensor out;        // the layer's output, [batch, kOut] (what step 4's loss reads)
    tl::Tensor threshold;  // 0-d, on the module's device
    int64_t indices = 0;   // elements found: every version searching one mask must find the same
  };

  Output forward(const tl::Tensor& input, const tl::Tensor& mask, Search search) const {
    tl::Tensor out;
    {
      prof::RecordFunction scope("LINEAR PASS");
      out = linear_(input);
    }
    prof::RecordFunction scope("MASK INDICES");
    // threshold = out.sum(axis=1).mean(), a 0-d tensor where out lives.
    const tl::Tensor threshold = tl::mean(tl::sum(out, {1}));
    if (search == Search::OnHost) {
      // .item(): the host waits for the GPU to get the value. Then a whole copy of the mask
      // crosses to the host so the host can search it (np.argwhere), and the indices travel back.
      const double value = threshold.item<double>();
      const tl::Tensor host_mask = mask.cpu();
      const tl::Tensor indices = tl::nonzero(host_mask > value).to(mask.device());
      return {out, threshold, indices.size(0)};
    }
    // (mask > threshold).nonzero(as_tuple=True): compared on the device against the 0-d tensor,
    // no .item(); only nonzero's count has to reach the host (to size its result).
    const std::vector<tl::Tensor> indices = tl::nonzero_tuple(mask > threshold);
    return {out, threshold, indices[0].size(0)};
  }

  // Its parameters require grad from the start, as torch's: every forward records the tape.
  const tl::nn::Linear& linear() const { return linear_; }
  static constexpr int64_t kIn = 500, kOut = 10;

 private:
  tl::nn::Linear linear_;
};

// Where the example writes its files: $TL_CHARTS_DIR (as its chart), else the working directory.
std::string output_path(const std::string& file_name) {
  const char* dir = std::getenv("TL_CHARTS_DIR");
  const std::filesystem::path base = dir && *dir ? std::filesystem::path(dir) : ".";
  std::filesystem::create_directories(base);
  return (base / file_name).string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// What one version measured: its forward's wall time (median of unprofiled runs), its output,
// and its profile's rows (ungrouped), to compare versions op by op.
struct StepResult {
  double forward_ms = 0;
  MaskModule::Output output;
  std::vector<prof::EventAverage> rows;
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

// Where in this file an op was called, read off the rows grouped by stack (the heaviest row of
// that name): its innermost frame, e.g. " (profile_module.cpp:52 MaskModule::forward())". Empty
// when the build records scope names instead of C++ call sites.
std::string called_at(const prof::KeyAverages& grouped, const std::string& key,
                      int64_t prof::EventAverage::*field) {
  if (!prof::call_stacks_available()) return "";
  const prof::EventAverage* best = nullptr;
  for (const auto& r : grouped.rows())
    if (r.key == key && !r.stack.empty() && (!best || r.*field > best->*field)) best = &r;
  return best ? " at " + best->stack.front() : "";
}

// One sentence read off the (ungrouped) rows: the op or scope that costs the most self CPU time
// and the one that allocates the most, and where in this file each was called (the grouped rows),
// so the narrative names what this run's table shows.
void summarize(const prof::KeyAverages& averages, const prof::KeyAverages& grouped, bool gpu) {
  const auto& rows = averages.rows();
  int64_t self_cpu_total = 0;
  for (const auto& r : rows) self_cpu_total += r.self_cpu_time_total_ns;
  const auto* slowest = top_row(rows, &prof::EventAverage::self_cpu_time_total_ns);
  const auto* host_alloc = top_row(rows, &prof::EventAverage::self_cpu_memory_usage);
  if (!slowest || self_cpu_total == 0) return;
  using EA = prof::EventAverage;
  std::printf("   Read off the rows: %s%s takes the most self CPU time (%.0f%% of %.3f ms)",
              slowest->key.c_str(),
              called_at(grouped, slowest->key, &EA::self_cpu_time_total_ns).c_str(),
              100.0 * static_cast<double>(slowest->self_cpu_time_total_ns) / self_cpu_total,
              self_cpu_total / 1e6);
  if (host_alloc && host_alloc->self_cpu_memory_usage > 0)
    std::printf(", and %s%s allocates the most host memory (%s)", host_alloc->key.c_str(),
                called_at(grouped, host_alloc->key, &EA::self_cpu_memory_usage).c_str(),
                format_bytes(host_alloc->self_cpu_memory_usage).c_str());
  if (gpu) {
    const auto* dev_alloc = top_row(rows, &prof::EventAverage::self_cuda_memory_usage);
    if (dev_alloc && dev_alloc->self_cuda_memory_usage > 0)
      std::printf("; %s%s allocates the most device memory (%s)", dev_alloc->key.c_str(),
                  called_at(grouped, dev_alloc->key, &EA::self_cuda_memory_usage).c_str(),
                  format_bytes(dev_alloc->self_cuda_memory_usage).c_str());
  }
  std::printf(".\n");
}

// Runs one version: a warm-up forward (first-use costs stay out of the table, as the recipe's
// warm-up call does), three timed unprofiled forwards, then one profiled forward whose tables
// are printed.
StepResult run_step(int number, const char* title, const char* lesson, const MaskModule& model,
                    const tl::Tensor& input, const tl::Tensor& mask, Search search, bool gpu,
                    bool show_shapes) {
  std::printf("%d. %s\n\n", number, title);
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

  // The recipe's view: rows grouped by the innermost 5 frames of their stack: the lines of this
  // file that called each op (with libdw; else the enclosing user scopes).
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
  if (show_shapes)
    // "Grouping by input shape is useful to identify which tensor shapes the model uses."
    std::printf("%s\n", profile.key_averages({.group_by_input_shape = true})
                            .table({.sort_by = "self_cpu_time_total",
                                    .row_limit = 8,
                                    .header = "Grouped by input shape (record_shapes=true)"})
                            .c_str());
  result.rows = profile.key_averages().rows();
  summarize(profile.key_averages(), grouped, gpu);
  std::printf("   %s\n", lesson);
  const std::string trace = output_path("profile_module_step" + std::to_string(number) + ".json");
  profile.export_chrome_trace(trace);
  std::printf(
      "   Chrome trace of this profile: %s\n"
      "   (open it in https://ui.perfetto.dev or chrome://tracing: a row per thread%s, the ops\n"
      "   nested under LINEAR PASS and MASK INDICES).\n",
      trace.c_str(), gpu ? " and per CUDA stream" : "");
  std::printf(
      "   Forward: %.3f ms (median of 3 unprofiled runs); threshold %.4f, %lld indices\n"
      "   (%.1f%% of the mask).\n\n",
      result.forward_ms, result.output.threshold.item<double>(),
      static_cast<long long>(result.output.indices),
      100.0 * static_cast<double>(result.output.indices) / static_cast<double>(mask.numel()));
  return result;
}

// `same_mask`: both versions searched the same values, so they must find the same indices. The
// float32 mask is the float64 one rounded, so an element within rounding of the threshold may
// flip between them; their counts are not compared. The words follow the measured ratio: a
// speed-up, a slow-down, or no difference beyond run-to-run noise (10%, on a shared machine).
void speedup(const char* what, const StepResult& before, const StepResult& after, bool same_mask) {
  const bool differ = same_mask && before.output.indices != after.output.indices;
  const double ratio = before.forward_ms / after.forward_ms;
  char verdict[64];
  if (ratio >= 1.1)
    std::snprintf(verdict, sizeof verdict, "%.2fx faster", ratio);
  else if (ratio <= 1 / 1.1)
    std::snprintf(verdict, sizeof verdict, "%.2fx SLOWER (a slow-down)", 1 / ratio);
  else
    std::snprintf(verdict, sizeof verdict, "no real change (%.2fx)", ratio);
  std::printf("   %s: %.3f ms -> %.3f ms, %s%s\n", what, before.forward_ms, after.forward_ms,
              verdict, differ ? " (WARNING: different indices found)" : "");
}

// The row named `key` of a profile, or nullptr.
const prof::EventAverage* find_row(const StepResult& step, const std::string& key) {
  for (const auto& r : step.rows)
    if (r.key == key) return &r;
  return nullptr;
}

// One op's self CPU time in two versions, with the measured ratio (returned; 0 when the op is
// missing from either).
double compare_op(const char* key, const StepResult& before, const StepResult& after) {
  const auto* a = find_row(before, key);
  const auto* b = find_row(after, key);
  if (!a || !b || b->self_cpu_time_total_ns == 0) return 0;
  std::printf("   %-12s self CPU %8.3f ms -> %8.3f ms (%.2fx)\n", key,
              static_cast<double>(a->self_cpu_time_total_ns) / 1e6,
              static_cast<double>(b->self_cpu_time_total_ns) / 1e6,
              static_cast<double>(a->self_cpu_time_total_ns) /
                  static_cast<double>(b->self_cpu_time_total_ns));
  return static_cast<double>(a->self_cpu_time_total_ns) /
         static_cast<double>(b->self_cpu_time_total_ns);
}

// Step 4: the module's forward (step 3's version), a loss on the layer's output and
// loss.backward(), timed unprofiled (median of 3) and then profiled: the forward's rows next to
// the backward's, PyTorch's "autograd::engine::evaluate_function: <node>" around each node.
struct BackwardTimes {
  double forward_ms = 0, backward_ms = 0;
};

// The events of the user scope `name` and of everything inside it: the ops and scopes on its
// thread within its interval, and the GPU work those launched.
std::vector<prof::Event> scope_events(const std::vector<prof::Event>& all,
                                      const std::string& name) {
  const prof::Event* scope = nullptr;
  for (const prof::Event& e : all)
    if (e.kind == prof::EventKind::UserScope && e.name == name) scope = &e;
  std::vector<prof::Event> inside;
  if (!scope) return inside;
  std::set<int64_t> ids;
  for (const prof::Event& e : all)
    if (!e.is_gpu() && e.thread == scope->thread && e.start_ns >= scope->start_ns &&
        e.end_ns <= scope->end_ns) {
      inside.push_back(e);
      ids.insert(e.id);
    }
  for (const prof::Event& e : all)
    if (e.is_gpu() && ids.count(e.parent)) inside.push_back(e);
  return inside;
}

BackwardTimes backward_step(const MaskModule& model, const tl::Tensor& input,
                            const tl::Tensor& mask, bool gpu) {
  std::printf(
      "4. Backward: the same module with a loss, forward + loss.backward() profiled\n\n"
      "   The layer's parameters require grad (as torch's do by default); loss =\n"
      "   mean((out - target)^2) on LINEAR PASS's output against a random target, then\n"
      "   loss.backward(). Each half runs in a user scope: FORWARD (the module, step 3's search),\n"
      "   BACKWARD.\n\n");
  const tl::Tensor target = tl::randn({input.size(0), MaskModule::kOut}, input.device());
  auto sync = [&] {
    if (gpu) tl::cuda::synchronize();
  };
  auto run = [&](BackwardTimes* times) {
    for (tl::Tensor p : model.linear()->parameters()) p.mutable_grad() = tl::Tensor();
    sync();
    const auto t0 = Clock::now();
    tl::Tensor loss;
    {
      prof::RecordFunction scope("FORWARD");
      const MaskModule::Output out = model.forward(input, mask, Search::OnDevice);
      const tl::Tensor d = out.out - target;
      loss = tl::mean(d * d);
    }
    sync();
    const auto t1 = Clock::now();
    {
      prof::RecordFunction scope("BACKWARD");
      loss.backward();
      sync();  // inside the scope: its kernels have run when it closes
    }
    if (times) {
      times->forward_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      times->backward_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    }
  };
  run(nullptr);  // warm-up
  std::vector<double> fwd, bwd;
  for (int i = 0; i < 3; ++i) {
    BackwardTimes t;
    run(&t);
    fwd.push_back(t.forward_ms);
    bwd.push_back(t.backward_ms);
  }
  const BackwardTimes times{median(fwd), median(bwd)};

  prof::ProfileOptions options;
  if (gpu) options.activities = {prof::Activity::CPU, prof::Activity::CUDA};
  prof::Profile profile(options);
  run(nullptr);
  profile.stop();
  const prof::KeyAverages averages = profile.key_averages();
  std::printf("%s\n", averages
                          .table({.sort_by = gpu ? "cuda_time_total" : "cpu_time_total",
                                  .row_limit = 5,
                                  .header = "The two halves (top-level rows only)",
                                  .top_level_events_only = true})
                          .c_str());
  // The backward's own rows: BACKWARD and everything that ran inside it.
  const prof::KeyAverages backward_table = prof::key_averages(
      scope_events(profile.events(), "BACKWARD"), {}, gpu, false, false, false, false);
  std::printf("%s\n",
              backward_table
                  .table({.sort_by = gpu ? "cuda_time_total" : "cpu_time_total",
                          .row_limit = 16,
                          .header = "Inside BACKWARD: evaluate_function, its node, the ops"})
                  .c_str());
  const std::string prefix = "autograd::engine::evaluate_function: ";
  int64_t evaluated = 0, accumulators = 0;  // recorded nodes run; leaves' AccumulateGrad
  const prof::EventAverage* heaviest = nullptr;
  for (const auto& r : backward_table.rows()) {
    if (r.key.rfind(prefix, 0) != 0) continue;
    const bool accumulate =
        r.key.size() >= 14 && r.key.substr(r.key.size() - 14) == "AccumulateGrad";
    (accumulate ? accumulators : evaluated) += r.count;
    if (!heaviest || r.cpu_time_total_ns > heaviest->cpu_time_total_ns) heaviest = &r;
  }
  // Nodes the forward recorded (ops with a sequence number) against those the backward ran.
  int64_t recorded = 0;
  for (const prof::Event& e : profile.events())
    if (e.sequence_nr >= 0 && !e.backward) ++recorded;
  std::printf(
      "   Read off the rows: the forward recorded %lld nodes; the backward ran %lld of them (and\n"
      "   %lld AccumulateGrad, one per parameter, writing .grad())",
      static_cast<long long>(recorded), static_cast<long long>(evaluated),
      static_cast<long long>(accumulators));
  if (recorded > evaluated)
    std::printf(
        ":\n   the threshold's sum and mean recorded theirs too (out requires grad, and the "
        "forward\n"
        "   cannot know what the loss will read), but the loss does not depend on them, so the\n"
        "   engine never runs them. MASK INDICES' compare and nonzero recorded none (a bool\n"
        "   mask and integer indices have no gradient).\n");
  else
    std::printf(".\n");
  if (heaviest)
    std::printf("   The costliest node is %s (%.3f ms of CPU time with its formula's ops).\n",
                heaviest->key.substr(prefix.size()).c_str(), heaviest->cpu_time_total_ns / 1e6);
  std::printf(
      "   Unprofiled (median of 3): forward %.3f ms, backward %.3f ms, %.3gx the forward: the\n"
      "   backward only differentiates the %lld x %lld layer, while the forward also searched the\n"
      "   whole mask.\n",
      times.forward_ms, times.backward_ms, times.backward_ms / times.forward_ms,
      static_cast<long long>(MaskModule::kOut), static_cast<long long>(MaskModule::kIn));
  const std::string trace = output_path("profile_module_step4.json");
  profile.export_chrome_trace(trace);
  std::printf(
      "   Chrome trace: %s\n"
      "   (PyTorch's 'fwdbwd' flow arrows join each forward op to the backward scope that ran\n"
      "   its node).\n\n",
      trace.c_str());
  return times;
}

#ifdef NDEBUG
constexpr const char* kBuild = "this optimized build";
#else
constexpr const char* kBuild = "this unoptimized (debug) build";
#endif

}  // namespace

int main() try {
  const bool gpu = tl::cuda::is_available();
  const tl::Device device = gpu ? tl::Device::cuda(0) : tl::Device::cpu();
  // 500^3 as in the recipe on a GPU (1 GB of float64); the CPU-only run keeps its host copies
  // and searches small enough for a laptop.
  const int64_t side = gpu ? 500 : 200;

  std::printf(
      "Profiling a module: nn::Linear(%lld, %lld) on a 128x%lld input, then the indices where a\n"
      "%lld^3 mask (uniform in [-1, 1)) exceeds threshold = out.sum(axis=1).mean().\n",
      static_cast<long long>(MaskModule::kIn), static_cast<long long>(MaskModule::kOut),
      static_cast<long long>(MaskModule::kIn), static_cast<long long>(side));
  if (gpu) {
    std::printf("Running on cuda:0; the profiles record CPU and CUDA activities.\n\n");
  } else {
    std::printf(
        "No CUDA GPU (%s): the module runs on the CPU with a %lld^3 mask.\n"
        "What needs a GPU: the copy of the mask from the device to the host (most of step 1's\n"
        "cost there), the CUDA time and memory columns, and the gain of step 3 (nonzero on the\n"
        "device, no .item()): on the CPU the mask already lives where nonzero runs, so step 3\n"
        "runs but can only match step 2.\n\n",
        tl::cuda::is_built() ? "tensorlet has its CUDA backend, but no device answers"
                             : "tensorlet was built without its CUDA backend",
        static_cast<long long>(side));
  }

  tl::manual_seed(0);
  const MaskModule model(device);
  std::printf("model.linear: %s\n\n",
              [&] {
                std::ostringstream os;
                os << model.linear();
                return os.str();
              }()
                  .c_str());
  const tl::Tensor input = tl::rand({128, MaskModule::kIn}, device);
  // The threshold is near 0 with nn.Linear's initialisation, so a mask centred on 0 makes the
  // search find a large share of its elements (the G6 benchmark's workload), not all or none.
  const tl::Tensor mask64 =
      tl::rand({side, side, side}, tl::TensorOptions(tl::kFloat64).device(device)) * 2.0 - 1.0;

  const StepResult slow = run_step(
      1, "float64 mask; threshold read with .item(); mask copied to the host and searched there",
      gpu ? "What to look for: the top rows all come from MASK INDICES, the mask search in "
            "MaskModule::forward (Source Location: its lines): tl::to, the mask's copy to the host "
            "(CPU Mem: the whole float64 mask) and the indices' copy back, and the host's tl::gt "
            "and tl::nonzero; LINEAR PASS costs next to nothing."
          : "What to look for: tl::nonzero and tl::gt, both called from the mask search in "
            "MaskModule::forward (Source Location: one line of MASK INDICES): the search over the "
            "float64 mask; tl::gt's Self CPU Mem is the bool mask it writes, one byte per element.",
      model, input, mask64, Search::OnHost, gpu, /*show_shapes=*/true);

  const tl::Tensor mask32 = mask64.to(tl::kFloat32);
  const StepResult half = run_step(
      2, "float32 mask (half the bytes), still searched on the host",
      gpu ? "What to look for: tl::to's CPU Mem is half of step 1's, but the mask still crosses "
            "to the host and nonzero still runs there."
          : "What to look for: tl::gt reads half the bytes; tl::nonzero scans the same bool mask "
            "and writes about as many indices as in step 1.",
      model, input, mask32, Search::OnHost, gpu, false);
  std::printf("Step 1 -> step 2, measured:\n");
  speedup("float64 -> float32, forward", slow, half, false);
  (void)compare_op("tl::to", slow, half);
  const double gt_ratio = compare_op("tl::gt", slow, half);
  (void)compare_op("tl::nonzero", slow, half);
  if (gt_ratio >= 1.1)
    std::printf("   tl::gt got %.2fx faster reading half the bytes.\n", gt_ratio);
  else if (gt_ratio > 0)
    std::printf(
        "   tl::gt did not get faster (%.2fx): half the bytes only help when memory\n"
        "   bandwidth bounds the compare, and in %s the compare loop itself does.\n",
        gt_ratio, kBuild);
  if (const auto* a = find_row(slow, "tl::to"), *b = find_row(half, "tl::to");
      gpu && a && b && b->self_cpu_memory_usage > 0)
    std::printf("   tl::to       host memory %s -> %s (%.2fx)\n",
                format_bytes(a->self_cpu_memory_usage).c_str(),
                format_bytes(b->self_cpu_memory_usage).c_str(),
                static_cast<double>(a->self_cpu_memory_usage) /
                    static_cast<double>(b->self_cpu_memory_usage));
  std::printf("\n");

  const StepResult fast = run_step(
      3, "float32 mask; threshold kept as a 0-d tensor; (mask > threshold).nonzero(as_tuple=True)",
      gpu ? "What to look for: no tl::to of the mask and no .item() any more; tl::gt and "
            "tl::nonzero run on the GPU (their CUDA columns), and only nonzero's count crosses to "
            "the host."
          : "On the CPU the mask was already on the host (step 2's .cpu() was free) and .item() "
            "waited for nothing, so this version can only match step 2.",
      model, input, mask32, Search::OnDevice, gpu, false);
  std::printf("Step 2 -> step 3 and overall, measured:\n");
  speedup("host search -> nonzero where the mask lives", half, fast, true);
  for (const char* key : {"tl::gt", "tl::nonzero"}) (void)compare_op(key, half, fast);
  speedup("overall, step 1 -> step 3", slow, fast, false);
  std::printf(
      "   The recipe (a GPU of 2021): self CPU total 5.931 s -> 5.347 s (float32) -> 225.8 ms\n"
      "   (nonzero on the device), 26x overall.\n");
  if (!gpu)
    std::printf(
        "   Here without a GPU the gains of step 3 cannot appear: they come from not copying a\n"
        "   device mask to the host, which a CPU mask never needed.\n");
  std::printf("\n");
  const BackwardTimes backward = backward_step(model, input, mask32, gpu);
  const double recording = backward.forward_ms / fast.forward_ms;
  std::printf(
      "   The forward recording its graph (and the loss) took %.3f ms against step 3's %.3f ms\n"
      "   without one (%.2fx): %s.\n\n",
      backward.forward_ms, fast.forward_ms, recording,
      recording < 1.1 ? "no cost beyond this machine's noise (10%),\n   a few nodes next to a "
                        "search over the whole mask"
                      : "the difference is the loss's ops and the nodes recorded");
  const std::vector<tl_example::Bar> bars{
      {"1. float64, host search", slow.forward_ms},
      {"2. float32, host search", half.forward_ms},
      {gpu ? "3. float32, device nonzero" : "3. float32, nonzero in place", fast.forward_ms}};
  const std::string path = tl_example::write_chart(
      "profile_module.svg",
      tl_example::bar_chart_svg(std::string("forward time of the recipe's three versions (") +
                                    (gpu ? "cuda:0" : "CPU only") + ", median of 3)",
                                "ms", bars));
  std::printf("chart: %s\n", path.c_str());
  return 0;
} catch (const std::exception& e) {  // tl::Error, or a file that cannot be written
  std::fprintf(stderr, "profile_module: %s\n", e.what());
  return 1;
}

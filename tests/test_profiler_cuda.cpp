// The profiler's GPU side on a real device: CUPTI kernels and runtime calls linked to their ops,
// the CUDA-event fallback (TL_PROFILER_FORCE_EVENTS=1), CPU-only profiles, and the chrome trace.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "trace_format.h"

namespace {

namespace tl = tensorlet;
namespace prof = tensorlet::profiler;
using prof::Event;
using prof::EventKind;

const Event* find_event(const std::vector<Event>& events, const std::string& name) {
  for (const Event& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

const prof::EventAverage* find_row(const prof::KeyAverages& a, const std::string& key) {
  for (const auto& r : a.rows())
    if (r.key == key) return &r;
  return nullptr;
}

// True when `e`'s parent chain reaches the event with id `ancestor`.
bool nested_in(const std::vector<Event>& events, const Event& e, int64_t ancestor) {
  std::unordered_map<int64_t, const Event*> by_id;
  for (const Event& x : events) by_id.emplace(x.id, &x);
  int64_t p = e.parent;
  for (size_t steps = 0; p != 0 && steps <= events.size(); ++steps) {
    if (p == ancestor) return true;
    auto it = by_id.find(p);
    if (it == by_id.end()) return false;
    p = it->second->parent;
  }
  return false;
}

// Sets or clears TL_PROFILER_FORCE_EVENTS for one test and restores the previous value.
class ForceEvents {
 public:
  explicit ForceEvents(bool on) {
    if (const char* v = std::getenv(kName)) previous_ = v;
    if (on)
      setenv(kName, "1", 1);
    else
      unsetenv(kName);
  }
  ~ForceEvents() {
    if (previous_.empty())
      unsetenv(kName);
    else
      setenv(kName, previous_.c_str(), 1);
  }
  ForceEvents(const ForceEvents&) = delete;
  ForceEvents& operator=(const ForceEvents&) = delete;

 private:
  static constexpr const char* kName = "TL_PROFILER_FORCE_EVENTS";
  std::string previous_;
};

struct GpuRun {
  std::vector<Event> events;
  prof::KeyAverages averages;
  std::string table;
  std::string trace_path;
};

// tl::add, tl::matmul and tl::linear on CUDA tensors inside a user scope, profiled with
// `activities`. The linear's shapes are profile_module's: cuBLAS runs them with a kernel it
// launches through the driver API (cuLaunchKernelEx), not the runtime.
GpuRun profile_gpu_work(std::vector<prof::Activity> activities, const std::string& trace_name) {
  const tl::Device gpu = tl::Device::cuda(0);
  tl::Tensor a = tl::rand({256, 256}, gpu);
  tl::Tensor b = tl::rand({256, 256}, gpu);
  tl::Tensor x = tl::rand({128, 500}, gpu);
  tl::Tensor w = tl::rand({10, 500}, gpu);
  tl::Tensor bias = tl::rand({10}, gpu);
  tl::cuda::synchronize();
  GpuRun run;
  prof::Profile profile({.activities = std::move(activities)});
  {
    prof::RecordFunction scope("GPU WORK");
    tl::Tensor c = tl::add(a, b);
    tl::Tensor d = tl::matmul(c, b);
    tl::Tensor y = tl::linear(x, w, bias);
  }
  profile.stop();
  run.events = profile.events();
  run.averages = profile.key_averages();
  run.table = run.averages.table();
  run.trace_path =
      (std::filesystem::temp_directory_path() / ("tl_profiler_cuda_" + trace_name)).string();
  profile.export_chrome_trace(run.trace_path);
  return run;
}

// What holds on either path: kernels under their ops, CUDA totals, the table's CUDA columns.
void check_gpu_attribution(const GpuRun& run) {
  const Event* scope = find_event(run.events, "GPU WORK");
  const Event* add = find_event(run.events, "tl::add");
  const Event* matmul = find_event(run.events, "tl::matmul");
  const Event* linear = find_event(run.events, "tl::linear");
  REQUIRE(scope != nullptr);
  REQUIRE(add != nullptr);
  REQUIRE(matmul != nullptr);
  REQUIRE(linear != nullptr);
  int add_kernels = 0, matmul_kernels = 0, linear_kernels = 0;
  for (const Event& e : run.events) {
    if (e.kind != EventKind::Kernel) continue;
    CAPTURE(e.name);
    CHECK(e.end_ns >= e.start_ns);
    // Every kernel ran for an op of the scope, whichever API launched it.
    CHECK(nested_in(run.events, e, scope->id));
    if (e.parent == add->id) ++add_kernels;
    if (nested_in(run.events, e, matmul->id)) ++matmul_kernels;
    if (nested_in(run.events, e, linear->id)) ++linear_kernels;
  }
  CHECK(add_kernels >= 1);
  CHECK(matmul_kernels >= 1);
  CHECK(linear_kernels >= 1);

  const prof::EventAverage* add_row = find_row(run.averages, "tl::add");
  const prof::EventAverage* matmul_row = find_row(run.averages, "tl::matmul");
  const prof::EventAverage* scope_row = find_row(run.averages, "GPU WORK");
  REQUIRE(add_row != nullptr);
  REQUIRE(matmul_row != nullptr);
  REQUIRE(scope_row != nullptr);
  CHECK(add_row->cuda_time_total_ns > 0);
  CHECK(matmul_row->cuda_time_total_ns > 0);
  CHECK(scope_row->cuda_time_total_ns >= add_row->cuda_time_total_ns);
  CHECK(scope_row->cuda_time_total_ns >=
        add_row->cuda_time_total_ns + matmul_row->cuda_time_total_ns);

  CHECK(run.table.find("Self CUDA") != std::string::npos);
  CHECK(run.table.find("Self CUDA time total:") != std::string::npos);
}

nlohmann::json read_trace(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str());
  std::filesystem::remove(path);
  return doc;
}

}  // namespace

TEST_CASE("profiler: CUDA activity links kernels and runtime calls to their ops (CUPTI)") {
  TL_TEST_REQUIRE_CUDA();
  ForceEvents force(false);
  // Twice: CUPTI is enabled and disabled per recording, and a second one must work as well.
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    GpuRun run = profile_gpu_work({prof::Activity::CPU, prof::Activity::CUDA}, "cupti.json");
    check_gpu_attribution(run);
    const bool cupti = run.table.find("CUPTI unavailable") == std::string::npos;
    if (!cupti) {
      MESSAGE("CUPTI could not start here; the CUDA-event fallback ran instead:\n" << run.table);
      continue;
    }
    CHECK(run.table.find("CUDA activity not recorded") == std::string::npos);
    // Runtime calls sit on the launching thread, under the op, with the kernel's correlation.
    const Event* add = find_event(run.events, "tl::add");
    REQUIRE(add != nullptr);
    std::unordered_map<uint64_t, const Event*> kernel_by_correlation;
    for (const Event& e : run.events)
      if (e.kind == EventKind::Kernel) kernel_by_correlation.emplace(e.correlation, &e);
    int launches = 0;
    for (const Event& e : run.events) {
      if (e.kind != EventKind::Runtime) continue;
      CHECK(e.parent != 0);
      CHECK(e.thread == add->thread);
      const bool launch = e.name.rfind("cudaLaunch", 0) == 0 || e.name.rfind("cuLaunch", 0) == 0;
      if (launch && kernel_by_correlation.count(e.correlation)) ++launches;
    }
    CHECK(launches >= 3);  // add, matmul, linear
    bool runtime_row = false;
    for (const auto& r : run.averages.rows()) runtime_row |= r.key.rfind("cudaLaunch", 0) == 0;
    CHECK(runtime_row);

    // The chrome trace shows the kernels on GPU tracks, with launch -> kernel flow arrows.
    auto doc = read_trace(run.trace_path);
    tl_test::check_trace_event_format(doc);
    int kernels = 0, flow_starts = 0, flow_ends = 0;
    for (const auto& x : doc["traceEvents"]) {
      const std::string cat = x.value("cat", "");
      const std::string ph = x.value("ph", "");
      if (cat == "kernel" && ph == "X") ++kernels;
      if (cat == "ac2g" && ph == "s") ++flow_starts;
      if (cat == "ac2g" && ph == "f") ++flow_ends;
    }
    CHECK(kernels >= 2);
    CHECK(flow_starts >= 2);
    CHECK(flow_ends == flow_starts);
  }
}

TEST_CASE("profiler: CUDA activity from CUDA events when forced (TL_PROFILER_FORCE_EVENTS=1)") {
  TL_TEST_REQUIRE_CUDA();
  ForceEvents force(true);
  GpuRun run = profile_gpu_work({prof::Activity::CPU, prof::Activity::CUDA}, "events.json");
  check_gpu_attribution(run);
  CHECK(run.table.find("CUDA times from CUDA events (CUPTI unavailable: "
                       "TL_PROFILER_FORCE_EVENTS=1)") != std::string::npos);
  // One synthetic kernel per op that ran on the GPU, none for runtime calls.
  const Event* add = find_event(run.events, "tl::add");
  REQUIRE(add != nullptr);
  const Event* k = find_event(run.events, "tl::add [CUDA events]");
  REQUIRE(k != nullptr);
  CHECK(k->kind == EventKind::Kernel);
  CHECK(k->parent == add->id);
  for (const Event& e : run.events) CHECK(e.kind != EventKind::Runtime);
  auto doc = read_trace(run.trace_path);
  tl_test::check_trace_event_format(doc);
  int kernels = 0, flows = 0;
  for (const auto& x : doc["traceEvents"]) {
    if (x.value("cat", "") == "kernel") ++kernels;
    if (x.value("cat", "") == "ac2g") ++flows;
  }
  CHECK(kernels >= 2);
  CHECK(flows >= 2);
}

TEST_CASE("profiler: a CPU-only profile of CUDA ops records no GPU events") {
  TL_TEST_REQUIRE_CUDA();
  for (bool forced : {false, true}) {
    CAPTURE(forced);
    ForceEvents force(forced);
    GpuRun run = profile_gpu_work({prof::Activity::CPU}, "cpu_only.json");
    std::filesystem::remove(run.trace_path);
    CHECK(find_event(run.events, "tl::add") != nullptr);
    for (const Event& e : run.events) {
      CHECK_FALSE(e.is_gpu());
      CHECK(e.kind != EventKind::Runtime);
    }
    CHECK(run.table.find("Self CUDA") == std::string::npos);
  }
}

TEST_CASE("profiler: ids stay in time order and parents resolve once GPU events are added") {
  TL_TEST_REQUIRE_CUDA();
  for (bool forced : {false, true}) {
    CAPTURE(forced);
    ForceEvents force(forced);
    GpuRun run = profile_gpu_work({prof::Activity::CPU, prof::Activity::CUDA}, "ids.json");
    std::filesystem::remove(run.trace_path);
    std::unordered_map<int64_t, const Event*> by_id;
    for (size_t i = 0; i < run.events.size(); ++i) {
      CHECK(run.events[i].id == int64_t(i) + 1);
      by_id.emplace(run.events[i].id, &run.events[i]);
      if (i > 0) CHECK(run.events[i].start_ns >= run.events[i - 1].start_ns);
    }
    for (const Event& e : run.events) {
      if (e.parent == 0) continue;
      auto it = by_id.find(e.parent);
      REQUIRE(it != by_id.end());
      CHECK((it->second->kind == EventKind::Op || it->second->kind == EventKind::UserScope));
      // Scope keys stay inside the recorder; only GPU and runtime events carry a correlation.
      if (e.kind == EventKind::Op || e.kind == EventKind::UserScope) CHECK(e.correlation == 0);
    }
  }
}

TEST_CASE("profiler: a scope left open across recordings keeps GPU attribution right") {
  TL_TEST_REQUIRE_CUDA();
  ForceEvents force(false);
  const tl::Tensor a = tl::rand({64, 64}, tl::Device::cuda(0));
  tl::cuda::synchronize();
  const std::vector<prof::Activity> cuda = {prof::Activity::CPU, prof::Activity::CUDA};
  std::vector<Event> second, third;
  {
    prof::Profile first({.activities = cuda});
    prof::RecordFunction outer("OUTER");  // still open when `first` stops
    tl::Tensor b = tl::add(a, a);
    first.stop();
    prof::Profile again({.activities = cuda});
    tl::Tensor c = tl::mul(a, a);
    again.stop();
    second = again.events();
  }
  {
    prof::Profile last({.activities = cuda});
    tl::Tensor d = tl::sub(a, a);
    last.stop();
    third = last.events();
  }
  for (const auto* run : {&second, &third}) {
    const Event* op = find_event(*run, run == &second ? "tl::mul" : "tl::sub");
    REQUIRE(op != nullptr);
    int kernels = 0;
    for (const Event& e : *run) {
      if (e.kind != EventKind::Kernel) continue;
      CAPTURE(e.name);
      CHECK(nested_in(*run, e, op->id));
      ++kernels;
    }
    CHECK(kernels >= 1);
  }
}

// The profiler's join of GPU records to CPU scopes (gpu_merge), on synthetic CUPTI records, so it
// is checked without a GPU: links through correlation ids, dropped strays, time order, dense and
// sparse correlation ids, and the CUDA-event fallback's self times.
#include <string>
#include <unordered_map>
#include <vector>

#include "tensorlet/profiler/gpu_trace.h"
#include "test_util.h"

namespace {

namespace prof = tensorlet::profiler;
using prof::Event;
using prof::EventKind;
using prof::detail::gpu_scope_key;
using prof::detail::GpuMode;
using prof::detail::GpuSession;

constexpr uint16_t kGeneration = 7;  // the recording's number, part of every scope key

// n ops on thread 1, each 1000 ns apart, carrying their scope key as a recording hands them over.
std::vector<Event> cpu_ops(int n) {
  std::vector<Event> events(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Event& e = events[static_cast<size_t>(i)];
    e.name = "tl::op" + std::to_string(i);
    e.kind = EventKind::Op;
    e.id = i + 1;
    e.thread = 1;
    e.start_ns = 1000 * i;
    e.end_ns = e.start_ns + 800;
    e.correlation = gpu_scope_key(kGeneration, 1, i);
  }
  return events;
}

Event record(EventKind kind, const std::string& name, int64_t start, uint64_t correlation) {
  Event e;
  e.kind = kind;
  e.name = name;
  e.start_ns = start;
  e.end_ns = start + 100;
  e.correlation = correlation;
  return e;
}

// Launch i: a runtime call inside op i and its kernel later; correlation ids spaced by `stride`.
// `all_threads`: the recording covers every thread (device work of no scope is kept).
GpuSession cupti_session(int n, uint64_t stride, bool all_threads = true) {
  GpuSession s;
  s.mode = GpuMode::Cupti;
  s.generation = kGeneration;
  s.keep_unattributed = all_threads;
  for (int i = n - 1; i >= 0; --i) {  // out of order on purpose: CUPTI buffers need not be sorted
    const uint64_t correlation = 100 + stride * static_cast<uint64_t>(i);
    s.runtime.push_back(
        record(EventKind::Runtime, "cudaLaunchKernel", 1000 * i + 100, correlation));
    s.device.push_back(
        record(EventKind::Kernel, "kernel" + std::to_string(i), 1000 * i + 500, correlation));
    s.external.emplace_back(correlation, gpu_scope_key(kGeneration, 1, i));
  }
  // A call from outside every scope (the profiler's own synchronize) and its kernel.
  s.runtime.push_back(record(EventKind::Runtime, "cudaDeviceSynchronize", 50, 7));
  s.device.push_back(record(EventKind::Kernel, "stray", 60, 7));
  return s;
}

void check_linked(const std::vector<Event>& events, int n) {
  std::unordered_map<int64_t, const Event*> by_id;
  for (const Event& e : events) by_id.emplace(e.id, &e);
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(events[i].id == static_cast<int64_t>(i) + 1);  // ids follow time order
    if (i > 0) CHECK(events[i - 1].start_ns <= events[i].start_ns);
  }
  int runtime = 0, kernels = 0;
  for (const Event& e : events) {
    CAPTURE(e.name);
    if (e.kind == EventKind::Op) CHECK(e.correlation == 0);  // the key is gone from scopes
    if (e.kind == EventKind::Runtime) {
      ++runtime;
      CHECK(e.name == "cudaLaunchKernel");  // the stray call is dropped
      REQUIRE(by_id.count(e.parent));
      CHECK(by_id[e.parent]->start_ns + 100 == e.start_ns);
      CHECK(e.thread == 1);
      CHECK(e.depth == 1);
    }
    if (e.kind == EventKind::Kernel) {
      ++kernels;
      if (e.name == "stray") {
        CHECK(e.parent == 0);  // kept on the GPU timeline, linked to nothing
        continue;
      }
      REQUIRE(by_id.count(e.parent));
      CHECK(by_id[e.parent]->name == "tl::op" + e.name.substr(6));
    }
  }
  CHECK(runtime == n);
  CHECK(kernels == n + 1);
}

}  // namespace

TEST_CASE("profiler merge: CUPTI records link to their scopes and join in time order") {
  const int n = 50;
  // Dense correlation ids (a table indexed by id) and sparse ones (binary search).
  for (uint64_t stride : {uint64_t{2}, uint64_t{1} << 20}) {
    CAPTURE(stride);
    std::vector<Event> events = cpu_ops(n);
    GpuSession s = cupti_session(n, stride);
    prof::detail::gpu_merge(s, events);
    REQUIRE(events.size() == static_cast<size_t>(3 * n + 1));
    check_linked(events, n);
  }
}

TEST_CASE("profiler merge: a per-thread recording keeps only its own device work") {
  const int n = 5;
  std::vector<Event> events = cpu_ops(n);
  GpuSession s = cupti_session(n, 2, /*all_threads=*/false);
  // A launch made inside a scope left open from an earlier recording: its key has another
  // generation, so it matches none of this recording's scopes (same thread, same index).
  s.runtime.push_back(record(EventKind::Runtime, "cudaLaunchKernel", 2100, 5000));
  s.device.push_back(record(EventKind::Kernel, "old", 2200, 5000));
  s.external.emplace_back(5000, gpu_scope_key(kGeneration - 1, 1, 2));
  prof::detail::gpu_merge(s, events);
  int kernels = 0;
  for (const Event& e : events) {
    CAPTURE(e.name);
    CHECK(e.name != "stray");
    CHECK(e.name != "old");
    if (e.kind == EventKind::Kernel) {
      ++kernels;
      CHECK(e.parent != 0);
    }
  }
  CHECK(kernels == n);
  CHECK(events.size() == static_cast<size_t>(3 * n));
}

TEST_CASE("profiler merge: the warm-up launch made at start is dropped, all threads or not") {
  const int n = 3;
  for (bool all_threads : {true, false}) {
    CAPTURE(all_threads);
    std::vector<Event> events = cpu_ops(n);
    GpuSession s = cupti_session(n, 2, all_threads);
    s.runtime.push_back(record(EventKind::Runtime, "cudaLaunchKernel", -500, 3));
    s.device.push_back(record(EventKind::Kernel, "profiler_warmup_kernel", -400, 3));
    s.external.emplace_back(3, prof::detail::kWarmupExternalId);
    prof::detail::gpu_merge(s, events);
    for (const Event& e : events) CHECK(e.name != "profiler_warmup_kernel");
    // The ops, their launches and kernels, and (all threads only) the stray kernel.
    CHECK(events.size() == static_cast<size_t>(3 * n + (all_threads ? 1 : 0)));
  }
}

TEST_CASE("profiler merge: nested scopes keep their parents through renumbering") {
  // A user scope around two ops; a kernel of the second op starts before the scope's end.
  std::vector<Event> events(3);
  events[0] = record(EventKind::UserScope, "SCOPE", 0, gpu_scope_key(kGeneration, 1, 0));
  events[0].end_ns = 5000;
  events[1] = record(EventKind::Op, "tl::a", 10, gpu_scope_key(kGeneration, 1, 1));
  events[2] =
      record(EventKind::Op, "tl::b", 10, gpu_scope_key(kGeneration, 1, 2));  // same start as tl::a
  for (int i = 0; i < 3; ++i) events[static_cast<size_t>(i)].id = i + 1;
  events[1].parent = events[2].parent = 1;
  events[1].depth = events[2].depth = 1;
  GpuSession s;
  s.mode = GpuMode::Cupti;
  s.generation = kGeneration;
  s.device.push_back(record(EventKind::Kernel, "k", 5, 9));  // starts before both ops
  s.external.emplace_back(9, gpu_scope_key(kGeneration, 1, 2));
  prof::detail::gpu_merge(s, events);
  REQUIRE(events.size() == 4);
  CHECK(events[0].name == "SCOPE");
  CHECK(events[1].name == "k");
  CHECK(events[2].name == "tl::a");  // ties keep record order
  CHECK(events[3].name == "tl::b");
  CHECK(events[1].parent == events[3].id);
  CHECK(events[1].depth == 2);
  CHECK(events[2].parent == events[0].id);
  CHECK(events[3].parent == events[0].id);
}

TEST_CASE("profiler merge: CUDA-event fallback gives each op its own share") {
  // SCOPE > tl::outer > tl::inner; events measured 3 ms around outer, 1 ms around inner.
  std::vector<Event> events(3);
  events[0] = record(EventKind::UserScope, "SCOPE", 0, gpu_scope_key(kGeneration, 1, 0));
  events[1] = record(EventKind::Op, "tl::outer", 10, gpu_scope_key(kGeneration, 1, 1));
  events[2] = record(EventKind::Op, "tl::inner", 20, gpu_scope_key(kGeneration, 1, 2));
  for (int i = 0; i < 3; ++i) events[static_cast<size_t>(i)].id = i + 1;
  events[1].parent = 1;
  events[2].parent = 2;
  GpuSession s;
  s.mode = GpuMode::Events;
  s.generation = kGeneration;
  s.timed.push_back({gpu_scope_key(kGeneration, 1, 1), 0, false, 3.0});
  s.timed.push_back({gpu_scope_key(kGeneration, 1, 2), 0, true, 1.0});
  prof::detail::gpu_merge(s, events);
  std::unordered_map<std::string, const Event*> by_name;
  for (const Event& e : events) by_name[e.name] = &e;
  REQUIRE(by_name.count("tl::outer [CUDA events]"));
  REQUIRE(by_name.count("tl::inner [CUDA events]"));
  CHECK(by_name["tl::outer [CUDA events]"]->duration_ns() == 2'000'000);
  CHECK(by_name["tl::inner [CUDA events]"]->duration_ns() == 1'000'000);
  CHECK(by_name["tl::outer [CUDA events]"]->parent == by_name["tl::outer"]->id);
  CHECK(by_name["tl::inner [CUDA events]"]->parent == by_name["tl::inner"]->id);
}

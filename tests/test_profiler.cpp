// Profiler recording: scope nesting and self time, parents and depths, threads, schedules,
// memory attribution, shapes, stacks, flops, start/stop rules. Times are only lower bounds.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <latch>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "trace_format.h"

namespace {

namespace tl = tensorlet;
namespace prof = tensorlet::profiler;
using prof::Event;
using prof::EventKind;

constexpr int64_t kMs = 1'000'000;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

const Event* find(const std::vector<Event>& events, const std::string& name) {
  for (const Event& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<const Event*> find_all(const std::vector<Event>& events, const std::string& name) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (e.name == name) out.push_back(&e);
  return out;
}

const Event* by_id(const std::vector<Event>& events, int64_t id) {
  for (const Event& e : events)
    if (e.id == id) return &e;
  return nullptr;
}

// Self time as aggregation computes it: the duration less its direct children's.
int64_t self_ns(const std::vector<Event>& events, const Event& scope) {
  int64_t self = scope.duration_ns();
  for (const Event& e : events)
    if (e.parent == scope.id && (e.kind == EventKind::Op || e.kind == EventKind::UserScope))
      self -= e.duration_ns();
  return self;
}

// Whether `e` lies in the subtree under `root`.
bool under(const std::vector<Event>& events, const Event& e, int64_t root) {
  for (int64_t p = e.parent; p != 0;) {
    if (p == root) return true;
    const Event* parent = by_id(events, p);
    if (parent == nullptr) return false;
    p = parent->parent;
  }
  return false;
}

// Invariants every recording keeps: unique positive ids, parents on the same thread that enclose
// their children in time, depth one more than the parent's.
void check_well_formed(const std::vector<Event>& events) {
  std::map<int64_t, const Event*> ids;
  for (const Event& e : events) {
    CHECK(e.id > 0);
    CHECK(ids.emplace(e.id, &e).second);
  }
  for (const Event& e : events) {
    CHECK(e.start_ns >= 0);
    CHECK(e.end_ns >= e.start_ns);
    if (e.parent == 0) {
      CHECK(e.depth == 0);
      continue;
    }
    auto it = ids.find(e.parent);
    REQUIRE(it != ids.end());
    const Event& p = *it->second;
    CHECK(p.kind != EventKind::Memory);
    CHECK(p.thread == e.thread);
    CHECK(p.start_ns <= e.start_ns);
    CHECK(p.end_ns >= e.end_ns);
    CHECK(e.depth == p.depth + 1);
  }
}

}  // namespace

TEST_CASE("profiler: nested scopes with known sleeps: total and self = total - children") {
  prof::Profile profile;
  {
    prof::RecordFunction outer("outer");
    sleep_ms(20);
    {
      prof::RecordFunction inner("inner");
      sleep_ms(20);
    }
    {
      prof::RecordFunction inner("inner");
      sleep_ms(5);
    }
  }
  profile.stop();
  const auto& events = profile.events();
  check_well_formed(events);
  const Event* outer = find(events, "outer");
  REQUIRE(outer != nullptr);
  CHECK(outer->kind == EventKind::UserScope);
  CHECK(outer->parent == 0);
  CHECK(outer->thread == 1);
  auto inners = find_all(events, "inner");
  REQUIRE(inners.size() == 2);
  for (const Event* inner : inners) {
    CHECK(inner->parent == outer->id);
    CHECK(inner->depth == 1);
  }
  CHECK(inners[0]->duration_ns() >= 20 * kMs);
  CHECK(inners[1]->duration_ns() >= 5 * kMs);
  CHECK(outer->duration_ns() >= 45 * kMs);
  // Exact on the recorded numbers; the lower bound comes from outer's own sleep.
  const int64_t self = self_ns(events, *outer);
  CHECK(self == outer->duration_ns() - inners[0]->duration_ns() - inners[1]->duration_ns());
  CHECK(self >= 20 * kMs);
  for (const Event& e : events) CHECK(self_ns(events, e) >= 0);
}

TEST_CASE("profiler: ops inside user scopes get the right parent and depth") {
  tl::Tensor a = tl::rand({4, 4}), b = tl::rand({4, 4});
  prof::Profile profile;
  {
    prof::RecordFunction scope("LINEAR PASS");
    tl::Tensor c = tl::add(a, b);
    {
      prof::RecordFunction inner("MASK INDICES");
      tl::Tensor d = tl::nonzero(c > 0.5);
    }
  }
  tl::Tensor top = tl::mul(a, b);
  profile.stop();
  const auto& events = profile.events();
  check_well_formed(events);
  const Event* scope = find(events, "LINEAR PASS");
  const Event* inner = find(events, "MASK INDICES");
  const Event* add = find(events, "tl::add");
  const Event* gt = find(events, "tl::gt");
  const Event* nonzero = find(events, "tl::nonzero");
  const Event* mul = find(events, "tl::mul");
  REQUIRE(scope);
  REQUIRE(inner);
  REQUIRE(add);
  REQUIRE(gt);
  REQUIRE(nonzero);
  REQUIRE(mul);
  CHECK(add->kind == EventKind::Op);
  CHECK(add->parent == scope->id);
  CHECK(add->depth == 1);
  CHECK(inner->parent == scope->id);
  CHECK(gt->parent == inner->id);
  CHECK(nonzero->parent == inner->id);
  CHECK(nonzero->depth == 2);
  CHECK(mul->parent == 0);
  CHECK(mul->depth == 0);
  // Ids follow time order.
  CHECK(scope->id < add->id);
  CHECK(add->id < inner->id);
  CHECK(nonzero->id < mul->id);
}

TEST_CASE("profiler: two threads, each with its own Profile, see only their own ops") {
  std::latch started(2), done(2);
  std::vector<Event> seen[2];
  auto work = [&](int which) {
    prof::Profile profile;
    started.arrive_and_wait();  // both record at once
    {
      prof::RecordFunction scope(which == 0 ? "thread A" : "thread B");
      tl::Tensor x = tl::ones({8}) * (which + 1.0);
    }
    done.arrive_and_wait();  // neither stops before the other has worked
    profile.stop();
    seen[which] = profile.events();
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  for (int which = 0; which < 2; ++which) {
    const auto& events = seen[which];
    check_well_formed(events);
    CHECK(find(events, which == 0 ? "thread A" : "thread B") != nullptr);
    CHECK(find(events, which == 0 ? "thread B" : "thread A") == nullptr);
    CHECK(find(events, "tl::mul") != nullptr);
    CHECK(find_all(events, "tl::mul").size() == 1);
    for (const Event& e : events) CHECK(e.thread == 1);
  }
}

TEST_CASE("profiler: the default Profile does not record other threads") {
  prof::Profile profile;
  std::thread worker([] {
    prof::RecordFunction scope("worker");
    tl::Tensor x = tl::ones({8});
  });
  worker.join();
  profile.stop();
  CHECK(find(profile.events(), "worker") == nullptr);
  CHECK(find(profile.events(), "tl::ones") == nullptr);
}

TEST_CASE("profiler: all_threads mode records every thread on its own track") {
  prof::Profile profile({.all_threads = true});
  {
    prof::RecordFunction scope("main");
    tl::Tensor x = tl::ones({8});
  }
  std::thread worker([] {
    prof::RecordFunction scope("worker");
    tl::Tensor x = tl::zeros({8});
  });
  worker.join();  // the thread is gone before stop: its buffer is still collected
  profile.stop();
  const auto& events = profile.events();
  check_well_formed(events);
  const Event* main_scope = find(events, "main");
  const Event* worker_scope = find(events, "worker");
  const Event* zeros = find(events, "tl::zeros");
  REQUIRE(main_scope);
  REQUIRE(worker_scope);
  REQUIRE(zeros);
  CHECK(main_scope->thread == 1);  // the starting thread
  CHECK(worker_scope->thread == 2);
  CHECK(zeros->thread == 2);
  CHECK(zeros->parent == worker_scope->id);
  // The trace of a real recording (two threads, nested scopes) is what Perfetto's importer takes.
  const auto path = std::filesystem::temp_directory_path() / "tl_all_threads_trace.json";
  profile.export_chrome_trace(path.string());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::filesystem::remove(path);
  tl_test::check_trace_event_format(nlohmann::json::parse(text.str()));
  // A second all-threads Profile, or a per-thread one, cannot start meanwhile.
  prof::Profile again({.all_threads = true});
  CHECK_THROWS_AS(prof::Profile({.all_threads = true}), tl::Error);
  std::thread other([] { CHECK_THROWS_AS(prof::Profile(), tl::Error); });
  other.join();
}

TEST_CASE("profiler: schedule records only active steps and calls on_trace_ready per cycle") {
  std::vector<std::vector<std::string>> traces;
  auto on_ready = [&](prof::Profile& p) {
    std::vector<std::string> names;
    for (const Event& e : p.events())
      if (e.kind == EventKind::UserScope) names.push_back(e.name);
    traces.push_back(names);
  };
  prof::Profile profile(
      {.schedule =
           prof::Schedule{.skip_first = 1, .wait = 1, .warmup = 1, .active = 2, .repeat = 2},
       .on_trace_ready = on_ready});
  for (int step = 0; step < 12; ++step) {
    {
      prof::RecordFunction scope("step " + std::to_string(step));
      tl::Tensor x = tl::ones({4});
    }
    profile.step();
  }
  profile.stop();
  // skip 0, wait 1, warmup 2, active 3-4; wait 5, warmup 6, active 7-8; then nothing.
  REQUIRE(traces.size() == 2);
  CHECK(traces[0] == std::vector<std::string>{"step 3", "step 4"});
  CHECK(traces[1] == std::vector<std::string>{"step 7", "step 8"});
  CHECK(find(profile.events(), "step 8") != nullptr);
}

TEST_CASE("profiler: schedule stopped inside active steps delivers them; repeat 0 cycles on") {
  int ready = 0;
  prof::Profile profile({.schedule = prof::Schedule{.wait = 0, .warmup = 0, .active = 2},
                         .on_trace_ready = [&](prof::Profile&) { ++ready; }});
  for (int step = 0; step < 7; ++step) {
    prof::RecordFunction scope("step " + std::to_string(step));
    profile.step();
  }
  CHECK(ready == 3);  // after steps 1, 3, 5
  profile.stop();     // step 6 was active
  CHECK(ready == 4);
  REQUIRE(profile.events().size() == 1);
  CHECK(profile.events()[0].name == "step 6");
  CHECK_THROWS_AS(prof::Profile({.schedule = prof::Schedule{.active = 0}}), tl::Error);
}

TEST_CASE("profiler: a throwing on_trace_ready loses no later recording") {
  int calls = 0;
  prof::Profile profile({.schedule = prof::Schedule{.wait = 0, .warmup = 0, .active = 1},
                         .on_trace_ready = [&](prof::Profile&) {
                           if (++calls == 1) throw std::runtime_error("callback failed");
                         }});
  { prof::RecordFunction scope("step 0"); }
  CHECK_THROWS_AS(profile.step(), std::runtime_error);
  { prof::RecordFunction scope("step 1"); }
  profile.step();  // the recording of step 1 went on despite the throw
  CHECK(calls == 2);
  REQUIRE(profile.events().size() == 1);
  CHECK(profile.events()[0].name == "step 1");
  profile.step();
  profile.stop();
  // The process-wide recording state is intact: a new Profile records.
  prof::Profile next;
  tl::Tensor x = tl::ones({2});
  next.stop();
  CHECK(find(next.events(), "tl::ones") != nullptr);
}

TEST_CASE("profiler: on_trace_ready may stop the profile from inside step()") {
  prof::Profile profile({.schedule = prof::Schedule{.wait = 0, .warmup = 0, .active = 1},
                         .on_trace_ready = [](prof::Profile& p) { p.stop(); }});
  { prof::RecordFunction scope("step 0"); }
  profile.step();
  CHECK_FALSE(profile.running());
  prof::Profile next;  // the thread was released
  next.stop();
}

TEST_CASE("profiler: on_trace_ready runs at stop without a schedule") {
  int ready = 0;
  size_t seen = 0;
  prof::Profile profile({.on_trace_ready = [&](prof::Profile& p) {
    ++ready;
    seen = p.events().size();
  }});
  tl::Tensor x = tl::ones({4});
  profile.stop();
  CHECK(ready == 1);
  CHECK(seen == profile.events().size());
  CHECK(seen > 0);
}

TEST_CASE("profiler: memory attribution: a scope allocating and freeing 1 MiB") {
  constexpr int64_t kMiB = 1 << 20;
  prof::Profile profile({.profile_memory = true});
  {
    prof::RecordFunction scope("alloc");
    tl::Tensor t = tl::empty({kMiB / 4});  // float32
  }
  tl::Tensor outside = tl::empty({16});
  outside = tl::Tensor();  // freed outside any scope
  profile.stop();
  const auto& events = profile.events();
  check_well_formed(events);
  const Event* scope = find(events, "alloc");
  REQUIRE(scope);
  std::vector<const Event*> mine;
  for (const Event& e : events)
    if (e.kind == EventKind::Memory && under(events, e, scope->id)) mine.push_back(&e);
  REQUIRE(mine.size() == 2);
  CHECK(mine[0]->bytes == kMiB);
  CHECK(mine[1]->bytes == -kMiB);
  for (const Event* e : mine) {
    CHECK(e->device == "cpu");
    CHECK(e->start_ns == e->end_ns);
  }
  // The allocation happens inside tl::empty; the free is in the scope itself.
  const Event* alloc_parent = by_id(events, mine[0]->parent);
  REQUIRE(alloc_parent);
  CHECK(alloc_parent->name == "tl::empty");
  CHECK(mine[1]->parent == scope->id);
  const Event* last = &events.back();
  CHECK(last->kind == EventKind::Memory);
  CHECK(last->bytes == -64);
  CHECK(last->parent == 0);
}

TEST_CASE("profiler: no memory events without profile_memory") {
  prof::Profile profile;
  tl::Tensor t = tl::empty({1024});
  profile.stop();
  for (const Event& e : profile.events()) CHECK(e.kind != EventKind::Memory);
}

TEST_CASE("profiler: record_shapes records each op's input shapes") {
  tl::Tensor a = tl::rand({2, 3}), b = tl::rand({3}), m = tl::rand({3, 4});
  using Shapes = std::vector<std::vector<int64_t>>;
  {
    prof::Profile profile({.record_shapes = true});
    tl::Tensor c = a + b;
    tl::Tensor d = a * 2.0;
    tl::Tensor e = tl::matmul(a, m);
    tl::Tensor f = tl::cat({a, a, c}, 0);
    tl::Tensor g = tl::sum(a, {1});
    profile.stop();
    const auto& events = profile.events();
    REQUIRE(find(events, "tl::add"));
    CHECK(find(events, "tl::add")->input_shapes == Shapes{{2, 3}, {3}});
    REQUIRE(find(events, "tl::mul"));
    CHECK(find(events, "tl::mul")->input_shapes == Shapes{{2, 3}, {}});  // a scalar
    REQUIRE(find(events, "tl::matmul"));
    CHECK(find(events, "tl::matmul")->input_shapes == Shapes{{2, 3}, {3, 4}});
    REQUIRE(find(events, "tl::cat"));
    CHECK(find(events, "tl::cat")->input_shapes == Shapes{{2, 3}, {2, 3}, {2, 3}});
    REQUIRE(find(events, "tl::sum"));
    CHECK(find(events, "tl::sum")->input_shapes == Shapes{{2, 3}});
  }
  {
    prof::Profile profile;
    tl::Tensor c = a + b;
    profile.stop();
    REQUIRE(find(profile.events(), "tl::add"));
    CHECK(find(profile.events(), "tl::add")->input_shapes.empty());
  }
}

TEST_CASE("profiler: with_stack records call sites (or enclosing user scopes) and the source") {
  tl::Tensor a = tl::rand({3});
  {
    prof::Profile profile({.with_stack = true});
    int line = 0;
    {
      prof::RecordFunction outer("outer");
      // clang-format off
      prof::RecordFunction inner("inner"); line = __LINE__;
      // clang-format on
      tl::Tensor b = a + a;
    }
    profile.stop();
    const auto& events = profile.events();
    const Event* outer = find(events, "outer");
    const Event* inner = find(events, "inner");
    const Event* add = find(events, "tl::add");
    REQUIRE(outer);
    REQUIRE(inner);
    REQUIRE(add);
    if (prof::call_stacks_available()) {
      // C++ frames of this test (test_profiler_stacks.cpp, built with -g, checks their file:line;
      // this file may be built without debug information), not the scope names.
      for (const Event* e : {outer, inner, add}) {
        CHECK(!e->stack.empty());
        for (const std::string& frame : e->stack) CHECK(frame.find(" ") != std::string::npos);
      }
    } else {
      CHECK(outer->stack.empty());
      CHECK(inner->stack == std::vector<std::string>{"outer"});
      CHECK(add->stack == std::vector<std::string>{"outer", "inner"});
    }
    CHECK(inner->source == "test_profiler.cpp:" + std::to_string(line));
    CHECK(add->source.empty());
  }
  {
    prof::Profile profile;
    {
      prof::RecordFunction outer("outer");
      tl::Tensor b = a + a;
    }
    profile.stop();
    for (const Event& e : profile.events()) {
      CHECK(e.stack.empty());
      CHECK(e.source.empty());
    }
  }
}

TEST_CASE("profiler: with_flops counts 2*M*N*K*batch for the matmul family") {
  tl::Tensor a = tl::rand({4, 5}), b = tl::rand({5, 6});
  tl::Tensor ba = tl::rand({3, 4, 5}), bb = tl::rand({3, 5, 6});
  tl::Tensor x = tl::rand({8, 5}), w = tl::rand({6, 5}), bias = tl::rand({6});
  tl::Tensor v = tl::rand({5});
  prof::Profile profile({.with_flops = true});
  tl::Tensor r1 = tl::mm(a, b);
  tl::Tensor r2 = tl::bmm(ba, bb);
  tl::Tensor r3 = tl::linear(x, w, bias);
  tl::Tensor r4 = tl::matmul(v, b);   // vector @ matrix: N = 6, K = 5
  tl::Tensor r5 = tl::matmul(ba, b);  // batched by broadcasting
  tl::Tensor r6 = a + a;
  profile.stop();
  const auto& events = profile.events();
  REQUIRE(find(events, "tl::mm"));
  CHECK(find(events, "tl::mm")->flops == 2 * 4 * 6 * 5);
  REQUIRE(find(events, "tl::bmm"));
  CHECK(find(events, "tl::bmm")->flops == 2 * 3 * 4 * 6 * 5);
  REQUIRE(find(events, "tl::linear"));
  CHECK(find(events, "tl::linear")->flops == 2 * 8 * 6 * 5);
  auto matmuls = find_all(events, "tl::matmul");
  REQUIRE(matmuls.size() == 2);
  CHECK(matmuls[0]->flops == 2 * 6 * 5);
  CHECK(matmuls[1]->flops == 2 * 3 * 4 * 6 * 5);
  REQUIRE(find(events, "tl::add"));
  CHECK(find(events, "tl::add")->flops == 0);

  prof::Profile off;
  tl::Tensor r7 = tl::mm(a, b);
  off.stop();
  REQUIRE(find(off.events(), "tl::mm"));
  CHECK(find(off.events(), "tl::mm")->flops == 0);
}

TEST_CASE("profiler: nothing is recorded after stop; start again begins a new recording") {
  prof::Profile profile;
  CHECK(profile.running());
  tl::Tensor x = tl::ones({4});
  profile.stop();
  CHECK_FALSE(profile.running());
  const size_t count = profile.events().size();
  REQUIRE(count > 0);
  {
    prof::RecordFunction scope("after stop");
    tl::Tensor y = tl::zeros({4});
  }
  CHECK(profile.events().size() == count);
  CHECK(find(profile.events(), "after stop") == nullptr);
  profile.stop();  // idempotent

  profile.start();
  CHECK(profile.running());
  CHECK(profile.events().empty());
  { prof::RecordFunction scope("second run"); }
  profile.stop();
  CHECK(find(profile.events(), "second run") != nullptr);
  CHECK(find(profile.events(), "tl::ones") == nullptr);
}

TEST_CASE("profiler: a second Profile on one thread throws; after stop a new one may start") {
  prof::Profile first;
  CHECK_THROWS_AS(prof::Profile(), tl::Error);
  CHECK_THROWS_AS(prof::Profile({.all_threads = true}), tl::Error);
  first.stop();
  prof::Profile second;
  { prof::RecordFunction scope("second"); }
  second.stop();
  CHECK(find(second.events(), "second") != nullptr);
  CHECK(find(first.events(), "second") == nullptr);
}

TEST_CASE("profiler: scopes open at start are not recorded; scopes open at stop end there") {
  std::vector<Event> events;
  {
    prof::RecordFunction before("before start");
    prof::Profile profile;
    tl::Tensor x = tl::ones({4});
    prof::RecordFunction open("open at stop");
    tl::Tensor y = tl::zeros({4});
    profile.stop();
    events = profile.events();
    // open and before close after the profile stopped: nothing happens to any recording.
    prof::Profile next;
    { prof::RecordFunction inside("inside next"); }
    next.stop();
    REQUIRE(next.events().size() == 1);
    CHECK(next.events()[0].name == "inside next");
    CHECK(next.events()[0].depth == 0);
  }
  check_well_formed(events);
  CHECK(find(events, "before start") == nullptr);
  const Event* ones = find(events, "tl::ones");
  const Event* open = find(events, "open at stop");
  const Event* zeros = find(events, "tl::zeros");
  REQUIRE(ones);
  REQUIRE(open);
  REQUIRE(zeros);
  CHECK(ones->parent == 0);
  CHECK(zeros->parent == open->id);
  CHECK(open->end_ns >= zeros->end_ns);
}

TEST_CASE("profiler: CUDA activity requested: CPU events only, with a note, no GPU events") {
  if (tl::cuda::is_available()) {  // with a GPU, CUDA activity is recorded (test_profiler_cuda)
    MESSAGE("skipped: a CUDA device is present");
    return;
  }
  prof::Profile profile({.activities = {prof::Activity::CPU, prof::Activity::CUDA}});
  tl::Tensor x = tl::ones({4});
  profile.stop();
  CHECK(find(profile.events(), "tl::ones") != nullptr);
  for (const Event& e : profile.events()) CHECK_FALSE(e.is_gpu());
  const std::string table = profile.key_averages().table();
  // No GPU time can ever be measured here: the note says why, and no empty CUDA columns show.
#if defined(TL_WITH_CUDA)
  CHECK(table.find("CUDA activity not recorded: no CUDA device (CPU events only)") !=
        std::string::npos);
#else
  CHECK(table.find("CUDA activity not recorded: this build of tensorlet has no CUDA backend") !=
        std::string::npos);
#endif
  CHECK(table.find("Self CUDA") == std::string::npos);
  CHECK(table.find("NaN") == std::string::npos);
}

TEST_CASE("profiler: emit_nvtx records as usual (ranges are no-ops without Nsight attached)") {
  prof::Profile profile({.emit_nvtx = true});
  {
    prof::RecordFunction scope("nvtx scope");
    tl::Tensor x = tl::ones({4}) + 1.0;
  }
  profile.stop();
  check_well_formed(profile.events());
  const Event* scope = find(profile.events(), "nvtx scope");
  const Event* add = find(profile.events(), "tl::add");
  REQUIRE(scope);
  REQUIRE(add);
  CHECK(add->parent == scope->id);
}

TEST_CASE("profiler: ops from several recordings never mix; ids restart per recording") {
  prof::Profile profile;
  for (int run = 0; run < 3; ++run) {
    profile.start();
    {
      prof::RecordFunction scope("run " + std::to_string(run));
      tl::Tensor x = tl::ones({4});
    }
    profile.stop();
    const auto& events = profile.events();
    check_well_formed(events);
    REQUIRE(!events.empty());
    CHECK(events[0].name == "run " + std::to_string(run));
    CHECK(events[0].id == 1);
    for (const Event& e : events) CHECK(e.start_ns >= 0);
  }
}

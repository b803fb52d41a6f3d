// GPU timing for a recording (CUDA builds): CUPTI when it can start, else a pair of CUDA events
// per op; both end as Events linked to the op that issued the work.
#include "profiler/gpu_trace.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <utility>

#include "backends/cuda/cuda.h"

#if defined(TL_WITH_CUPTI)
#include "profiler/cupti_tracer.h"
#endif

namespace tensorlet::profiler::detail {

namespace {

// Timing events are reused across ops and recordings: creating one costs more than recording it.
// Never destroyed, so no CUDA call runs during static destruction.
std::mutex g_pool_mutex;
std::vector<cudaEvent_t>* g_pool = new std::vector<cudaEvent_t>;

cudaEvent_t take_event() {
  {
    std::lock_guard guard(g_pool_mutex);
    if (!g_pool->empty()) {
      cudaEvent_t e = g_pool->back();
      g_pool->pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return e;
}

void give_event(void* e) {
  if (e == nullptr) return;
  std::lock_guard guard(g_pool_mutex);
  g_pool->push_back(static_cast<cudaEvent_t>(e));
}

// Records an event on the calling thread's current stream of `device`; nullptr when it cannot.
void* record_on_current_stream(int device) {
  cudaEvent_t e = take_event();
  if (e == nullptr) return nullptr;
  try {
    if (cudaEventRecord(e, tensorlet::cuda::Stream::current(device).handle()) == cudaSuccess)
      return e;
  } catch (...) {
    // The op itself reports device problems; timing just skips this op.
  }
  (void)cudaGetLastError();
  give_event(e);
  return nullptr;
}

bool env_is_one(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// Sorts by start time and renumbers ids (parents remapped), so ids keep following time order
// once GPU events join the CPU ones; stable, so a parent still precedes its children on ties.
void renumber(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  std::unordered_map<int64_t, int64_t> new_id;
  new_id.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) new_id.emplace(events[i].id, int64_t(i) + 1);
  for (Event& e : events) {
    e.id = new_id.at(e.id);
    if (e.parent != 0) {
      auto it = new_id.find(e.parent);
      e.parent = it == new_id.end() ? 0 : it->second;
    }
  }
}

void merge_cupti(GpuSession& s, std::vector<Event>& events,
                 const std::unordered_map<uint64_t, size_t>& scope_of, int64_t& next_id) {
  auto scope_for = [&](uint64_t correlation) -> const Event* {
    auto x = s.external.find(correlation);
    if (x == s.external.end()) return nullptr;
    auto it = scope_of.find(x->second);
    return it == scope_of.end() ? nullptr : &events[it->second];
  };
  std::vector<Event> added;
  for (Event& r : s.runtime) {
    // A runtime call outside every recorded scope (another thread, the profiler's own sync) has
    // no thread of ours to sit on.
    const Event* op = scope_for(r.correlation);
    if (op == nullptr) continue;
    r.parent = op->id;
    r.thread = op->thread;
    r.depth = op->depth + 1;
    added.push_back(std::move(r));
  }
  for (Event& d : s.device) {
    const Event* op = scope_for(d.correlation);
    d.parent = op == nullptr ? 0 : op->id;
    d.depth = op == nullptr ? 0 : op->depth + 1;
    added.push_back(std::move(d));
  }
  for (Event& e : added) {
    e.id = next_id++;
    events.push_back(std::move(e));
  }
  if (s.dropped > 0)
    s.note = "CUPTI dropped " + std::to_string(s.dropped) + " activity records: CUDA times are low";
}

void merge_events(GpuSession& s, std::vector<Event>& events,
                  const std::unordered_map<uint64_t, size_t>& scope_of, int64_t& next_id) {
  std::unordered_map<int64_t, size_t> by_id;
  for (size_t i = 0; i < events.size(); ++i) by_id.emplace(events[i].id, i);
  // Per event index: the op's measured GPU time, whether it touched CUDA (or a nested op did),
  // and the time of its directly nested ops, so each op keeps only its own share.
  std::unordered_map<size_t, const GpuSession::Timed*> timed_at;
  for (const GpuSession::Timed& t : s.timed) {
    auto it = scope_of.find(t.key);
    if (it != scope_of.end() && t.elapsed_ms >= 0) timed_at.emplace(it->second, &t);
  }
  std::unordered_map<size_t, bool> counted;
  std::unordered_map<size_t, double> children_ms;
  for (const auto& [at, t] : timed_at) {
    auto p = by_id.find(events[at].parent);
    if (p != by_id.end() && timed_at.count(p->second)) children_ms[p->second] += t->elapsed_ms;
    if (!t->cuda) continue;
    for (size_t i = at, steps = 0; steps <= events.size(); ++steps) {
      if (!timed_at.count(i) || counted[i]) break;
      counted[i] = true;
      auto up = by_id.find(events[i].parent);
      if (up == by_id.end()) break;
      i = up->second;
    }
  }
  std::vector<Event> added;
  for (const auto& [at, t] : timed_at) {
    if (!counted[at]) continue;
    const double self_ms = t->elapsed_ms - children_ms[at];
    const auto self_ns = static_cast<int64_t>(self_ms * 1e6);
    if (self_ns <= 0) continue;
    const Event& op = events[at];
    Event k;
    k.name = op.name + " [CUDA events]";
    k.kind = EventKind::Kernel;
    k.parent = op.id;
    k.depth = op.depth + 1;
    k.thread = op.thread;
    // Events give a duration, not a place on the GPU timeline: drawn from the op's start.
    k.start_ns = op.start_ns;
    k.end_ns = op.start_ns + self_ns;
    k.device_index = t->device;
    added.push_back(std::move(k));
  }
  for (Event& e : added) {
    e.id = next_id++;
    events.push_back(std::move(e));
  }
}

}  // namespace

std::unique_ptr<GpuSession> gpu_begin(int64_t origin_ns) {
  auto s = std::make_unique<GpuSession>();
  s->origin_ns = origin_ns;
  if (!tensorlet::cuda::is_available()) {
    s->note = "CUDA activity not recorded yet (no CUDA device: CPU events only)";
    return s;
  }
  // Read at each start, not once per process, so a test can switch it between profiles.
  std::string reason = "TL_PROFILER_FORCE_EVENTS=1";
  if (!env_is_one("TL_PROFILER_FORCE_EVENTS")) {
#if defined(TL_WITH_CUPTI)
    reason = cupti::start(origin_ns);
    if (reason.empty()) {
      s->mode = GpuMode::Cupti;
      return s;
    }
#else
    reason = "tensorlet built without CUPTI";
#endif
  }
  s->mode = GpuMode::Events;
  s->note = "CUDA times from CUDA events (CUPTI unavailable: " + reason + ")";
  return s;
}

void gpu_scope_begin(Buffer& b, RawEvent& e, int32_t index) {
  if (b.flags.gpu == GpuMode::Cupti) {
#if defined(TL_WITH_CUPTI)
    cupti::push_scope(gpu_scope_key(b.thread, index));
#endif
    return;
  }
  // CUDA events time ops only: a user scope's GPU time is the sum of its ops'.
  if (e.kind != EventKind::Op) return;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  void* start = record_on_current_stream(device);
  if (start == nullptr) return;
  e.scope = static_cast<int32_t>(b.gpu_marks.size());
  b.gpu_marks.push_back(GpuMark{index, device, false, start, nullptr});
}

void gpu_scope_end(Buffer& b, const RawEvent& e) {
  if (b.flags.gpu == GpuMode::Cupti) {
#if defined(TL_WITH_CUPTI)
    cupti::pop_scope();
#endif
    return;
  }
  if (e.kind != EventKind::Op || e.scope < 0) return;
  GpuMark& m = b.gpu_marks[static_cast<size_t>(e.scope)];
  if (m.end == nullptr) m.end = record_on_current_stream(m.device);
}

void gpu_mark_cuda(Buffer& b) {
  if (b.flags.gpu != GpuMode::Events || b.open.empty()) return;
  const RawEvent& top = b.events[static_cast<size_t>(b.open.back())];
  if (top.kind == EventKind::Op && top.scope >= 0)
    b.gpu_marks[static_cast<size_t>(top.scope)].cuda = true;
}

void gpu_end(GpuSession& s, std::vector<std::unique_ptr<Buffer>>& buffers,
             [[maybe_unused]] const Buffer* mine) {
  if (s.mode == GpuMode::Cupti) {
#if defined(TL_WITH_CUPTI)
    if (mine != nullptr)
      for (size_t i = 0; i < mine->open.size(); ++i) cupti::pop_scope();
    cupti::Collected c = cupti::stop();
    s.device = std::move(c.device);
    s.runtime = std::move(c.runtime);
    s.external = std::move(c.external);
    s.dropped = c.dropped;
#endif
    return;
  }
  if (s.mode != GpuMode::Events) return;
  for (const auto& b : buffers) {
    for (GpuMark& m : b->gpu_marks) {
      float ms = -1;
      if (m.start != nullptr && m.end != nullptr &&
          cudaEventSynchronize(static_cast<cudaEvent_t>(m.end)) == cudaSuccess &&
          cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(m.start),
                               static_cast<cudaEvent_t>(m.end)) != cudaSuccess)
        ms = -1;
      (void)cudaGetLastError();
      s.timed.push_back({gpu_scope_key(b->thread, m.index), m.device, m.cuda, double(ms)});
      give_event(m.start);
      give_event(m.end);
      m.start = m.end = nullptr;
    }
  }
}

void gpu_merge(GpuSession& s, std::vector<Event>& events) {
  // Scopes carry their key in correlation only until here.
  std::unordered_map<uint64_t, size_t> scope_of;
  int64_t next_id = 1;
  for (size_t i = 0; i < events.size(); ++i) {
    Event& e = events[i];
    next_id = std::max(next_id, e.id + 1);
    if (e.kind != EventKind::Op && e.kind != EventKind::UserScope) continue;
    if (e.correlation != 0) scope_of.emplace(e.correlation, i);
    e.correlation = 0;
  }
  const size_t before = events.size();
  if (s.mode == GpuMode::Cupti) merge_cupti(s, events, scope_of, next_id);
  if (s.mode == GpuMode::Events) merge_events(s, events, scope_of, next_id);
  if (events.size() != before) renumber(events);
}

}  // namespace tensorlet::profiler::detail

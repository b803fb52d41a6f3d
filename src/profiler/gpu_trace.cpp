// GPU timing for a recording (CUDA builds): CUPTI when it can start, else a pair of CUDA events
// per op; both end as Events linked to the op that issued the work.
#include "tensorlet/profiler/gpu_trace.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "tensorlet/backends/cuda/cuda.h"

#if defined(TL_WITH_CUPTI)
#include "tensorlet/profiler/cupti_tracer.h"
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

bool gpu_scope_begin(Buffer& b, RawEvent& e, int32_t index) {
  if (b.flags.gpu == GpuMode::Cupti) {
#if defined(TL_WITH_CUPTI)
    return cupti::push_scope(gpu_scope_key(b.flags.generation, b.thread, index));
#else
    return false;
#endif
  }
  // CUDA events time ops only: a user scope's GPU time is the sum of its ops'.
  if (e.kind != EventKind::Op) return false;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  void* start = record_on_current_stream(device);
  if (start == nullptr) return false;
  e.scope = static_cast<int32_t>(b.gpu_marks.size());
  b.gpu_marks.push_back(GpuMark{index, device, false, start, nullptr});
  return false;
}

void gpu_scope_end(Buffer& b, const RawEvent& e) {
  if (b.flags.gpu != GpuMode::Events || e.kind != EventKind::Op || e.scope < 0) return;
  GpuMark& m = b.gpu_marks[static_cast<size_t>(e.scope)];
  if (m.end == nullptr) m.end = record_on_current_stream(m.device);
}

void gpu_mark_cuda(Buffer& b) {
  if (b.flags.gpu != GpuMode::Events || b.open.empty()) return;
  const RawEvent& top = b.events[static_cast<size_t>(b.open.back())];
  if (top.kind == EventKind::Op && top.scope >= 0)
    b.gpu_marks[static_cast<size_t>(top.scope)].cuda = true;
}

void gpu_pop_scope() {
#if defined(TL_WITH_CUPTI)
  cupti::pop_scope();
#endif
}

void gpu_end(GpuSession& s, std::vector<std::unique_ptr<Buffer>>& buffers) {
  if (s.mode == GpuMode::Cupti) {
#if defined(TL_WITH_CUPTI)
    cupti::Collected c = cupti::stop();
    s.device = std::move(c.device);
    s.runtime = std::move(c.runtime);
    s.external = std::move(c.external);
    s.dropped = c.dropped;
    s.sync_ns = c.sync_ns;
    s.flush_ns = c.flush_ns;
    s.parse_ns = c.parse_ns;
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
      s.timed.push_back(
          {gpu_scope_key(s.generation, b->thread, m.index), m.device, m.cuda, double(ms)});
      give_event(m.start);
      give_event(m.end);
      m.start = m.end = nullptr;
    }
  }
}

}  // namespace tensorlet::profiler::detail

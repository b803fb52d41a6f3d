// GPU time for a recording: picks CUPTI or the CUDA-event fallback at start, hooks the recorder's
// scopes, and at stop adds kernels, copies and runtime calls to the events, linked to their ops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/profiler/event.h"
#include "tensorlet/profiler/recorder.h"

namespace tensorlet::profiler::detail {

// The id a recorded scope is known by to CUPTI (external correlation id) and to the fallback:
// unique within a recording, and computable both at op_begin and when events are built. The
// recording's generation is part of it: a scope still open from an earlier recording has a key
// that matches nothing in this one. Never 0.
inline uint64_t gpu_scope_key(uint16_t generation, uint32_t thread, int32_t index) {
  return (uint64_t{generation} << 48) | (uint64_t{thread & 0xffffu} << 32) |
         static_cast<uint32_t>(index + 1);
}

// The external id under which a CUPTI recording's start launches its warm-up kernel (never a scope
// key: a key's slot is at most 2^31): the merge drops what carries it.
constexpr uint64_t kWarmupExternalId = ~uint64_t{0};

// What one recording collected on the GPU side; plain data so every build can destroy it.
class GpuSession {
 public:
  GpuMode mode = GpuMode::Off;
  std::string note;  // for the table header; "" when CUPTI recorded everything
  int64_t origin_ns = 0;
  uint16_t generation = 0;  // the recording's, as in its scope keys
  // CUPTI sees the whole process: device work linked to none of our scopes is kept (parent 0)
  // only when the recording covers all threads; a per-thread one keeps its own work only.
  bool keep_unattributed = false;
  // CUPTI
  std::vector<Event> device, runtime;
  std::vector<std::pair<uint64_t, uint64_t>> external;  // (correlation id, scope key)
  uint64_t dropped = 0;
  int64_t sync_ns = 0, flush_ns = 0, parse_ns = 0;  // where cupti::stop spent its time
  // CUDA events: per op, its key, device and GPU time between its events (-1: not measured).
  struct Timed {
    uint64_t key;
    int device;
    bool cuda;
    double elapsed_ms;
  };
  std::vector<Timed> timed;
};

#if defined(TL_WITH_CUDA)
// Starts GPU timing for a recording whose clock starts at origin_ns; never throws.
std::unique_ptr<GpuSession> gpu_begin(int64_t origin_ns);
// Hot path, called with the thread's lock held, only when the buffer's mode is not Off. Returns
// whether it pushed a CUPTI id, which the scope's close then pops (gpu_pop_scope).
bool gpu_scope_begin(Buffer& b, RawEvent& e, int32_t index);
void gpu_scope_end(Buffer& b, const RawEvent& e);
void gpu_pop_scope();
// The innermost open op touched CUDA (CUDA-event mode: only such ops get GPU time).
void gpu_mark_cuda(Buffer& b);
// Once the buffers are detached: waits for the GPU, collects records / event times. Scopes still
// open keep their CUPTI ids pushed until they close (their keys match no later recording).
void gpu_end(GpuSession& s, std::vector<std::unique_ptr<Buffer>>& buffers);
#endif
// Adds the GPU events to the recording's events (whose scopes carry their key in correlation),
// renumbering ids in time order (gpu_merge.cpp; plain C++, so it is tested without a GPU).
void gpu_merge(GpuSession& s, std::vector<Event>& events);

}  // namespace tensorlet::profiler::detail

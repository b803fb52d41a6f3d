// CUPTI activity tracing for the profiler: kernels, copies, memsets, runtime calls and driver
// launches, tied back to the recorded scope that issued them through external correlation ids
// (as Kineto does).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/backends/cuda/cuda.h"  // CUstream_st
#include "tensorlet/profiler/event.h"
#include "tensorlet/profiler/gpu_trace.h"

namespace tensorlet::profiler::detail::cupti {

// Enables activity collection; returns "" on success, else why CUPTI cannot be used (the caller
// then falls back to CUDA events). origin_ns: the profile clock's zero (steady_clock ns).
std::string start(int64_t origin_ns);
// Launches an empty kernel on `stream` (a cudaStream_t; cupti_warmup.cu).
void launch_warmup_kernel(::CUstream_st* stream);

// The recorded scope a thread is in, for the runtime calls it makes meanwhile.
bool push_scope(uint64_t external_id);  // false: not pushed (do not pop)
void pop_scope();

struct Collected {
  std::vector<Event> device;  // kernels, copies, memsets (parent unset; correlation set)
  std::vector<Event>
      runtime;  // runtime calls, driver launches (thread and parent unset; correlation set)
  std::vector<std::pair<uint64_t, uint64_t>> external;  // (correlation id, external id)
  uint64_t dropped = 0;                                 // records CUPTI could not store
  // Where stop() spent its time (bench_profiler reports it): waiting for the devices, CUPTI's
  // flush, and turning the records into Events.
  int64_t sync_ns = 0, flush_ns = 0, parse_ns = 0;
};
// Waits for the devices, flushes, disables collection and returns the records on the profile clock.
Collected stop();

}  // namespace tensorlet::profiler::detail::cupti

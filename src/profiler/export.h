// Writers behind Profile::export_chrome_trace and export_stacks (chrome_trace.cpp, stacks.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensorlet/profiler/event.h"

namespace tensorlet::profiler {

// Python's str() of a list of lists, as PyTorch prints input shapes: "[[2, 3], [], [4]]"
// (key_averages.cpp; the table prints it too).
std::string shapes_string(const std::vector<std::vector<int64_t>>& shapes);

// Scopes (ops and user scopes): the events that others nest in and name as parent.
inline bool is_scope(const Event& e) {
  return e.kind == EventKind::Op || e.kind == EventKind::UserScope;
}
// Host-side intervals that nest inside a scope and so count against its self CPU time: scopes
// and CUDA runtime calls (cudaLaunchKernel is a child of the op that launched, as in PyTorch).
inline bool is_cpu_interval(const Event& e) { return is_scope(e) || e.kind == EventKind::Runtime; }
// Self CPU time of each event, indexed like events: a host interval's duration less its direct
// host-side children's (parents resolved among the scopes), never negative; 0 for other events.
// key_averages.cpp; the table and the flame graph both read it so the two cannot disagree.
std::vector<int64_t> self_cpu_times_ns(const std::vector<Event>& events);

// Chrome trace JSON of the events (gzip-compressed when path ends in .gz); throws tl::Error when
// the file cannot be written.
void write_chrome_trace(const std::vector<Event>& events, const std::string& path);
// Whether this build writes .gz traces (zlib found when configured); without it a .gz path
// throws tl::Error.
bool chrome_trace_gzip_supported();
// Collapsed stacks: one "frame;frame;frame value" line per distinct stack, value in microseconds
// of the metric ("self_cpu_time_total" or "self_cuda_time_total"). The frames are the enclosing
// scopes; with `call_sites` (the events' stacks are C++ frames) each scope's user frames that its
// parent scope does not share come before it, so a flame graph shows where in the user's code
// each scope and op was called.
void write_stacks(const std::vector<Event>& events, const std::string& path,
                  const std::string& metric, bool call_sites = false);

}  // namespace tensorlet::profiler

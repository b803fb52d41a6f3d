// Writers behind Profile::export_chrome_trace and export_stacks (chrome_trace.cpp, stacks.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/event.h"

namespace tensorlet::profiler {

// Python's str() of a list of lists, as PyTorch prints input shapes: "[[2, 3], [], [4]]"
// (key_averages.cpp; the table prints it too).
std::string shapes_string(const std::vector<std::vector<int64_t>>& shapes);

// Chrome trace JSON of the events (gzip-compressed when path ends in .gz); throws tl::Error when
// the file cannot be written.
void write_chrome_trace(const std::vector<Event>& events, const std::string& path);
// Whether this build writes .gz traces (zlib found when configured); without it a .gz path
// throws tl::Error.
bool chrome_trace_gzip_supported();
// Collapsed stacks: one "frame;frame;frame value" line per distinct stack, value in microseconds
// of the metric ("self_cpu_time_total" or "self_cuda_time_total").
void write_stacks(const std::vector<Event>& events, const std::string& path,
                  const std::string& metric);

}  // namespace tensorlet::profiler

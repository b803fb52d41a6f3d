// tl::profiler::Profile: a profiling session (start/stop, options, schedule) and what it yields:
// the raw events, key_averages tables, chrome traces and collapsed stacks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <source_location>
#include <string>
#include <vector>

#include "tensorlet/profiler/event.h"

namespace tensorlet::profiler {

// torch.profiler.schedule: after skip_first steps, cycles of wait, warmup and active steps,
// `repeat` times (0: forever). Only active steps are recorded; on_trace_ready runs at the end of
// each cycle's active steps.
struct Schedule {
  int skip_first = 0;
  int wait = 0;
  int warmup = 0;
  int active = 1;
  int repeat = 0;
};

class Profile;

struct ProfileOptions {
  std::vector<Activity> activities{Activity::CPU};
  bool record_shapes = false;
  bool profile_memory = false;
  // Where in the user's C++ code each op and user scope was called (Event::stack): return
  // addresses kept per op, symbolized at stop (libdw; see call_stacks_available()).
  bool with_stack = false;
  bool with_flops = false;
  // Record every thread's ops (each on its own track), not only the thread that started.
  bool all_threads = false;
  std::optional<Schedule> schedule{};
  std::function<void(Profile&)> on_trace_ready{};
  // Push an NVTX range per op and user scope, for Nsight Systems.
  bool emit_nvtx = false;
};

struct KeyAveragesOptions {
  bool group_by_input_shape = false;
  int group_by_stack_n = 0;  // 0: do not group by stack
};

// Every member has an initializer so .table({.sort_by = ...}) compiles warning-free under
// -Wextra (GCC's -Wmissing-field-initializers).
struct TableOptions {
  std::string sort_by{};  // empty: in order of first appearance; else a key (see valid_sort_keys)
  int row_limit = 100;    // < 0: no limit
  int max_name_column_width = 55;
  std::string header{};
  bool top_level_events_only = false;
  std::string time_unit{};  // "", "s", "ms", "us": "" scales each value as PyTorch does
};

// One row of key_averages: every event of one key (name, and shapes/stack when grouped).
struct EventAverage {
  std::string key;
  int64_t count = 0;
  int64_t cpu_time_total_ns = 0, self_cpu_time_total_ns = 0;
  int64_t cuda_time_total_ns = 0, self_cuda_time_total_ns = 0;
  int64_t cpu_memory_usage = 0, self_cpu_memory_usage = 0;
  int64_t cuda_memory_usage = 0, self_cuda_memory_usage = 0;
  int64_t flops = 0;
  std::vector<std::vector<int64_t>> input_shapes;  // when grouped by input shape
  std::vector<std::string> stack;                  // when grouped by stack (innermost n)
  std::string source;
  bool is_top_level = false;  // some event of this key ran at depth 0
  // A GPU kernel/copy/memset row: device time only; the CUDA footer sums these rows.
  bool is_device = false;
};

class KeyAverages {
 public:
  KeyAverages() = default;
  explicit KeyAverages(std::vector<EventAverage> rows, bool has_cuda, bool has_memory,
                       bool has_shapes, bool has_stack, bool has_flops, std::string cuda_note,
                       std::string stack_note = {});
  const std::vector<EventAverage>& rows() const { return rows_; }
  // The table as PyTorch's key_averages().table() prints it. Throws tl::Error naming the valid
  // keys for an unknown sort_by.
  std::string table(const TableOptions& options = {}) const;
  static const std::vector<std::string>& valid_sort_keys();

 private:
  std::vector<EventAverage> rows_;
  bool has_cuda_ = false, has_memory_ = false, has_shapes_ = false, has_stack_ = false,
       has_flops_ = false;
  std::string cuda_note_;   // e.g. "CUDA times from CUDA events (CUPTI unavailable: ...)"
  std::string stack_note_;  // why stacks are scope names, not C++ call sites (grouped tables)
};
std::ostream& operator<<(std::ostream& os, const KeyAverages& averages);

// Aggregates events (as Profile::events() returns them) into key_averages rows.
KeyAverages key_averages(const std::vector<Event>& events, const KeyAveragesOptions& options,
                         bool has_cuda, bool has_memory, bool has_shapes, bool has_stack,
                         bool has_flops, const std::string& cuda_note = {},
                         const std::string& stack_note = {});

// Whether with_stack records C++ call sites ("file.cpp:42 function()" frames of the user's code)
// in this build: it needs libdw (elfutils) at build time. Without it stacks are the enclosing
// RecordFunction scopes, and tables grouped by stack say so in their note.
bool call_stacks_available();

class Profile {
 public:
  // Starts recording at once (RAII); stop() or the destructor ends it.
  explicit Profile(ProfileOptions options = {});
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  void start();  // again after stop(): a new recording (events are cleared)
  void stop();
  bool running() const;
  // With a schedule: marks the end of a step.
  void step();

  const std::vector<Event>& events() const;
  KeyAverages key_averages(const KeyAveragesOptions& options = {}) const;
  // Chrome trace JSON (gzip when the path ends in .gz); opens in Perfetto and chrome://tracing.
  void export_chrome_trace(const std::string& path) const;
  // Collapsed stacks ("a;b;c value" lines) for flame graphs; metric "self_cpu_time_total" or
  // "self_cuda_time_total".
  void export_stacks(const std::string& path,
                     const std::string& metric = "self_cpu_time_total") const;

  const ProfileOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A user scope ("LINEAR PASS"); nests with ops and other scopes on the same thread. Costs one
// relaxed atomic load when no profiler records.
class RecordFunction {
 public:
  explicit RecordFunction(std::string name,
                          std::source_location where = std::source_location::current());
  // A literal label builds no std::string unless a profiler records.
  explicit RecordFunction(const char* name,
                          std::source_location where = std::source_location::current());
  ~RecordFunction();
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  uint8_t state_;  // what opening it did (recorded, NVTX, CUPTI), undone on close
};

}  // namespace tensorlet::profiler

// key_averages: folds recorded events into one row per key (name, and input shapes / innermost
// stack frames when grouped), with self and total CPU time, GPU time and memory per row.
#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensorlet/profiler/export.h"
#include "tensorlet/profiler/profile.h"

namespace tensorlet::profiler {

KeyAverages::KeyAverages(std::vector<EventAverage> rows, bool has_cuda, bool has_memory,
                         bool has_shapes, bool has_stack, bool has_flops, std::string cuda_note,
                         std::string stack_note)
    : rows_(std::move(rows)),
      has_cuda_(has_cuda),
      has_memory_(has_memory),
      has_shapes_(has_shapes),
      has_stack_(has_stack),
      has_flops_(has_flops),
      cuda_note_(std::move(cuda_note)),
      stack_note_(std::move(stack_note)) {}

std::string shapes_string(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) s += ", ";
    s += "[";
    for (size_t j = 0; j < shapes[i].size(); ++j) {
      if (j) s += ", ";
      s += std::to_string(shapes[i][j]);
    }
    s += "]";
  }
  return s + "]";
}

namespace {

bool is_cuda_device(const std::string& device) { return device.rfind("cuda", 0) == 0; }

// Scope id -> position in events; only scopes can be parents (the first of a duplicated id wins).
std::unordered_map<int64_t, size_t> scope_positions(const std::vector<Event>& events) {
  std::unordered_map<int64_t, size_t> index;
  index.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    if (is_scope(events[i])) index.emplace(events[i].id, i);
  }
  return index;
}

// Per-event sums, indexed like the events vector.
struct Sums {
  int64_t self_cuda_ns = 0, cuda_ns = 0;
  int64_t self_cpu_mem = 0, cpu_mem = 0, self_cuda_mem = 0, cuda_mem = 0;
};

}  // namespace

std::vector<int64_t> self_cpu_times_ns(const std::vector<Event>& events) {
  const auto index = scope_positions(events);
  std::vector<int64_t> children_ns(events.size(), 0);
  for (const Event& e : events) {
    if (!is_cpu_interval(e) || e.parent == 0) continue;
    auto it = index.find(e.parent);
    if (it != index.end()) children_ns[it->second] += e.duration_ns();
  }
  std::vector<int64_t> self(events.size(), 0);
  for (size_t i = 0; i < events.size(); ++i) {
    // Never negative: overlapping children (clock skew, a malformed trace) must not make a
    // parent's self time go below zero.
    if (is_cpu_interval(events[i])) {
      self[i] = std::max<int64_t>(0, events[i].duration_ns() - children_ns[i]);
    }
  }
  return self;
}

KeyAverages key_averages(const std::vector<Event>& events, const KeyAveragesOptions& options,
                         bool has_cuda, bool has_memory, bool has_shapes, bool has_stack,
                         bool has_flops, const std::string& cuda_note,
                         const std::string& stack_note) {
  const auto index = scope_positions(events);
  auto parent_of = [&](const Event& e) -> std::ptrdiff_t {
    if (e.parent == 0) return -1;
    auto it = index.find(e.parent);
    return it == index.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
  };

  std::vector<Sums> sums(events.size());
  // Adds to the event's own scope (self) and to every enclosing scope (total). The walk is
  // bounded by the event count so a malformed parent cycle cannot loop forever.
  auto attribute = [&](std::ptrdiff_t at, int64_t Sums::*self, int64_t Sums::*total,
                       int64_t value) {
    if (at < 0) return;
    sums[static_cast<size_t>(at)].*self += value;
    for (size_t steps = 0; at >= 0 && steps <= events.size(); ++steps) {
      sums[static_cast<size_t>(at)].*total += value;
      at = parent_of(events[static_cast<size_t>(at)]);
    }
  };

  for (const Event& e : events) {
    std::ptrdiff_t p = parent_of(e);
    if (e.is_gpu()) {
      attribute(p, &Sums::self_cuda_ns, &Sums::cuda_ns, e.duration_ns());
    } else if (e.kind == EventKind::Memory) {
      if (is_cuda_device(e.device)) {
        attribute(p, &Sums::self_cuda_mem, &Sums::cuda_mem, e.bytes);
      } else {
        attribute(p, &Sums::self_cpu_mem, &Sums::cpu_mem, e.bytes);
      }
    }
  }

  const bool by_shape = options.group_by_input_shape;
  const int stack_n = std::max(0, options.group_by_stack_n);
  std::vector<EventAverage> rows;
  std::unordered_map<std::string, size_t> row_of;  // grouping key -> row
  auto row_for = [&](const Event& e, const std::string& name) -> EventAverage& {
    std::string key = name;
    std::vector<std::string> frames;
    if (by_shape) key += '\x1f' + shapes_string(e.input_shapes);
    if (stack_n > 0) {
      // Innermost first, as PyTorch lists a row's stack.
      for (auto it = e.stack.rbegin(); it != e.stack.rend() && frames.size() < size_t(stack_n);
           ++it) {
        frames.push_back(*it);
        key += '\x1e' + *it;
      }
    }
    auto [it, inserted] = row_of.emplace(std::move(key), rows.size());
    if (inserted) {
      EventAverage row;
      row.key = name;
      if (by_shape) row.input_shapes = e.input_shapes;
      row.stack = std::move(frames);
      row.source = e.source;
      rows.push_back(std::move(row));
    }
    return rows[it->second];
  };

  const std::vector<int64_t> self_cpu_ns = self_cpu_times_ns(events);
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const Sums& s = sums[i];
    if (is_cpu_interval(e)) {
      EventAverage& row = row_for(e, e.name);
      row.count += 1;
      row.cpu_time_total_ns += e.duration_ns();
      row.self_cpu_time_total_ns += self_cpu_ns[i];
      row.cuda_time_total_ns += s.cuda_ns;
      row.self_cuda_time_total_ns += s.self_cuda_ns;
      row.cpu_memory_usage += s.cpu_mem;
      row.self_cpu_memory_usage += s.self_cpu_mem;
      row.cuda_memory_usage += s.cuda_mem;
      row.self_cuda_memory_usage += s.self_cuda_mem;
      row.flops += e.flops;
      // PyTorch's table skips a row whose event has a cpu_parent; host intervals get one from
      // the enclosing scope on their thread.
      row.is_top_level = row.is_top_level || parent_of(e) < 0;
    } else if (e.is_gpu()) {
      // Kernels and copies get rows of their own, as in PyTorch: device time, no CPU time.
      EventAverage& row = row_for(e, e.name);
      row.count += 1;
      row.cuda_time_total_ns += e.duration_ns();
      row.self_cuda_time_total_ns += e.duration_ns();
      // Top level even when an op launched it: PyTorch only links CPU events into the
      // cpu_parent tree, so device rows never have one and top_level_events_only lists them.
      row.is_top_level = true;
      row.is_device = true;
    } else if (e.kind == EventKind::Memory && parent_of(e) < 0) {
      // Allocations outside any scope: PyTorch's "[memory]" row.
      EventAverage& row = row_for(e, "[memory]");
      row.count += 1;
      (is_cuda_device(e.device) ? row.self_cuda_memory_usage : row.self_cpu_memory_usage) +=
          e.bytes;
      (is_cuda_device(e.device) ? row.cuda_memory_usage : row.cpu_memory_usage) += e.bytes;
      row.is_top_level = true;
    }
  }

  return KeyAverages(std::move(rows), has_cuda, has_memory, has_shapes && by_shape,
                     has_stack && stack_n > 0, has_flops, cuda_note, stack_note);
}

}  // namespace tensorlet::profiler

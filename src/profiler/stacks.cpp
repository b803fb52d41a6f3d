// write_stacks: collapsed stacks ("outer;inner;op value" lines) of self CPU or self CUDA time,
// the input format of flamegraph.pl, speedscope and similar flame-graph viewers.
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensorlet/profiler/export.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::profiler {

namespace {

constexpr const char* kWhere = "[tl::profiler::export_stacks] ";

// ';' separates frames and a line's last space starts its value: keep names from breaking either.
std::string frame(const std::string& name) {
  std::string f = name;
  for (char& c : f) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return f;
}

// Appends a frame to a ';'-separated path (appending, not operator+ on a temporary, which GCC 12
// at -O3 misreads as an overlapping copy under -Wrestrict).
std::string joined(std::string path, const std::string& name) {
  if (!path.empty()) path += ';';
  path += frame(name);
  return path;
}

// The frames of `inner` that `outer` does not share: the user's code between an enclosing scope
// and what it encloses (the caller's frame differs from the enclosing scope's by its line).
std::vector<std::string>::const_iterator new_frames(const std::vector<std::string>& inner,
                                                    const std::vector<std::string>* outer) {
  auto it = inner.begin();
  if (outer == nullptr) return it;
  for (auto o = outer->begin(); it != inner.end() && o != outer->end() && *it == *o; ++it, ++o) {
  }
  return it;
}

}  // namespace

void write_stacks(const std::vector<Event>& events, const std::string& path,
                  const std::string& metric, bool call_sites) {
  const bool cpu = metric == "self_cpu_time_total";
  if (!cpu && metric != "self_cuda_time_total") {
    throw Error(std::string(kWhere) + "unknown metric '" + metric +
                "'; valid: self_cpu_time_total, self_cuda_time_total");
  }
  std::unordered_map<int64_t, const Event*> scopes;
  // Threads are told apart only when host intervals ran on more than one: GPU work (thread 0
  // when its launcher is unknown) and memory records must not make one thread look like many.
  const Event* first_cpu = nullptr;
  bool many_threads = false;
  for (const Event& e : events) {
    if (is_scope(e)) scopes.emplace(e.id, &e);
    if (!is_cpu_interval(e)) continue;
    if (first_cpu == nullptr) first_cpu = &e;
    if (e.thread != first_cpu->thread) many_threads = true;
  }
  // The path down to an event of the given stack in `parent`: the enclosing scopes, outermost
  // first, each after the C++ frames that lead to it from its own parent (with call_sites), then
  // the event's own new frames. The walk is bounded against parent cycles.
  auto path_to = [&](int64_t parent, uint32_t thread, const std::vector<std::string>& stack) {
    std::vector<const Event*> chain;
    for (auto it = scopes.find(parent); it != scopes.end() && chain.size() <= scopes.size();
         it = scopes.find(it->second->parent)) {
      chain.push_back(it->second);
    }
    std::string p = many_threads ? "thread " + std::to_string(thread) : std::string();
    const std::vector<std::string>* outer = nullptr;
    auto add_frames = [&](const std::vector<std::string>& frames) {
      if (!call_sites) return;
      for (auto f = new_frames(frames, outer); f != frames.end(); ++f) p = joined(std::move(p), *f);
      outer = &frames;
    };
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      add_frames((*it)->stack);
      p = joined(std::move(p), (*it)->name);
    }
    add_frames(stack);
    return p;
  };

  // The same self times as key_averages' table, so the flame graph adds up to it.
  const std::vector<int64_t> self_cpu_ns = cpu ? self_cpu_times_ns(events) : std::vector<int64_t>();
  std::map<std::string, int64_t> ns_by_path;  // sorted: the output is deterministic
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (cpu && is_cpu_interval(e)) {
      ns_by_path[joined(path_to(e.parent, e.thread, e.stack), e.name)] += self_cpu_ns[i];
    } else if (!cpu && e.is_gpu()) {
      // GPU work stacks under the scopes that launched it, the kernel as the leaf frame.
      const Event* launcher = nullptr;
      if (auto it = scopes.find(e.parent); it != scopes.end()) launcher = it->second;
      std::string p = path_to(e.parent, launcher ? launcher->thread : e.thread, e.stack);
      ns_by_path[joined(std::move(p), e.name)] += e.duration_ns();
    }
  }

  std::ofstream f(path, std::ios::trunc);
  if (!f) throw Error(std::string(kWhere) + "cannot open " + path + " for writing");
  for (const auto& [p, ns] : ns_by_path) {
    f << p << ' ' << std::llround(static_cast<double>(ns) / 1000.0) << '\n';
  }
  f.close();
  if (!f) throw Error(std::string(kWhere) + "writing " + path + " failed");
}

}  // namespace tensorlet::profiler

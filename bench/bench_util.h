// What the benchmark binaries share: interleaved medians, and their table rows.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tl_bench {

// The median of v (the upper one of an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// A workload that times itself: runs once and returns its seconds.
using Timed = std::function<double()>;

// `body` timed with the host clock alone.
inline Timed wall_timed(std::function<void()> body) {
  return [body = std::move(body)] {
    const auto start = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
}

// Median seconds of each workload over `reps` rounds after `warmup` untimed rounds. Each round
// runs every workload once, so a workload and its floor see the same clocks, caches and
// neighbours, and slow drift cancels out of their ratio.
inline std::vector<double> interleaved_medians(int reps, int warmup,
                                               const std::vector<Timed>& workloads) {
  std::vector<std::vector<double>> times(workloads.size());
  for (int r = 0; r < warmup + reps; ++r)
    for (size_t w = 0; w < workloads.size(); ++w) {
      const double s = workloads[w]();
      if (r >= warmup) times[w].push_back(s);
    }
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(median(std::move(t)));
  return medians;
}

inline std::string fmt(const char* f, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// One result row: id, workload, our figure, the floor's, their ratio, the target and the verdict
// (scripts/gpu-check counts the rows that start with an id and end in "yes").
inline void row(const char* id, const std::string& workload, const std::string& ours,
                const std::string& floor, double ratio, const char* target, bool met) {
  std::printf("%-3s %-34s %-16s %-34s %6.2f  %-12s %s\n", id, workload.c_str(), ours.c_str(),
              floor.c_str(), ratio, target, met ? "yes" : "NO");
  std::fflush(stdout);
}

// A row whose target is against PyTorch: bench/torch_reference.py measures PyTorch on the same
// workload and machine and prints the verdict; the ratio here is against the floor shown.
inline void vs_torch_row(const char* id, const std::string& workload, const std::string& ours,
                         const std::string& floor, double ratio, const char* target) {
  std::printf("%-3s %-34s %-16s %-34s %6.2f  %-12s %s\n", id, workload.c_str(), ours.c_str(),
              floor.c_str(), ratio, target, "see torch_reference");
  std::fflush(stdout);
}

}  // namespace tl_bench

// OpenMP helpers: a grain size below which work stays on one thread, a range splitter, and the
// rule that keeps small loops on their caller while other threads start late (a busy machine).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "tensorlet/backends/cpu/small_loops.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {

// Below this many elements a loop is not worth waking the thread pool (~ a few µs of work).
inline constexpr int64_t kGrainSize = 32768;
// Loops under this many grains are small: tens of µs on one thread, so a team thread that starts
// late (the OS gave its CPU to another process) costs more than the split saves.
inline constexpr int64_t kSmallLoopGrains = 16;

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

inline bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return false;
#endif
}

// Calls f(begin, end) on disjoint chunks covering [0, n), in parallel when n >= grain (and, for
// small loops, while small_loops_go_parallel()).
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
  int threads = max_threads();
  if (n < grain || threads <= 1 || in_parallel_region()) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  const bool small = n < kSmallLoopGrains * grain;
  if (chunks <= 1 || (small && !small_loops_go_parallel())) {
    f(int64_t{0}, n);
    return;
  }
  const auto chunk = [&](int64_t c) {
    const int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    if (begin < end) f(begin, end);
  };
  if (!small) {
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static, 1)
    for (int64_t c = 0; c < chunks; ++c) chunk(c);
    return;
  }
  // A small loop is timed: the caller's own chunks tell what the loop would cost it alone.
  const int64_t start = steady_ns();
  int64_t caller_ns = 0, caller_chunks = 0;  // written by the caller (thread 0) only
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
#ifdef _OPENMP
    const bool caller = omp_get_thread_num() == 0;
#else
    const bool caller = true;
#endif
    const int64_t t0 = caller ? steady_ns() : 0;
    chunk(c);
    if (caller) {
      caller_ns += steady_ns() - t0;
      ++caller_chunks;
    }
  }
  record_small_loop(steady_ns() - start, caller_ns, caller_chunks, chunks);
}

}  // namespace tensorlet::cpu

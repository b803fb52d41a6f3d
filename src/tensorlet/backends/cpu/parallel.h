// OpenMP helpers: a grain size below which work stays on one thread, and a range splitter.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {

// Below this many elements a loop is not worth waking the thread pool (~ a few µs of work).
inline constexpr int64_t kGrainSize = 32768;

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

// Calls f(begin, end) on disjoint chunks covering [0, n), in parallel when n >= grain.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
  int threads = max_threads();
  if (n < grain || threads <= 1 || in_parallel_region()) {
    f(int64_t{0}, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    if (begin < end) f(begin, end);
  }
}

}  // namespace tensorlet::cpu

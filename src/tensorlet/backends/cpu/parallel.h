// Parallel loops of the CPU kernels: a grain size below which work stays on the calling thread,
// and a range splitter over the worker pool (thread_pool.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "tensorlet/backends/cpu/thread_pool.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {

// Below this many elements a loop is not worth waking the pool (a few µs of work: PyTorch's
// at::internal::GRAIN_SIZE). Loops whose elements cost more than a copy (libm calls, searches,
// whole rows) pass a smaller grain, counted in their own units.
inline constexpr int64_t kGrainSize = 32768;
// Loops under this many grains are small (run_chunks): tens of µs alone, so they take the pool
// only while its workers have been starting promptly.
inline constexpr int64_t kSmallLoopGrains = 16;

// The thread count parallel loops use: OpenMP's, which tl::set_num_threads and OMP_NUM_THREADS
// set. Asked only once a loop is above its grain, so small ops never call into OpenMP.
inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Inside a chunk of a parallel loop, or inside the user's own OpenMP parallel region: a loop
// there runs on the calling thread.
inline bool in_parallel_region() {
#ifdef _OPENMP
  return in_chunk() || omp_in_parallel();
#else
  return in_chunk();
#endif
}

// Calls f(begin, end) on disjoint ranges covering [0, n): one range on the calling thread when n
// is at most `grain`, else up to one range per thread, each at least about `grain` long. With
// `align` > 1 range ends fall on multiples of it (rows of a strided loop) when there are enough
// of those for every range. The split may depend on the thread count: f must give the same
// results for any split.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& f, int64_t align = 1) {
  if (n <= 0) return;
  if (n <= grain || in_parallel_region()) {
    f(int64_t{0}, n);
    return;
  }
  const int threads = max_threads();
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
  if (align < 1 || n / align < chunks) align = 1;
  run_chunks(
      chunks, threads,
      [&](int64_t c) {
        const int64_t begin = n * c / chunks / align * align;
        const int64_t end = c + 1 == chunks ? n : n * (c + 1) / chunks / align * align;
        if (begin < end) f(begin, end);
      },
      n < kSmallLoopGrains * grain);
}

}  // namespace tensorlet::cpu

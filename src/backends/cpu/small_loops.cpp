// The admission of small parallel loops (small_loops.h): a score of how often recent small loops
// finished later than their caller alone would have.
#include "tensorlet/backends/cpu/small_loops.h"

#include <atomic>

namespace tensorlet::cpu {
namespace {

// A loop is slow when it took longer than its caller alone would have (chunks x the caller's
// mean chunk time), with this much slack for starting the team.
constexpr int64_t kSlowSlackPercent = 25;
constexpr int64_t kSlowSlackNs = 2000;
// While slow, one probe in this interval: kProbeLoops small loops in a row go to the team. The
// first wakes its threads, which slept while the loops ran on the caller (that alone makes it
// slow, even on a quiet machine); the next ones tell whether the threads now start promptly.
constexpr int64_t kProbeIntervalNs = 50'000'000;
constexpr int kProbeLoops = 3;
// The score: 8 x an exponential average (1/8 per loop) of 32 per slow loop; small loops stay on
// their caller from kSlowScoreLimit on (about half of the recent loops slow).
constexpr int kSlowScoreStep = 32, kSlowScoreLimit = 128;

// Updated without a lock by whichever threads run small loops: a lost update only delays the
// switch by a loop.
std::atomic<int> g_slow_score{0};
std::atomic<int64_t> g_next_probe_ns{0};
std::atomic<int> g_probe_loops_left{0};  // of the probe under way

}  // namespace

bool small_loops_go_parallel() {
  if (g_slow_score.load(std::memory_order_relaxed) < kSlowScoreLimit) return true;
  int left = g_probe_loops_left.load(std::memory_order_relaxed);
  while (left > 0)
    if (g_probe_loops_left.compare_exchange_weak(left, left - 1, std::memory_order_relaxed))
      return true;
  const int64_t now = steady_ns();
  int64_t probe = g_next_probe_ns.load(std::memory_order_relaxed);
  if (now < probe || !g_next_probe_ns.compare_exchange_strong(probe, now + kProbeIntervalNs,
                                                              std::memory_order_relaxed))
    return false;
  g_probe_loops_left.store(kProbeLoops - 1, std::memory_order_relaxed);
  return true;
}

void record_small_loop(int64_t wall_ns, int64_t caller_ns, int64_t caller_chunks, int64_t chunks) {
  bool slow = false;
  if (caller_chunks > 0) {
    const int64_t alone = caller_ns / caller_chunks * chunks;
    slow = wall_ns > alone + alone * kSlowSlackPercent / 100 + kSlowSlackNs;
  }
  const int score = g_slow_score.load(std::memory_order_relaxed);
  // A prompt probe loop counts double: two in a row give small loops the team back (the rest of
  // that probe is not needed then).
  const int kept = score >= kSlowScoreLimit && !slow ? score / 2 : score - score / 8;
  const int next = kept + (slow ? kSlowScoreStep : 0);
  g_slow_score.store(next, std::memory_order_relaxed);
  if (next < kSlowScoreLimit) g_probe_loops_left.store(0, std::memory_order_relaxed);
}

void reset_small_loop_admission() {
  g_slow_score.store(0, std::memory_order_relaxed);
  g_next_probe_ns.store(0, std::memory_order_relaxed);
  g_probe_loops_left.store(0, std::memory_order_relaxed);
}

}  // namespace tensorlet::cpu

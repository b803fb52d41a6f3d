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
// While slow, one small loop in this interval goes to the team as a probe.
constexpr int64_t kProbeIntervalNs = 50'000'000;
// The score: 8 x an exponential average (1/8 per loop) of 32 per slow loop; small loops stay on
// their caller from kSlowScoreLimit on (about half of the recent loops slow).
constexpr int kSlowScoreStep = 32, kSlowScoreLimit = 128;

// Updated without a lock by whichever threads run small loops: a lost update only delays the
// switch by a loop.
std::atomic<int> g_slow_score{0};
std::atomic<int64_t> g_next_probe_ns{0};

}  // namespace

bool small_loops_go_parallel() {
  if (g_slow_score.load(std::memory_order_relaxed) < kSlowScoreLimit) return true;
  const int64_t now = steady_ns();
  int64_t probe = g_next_probe_ns.load(std::memory_order_relaxed);
  return now >= probe && g_next_probe_ns.compare_exchange_strong(probe, now + kProbeIntervalNs,
                                                                 std::memory_order_relaxed);
}

void record_small_loop(int64_t wall_ns, int64_t caller_ns, int64_t caller_chunks, int64_t chunks) {
  bool slow = false;
  if (caller_chunks > 0) {
    const int64_t alone = caller_ns / caller_chunks * chunks;
    slow = wall_ns > alone + alone * kSlowSlackPercent / 100 + kSlowSlackNs;
  }
  const int score = g_slow_score.load(std::memory_order_relaxed);
  // A prompt probe counts double: two in a row give small loops the team back.
  const int kept = score >= kSlowScoreLimit && !slow ? score / 2 : score - score / 8;
  g_slow_score.store(kept + (slow ? kSlowScoreStep : 0), std::memory_order_relaxed);
}

void reset_small_loop_admission() {
  g_slow_score.store(0, std::memory_order_relaxed);
  g_next_probe_ns.store(0, std::memory_order_relaxed);
}

}  // namespace tensorlet::cpu

// Whether small parallel loops go to the OpenMP team (small_loops.cpp); declarations only, so
// code built without OpenMP (the tests) can include it.
#pragma once

#include <chrono>
#include <cstdint>

namespace tensorlet::cpu {

// Whether small loops go to the team now (small_loops.cpp): yes while recent ones finished about as
// fast as the split promised; else they run on the caller, with a probe of three loops in a row
// sent to the team every 50 ms to notice when threads start promptly again. OpenMP's join waits for
// every thread of the team, so on a loaded machine one unscheduled thread would stall a 20 µs op
// for a scheduler slice (milliseconds).
bool small_loops_go_parallel();
// Records how a small loop went: its wall time and the time the caller spent on its own chunks.
void record_small_loop(int64_t wall_ns, int64_t caller_ns, int64_t caller_chunks, int64_t chunks);
// For tests: forgets what was learned (small loops go parallel again).
void reset_small_loop_admission();

inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tensorlet::cpu

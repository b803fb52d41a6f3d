// Small parallel loops (backends/cpu/parallel.h, small_loops.h): they leave the OpenMP team while
// recent ones ran slower than their caller alone would have (a busy machine), come back after two
// prompt probe loops, and give the same results either way.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "tensorlet/backends/cpu/small_loops.h"
#include "test_util.h"

namespace {

namespace cpu = tl::cpu;

// Restores the thread count and what was learned, whatever the test did.
struct SmallLoopGuard {
  int threads = tl::get_num_threads();
  ~SmallLoopGuard() {
    tl::set_num_threads(threads);
    cpu::reset_small_loop_admission();
  }
};

// A loop of two chunks that took 1 ms where the caller's own chunk took 10 µs: slow.
void record_slow() { cpu::record_small_loop(1'000'000, 10'000, 1, 2); }
// One that took 12 µs for a 10 µs chunk: the split paid.
void record_prompt() { cpu::record_small_loop(12'000, 10'000, 1, 2); }

}  // namespace

TEST_CASE(
    "cpu small loops: slow ones send small loops to the caller; prompt probes bring them back") {
  SmallLoopGuard guard;
  cpu::reset_small_loop_admission();
  CHECK(cpu::small_loops_go_parallel());
  for (int i = 0; i < 3; ++i) record_slow();
  CHECK(cpu::small_loops_go_parallel());  // a few slow loops are not yet a busy machine
  for (int i = 0; i < 10; ++i) record_slow();
  // Now only a probe goes parallel: three loops in a row, at most one probe per 50 ms.
  int parallel = 0;
  for (int i = 0; i < 100; ++i) parallel += cpu::small_loops_go_parallel();
  CHECK(parallel <= 3);
  // A probe's first loop wakes the team, whose threads slept meanwhile: slow even on a quiet
  // machine. Prompt loops after it give the team back.
  record_slow();
  record_prompt();
  record_prompt();
  CHECK(cpu::small_loops_go_parallel());
  // Prompt loops alone never switch it off.
  for (int i = 0; i < 1000; ++i) record_prompt();
  CHECK(cpu::small_loops_go_parallel());
}

TEST_CASE("cpu small loops: a probe is three loops in a row, one probe per 50 ms") {
  SmallLoopGuard guard;
  cpu::reset_small_loop_admission();
  for (int i = 0; i < 20; ++i) record_slow();
  const auto start = std::chrono::steady_clock::now();
  int parallel = 0;
  for (int i = 0; i < 10; ++i) parallel += cpu::small_loops_go_parallel();
  // Slow probe loops keep small loops on the caller.
  for (int i = 0; i < 3; ++i) record_slow();
  const bool after = cpu::small_loops_go_parallel();
  // Unless this thread was descheduled for 50 ms meanwhile, exactly one probe started.
  if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(50)) {
    CHECK(parallel == 3);
    CHECK_FALSE(after);
  }
}

TEST_CASE("cpu small loops: a broadcast add gives the same bits on the team and on the caller") {
  SmallLoopGuard guard;
  tl::set_num_threads(2);
  const tl::Tensor a = tl_test::random_tensor({512, 1}), b = tl_test::random_tensor({1, 512});
  const tl::Tensor one_thread = [&] {
    tl::set_num_threads(1);
    tl::Tensor r = tl::add(a, b);
    tl::set_num_threads(2);
    return r;
  }();
  cpu::reset_small_loop_admission();
  const tl::Tensor team = tl::add(a, b);
  for (int i = 0; i < 20; ++i) record_slow();
  const tl::Tensor caller = tl::add(a, b);
  CHECK(tl_test::bits_of(team) == tl_test::bits_of(one_thread));
  CHECK(tl_test::bits_of(caller) == tl_test::bits_of(one_thread));
}

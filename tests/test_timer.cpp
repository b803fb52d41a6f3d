// Benchmark Timer tests; none depends on this machine's speed (sleeps are lower bounds only).
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

namespace tl = tensorlet;
namespace bench = tensorlet::bench;

bench::Measurement synthetic(std::vector<double> times, std::string label = "op",
                             std::string sub_label = "", std::string description = "") {
  bench::Measurement m;
  m.label = std::move(label);
  m.sub_label = std::move(sub_label);
  m.description = std::move(description);
  m.number_per_run = 10;
  m.raw_times = std::move(times);
  return m;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("timer: timeit calls fn the warm-up plus n times, in one block") {
  int64_t calls = 0;
  bench::Timer timer("count", [&] { ++calls; });
  bench::Measurement m = timer.timeit(1000);
  // One warm-up block of max(1, n / 100) calls, then n timed calls.
  CHECK(calls == 10 + 1000);
  CHECK(m.number_per_run == 1000);
  REQUIRE(m.raw_times.size() == 1);
  CHECK(m.raw_times[0] >= 0);
  CHECK(m.label == "count");

  calls = 0;
  timer.timeit(1);
  CHECK(calls == 2);
  tl_test::check_throws<tl::Error>([&] { timer.timeit(0); }, "timeit");
}

TEST_CASE("timer: a timed block is at least as long as the sleeps in it") {
  bench::Timer timer("sleep", [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  bench::Measurement m = timer.timeit(3);
  REQUIRE(m.raw_times.size() == 1);
  CHECK(m.raw_times[0] >= 0.002);  // seconds per call: a lower bound only
}

TEST_CASE("timer: Measurement statistics on known times") {
  bench::Measurement odd = synthetic({5, 1, 4, 2, 3});
  CHECK(odd.median() == 3);
  CHECK(odd.mean() == 3);
  CHECK(odd.quantile(0.25) == 2);
  CHECK(odd.quantile(0.75) == 4);
  CHECK(odd.iqr() == 2);

  // Even count: the median and quartiles interpolate linearly between ranks, as numpy does.
  bench::Measurement even = synthetic({4, 1, 3, 2});
  CHECK(even.median() == 2.5);
  CHECK(even.mean() == 2.5);
  CHECK(even.quantile(0.25) == 1.75);
  CHECK(even.quantile(0.75) == 3.25);
  CHECK(even.iqr() == 1.5);
  CHECK(even.quantile(0) == 1);
  CHECK(even.quantile(1) == 4);

  bench::Measurement one = synthetic({0.5});
  CHECK(one.median() == 0.5);
  CHECK(one.iqr() == 0);
  CHECK(synthetic({}).median() == 0);
  tl_test::check_throws<tl::Error>([&] { one.quantile(1.5); }, "quantile");
}

TEST_CASE("timer: warnings for a large IQR and for too few blocks") {
  // IQR / median = 2 / 100: no warning.
  bench::Measurement steady = synthetic({99, 100, 100, 100, 101});
  CHECK_FALSE(steady.has_warnings());

  // IQR / median = 15 / 100: a fluctuation warning.
  bench::Measurement noisy = synthetic({80, 90, 100, 105, 130});
  CHECK(noisy.relative_iqr() == doctest::Approx(0.15));
  REQUIRE(noisy.has_warnings());
  CHECK(contains(noisy.warnings()[0], "Interquartile range is 15.0%"));
  CHECK(contains(noisy.warnings()[0], "system fluctuation"));

  // IQR / median = 100%: the gross warning.
  bench::Measurement wild = synthetic({1, 1, 2, 3, 3});
  REQUIRE(wild.has_warnings());
  CHECK(contains(wild.warnings()[0], "significant environmental influence"));

  // Three blocks give no spread to judge, however equal they are.
  bench::Measurement few = synthetic({1, 1, 1});
  REQUIRE(few.has_warnings());
  CHECK(contains(few.warnings()[0], "Only 3 measurements"));
}

TEST_CASE("timer: Measurement prints like PyTorch's repr") {
  bench::Measurement m = synthetic({4e-6, 5e-6, 5e-6, 6e-6, 9e-6}, "add", "4x8", "broadcast");
  std::ostringstream os;
  os << m;
  const std::string text = os.str();
  INFO(text);
  CHECK(contains(text, "<tl::bench::Measurement>\nadd: 4x8\nbroadcast\n"));
  CHECK(contains(text, "  Median: 5.00 us\n"));
  CHECK(contains(text, "  IQR:    1.00 us (5.00 to 6.00)\n"));
  CHECK(contains(text, "  5 measurements, 10 runs per measurement, 1 thread"));
  CHECK(contains(text, "WARNING: Interquartile range is 20.0%"));

  bench::Measurement single = synthetic({2e-3});
  single.number_per_run = 7;
  single.num_threads = 4;
  std::ostringstream os1;
  os1 << single;
  INFO(os1.str());
  CHECK(contains(os1.str(), "\n  2.00 ms\n  1 measurement, 7 runs, 4 threads"));
  CHECK_FALSE(contains(os1.str(), "IQR:"));
}

TEST_CASE("timer: blocked_autorange grows the block for a cheap function") {
  int64_t calls = 0;
  bench::Timer timer("cheap", [&] { ++calls; });
  bench::Measurement m = timer.blocked_autorange(0.05);
  CHECK(m.number_per_run > 1);
  CHECK_FALSE(m.raw_times.empty());
  // Every timed call plus the warm-up and the calibration blocks.
  CHECK(calls > m.number_per_run * static_cast<int64_t>(m.raw_times.size()));
  for (double t : m.raw_times) CHECK(t >= 0);
  tl_test::check_throws<tl::Error>([&] { timer.blocked_autorange(0); }, "min_run_time");
}

TEST_CASE("timer: blocked_autorange keeps blocks of one call when a call is long enough") {
  // Each call sleeps 20 ms, past the 10 ms block target: blocks of one call, and their total
  // reaches min_run_time.
  int64_t calls = 0;
  bench::Timer timer("sleep", [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  bench::Measurement m = timer.blocked_autorange(0.05);
  CHECK(m.number_per_run == 1);
  double total = 0;
  for (double t : m.raw_times) {
    CHECK(t >= 0.02);
    total += t;
  }
  CHECK(total >= 0.05);
  // The warm-up call, the calibration block, then the timed blocks.
  CHECK(calls == 2 + static_cast<int64_t>(m.raw_times.size()));
}

TEST_CASE("timer: adaptive_autorange times at least four blocks and honours max_run_time") {
  int64_t calls = 0;
  bench::Timer timer("cheap", [&] { ++calls; }, {.sub_label = "counter"});
  bench::Measurement m = timer.adaptive_autorange(0.1, 1.0, 0.01);
  CHECK(m.sub_label == "counter");
  CHECK(m.number_per_run > 1);
  // It stops early only on a tight spread over >= 4 blocks, or when max_run_time is spent.
  double total = 0;
  for (double t : m.raw_times) total += t * static_cast<double>(m.number_per_run);
  CHECK((m.raw_times.size() >= 4 || total > 1.0));
  CHECK(calls > m.number_per_run * static_cast<int64_t>(m.raw_times.size()));
}

TEST_CASE("timer: num_threads is set while measuring and restored after") {
  const int before = tl::get_num_threads();
  int seen = 0;
  bench::Timer timer("threads", [&] { seen = tl::get_num_threads(); }, {.num_threads = 1});
  bench::Measurement m = timer.timeit(3);
  CHECK(seen == 1);
  CHECK(m.num_threads == 1);
  CHECK(tl::get_num_threads() == before);
}

TEST_CASE("timer: Compare prints one table per label with rows, columns and the unit") {
  std::vector<bench::Measurement> ms = {
      synthetic({1e-6, 1e-6, 1e-6, 1e-6}, "Batched dot", "[1, 1]", "mul/sum"),
      synthetic({2e-6, 2e-6, 2e-6, 2e-6}, "Batched dot", "[1, 1]", "dot"),
      synthetic({30e-6, 30e-6, 30e-6, 30e-6}, "Batched dot", "[64, 64]", "mul/sum"),
      synthetic({25e-6, 25e-6, 25e-6, 25e-6}, "Batched dot", "[64, 64]", "dot"),
      synthetic({3e-3, 3e-3, 3e-3, 3e-3}, "Matmul", "1024", "cpu"),
  };
  ms[4].num_threads = 4;
  bench::Compare compare(ms);
  const std::string text = compare.str();
  INFO(text);
  CHECK(contains(text, " Batched dot "));
  CHECK(contains(text, "mul/sum"));
  CHECK(contains(text, "  |  "));
  CHECK(contains(text, "1 threads: "));
  CHECK(contains(text, "  [1, 1]"));
  CHECK(contains(text, "  [64, 64]"));
  CHECK(contains(text, "Times are in microseconds (us)."));
  // Medians in the table's unit: 1 us, 2 us, 30 us, 25 us.
  CHECK(contains(text, "30.0"));
  CHECK(contains(text, "25.0"));
  // The second label is its own table, in its own unit and thread group.
  CHECK(contains(text, " Matmul "));
  CHECK(contains(text, "4 threads: "));
  CHECK(contains(text, "Times are in milliseconds (ms)."));
  CHECK(contains(text, "3.0"));
  // The row order follows the measurements: [1, 1] above [64, 64].
  CHECK(text.find("[1, 1]") < text.find("[64, 64]"));
  // Every line of one table is as wide as its header row or narrower (no ragged columns).
  std::istringstream lines(text);
  std::string title, header;
  std::getline(lines, title);
  std::getline(lines, header);
  CHECK(title.size() == header.size());

  // Replicates pool their times; highlighting marks the noisy one.
  bench::Compare noisy(
      {synthetic({1, 1, 1, 1}, "x", "a", "c"), synthetic({1, 1, 2, 3}, "x", "b", "c")});
  noisy.highlight_warnings();
  const std::string noisy_text = noisy.str();
  INFO(noisy_text);
  CHECK(contains(noisy_text, "(! "));
  CHECK(contains(noisy_text, "Measurement has high variance"));
  std::ostringstream os;
  os << noisy;
  CHECK(os.str() == noisy_text);
}

TEST_CASE("timer: select_unit") {
  CHECK(std::string(bench::select_unit(5e-9).name) == "ns");
  CHECK(std::string(bench::select_unit(5e-6).name) == "us");
  CHECK(std::string(bench::select_unit(5e-3).name) == "ms");
  CHECK(std::string(bench::select_unit(5.0).name) == "s");
}

TEST_CASE("timer: do_bench without a GPU throws a DeviceError naming it") {
  if (tl::cuda::is_available()) {
    MESSAGE("skipped: a CUDA device is usable (the CUDA case covers do_bench)");
    return;
  }
  tl_test::check_throws<tl::DeviceError>([] { bench::do_bench([] {}); }, "tl::bench::do_bench");
  tl_test::check_throws<tl::DeviceError>(
      [] { bench::Timer("x", [] {}, {.device = tl::Device::cuda(0)}); }, "tl::bench::Timer");
}

TEST_CASE("timer: CUDA do_bench returns ordered positive quantiles; Timer syncs the device") {
  TL_TEST_REQUIRE_CUDA();
  tl::Tensor a = tl::rand({1 << 22}, tl::Device::cuda(0));
  tl::Tensor b = tl::rand({1 << 22}, tl::Device::cuda(0));
  std::vector<double> q = bench::do_bench(
      [&] { (void)(a * b); }, {.warmup_ms = 5, .rep_ms = 20, .quantiles = {0.2, 0.5, 0.8}});
  REQUIRE(q.size() == 3);
  CHECK(q[0] > 0);
  CHECK(q[0] <= q[1]);
  CHECK(q[1] <= q[2]);

  std::vector<double> no_flush = bench::do_bench(
      [&] { (void)(a + b); }, {.rep_ms = 10, .flush_l2 = false, .quantiles = {0.5}});
  REQUIRE(no_flush.size() == 1);
  CHECK(no_flush[0] > 0);

  // The Timer's blocks end with the device idle: after a measurement nothing is left running.
  bench::Timer timer("a * b", [&] { (void)(a * b); }, {.device = tl::Device::cuda(0)});
  bench::Measurement m = timer.blocked_autorange(0.05);
  CHECK(m.device == tl::Device::cuda(0));
  CHECK(m.median() > 0);
  CHECK(tl::cuda::Stream::current(0).query());
}

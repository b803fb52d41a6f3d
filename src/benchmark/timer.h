// tl::bench: a benchmark Timer (torch.utils.benchmark's Timer/Measurement/Compare) and do_bench.
//
//   auto m = tl::bench::Timer("x @ x.T", [&] { tl::matmul(g, g.t()); }, {.sub_label = "1024"})
//                .blocked_autorange();
//   std::cout << m;                              // median, IQR, blocks, runs per block, warnings
//   std::cout << tl::bench::Compare({m1, m2});   // rows: sub_label, columns: description
//   auto ms = tl::bench::do_bench([&] { ... });  // CUDA events per call, L2 flushed: {p20, p50,
//   p80}
//
// Why the Timer can be trusted on asynchronous GPU code: like torch's, whenever a CUDA device is
// usable it waits for the device before starting the clock and again before stopping it (by
// default the current device, as torch.cuda.synchronize() does), so a block's time is that of
// the work it enqueued, not of enqueueing it. It also runs the function before the blocks it
// reports (the block-size search, timeit's warm-up), so first-use costs (context, handles,
// allocator growth, thread pools) stay out of the numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tensorlet/tensor/device.h"

namespace tensorlet::bench {

struct TimerOptions {
  std::string sub_label{};    // the row of a Compare table (e.g. the input size)
  std::string description{};  // the column of a Compare table (e.g. the implementation)
  // Which device the Timer waits for before starting and before stopping the clock of each timed
  // block. Not given (the default): the current CUDA device whenever tl::cuda::is_available(),
  // nothing otherwise, as torch's Timer synchronizes CUDA whenever it is available: a default
  // Timer around GPU ops measures their execution, not just their enqueueing, and a CPU-only
  // function pays a synchronize of an idle device per block, which the block size amortizes.
  // cuda:N: that device (it must exist). cpu: nothing, for CPU code that must not pay it.
  std::optional<Device> device{};
  // When > 0: tl::set_num_threads(num_threads) while measuring, the previous count restored after.
  int num_threads = 0;
  // Seconds from an arbitrary origin, read at the start and end of each timed block (torch's
  // `timer` argument). Empty: std::chrono::steady_clock. The synchronization above happens
  // whatever the clock, so a custom clock (e.g. a fake one in tests) never skips it.
  std::function<double()> timer{};
};

// Called after each timed block of blocked_autorange / adaptive_autorange with the calls in the
// block and its total seconds (torch's `callback(number, time_spent)`).
using BlockCallback = std::function<void(int64_t number, double seconds)>;

// adaptive_autorange's keyword-only arguments in torch, here set by designated initializers:
//   timer.adaptive_autorange(0.1, {.max_run_time = 1.0});
struct AdaptiveAutorangeOptions {
  double min_run_time = 0.01;  // seconds of timed blocks before it may stop
  double max_run_time = 10.0;  // it stops once the blocks pass this; 0: no limit (torch's None)
  BlockCallback callback{};
};

// The result of a measurement: one time per timed block, each already divided by the calls in it.
// Fields are public so measurements can be built from recorded numbers (and tested); the
// statistics are computed from raw_times on each call.
struct Measurement {
  std::string label;
  std::string sub_label;
  std::string description;
  int64_t number_per_run = 1;     // calls of the function in each timed block
  std::vector<double> raw_times;  // seconds per call, one entry per block
  int num_threads = 1;            // the thread count in effect while measuring
  Device device = Device::cpu();  // the device synchronized around each block (cpu: none)

  // Order statistics with linear interpolation between the sorted times (numpy's default), so
  // they match torch.utils.benchmark's. All are 0 for a measurement without times.
  double median() const;
  double mean() const;
  double quantile(double q) const;  // q in [0, 1]
  double iqr() const;               // quantile(0.75) - quantile(0.25)
  // IQR / median: the spread the warnings and Compare's highlighting look at.
  double relative_iqr() const;
  // IQR / median < threshold (torch's meets_confidence): adaptive_autorange's stopping rule.
  bool meets_confidence(double threshold = 0.1) const;
  // Warnings as printed under the measurement, from the IQR only, as torch's: IQR / median >= 25%
  // "This suggests significant environmental influence.", else >= 10% "This could indicate system
  // fluctuation.". Like torch, none for few blocks (one block has an IQR of 0) or none at all.
  std::vector<std::string> warnings() const;
  bool has_warnings() const { return !warnings().empty(); }
  // The name of the measurement's row in Compare: sub_label, or label when there is none.
  std::string row_name() const;
};

// Prints like PyTorch's Measurement repr, ending its line (print() adds that in Python):
//   <tl::bench::Measurement>
//   label: sub_label
//     description
//     Median: 5.73 us
//     IQR:    2.25 us (4.01 to 6.26)
//     372 measurements, 100 runs per measurement, 1 thread
//     WARNING: Interquartile range is 39.4% of the median measurement.
//              This suggests significant environmental influence.
std::ostream& operator<<(std::ostream& os, const Measurement& m);

// The unit a time in seconds reads best in ("ns", "us", "ms", "s") and its size in seconds.
struct TimeUnit {
  const char* name;
  double scale;
};
TimeUnit select_unit(double seconds);

class Timer {
 public:
  Timer(std::string label, std::function<void()> fn, TimerOptions options = {});

  // Runs fn n times in one timed block, after an untimed warm-up block of max(2, n / 100) calls.
  Measurement timeit(int64_t n = 1000000);
  // torch's blocked_autorange: the block size from the search below with this min_run_time, then
  // blocks of that size until their total reaches min_run_time. The block size search (torch's
  // _estimate_block_size) times 5 empty blocks (their median is the overhead of a block), then
  // blocks of 1, 10, 100, ... calls, and keeps the first whose overhead is <= 1e-4 of its time
  // and which takes >= min_run_time / 1000, or which takes > min_run_time, or 10^9 (torch caps it
  // where 10x more would overflow an int32).
  Measurement blocked_autorange(double min_run_time = 0.2, const BlockCallback& callback = {});
  // torch's adaptive_autorange: the block size searched with min_run_time 0.05 (whatever
  // options.min_run_time is), then blocks until more than 3 were timed, their total reaches
  // options.min_run_time and meets_confidence(threshold), or their total passes
  // options.max_run_time (then the result keeps its warning).
  Measurement adaptive_autorange(double threshold = 0.1,
                                 const AdaptiveAutorangeOptions& options = {});

  const TimerOptions& options() const { return options_; }
  // The CUDA device synchronized around each timed block: -1 for the current one (the default
  // with a usable CUDA device), N for cuda:N, std::nullopt for none.
  std::optional<int> synchronized_device() const { return sync_device_; }

 private:
  // Seconds for `calls` calls, the device idle at both ends; `op` names the caller in errors.
  double time_block(int64_t calls, const char* op);
  Measurement measure(const char* op, int64_t number, double min_run_time, double max_run_time,
                      double threshold, const BlockCallback& callback);
  Measurement make_measurement(int64_t number, std::vector<double> block_seconds) const;

  std::string label_;
  std::function<void()> fn_;
  TimerOptions options_;
  std::optional<int> sync_device_;
};

namespace detail {
// torch's _estimate_block_size (see blocked_autorange) over any timeit(number) -> seconds for a
// block of `number` calls. Apart from Timer so that the rule can be checked on synthetic times,
// down to the 10^9 cap that real calls would take seconds to reach.
int64_t estimate_block_size(const std::function<double(int64_t)>& timeit, double min_run_time);
}  // namespace detail

// Several measurements as PyTorch's Compare prints them: one table per label, a row per
// sub_label (grouped under "N threads:" lines), a column per description, every median in the
// table's common unit. Measurements with the same label, sub_label, description and thread count
// are merged (their per-call times pooled), as PyTorch does with replicates.
class Compare {
 public:
  explicit Compare(std::vector<Measurement> results);
  void extend_results(const std::vector<Measurement>& results);
  // Adds " (! XX%)" beside each median whose measurement has warnings (XX = IQR / median).
  void highlight_warnings() { highlight_warnings_ = true; }
  std::string str() const;
  void print() const;  // str() on stdout

 private:
  std::vector<Measurement> results_;
  bool highlight_warnings_ = false;
};
std::ostream& operator<<(std::ostream& os, const Compare& compare);

struct DoBenchOptions {
  double warmup_ms = 25;  // device time spent running fn before measuring
  double rep_ms = 100;    // device time to spend measuring; sets the number of timed calls
  // Zero a 256 MiB buffer before each timed call, so fn starts with a cold L2 cache rather than
  // finding its inputs left there by the previous call.
  bool flush_l2 = true;
  std::vector<double> quantiles = {0.2, 0.5, 0.8};
  int device = -1;  // the CUDA device (-1: the current one); events go on its current stream
};

// Triton's do_bench: each timed call between its own pair of CUDA events on the current stream,
// no host clock and no synchronize in between, so the numbers are device time only. Returns the
// requested quantiles of the per-call times in milliseconds (linear interpolation, in the order
// asked). CUDA only: without a usable CUDA device it throws DeviceError "[tl::bench::do_bench]
// ...", because a host-clock fallback would measure something else under the same name; use Timer
// for CPU code.
std::vector<double> do_bench(const std::function<void()>& fn, const DoBenchOptions& options = {});

}  // namespace tensorlet::bench

// tl::bench: Timer, Measurement statistics and printing, Compare tables, do_bench.
#include "tensorlet/benchmark/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>
#include <utility>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/tensor.h"
#include "tensorlet/tensor/threads.h"

namespace tensorlet::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Fewer blocks than this print no IQR line (torch's repr: the quartiles would be the extremes).
constexpr size_t kMinBlocksForIqrLine = 4;
// adaptive_autorange judges the spread only from more blocks than this (torch: len(times) > 3).
constexpr size_t kMinBlocksForConfidence = 4;
constexpr double kIqrWarnThreshold = 0.1;
constexpr double kIqrGrossWarnThreshold = 0.25;
// torch's block-size search: the overhead may be at most this fraction of a block, ...
constexpr double kMaxRelativeOverhead = 1e-4;
// ... and the search stops before 10x the calls would pass an int32 (torch's pybind11 limit).
constexpr int64_t kMaxBlockSizeBeforeGrowth = 2147483647;
// torch's _timeit floor: no real block takes under 1 ns, and the block-size search divides by it.
constexpr double kMinBlockSeconds = 1e-9;
// adaptive_autorange searches the block size with this min_run_time whatever its own (torch).
constexpr double kAdaptiveBlockSizeRunTime = 0.05;
// do_bench zeroes this many bytes between calls: larger than any current GPU's L2 (H100: 50 MiB).
constexpr int64_t kFlushBytes = int64_t{256} << 20;

// Every time argument must be a finite number (an infinite min_run_time never ends the loop; NaN
// compares false everywhere): > 0, or >= 0 where 0 has a meaning (no warm-up, no limit).
void check_duration(const char* op, const char* name, double value, bool zero_allowed) {
  if (std::isfinite(value) && (value > 0 || (zero_allowed && value == 0))) return;
  fail<Error>(op, "expected ", name, zero_allowed ? " finite and >= 0" : " finite and > 0",
              ", got ", value);
}

// Linear interpolation between closest ranks of sorted values, as numpy.percentile does.
double sorted_quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// A call count from a ratio of durations, clamped to [lo, hi] before the conversion (NaN gives lo):
// converting a double outside int64's range to an integer is undefined.
int64_t saturating_count(double x, int64_t lo, int64_t hi) {
  if (!(x >= static_cast<double>(lo))) return lo;
  if (x >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(x);
}

// ceil(log10(v)) for v > 0, as an int: finite doubles give -323 .. 309; an infinite time (a user
// timer may report one) prints as "inf", three characters.
int ceil_log10(double v) {
  return std::isfinite(v) ? static_cast<int>(std::ceil(std::log10(v))) : 3;
}

std::vector<double> sorted_copy(const std::vector<double>& values) {
  std::vector<double> s = values;
  std::sort(s.begin(), s.end());
  return s;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

const char* unit_in_english(const std::string& unit) {
  if (unit == "ns") return "nanoseconds";
  if (unit == "us") return "microseconds";
  if (unit == "ms") return "milliseconds";
  return "seconds";
}

// Python's str.center (the odd padding character goes where CPython puts it), so tables line up
// as PyTorch's do.
std::string center(const std::string& s, size_t width, char fill = ' ') {
  if (s.size() >= width) return s;
  const size_t pad = width - s.size();
  const size_t left = pad / 2 + (pad & width & 1);
  return std::string(left, fill) + s + std::string(pad - left, fill);
}

std::string ljust(const std::string& s, size_t width, char fill = ' ') {
  return s.size() >= width ? s : s + std::string(width - s.size(), fill);
}

// Sets the library's thread count for a measurement and restores the previous one after it.
class ThreadCountGuard {
 public:
  explicit ThreadCountGuard(int n) : previous_(get_num_threads()), changed_(n > 0) {
    if (changed_) set_num_threads(n);
  }
  ~ThreadCountGuard() {
    if (changed_) set_num_threads(previous_);
  }
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int previous_;
  bool changed_;
};

}  // namespace

// ---- Measurement ------------------------------------------------------------------------------

double Measurement::quantile(double q) const {
  TL_CHECK(q >= 0 && q <= 1, Error, "tl::bench::Measurement::quantile",
           "expected q in [0, 1], got ", q);
  return sorted_quantile(sorted_copy(raw_times), q);
}

double Measurement::median() const { return quantile(0.5); }

double Measurement::mean() const {
  if (raw_times.empty()) return 0;
  double sum = 0;
  for (double t : raw_times) sum += t;
  return sum / static_cast<double>(raw_times.size());
}

double Measurement::iqr() const {
  const std::vector<double> s = sorted_copy(raw_times);
  return sorted_quantile(s, 0.75) - sorted_quantile(s, 0.25);
}

double Measurement::relative_iqr() const {
  const double med = median(), spread = iqr();
  if (med > 0) return spread / med;
  return spread > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

bool Measurement::meets_confidence(double threshold) const { return relative_iqr() < threshold; }

std::vector<std::string> Measurement::warnings() const {
  // torch derives warnings from the IQR alone, and only when there are times; the thresholds are
  // met at equality (meets_confidence is a strict <), so exactly 10% already warns.
  std::vector<std::string> out;
  if (raw_times.empty()) return out;
  const char* reason = nullptr;
  if (!meets_confidence(kIqrGrossWarnThreshold)) {
    reason = "This suggests significant environmental influence.";
  } else if (!meets_confidence(kIqrWarnThreshold)) {
    reason = "This could indicate system fluctuation.";
  }
  if (reason != nullptr) {
    out.push_back("  WARNING: Interquartile range is " + fixed(relative_iqr() * 100, 1) +
                  "% of the median measurement.\n           " + reason);
  }
  return out;
}

std::string Measurement::row_name() const { return sub_label.empty() ? label : sub_label; }

TimeUnit select_unit(double seconds) {
  if (seconds < 1e-6) return {"ns", 1e-9};
  if (seconds < 1e-3) return {"us", 1e-6};
  if (seconds < 1) return {"ms", 1e-3};
  return {"s", 1};
}

std::ostream& operator<<(std::ostream& os, const Measurement& m) {
  const size_t n = m.raw_times.size();
  const double med = m.median();
  const TimeUnit unit = select_unit(med);
  auto in_unit = [&](double seconds) { return fixed(seconds / unit.scale, 2) + " " + unit.name; };
  os << "<tl::bench::Measurement>\n";
  os << m.label << (m.sub_label.empty() ? "" : ": " + m.sub_label) << "\n";
  if (!m.description.empty()) os << m.description << "\n";
  os << "  " << (n > 1 ? "Median: " : "") << in_unit(med) << "\n";
  if (n >= kMinBlocksForIqrLine) {
    os << "  IQR:    " << in_unit(m.iqr()) << " (" << fixed(m.quantile(0.25) / unit.scale, 2)
       << " to " << fixed(m.quantile(0.75) / unit.scale, 2) << ")\n";
  }
  os << "  " << n << " measurement" << (n == 1 ? "" : "s") << ", " << m.number_per_run
     << (m.number_per_run == 1 ? " run" : " runs") << (n > 1 ? " per measurement" : "") << ", "
     << m.num_threads << " thread" << (m.num_threads == 1 ? "" : "s");
  if (m.device.is_cuda()) os << ", " << m.device << " (synchronized around each block)";
  for (const std::string& w : m.warnings()) os << "\n" << w;
  // The form ends its line (torch's repr leaves that to print), so `os << m << compare` reads.
  return os << '\n';
}

// ---- Timer ------------------------------------------------------------------------------------

Timer::Timer(std::string label, std::function<void()> fn, TimerOptions options)
    : label_(std::move(label)), fn_(std::move(fn)), options_(std::move(options)) {
  TL_CHECK(static_cast<bool>(fn_), Error, "tl::bench::Timer", "no function to time");
  if (!options_.device) {
    // torch decides once (at import) whether its default timer synchronizes; this decides once
    // per Timer, and, like torch.cuda.synchronize(), waits for the device current at each block.
    if (cuda::is_available()) sync_device_ = -1;
  } else if (options_.device->is_cuda()) {
    const Device device = *options_.device;
    TL_CHECK(cuda::is_available(), DeviceError, "tl::bench::Timer", "device ", device,
             " asked for, but no CUDA device is usable here");
    TL_CHECK(device.index() < cuda::device_count(), DeviceError, "tl::bench::Timer", "device ",
             device, " asked for, but there are ", cuda::device_count(), " CUDA devices");
    sync_device_ = device.index();
  }
  TL_CHECK(options_.num_threads >= 0, Error, "tl::bench::Timer",
           "num_threads must be 0 (leave as is) or positive, got ", options_.num_threads);
}

double Timer::time_block(int64_t calls, const char* op) {
  // The device must be idle when the clock starts (or earlier work would be billed to this block)
  // and again when it stops (or the work this block enqueued would not be).
  auto sync = [&] {
    if (sync_device_) cuda::synchronize(*sync_device_);
  };
  double seconds = 0;
  if (options_.timer) {
    sync();
    const double start = options_.timer();
    for (int64_t i = 0; i < calls; ++i) fn_();
    sync();
    seconds = options_.timer() - start;
  } else {
    sync();
    const auto start = Clock::now();
    for (int64_t i = 0; i < calls; ++i) fn_();
    sync();
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  // A custom clock that returns inf or nan would make every stopping rule false (the block-size
  // search would then grow blocks to 10^9 calls): refuse it.
  if (!std::isfinite(seconds))
    fail<Error>(op, "options.timer returned a non-finite time difference (", seconds, ")");
  return std::max(seconds, kMinBlockSeconds);
}

Measurement Timer::make_measurement(int64_t number, std::vector<double> block_seconds) const {
  Measurement m;
  m.label = label_;
  m.sub_label = options_.sub_label;
  m.description = options_.description;
  m.number_per_run = number;
  for (double& t : block_seconds) t /= static_cast<double>(number);
  m.raw_times = std::move(block_seconds);
  m.num_threads = get_num_threads();
  if (sync_device_) {
    m.device = Device::cuda(*sync_device_ >= 0 ? *sync_device_ : cuda::current_device());
  }
  return m;
}

Measurement Timer::timeit(int64_t n) {
  constexpr const char* kOp = "tl::bench::Timer::timeit";
  TL_CHECK(n >= 1, Error, kOp, "expected n >= 1, got ", n);
  ThreadCountGuard threads(options_.num_threads);
  time_block(std::max<int64_t>(2, n / 100), kOp);  // warm-up, untimed (torch: max(n // 100, 2))
  return make_measurement(n, {time_block(n, kOp)});
}

int64_t detail::estimate_block_size(const std::function<double(int64_t)>& timeit,
                                    double min_run_time) {
  // The median of empty blocks is what a block costs besides its calls (clock reads, syncs); the
  // first timed block of 1 call also serves as the warm-up.
  std::vector<double> empty_blocks;
  for (int i = 0; i < 5; ++i) empty_blocks.push_back(timeit(0));
  std::sort(empty_blocks.begin(), empty_blocks.end());
  const double overhead = sorted_quantile(empty_blocks, 0.5);
  int64_t number = 1;
  while (true) {
    const double time_taken = timeit(number);
    if (overhead / time_taken <= kMaxRelativeOverhead && time_taken >= min_run_time / 1000) break;
    if (time_taken > min_run_time) break;
    if (number * 10 > kMaxBlockSizeBeforeGrowth) break;
    number *= 10;
  }
  return number;
}

// torch's _threaded_measurement_loop: blocks until their total reaches min_run_time and the stop
// rule holds (blocked_autorange: always; adaptive_autorange: more than 3 blocks meeting the
// confidence threshold), or their total passes max_run_time (when > 0).
Measurement Timer::measure(const char* op, int64_t number, double min_run_time, double max_run_time,
                           double threshold, const BlockCallback& callback) {
  std::vector<double> blocks;
  double total = 0;
  bool can_stop = false;
  while (total < min_run_time || !can_stop) {
    const double t = time_block(number, op);
    blocks.push_back(t);
    total += t;
    if (callback) callback(number, t);
    if (threshold <= 0) {
      can_stop = true;
    } else {
      can_stop = blocks.size() >= kMinBlocksForConfidence &&
                 make_measurement(number, blocks).meets_confidence(threshold);
    }
    if (max_run_time > 0 && total > max_run_time) break;
  }
  return make_measurement(number, std::move(blocks));
}

Measurement Timer::blocked_autorange(double min_run_time, const BlockCallback& callback) {
  constexpr const char* kOp = "tl::bench::Timer::blocked_autorange";
  check_duration(kOp, "min_run_time", min_run_time, false);
  ThreadCountGuard threads(options_.num_threads);
  const int64_t number = detail::estimate_block_size(
      [this](int64_t calls) { return time_block(calls, kOp); }, min_run_time);
  return measure(kOp, number, min_run_time, /*max_run_time=*/0, /*threshold=*/0, callback);
}

Measurement Timer::adaptive_autorange(double threshold, const AdaptiveAutorangeOptions& options) {
  constexpr const char* kOp = "tl::bench::Timer::adaptive_autorange";
  TL_CHECK(std::isfinite(threshold) && threshold > 0, Error, kOp,
           "expected threshold finite and > 0, got ", threshold);
  check_duration(kOp, "min_run_time", options.min_run_time, false);
  check_duration(kOp, "max_run_time (0: no limit)", options.max_run_time, true);
  ThreadCountGuard threads(options_.num_threads);
  const int64_t number = detail::estimate_block_size(
      [this](int64_t calls) { return time_block(calls, kOp); }, kAdaptiveBlockSizeRunTime);
  return measure(kOp, number, options.min_run_time, options.max_run_time, threshold,
                 options.callback);
}

// ---- Compare ----------------------------------------------------------------------------------

Compare::Compare(std::vector<Measurement> results) : results_(std::move(results)) {}

void Compare::extend_results(const std::vector<Measurement>& results) {
  results_.insert(results_.end(), results.begin(), results.end());
}

namespace {

// Replicates (same label, sub_label, description and thread count) pooled into one measurement of
// per-call times, in the order they first appear.
std::vector<Measurement> merge_replicates(const std::vector<Measurement>& results) {
  std::vector<Measurement> merged;
  for (const Measurement& r : results) {
    auto same = [&](const Measurement& m) {
      return m.label == r.label && m.sub_label == r.sub_label && m.description == r.description &&
             m.num_threads == r.num_threads;
    };
    auto it = std::find_if(merged.begin(), merged.end(), same);
    if (it == merged.end()) {
      merged.push_back(r);
      merged.back().number_per_run = 1;
    } else {
      it->raw_times.insert(it->raw_times.end(), r.raw_times.begin(), r.raw_times.end());
    }
  }
  return merged;
}

template <typename T>
size_t index_of(std::vector<T>& keys, const T& key) {
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it != keys.end()) return static_cast<size_t>(it - keys.begin());
  keys.push_back(key);
  return keys.size() - 1;
}

// One table: the measurements of one label.
std::string render_table(const std::vector<Measurement>& results, bool highlight) {
  double min_median = std::numeric_limits<double>::infinity();
  for (const Measurement& r : results) min_median = std::min(min_median, r.median());
  const TimeUnit unit = select_unit(min_median);

  // Rows by thread count (stable, so rows keep the order they were measured in), columns by
  // description in order of appearance.
  std::vector<std::pair<int, std::string>> row_keys;
  std::vector<std::string> col_keys;
  for (const Measurement& r : results) {
    index_of(row_keys, {r.num_threads, r.row_name()});
    index_of(col_keys, r.description);
  }
  std::stable_sort(row_keys.begin(), row_keys.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<const Measurement*>> cells(
      row_keys.size(), std::vector<const Measurement*>(col_keys.size(), nullptr));
  for (const Measurement& r : results) {
    cells[index_of(row_keys, {r.num_threads, r.row_name()})][index_of(col_keys, r.description)] =
        &r;
  }

  // Each column prints its medians with one decimal, right-aligned to its widest integer part.
  std::vector<std::vector<std::string>> strings(row_keys.size() + 1);
  strings[0].push_back("");
  for (const std::string& c : col_keys) strings[0].push_back(c);
  for (size_t i = 0; i < row_keys.size(); ++i) strings[i + 1].push_back("  " + row_keys[i].second);
  bool any_warning = false;
  for (size_t j = 0; j < col_keys.size(); ++j) {
    int digits = 1;
    bool column_warns = false;
    for (size_t i = 0; i < row_keys.size(); ++i) {
      const Measurement* m = cells[i][j];
      if (m == nullptr) continue;
      const double v = m->median() / unit.scale;
      if (v > 0) digits = std::max(digits, ceil_log10(v));
      column_warns = column_warns || (highlight && m->has_warnings());
    }
    any_warning = any_warning || column_warns;
    const int width = digits + 2;
    for (size_t i = 0; i < row_keys.size(); ++i) {
      const Measurement* m = cells[i][j];
      std::string cell;
      if (m != nullptr) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%*.1f", width, m->median() / unit.scale);
        cell = buf;
        if (column_warns) {
          std::string mark =
              m->has_warnings() ? " (! " + fixed(m->relative_iqr() * 100, 0) + "%)" : "";
          cell += std::string(mark.size() < 7 ? 7 - mark.size() : 0, ' ') + mark;
        }
      } else {
        cell = std::string(static_cast<size_t>(width) + (column_warns ? 7 : 0), ' ');
      }
      strings[i + 1].push_back(cell);
    }
  }

  const size_t ncols = col_keys.size() + 1;
  std::vector<size_t> widths(ncols, 0);
  for (const auto& row : strings)
    for (size_t j = 0; j < ncols; ++j) widths[j] = std::max(widths[j], row[j].size());

  auto join = [&](const std::vector<std::string>& row, bool first_left) {
    std::string line;
    for (size_t j = 0; j < ncols; ++j) {
      if (j > 0) line += "  |  ";
      line += (j == 0 && first_left) ? ljust(row[j], widths[j]) : center(row[j], widths[j]);
    }
    return line;
  };
  const std::string header = join(strings[0], false);
  const size_t overall = header.size();

  std::ostringstream out;
  out << "[" << center(" " + results.front().label + " ", overall >= 2 ? overall - 2 : 0, '-')
      << "]\n";
  out << header << "\n";
  int prior_threads = -1;
  for (size_t i = 0; i < row_keys.size(); ++i) {
    if (row_keys[i].first != prior_threads) {
      prior_threads = row_keys[i].first;
      out << ljust(std::to_string(prior_threads) + " threads: ", overall, '-') << "\n";
    }
    out << join(strings[i + 1], true) << "\n";
  }
  out << "\nTimes are in " << unit_in_english(unit.name) << " (" << unit.name << ").\n";
  if (any_warning)
    out << "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n";
  return out.str();
}

}  // namespace

std::string Compare::str() const {
  const std::vector<Measurement> merged = merge_replicates(results_);
  std::vector<std::string> labels;
  for (const Measurement& m : merged) index_of(labels, m.label);
  std::string out;
  for (const std::string& label : labels) {
    std::vector<Measurement> group;
    for (const Measurement& m : merged)
      if (m.label == label) group.push_back(m);
    if (!out.empty()) out += "\n";
    out += render_table(group, highlight_warnings_);
  }
  return out;
}

void Compare::print() const { std::cout << str() << std::flush; }

std::ostream& operator<<(std::ostream& os, const Compare& compare) { return os << compare.str(); }

// ---- do_bench ---------------------------------------------------------------------------------

std::vector<double> do_bench(const std::function<void()>& fn, const DoBenchOptions& options) {
  constexpr const char* kOp = "tl::bench::do_bench";
  // The arguments first: their errors do not depend on the machine.
  TL_CHECK(static_cast<bool>(fn), Error, kOp, "no function to time");
  check_duration(kOp, "rep_ms", options.rep_ms, false);
  check_duration(kOp, "warmup_ms", options.warmup_ms, true);
  for (double q : options.quantiles)
    TL_CHECK(q >= 0 && q <= 1, Error, kOp, "expected quantiles in [0, 1], got ", q);
  TL_CHECK(options.device >= -1, DeviceError, kOp,
           "expected device -1 (the current one) or a CUDA device index, got ", options.device);
  TL_CHECK(cuda::is_available(), DeviceError, kOp,
           "needs a CUDA device (it times each call with CUDA events on the device's stream), and "
           "none is usable here; time CPU code with tl::bench::Timer");
  TL_CHECK(options.device < cuda::device_count(), DeviceError, kOp, "device ", options.device,
           " asked for, but there are ", cuda::device_count(), " CUDA devices");
  const int device = options.device < 0 ? cuda::current_device() : options.device;
  cuda::DeviceGuard on(device);

  fn();  // first-use costs outside every number below
  cuda::synchronize(device);

  Tensor flush_buffer;
  if (options.flush_l2)
    flush_buffer = empty({kFlushBytes / 4}, TensorOptions(kInt32).device(Device::cuda(device)));
  auto flush = [&] {
    if (options.flush_l2) flush_buffer.zero_();
  };

  // A first estimate of one call's device time (flush included, as in the timed loop) sets how
  // many calls fill warmup_ms and rep_ms.
  constexpr int kEstimateCalls = 5;
  cuda::Event estimate_start(true), estimate_end(true);
  estimate_start.record();
  for (int i = 0; i < kEstimateCalls; ++i) {
    flush();
    fn();
  }
  estimate_end.record();
  estimate_end.synchronize();
  const double estimate_ms = std::max(
      1e-4, static_cast<double>(estimate_start.elapsed_time(estimate_end)) / kEstimateCalls);
  // Bounded so a call that does nothing on the device cannot ask for millions of event pairs.
  constexpr int64_t kMaxCalls = 100000;
  const int64_t n_warmup = saturating_count(options.warmup_ms / estimate_ms, 1, kMaxCalls);
  const int64_t n_repeat = saturating_count(options.rep_ms / estimate_ms, 1, kMaxCalls);

  std::vector<cuda::Event> starts, ends;
  starts.reserve(static_cast<size_t>(n_repeat));
  ends.reserve(static_cast<size_t>(n_repeat));
  // An event is created on its first record(); recording each once now keeps that host cost
  // out of the timed loop, where an end event created late would stretch a short call's time.
  for (int64_t i = 0; i < n_repeat; ++i) {
    starts.emplace_back(true).record();
    ends.emplace_back(true).record();
  }
  for (int64_t i = 0; i < n_warmup; ++i) fn();
  // The flush is enqueued before each start event, so it is outside every timed interval.
  for (int64_t i = 0; i < n_repeat; ++i) {
    flush();
    starts[static_cast<size_t>(i)].record();
    fn();
    ends[static_cast<size_t>(i)].record();
  }
  cuda::synchronize(device);

  std::vector<double> times;
  times.reserve(static_cast<size_t>(n_repeat));
  for (size_t i = 0; i < starts.size(); ++i)
    times.push_back(static_cast<double>(starts[i].elapsed_time(ends[i])));
  std::sort(times.begin(), times.end());
  std::vector<double> out;
  out.reserve(options.quantiles.size());
  for (double q : options.quantiles) out.push_back(sorted_quantile(times, q));
  return out;
}

}  // namespace tensorlet::bench

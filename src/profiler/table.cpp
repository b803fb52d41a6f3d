// KeyAverages::table: the key_averages rows laid out as PyTorch's key_averages().table() prints
// them (columns, widths, units, footer), so its readers can read ours the same way.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "tensorlet/profiler/export.h"
#include "tensorlet/profiler/profile.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::profiler {

namespace {

constexpr int kColumnWidth = 12;  // every numeric column, as in PyTorch
constexpr int kSpacing = 2;
constexpr int kMaxShapesWidth = 80;
constexpr int kMaxSourceWidth = 75;
constexpr const char* kWhere = "[tl::profiler::KeyAverages::table] ";

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// PyTorch's _format_time: microseconds with 3 decimals, scaled to ms or s from 1000 us / 1 s up,
// or in the fixed unit the caller asked for.
std::string format_time(int64_t ns, const std::string& unit) {
  double us = static_cast<double>(ns) / 1000.0;
  if (unit == "s" || (unit.empty() && us >= 1e6)) return printf_string("%.3fs", us / 1e6);
  if (unit == "ms" || (unit.empty() && us >= 1e3)) return printf_string("%.3fms", us / 1e3);
  return printf_string("%.3fus", us);
}

std::string format_share(int64_t part, int64_t whole) {
  if (whole == 0) return "NaN";
  return printf_string("%.2f%%", static_cast<double>(part) * 100.0 / static_cast<double>(whole));
}

// PyTorch's _format_memory: "1.00 Mb", "-1.00 Mb", "512 b" (binary units, signed).
std::string format_memory(int64_t bytes) {
  const double kb = 1024.0, mb = 1024.0 * kb, gb = 1024.0 * mb;
  double b = static_cast<double>(bytes), mag = std::fabs(b);
  if (mag >= gb) return printf_string("%.2f Gb", b / gb);
  if (mag >= mb) return printf_string("%.2f Mb", b / mb);
  if (mag >= kb) return printf_string("%.2f Kb", b / kb);
  return std::to_string(bytes) + " b";
}

// Keeps the end of a long path (the file name is the informative part), marked with "...".
std::string trim_path(const std::string& path, size_t width) {
  if (path.size() <= width) return path;
  std::string tail = path.substr(path.size() - width);
  if (tail.size() > 3) tail = "..." + tail.substr(3);
  return tail;
}

// The Source Location lines of a row: where it was opened, then its stack, innermost first. A
// user scope's innermost C++ frame is where it was opened ("f.cpp:42 fn()"): said once.
std::vector<std::string> source_lines(const EventAverage& row) {
  std::vector<std::string> lines;
  const bool said = !row.stack.empty() && row.stack[0].rfind(row.source + " ", 0) == 0;
  if (!row.source.empty() && !said) lines.push_back(row.source);
  lines.insert(lines.end(), row.stack.begin(), row.stack.end());
  return lines;
}

struct SortKey {
  const char* name;
  std::function<int64_t(const EventAverage&)> value;
};

const std::vector<SortKey>& sort_keys() {
  static const std::vector<SortKey> keys = {
      {"self_cpu_time_total", [](const EventAverage& r) { return r.self_cpu_time_total_ns; }},
      {"cpu_time_total", [](const EventAverage& r) { return r.cpu_time_total_ns; }},
      {"self_cuda_time_total", [](const EventAverage& r) { return r.self_cuda_time_total_ns; }},
      {"cuda_time_total", [](const EventAverage& r) { return r.cuda_time_total_ns; }},
      {"cpu_memory_usage", [](const EventAverage& r) { return r.cpu_memory_usage; }},
      {"self_cpu_memory_usage", [](const EventAverage& r) { return r.self_cpu_memory_usage; }},
      {"cuda_memory_usage", [](const EventAverage& r) { return r.cuda_memory_usage; }},
      {"self_cuda_memory_usage", [](const EventAverage& r) { return r.self_cuda_memory_usage; }},
      {"count", [](const EventAverage& r) { return r.count; }},
      {"flops", [](const EventAverage& r) { return r.flops; }},
  };
  return keys;
}

// A row of cells, each right-aligned in its column except those marked left (Source Location).
class Layout {
 public:
  void add_column(size_t width, bool left = false) {
    widths_.push_back(width);
    left_.push_back(left);
  }
  std::string separator() const {
    std::string s;
    for (size_t w : widths_) s += std::string(w, '-') + std::string(kSpacing, ' ');
    return s;
  }
  std::string row(const std::vector<std::string>& cells) const {
    std::string s;
    for (size_t i = 0; i < widths_.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : std::string();
      std::string pad(cell.size() < widths_[i] ? widths_[i] - cell.size() : 0, ' ');
      s += left_[i] ? cell + pad : pad + cell;
      s += std::string(kSpacing, ' ');
    }
    return s;
  }
  size_t line_length() const {
    size_t n = 0;
    for (size_t w : widths_) n += w + kSpacing;
    return n >= kSpacing ? n - kSpacing : 0;
  }

 private:
  std::vector<size_t> widths_;
  std::vector<bool> left_;
};

}  // namespace

const std::vector<std::string>& KeyAverages::valid_sort_keys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const SortKey& k : sort_keys()) v.push_back(k.name);
    return v;
  }();
  return names;
}

std::string KeyAverages::table(const TableOptions& options) const {
  // Validate before the empty-table shortcut so a typo is reported even with nothing recorded.
  std::vector<const EventAverage*> rows;
  for (const EventAverage& r : rows_) rows.push_back(&r);
  if (!options.sort_by.empty()) {
    const auto& keys = sort_keys();
    auto key = std::find_if(keys.begin(), keys.end(),
                            [&](const SortKey& k) { return options.sort_by == k.name; });
    if (key == keys.end()) {
      std::string valid;
      for (const std::string& k : valid_sort_keys()) {
        if (!valid.empty()) valid += ", ";
        valid += k;
      }
      throw Error(std::string(kWhere) + "unknown sort_by '" + options.sort_by +
                  "'; valid keys: " + valid);
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const EventAverage* a, const EventAverage* b) {
      return key->value(*a) > key->value(*b);
    });
  }
  const std::string& unit = options.time_unit;
  if (!unit.empty() && unit != "s" && unit != "ms" && unit != "us") {
    throw Error(std::string(kWhere) + "unknown time_unit '" + unit + "'; valid: s, ms, us");
  }
  if (rows_.empty()) return "";

  // Shares and the footer are over every row, also those the limit or the filter leave out.
  int64_t self_cpu_total = 0, self_cuda_total = 0;
  bool cuda_memory = false;
  for (const EventAverage& r : rows_) {
    self_cpu_total += r.self_cpu_time_total_ns;
    // Device time is summed over the kernel/copy rows only (no CPU time of their own): an op's
    // self CUDA time is the same kernels counted again.
    if (r.is_device) self_cuda_total += r.self_cuda_time_total_ns;
    cuda_memory = cuda_memory || r.cuda_memory_usage != 0 || r.self_cuda_memory_usage != 0;
  }

  const size_t max_name = static_cast<size_t>(std::max(4, options.max_name_column_width));
  size_t name_width = 0, shapes_width = 0, source_width = 0;
  for (const EventAverage* r : rows) {
    name_width = std::max(name_width, r->key.size() + 4);
    shapes_width = std::max(shapes_width, shapes_string(r->input_shapes).size() + 4);
    for (const std::string& line : source_lines(*r)) {
      source_width = std::max(source_width, line.size() + 4);
    }
  }
  name_width = std::min(name_width, max_name);
  shapes_width = std::min<size_t>(shapes_width, kMaxShapesWidth);
  source_width = std::min<size_t>(source_width, kMaxSourceWidth);

  std::vector<std::string> headers = {"Name",        "Self CPU %", "Self CPU",
                                      "CPU total %", "CPU total",  "CPU time avg"};
  if (has_cuda_) {
    headers.insert(headers.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  }
  const bool cuda_mem_columns = has_memory_ && (has_cuda_ || cuda_memory);
  if (has_memory_) headers.insert(headers.end(), {"CPU Mem", "Self CPU Mem"});
  if (cuda_mem_columns) headers.insert(headers.end(), {"CUDA Mem", "Self CUDA Mem"});
  headers.push_back("# of Calls");
  Layout layout;
  layout.add_column(name_width);
  for (size_t i = 1; i < headers.size(); ++i) layout.add_column(kColumnWidth);
  if (has_shapes_) {
    headers.push_back("Input Shapes");
    layout.add_column(shapes_width);
  }
  const bool stack_column = has_stack_ && source_width > 0;
  if (stack_column) {
    headers.push_back("Source Location");
    layout.add_column(source_width, /*left=*/true);
  }
  // FLOPs scaled by the smallest positive count, as PyTorch picks the header's unit.
  int64_t min_flops = 0;
  for (const EventAverage& r : rows_) {
    if (r.flops > 0 && (min_flops == 0 || r.flops < min_flops)) min_flops = r.flops;
  }
  const bool flops_column = has_flops_ && min_flops > 0;
  double flops_scale = 1.0;
  if (flops_column) {
    static const char* const units[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    int level = std::clamp(static_cast<int>(std::log10(static_cast<double>(min_flops)) / 3), 0, 5);
    flops_scale = std::pow(10.0, -3.0 * level);
    headers.push_back(std::string("Total ") + units[level]);
    layout.add_column(kColumnWidth);
  }

  std::ostringstream out;
  const std::string sep = layout.separator();
  const std::string rule(layout.line_length(), '=');
  if (!options.header.empty()) out << rule << '\n' << options.header << '\n';
  if (!cuda_note_.empty()) out << rule << '\n' << cuda_note_ << '\n';
  if (has_stack_ && !stack_note_.empty()) out << rule << '\n' << stack_note_ << '\n';
  if (options.top_level_events_only) {
    out << rule << '\n' << "This report only display top-level operations statistics\n";
  }
  out << sep << '\n' << layout.row(headers) << '\n' << sep << '\n';

  std::vector<const EventAverage*> truncated;
  int shown = 0;
  for (const EventAverage* r : rows) {
    if (options.row_limit >= 0 && shown == options.row_limit) break;
    if (options.top_level_events_only && !r->is_top_level) continue;
    if (r->is_device && !has_cuda_) continue;  // kernel rows are all CUDA columns
    ++shown;
    // PyTorch's rule: names within 3 of the limit are cut and marked "...".
    std::string name = r->key;
    if (name.size() + 3 >= max_name) {
      name = name.substr(0, max_name - 3) + "...";
      truncated.push_back(r);
    }
    const int64_t n = std::max<int64_t>(1, r->count);
    std::vector<std::string> cells = {name,
                                      format_share(r->self_cpu_time_total_ns, self_cpu_total),
                                      format_time(r->self_cpu_time_total_ns, unit),
                                      format_share(r->cpu_time_total_ns, self_cpu_total),
                                      format_time(r->cpu_time_total_ns, unit),
                                      format_time(r->cpu_time_total_ns / n, unit)};
    if (has_cuda_) {
      cells.insert(cells.end(), {format_time(r->self_cuda_time_total_ns, unit),
                                 format_share(r->self_cuda_time_total_ns, self_cuda_total),
                                 format_time(r->cuda_time_total_ns, unit),
                                 format_time(r->cuda_time_total_ns / n, unit)});
    }
    if (has_memory_) {
      cells.insert(cells.end(),
                   {format_memory(r->cpu_memory_usage), format_memory(r->self_cpu_memory_usage)});
    }
    if (cuda_mem_columns) {
      cells.insert(cells.end(),
                   {format_memory(r->cuda_memory_usage), format_memory(r->self_cuda_memory_usage)});
    }
    cells.push_back(std::to_string(r->count));
    if (has_shapes_) cells.push_back(shapes_string(r->input_shapes).substr(0, shapes_width));
    std::vector<std::string> lines = stack_column ? source_lines(*r) : std::vector<std::string>{};
    if (stack_column) cells.push_back(lines.empty() ? "" : trim_path(lines[0], source_width));
    if (flops_column) {
      cells.push_back(r->flops > 0
                          ? printf_string("%8.3f", static_cast<double>(r->flops) * flops_scale)
                          : "--");
    }
    out << layout.row(cells) << '\n';
    if (stack_column) {
      // Further frames on lines of their own under the Source Location column, then a blank
      // line between rows, as PyTorch does.
      const size_t at = headers.size() - (flops_column ? 2 : 1);
      for (size_t i = 1; i < lines.size(); ++i) {
        std::vector<std::string> more(headers.size());
        more[at] = trim_path(lines[i], source_width);
        out << layout.row(more) << '\n';
      }
      out << layout.row(std::vector<std::string>(headers.size())) << '\n';
    }
  }
  out << sep << '\n';
  out << "Self CPU time total: " << format_time(self_cpu_total, unit) << '\n';
  if (has_cuda_) out << "Self CUDA time total: " << format_time(self_cuda_total, unit) << '\n';
  if (!truncated.empty()) {
    // The cut names stay findable: in table order, in full.
    out << "\nFull names of truncated rows:\n";
    for (const EventAverage* r : truncated) out << "  " << r->key << '\n';
  }
  return out.str();
}

std::ostream& operator<<(std::ostream& os, const KeyAverages& averages) {
  return os << averages.table();
}

}  // namespace tensorlet::profiler

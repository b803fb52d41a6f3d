// Profiler output on hand-built events: key_averages arithmetic, the table's layout, sort keys
// and units, chrome traces parsed back, collapsed stacks. No profiler runs, so no timing noise.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensorlet/profiler/export.h"
#include "tensorlet/profiler/profile.h"
#include "tensorlet/tensor/error.h"
#include "trace_format.h"

namespace tp = tensorlet::profiler;
using tp::Event;
using tp::EventKind;

namespace {

constexpr int64_t kMs = 1'000'000, kUs = 1'000, kMiB = 1 << 20;

// Appends events with consecutive ids.
struct Builder {
  std::vector<Event> events;
  int64_t scope(const std::string& name, EventKind kind, int64_t parent, int depth, int64_t start,
                int64_t end, uint32_t thread = 1, std::vector<std::vector<int64_t>> shapes = {},
                std::vector<std::string> stack = {}) {
    Event e;
    e.name = name;
    e.kind = kind;
    e.parent = parent;
    e.depth = depth;
    e.start_ns = start;
    e.end_ns = end;
    e.thread = thread;
    e.input_shapes = std::move(shapes);
    e.stack = std::move(stack);
    return push(std::move(e));
  }
  int64_t memory(int64_t parent, int64_t at, int64_t bytes, const std::string& device,
                 uint32_t thread = 1) {
    Event e;
    e.name = "[memory]";
    e.kind = EventKind::Memory;
    e.parent = parent;
    e.start_ns = e.end_ns = at;
    e.bytes = bytes;
    e.device = device;
    e.thread = thread;
    return push(std::move(e));
  }
  int64_t push(Event e) {
    e.id = static_cast<int64_t>(events.size()) + 1;
    events.push_back(std::move(e));
    return events.back().id;
  }
};

// Thread 1: "outer" (10 ms) holds tl::add (3 ms, allocating 1 MiB in its tl::empty) and a second
// tl::add (2 ms) that launches a 300 us kernel through a 100 us cudaLaunchKernel; outer frees the
// MiB; then tl::mul (0.5 ms, 2 MFLOPs, 2 KiB on cuda:0). Thread 2: one tl::add (1 ms). Plus 100
// bytes allocated outside any scope.
std::vector<Event> sample_events() {
  Builder b;
  const std::vector<std::vector<int64_t>> s23 = {{2, 3}, {2, 3}};
  int64_t outer = b.scope("outer", EventKind::UserScope, 0, 0, 0, 10 * kMs);
  int64_t add1 = b.scope("tl::add", EventKind::Op, outer, 1, 1 * kMs, 4 * kMs, 1, s23, {"outer"});
  int64_t empty =
      b.scope("tl::empty", EventKind::Op, add1, 2, 1500 * kUs, 2 * kMs, 1, {{2, 3}}, {"outer"});
  b.memory(empty, 1600 * kUs, kMiB, "cpu");
  int64_t add2 =
      b.scope("tl::add", EventKind::Op, outer, 1, 5 * kMs, 7 * kMs, 1, {{4}, {4}}, {"outer"});
  int64_t launch = b.scope("cudaLaunchKernel", EventKind::Runtime, add2, 2, 5100 * kUs, 5200 * kUs);
  b.events[static_cast<size_t>(launch - 1)].correlation = 11;
  Event k;
  k.name = "add_kernel";
  k.kind = EventKind::Kernel;
  k.parent = add2;
  k.start_ns = 5300 * kUs;
  k.end_ns = 5600 * kUs;
  k.device_index = 0;
  k.stream = 7;
  k.correlation = 11;
  b.push(k);
  b.memory(outer, 8 * kMs, -kMiB, "cpu");
  int64_t mul = b.scope("tl::mul", EventKind::Op, 0, 0, 11 * kMs, 11500 * kUs);
  b.events[static_cast<size_t>(mul - 1)].flops = 2'000'000;
  b.memory(mul, 11100 * kUs, 2048, "cuda:0");
  b.scope("tl::add", EventKind::Op, 0, 0, 0, 1 * kMs, 2, s23);
  b.memory(0, 12 * kMs, 100, "cpu");
  return b.events;
}

tp::KeyAverages averages(const std::vector<Event>& events, tp::KeyAveragesOptions options = {},
                         bool cuda = true, bool memory = true) {
  return tp::key_averages(events, options, cuda, memory, /*has_shapes=*/true,
                          /*has_stack=*/true, /*has_flops=*/true);
}

const tp::EventAverage* row(const tp::KeyAverages& a, const std::string& key) {
  for (const auto& r : a.rows()) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The names of a table's data rows, in order: the lines between the second and third dashed
// separators, up to the first double space after the right-aligned name.
std::vector<std::string> row_names(const std::string& table) {
  std::vector<std::string> names;
  int separators = 0;
  for (const std::string& line : lines_of(table)) {
    if (line.rfind("---", 0) == 0) {
      ++separators;
      continue;
    }
    if (separators != 2) continue;
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    names.push_back(line.substr(start, line.find("  ", start) - start));
  }
  return names;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tl_profiler_output_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("profiler output: self and total CPU, CUDA and memory arithmetic") {
  auto a = averages(sample_events());
  const auto* outer = row(a, "outer");
  const auto* add = row(a, "tl::add");
  const auto* empty = row(a, "tl::empty");
  const auto* launch = row(a, "cudaLaunchKernel");
  const auto* kernel = row(a, "add_kernel");
  const auto* mul = row(a, "tl::mul");
  const auto* memory = row(a, "[memory]");
  REQUIRE(outer);
  REQUIRE(add);
  REQUIRE(empty);
  REQUIRE(launch);
  REQUIRE(kernel);
  REQUIRE(mul);
  REQUIRE(memory);
  CHECK(a.rows().size() == 7);

  CHECK(outer->count == 1);
  CHECK(outer->cpu_time_total_ns == 10 * kMs);
  CHECK(outer->self_cpu_time_total_ns == 10 * kMs - 3 * kMs - 2 * kMs);
  CHECK(add->count == 3);
  CHECK(add->cpu_time_total_ns == 6 * kMs);
  // 3 - 0.5 (tl::empty), 2 - 0.1 (cudaLaunchKernel), 1 on thread 2.
  CHECK(add->self_cpu_time_total_ns == 2500 * kUs + 1900 * kUs + 1 * kMs);
  CHECK(empty->self_cpu_time_total_ns == 500 * kUs);
  CHECK(launch->self_cpu_time_total_ns == 100 * kUs);

  CHECK(kernel->self_cuda_time_total_ns == 300 * kUs);
  CHECK(kernel->cuda_time_total_ns == 300 * kUs);
  CHECK(kernel->cpu_time_total_ns == 0);
  CHECK(kernel->is_device);
  CHECK(add->self_cuda_time_total_ns == 300 * kUs);
  CHECK(add->cuda_time_total_ns == 300 * kUs);
  CHECK(outer->self_cuda_time_total_ns == 0);
  CHECK(outer->cuda_time_total_ns == 300 * kUs);

  // The MiB is allocated under tl::empty (inside tl::add inside outer) and freed by outer.
  CHECK(empty->self_cpu_memory_usage == kMiB);
  CHECK(empty->cpu_memory_usage == kMiB);
  CHECK(add->self_cpu_memory_usage == 0);
  CHECK(add->cpu_memory_usage == kMiB);
  CHECK(outer->self_cpu_memory_usage == -kMiB);
  CHECK(outer->cpu_memory_usage == 0);
  CHECK(mul->self_cuda_memory_usage == 2048);
  CHECK(mul->cuda_memory_usage == 2048);
  CHECK(mul->cpu_memory_usage == 0);
  CHECK(memory->self_cpu_memory_usage == 100);

  CHECK(mul->flops == 2'000'000);
  CHECK(outer->is_top_level);
  CHECK(add->is_top_level);  // thread 2's call is at depth 0
  CHECK(mul->is_top_level);
  CHECK_FALSE(empty->is_top_level);
  CHECK_FALSE(launch->is_top_level);
  CHECK(kernel->is_top_level);  // device events have no CPU parent, as in PyTorch

  // The self times add up to the top-level scopes' durations on each thread.
  int64_t self_sum = 0;
  for (const auto& r : a.rows()) self_sum += r.self_cpu_time_total_ns;
  CHECK(self_sum == 10 * kMs + 500 * kUs + 1 * kMs);
}

TEST_CASE("profiler output: self time is never negative") {
  Builder b;
  // A child that outlasts its parent (as clock skew could produce) leaves the parent at 0 self.
  int64_t parent = b.scope("parent", EventKind::UserScope, 0, 0, 0, 1 * kMs);
  b.scope("child", EventKind::Op, parent, 1, 0, 2 * kMs);
  auto a = averages(b.events);
  CHECK(row(a, "parent")->self_cpu_time_total_ns == 0);
  CHECK(row(a, "child")->self_cpu_time_total_ns == 2 * kMs);
  for (const auto& r : a.rows()) CHECK(r.self_cpu_time_total_ns >= 0);
}

TEST_CASE("profiler output: table columns, header and footer") {
  auto events = sample_events();
  SUBCASE("CPU only") {
    std::string t = averages(events, {}, /*cuda=*/false, /*memory=*/false).table();
    auto lines = lines_of(t);
    REQUIRE(lines.size() > 4);
    CHECK(lines[0].rfind("---", 0) == 0);
    const std::string& header = lines[1];
    size_t at = 0;
    for (const char* column : {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                               "CPU time avg", "# of Calls"}) {
      size_t found = header.find(column, at);
      CHECK_MESSAGE(found != std::string::npos, column);
      at = found;
    }
    CHECK(header.find("CUDA") == std::string::npos);
    CHECK(header.find("Mem") == std::string::npos);
    CHECK(header.find("Input Shapes") == std::string::npos);
    CHECK(header.find("Source Location") == std::string::npos);
    // Name is right-aligned in a column 4 wider than the longest name ("cudaLaunchKernel").
    CHECK(header.rfind(std::string(std::string("cudaLaunchKernel").size(), ' ') + "Name", 0) == 0);
    CHECK(t.find("Self CPU time total: 11.500ms\n") != std::string::npos);
    CHECK(t.find("Self CUDA time total") == std::string::npos);
    CHECK(lines.back() == "Self CPU time total: 11.500ms");
    CHECK(t.find("add_kernel") == std::string::npos);  // device rows need the CUDA columns
  }
  SUBCASE("CUDA, memory and FLOPs") {
    std::string t = averages(events).table({.header = "MY RUN"});
    auto lines = lines_of(t);
    CHECK(lines[0].rfind("===", 0) == 0);
    CHECK(lines[1] == "MY RUN");
    auto header_line = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("Self CPU %") != std::string::npos;
    });
    REQUIRE(header_line != lines.end());
    size_t at = 0;
    for (const char* column :
         {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "Self CUDA",
          "Self CUDA %", "CUDA total", "CUDA time avg", "CPU Mem", "Self CPU Mem", "CUDA Mem",
          "Self CUDA Mem", "# of Calls", "Total MFLOPs"}) {
      size_t found = header_line->find(column, at);
      CHECK_MESSAGE(found != std::string::npos, column);
      at = found;
    }
    CHECK(t.find("Self CPU time total: 11.500ms\nSelf CUDA time total: 300.000us\n") !=
          std::string::npos);
    // tl::mul's row: 0.5 ms self, 2 KiB on the device, 2 MFLOPs.
    auto mul = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("tl::mul") != std::string::npos;
    });
    REQUIRE(mul != lines.end());
    CHECK(mul->find("4.35%") != std::string::npos);  // 0.5 / 11.5
    CHECK(mul->find("500.000us") != std::string::npos);
    CHECK(mul->find("2.00 Kb") != std::string::npos);
    CHECK(mul->find("   2.000") != std::string::npos);
    auto outer = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("outer") != std::string::npos;
    });
    REQUIRE(outer != lines.end());
    CHECK(outer->find("-1.00 Mb") != std::string::npos);
    CHECK(outer->find("0 b") != std::string::npos);
    CHECK(outer->find("86.96%") != std::string::npos);  // CPU total %: 10 / 11.5
  }
  SUBCASE("CUDA note in the header area") {
    auto a = tp::key_averages(events, {}, true, false, false, false, false,
                              "CUDA activity not recorded yet");
    auto lines = lines_of(a.table());
    CHECK(lines[0].rfind("===", 0) == 0);
    CHECK(lines[1] == "CUDA activity not recorded yet");
    CHECK(lines[2].rfind("---", 0) == 0);
  }
  SUBCASE("empty") {
    CHECK(averages({}).table().empty());
    CHECK(averages({}).rows().empty());
  }
}

TEST_CASE("profiler output: every sort key, and the error for a bad one") {
  auto a = averages(sample_events());
  struct Expect {
    const char* key;
    std::vector<std::string> first;
  };
  // Ties keep the order of first appearance.
  const std::vector<Expect> expect = {
      {"self_cpu_time_total", {"tl::add", "outer", "tl::empty", "tl::mul", "cudaLaunchKernel"}},
      {"cpu_time_total", {"outer", "tl::add", "tl::empty", "tl::mul", "cudaLaunchKernel"}},
      {"self_cuda_time_total", {"tl::add", "add_kernel"}},
      {"cuda_time_total", {"outer", "tl::add", "add_kernel"}},
      {"cpu_memory_usage", {"tl::add", "tl::empty", "[memory]"}},
      {"self_cpu_memory_usage", {"tl::empty", "[memory]"}},
      {"cuda_memory_usage", {"tl::mul"}},
      {"self_cuda_memory_usage", {"tl::mul"}},
      {"count", {"tl::add"}},
      {"flops", {"tl::mul"}},
  };
  CHECK(expect.size() == tp::KeyAverages::valid_sort_keys().size());
  for (const auto& e : expect) {
    CAPTURE(e.key);
    CHECK(std::find(tp::KeyAverages::valid_sort_keys().begin(),
                    tp::KeyAverages::valid_sort_keys().end(),
                    e.key) != tp::KeyAverages::valid_sort_keys().end());
    auto names = row_names(a.table({.sort_by = e.key}));
    REQUIRE(names.size() == 7);
    for (size_t i = 0; i < e.first.size(); ++i) CHECK(names[i] == e.first[i]);
  }
  CHECK(row_names(a.table({.sort_by = "self_cpu_time_total"})).back() != "tl::add");
  // self_cpu_memory_usage is descending: the free is last.
  CHECK(row_names(a.table({.sort_by = "self_cpu_memory_usage"})).back() == "outer");

  try {
    (void)a.table({.sort_by = "cpu_time"});
    FAIL("no error for a bad sort key");
  } catch (const tensorlet::Error& err) {
    std::string msg = err.what();
    CHECK(msg.find("cpu_time") != std::string::npos);
    for (const auto& k : tp::KeyAverages::valid_sort_keys())
      CHECK(msg.find(k) != std::string::npos);
  }
  // Also when nothing was recorded.
  CHECK_THROWS_AS((void)averages({}).table({.sort_by = "self_cpu"}), tensorlet::Error);
  CHECK_THROWS_AS((void)a.table({.time_unit = "min"}), tensorlet::Error);
}

TEST_CASE("profiler output: row_limit and top_level_events_only") {
  auto a = averages(sample_events());
  CHECK(row_names(a.table({.row_limit = 2})).size() == 2);
  CHECK(row_names(a.table({.row_limit = 0})).empty());
  CHECK(row_names(a.table({.row_limit = -1})).size() == 7);
  std::string t = a.table({.sort_by = "cpu_time_total", .top_level_events_only = true});
  CHECK(t.find("This report only display top-level operations statistics") != std::string::npos);
  CHECK(row_names(t) ==
        std::vector<std::string>{"outer", "tl::add", "tl::mul", "add_kernel", "[memory]"});
  // The limit counts the rows shown, not those skipped.
  CHECK(row_names(a.table(
            {.sort_by = "cpu_time_total", .row_limit = 3, .top_level_events_only = true})) ==
        std::vector<std::string>{"outer", "tl::add", "tl::mul"});
  // Shares stay relative to every row: outer still has 86.96% of the CPU total.
  CHECK(t.find("86.96%") != std::string::npos);
  CHECK(t.find("Self CPU time total: 11.500ms") != std::string::npos);
}

TEST_CASE("profiler output: top_level_events_only lists device events, as PyTorch does") {
  Builder b;
  // A kernel and a copy launched by a top-level op, a nested op and its runtime call, a memset
  // of unknown origin, and an op whose enclosing scope was not recorded.
  int64_t mm = b.scope("tl::matmul", EventKind::Op, 0, 0, 0, 4 * kMs);
  int64_t inner = b.scope("tl::empty", EventKind::Op, mm, 1, 1 * kMs, 2 * kMs);
  b.scope("cudaLaunchKernel", EventKind::Runtime, mm, 1, 2 * kMs, 2100 * kUs);
  auto gpu = [&](const std::string& name, EventKind kind, int64_t parent, int64_t start) {
    Event e;
    e.name = name;
    e.kind = kind;
    e.parent = parent;
    e.start_ns = start;
    e.end_ns = start + 100 * kUs;
    e.device_index = 0;
    e.stream = 7;
    b.push(std::move(e));
  };
  gpu("gemm_kernel", EventKind::Kernel, mm, 2200 * kUs);
  gpu("Memcpy HtoD", EventKind::Memcpy, inner, 1100 * kUs);
  gpu("Memset", EventKind::Memset, 0, 5 * kMs);
  b.scope("tl::orphan", EventKind::Op, /*parent=*/999, /*depth=*/2, 6 * kMs, 7 * kMs);
  auto a = averages(b.events);
  for (const char* key : {"tl::matmul", "gemm_kernel", "Memcpy HtoD", "Memset", "tl::orphan"}) {
    CAPTURE(key);
    REQUIRE(row(a, key));
    CHECK(row(a, key)->is_top_level);
  }
  CHECK_FALSE(row(a, "tl::empty")->is_top_level);
  CHECK_FALSE(row(a, "cudaLaunchKernel")->is_top_level);
  CHECK(
      row_names(a.table({.top_level_events_only = true})) ==
      std::vector<std::string>{"tl::matmul", "gemm_kernel", "Memcpy HtoD", "Memset", "tl::orphan"});
  // Without the CUDA columns device rows stay hidden, top level or not.
  CHECK(row_names(averages(b.events, {}, /*cuda=*/false).table({.top_level_events_only = true})) ==
        std::vector<std::string>{"tl::matmul", "tl::orphan"});
}

TEST_CASE("profiler output: one self-time computation behind the table and the stacks") {
  auto events = sample_events();
  auto self = tp::self_cpu_times_ns(events);
  REQUIRE(self.size() == events.size());
  // In sample_events() order: outer, tl::add, tl::empty, memory, tl::add, cudaLaunchKernel,
  // add_kernel, memory, tl::mul, memory, tl::add (thread 2), memory.
  CHECK(self == std::vector<int64_t>{5 * kMs, 2500 * kUs, 500 * kUs, 0, 1900 * kUs, 100 * kUs, 0, 0,
                                     500 * kUs, 0, 1 * kMs, 0});
  // The flame graph's values add up to the table's self CPU total.
  const std::string path = temp_path("self_stacks.txt");
  tp::write_stacks(events, path, "self_cpu_time_total");
  int64_t stacks_us = 0;
  for (const std::string& line : lines_of(read_all(path))) {
    stacks_us += std::stoll(line.substr(line.rfind(' ') + 1));
  }
  std::filesystem::remove(path);
  int64_t table_ns = 0;
  const auto a = averages(events);  // rows() refers into it: keep it alive through the loop
  for (const auto& r : a.rows()) table_ns += r.self_cpu_time_total_ns;
  CHECK(stacks_us * kUs == table_ns);
}

TEST_CASE("profiler output: group by input shape") {
  auto events = sample_events();
  auto plain = averages(events);
  CHECK(plain.table().find("Input Shapes") == std::string::npos);
  auto a = averages(events, {.group_by_input_shape = true});
  int add_rows = 0;
  for (const auto& r : a.rows()) {
    if (r.key != "tl::add") continue;
    ++add_rows;
    if (r.input_shapes == std::vector<std::vector<int64_t>>{{2, 3}, {2, 3}}) {
      CHECK(r.count == 2);
      CHECK(r.cpu_time_total_ns == 4 * kMs);
    } else {
      CHECK(r.input_shapes == std::vector<std::vector<int64_t>>{{4}, {4}});
      CHECK(r.count == 1);
      CHECK(r.self_cpu_time_total_ns == 1900 * kUs);
    }
  }
  CHECK(add_rows == 2);
  std::string t = a.table();
  CHECK(t.find("Input Shapes") != std::string::npos);
  CHECK(t.find("[[2, 3], [2, 3]]") != std::string::npos);
  CHECK(t.find("[[4], [4]]") != std::string::npos);
  CHECK(t.find("[[2, 3]]") != std::string::npos);  // tl::empty
}

TEST_CASE("profiler output: group by stack") {
  auto events = sample_events();
  CHECK(averages(events).table().find("Source Location") == std::string::npos);
  auto a = averages(events, {.group_by_stack_n = 1});
  int add_rows = 0;
  for (const auto& r : a.rows()) {
    if (r.key != "tl::add") continue;
    ++add_rows;
    if (r.stack.empty()) {
      CHECK(r.count == 1);  // thread 2's, recorded without a stack
    } else {
      CHECK(r.stack == std::vector<std::string>{"outer"});
      CHECK(r.count == 2);
    }
  }
  CHECK(add_rows == 2);
  // n frames at most, innermost first.
  Builder b;
  b.scope("tl::add", EventKind::Op, 0, 2, 0, 1, 1, {}, {"a", "b", "c"});
  b.scope("tl::add", EventKind::Op, 0, 2, 2, 3, 1, {}, {"x", "b", "c"});
  auto two = averages(b.events, {.group_by_stack_n = 2});
  REQUIRE(two.rows().size() == 1);
  CHECK(two.rows()[0].stack == std::vector<std::string>{"c", "b"});
  CHECK(averages(b.events, {.group_by_stack_n = 3}).rows().size() == 2);
  std::string t = a.table();
  CHECK(t.find("Source Location") != std::string::npos);
  auto lines = lines_of(t);
  auto add = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("tl::add") != std::string::npos && l.find("outer") != std::string::npos;
  });
  CHECK(add != lines.end());
}

TEST_CASE("profiler output: time and memory units") {
  auto table_of = [](int64_t ns, int64_t bytes, const std::string& unit = "") {
    tp::EventAverage r;
    r.key = "op";
    r.count = 1;
    r.cpu_time_total_ns = r.self_cpu_time_total_ns = ns;
    r.cpu_memory_usage = r.self_cpu_memory_usage = bytes;
    tp::KeyAverages a({r}, false, true, false, false, false, "");
    return a.table({.time_unit = unit});
  };
  CHECK(table_of(999, 0).find("0.999us") != std::string::npos);
  CHECK(table_of(999, 0).find("  0 b") != std::string::npos);
  CHECK(table_of(1'234'567, 0).find("1.235ms") != std::string::npos);
  CHECK(table_of(2'500'000'000, 0).find("Self CPU time total: 2.500s") != std::string::npos);
  CHECK(table_of(999, 0, "ms").find("0.001ms") != std::string::npos);
  CHECK(table_of(2'500'000'000, 0, "us").find("2500000.000us") != std::string::npos);
  CHECK(table_of(1, kMiB).find("1.00 Mb") != std::string::npos);
  CHECK(table_of(1, -kMiB).find("-1.00 Mb") != std::string::npos);
  CHECK(table_of(1, 1536).find("1.50 Kb") != std::string::npos);
  CHECK(table_of(1, 512).find("512 b") != std::string::npos);
  CHECK(table_of(1, 3LL << 30).find("3.00 Gb") != std::string::npos);
  CHECK(table_of(0, 0).find("NaN") != std::string::npos);  // a share of a zero total
}

TEST_CASE("profiler output: long names are cut and listed in full under the table") {
  const std::string long_a = "void tensorlet::cuda::elementwise_kernel<float, add_op>(long)";
  const std::string long_b = "void tensorlet::cuda::elementwise_kernel<float, mul_op>(long)";
  Builder b;
  b.scope(long_a, EventKind::Op, 0, 0, 0, 2 * kMs);
  b.scope(long_b, EventKind::Op, 0, 0, 2 * kMs, 3 * kMs);
  b.scope("short", EventKind::Op, 0, 0, 3 * kMs, 4 * kMs);
  std::string t = averages(b.events).table({.max_name_column_width = 30});
  auto lines = lines_of(t);
  CHECK(t.find(long_a.substr(0, 27) + "...") != std::string::npos);
  auto list = std::find(lines.begin(), lines.end(), "Full names of truncated rows:");
  REQUIRE(list != lines.end());
  REQUIRE(lines.end() - list == 3);
  CHECK(*(list + 1) == "  " + long_a);
  CHECK(*(list + 2) == "  " + long_b);
  // Nothing cut, nothing listed; the default width (55) fits these names.
  CHECK(averages(b.events).table({.max_name_column_width = 80}).find("Full names") ==
        std::string::npos);
}

TEST_CASE("profiler output: chrome trace parses back with the expected events") {
  auto events = sample_events();
  const std::string path = temp_path("trace.json");
  tp::write_chrome_trace(events, path);
  auto doc = nlohmann::json::parse(read_all(path));
  std::filesystem::remove(path);
  tl_test::check_trace_event_format(doc);
  const auto& te = doc["traceEvents"];
  int complete = 0, instants = 0, counters = 0;
  const nlohmann::json *kernel = nullptr, *outer = nullptr, *add = nullptr, *start = nullptr,
                       *finish = nullptr;
  bool gpu_named = false, stream_named = false, thread_named = false;
  for (const auto& e : te) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      ++complete;
      if (e["name"] == "add_kernel") kernel = &e;
      if (e["name"] == "outer") outer = &e;
      if (e["name"] == "tl::add" && add == nullptr) add = &e;
    } else if (ph == "i") {
      ++instants;
    } else if (ph == "C") {
      ++counters;
    } else if (ph == "s") {
      start = &e;
    } else if (ph == "f") {
      finish = &e;
    } else if (ph == "M") {
      const std::string name = e["args"].value("name", std::string());
      gpu_named = gpu_named || (e["name"] == "process_name" && name == "GPU 0");
      stream_named = stream_named || (e["name"] == "thread_name" && name == "stream 7");
      thread_named = thread_named || (e["name"] == "thread_name" && name == "thread 2");
    }
  }
  CHECK(complete == 8);  // every event but the 4 memory ones
  CHECK(instants == 4);
  CHECK(counters == 4);
  CHECK(gpu_named);
  CHECK(stream_named);
  CHECK(thread_named);
  REQUIRE(outer);
  CHECK((*outer)["ts"].get<double>() == 0.0);
  CHECK((*outer)["dur"].get<double>() == 10000.0);
  CHECK((*outer)["cat"] == "user_annotation");
  CHECK((*outer)["tid"] == 1);
  REQUIRE(add);
  CHECK((*add)["args"]["Input Dims"] == nlohmann::json::parse("[[2, 3], [2, 3]]"));
  REQUIRE(kernel);
  CHECK((*kernel)["dur"].get<double>() == 300.0);
  CHECK((*kernel)["pid"] != (*outer)["pid"]);
  CHECK((*kernel)["args"]["correlation"] == 11);
  // The arrow runs from cudaLaunchKernel (5.1 ms, thread 1) to the kernel's track.
  REQUIRE(start);
  REQUIRE(finish);
  CHECK((*start)["id"] == (*finish)["id"]);
  CHECK((*start)["ts"].get<double>() == 5100.0);
  CHECK((*start)["tid"] == 1);
  CHECK((*start)["pid"] == (*outer)["pid"]);
  CHECK((*finish)["pid"] == (*kernel)["pid"]);
  CHECK((*finish)["tid"] == (*kernel)["tid"]);
  CHECK((*finish)["ts"].get<double>() == 5300.0);
  CHECK((*finish)["bp"] == "e");

  CHECK_THROWS_AS(tp::write_chrome_trace(events, "/nonexistent-dir/x/trace.json"),
                  tensorlet::Error);
}

TEST_CASE("profiler output: chrome trace of a non-UTF-8 name still parses") {
  Builder b;
  b.scope("bad\xff", EventKind::UserScope, 0, 0, 0, 1 * kMs);
  const std::string path = temp_path("bad_utf8.json");
  REQUIRE_NOTHROW(tp::write_chrome_trace(b.events, path));
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(read_all(path)));
  std::filesystem::remove(path);
  bool found = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") found = e["name"] == "bad\xEF\xBF\xBD";  // U+FFFD for the bad byte
  }
  CHECK(found);
}

TEST_CASE("profiler output: chrome trace GPU tracks of an unknown device") {
  // Device -1 is drawn on GPU 0's process track; its stream must not reuse a tid there.
  Builder b;
  for (int device : {0, -1}) {
    Event k;
    k.name = "kernel";
    k.kind = EventKind::Kernel;
    k.start_ns = 0;
    k.end_ns = 1 * kUs;
    k.device_index = device;
    k.stream = device == 0 ? 7 : 8;
    b.push(std::move(k));
  }
  const std::string path = temp_path("unknown_device.json");
  tp::write_chrome_trace(b.events, path);
  auto doc = nlohmann::json::parse(read_all(path));
  std::filesystem::remove(path);
  std::vector<std::pair<int64_t, int64_t>> tracks;
  int gpu_process_names = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") tracks.emplace_back(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
    if (e["ph"] == "M" && e["name"] == "process_name" &&
        e["args"]["name"].get<std::string>().rfind("GPU", 0) == 0) {
      ++gpu_process_names;
    }
  }
  REQUIRE(tracks.size() == 2);
  CHECK(tracks[0].first == tracks[1].first);
  CHECK(tracks[0].second != tracks[1].second);
  CHECK(gpu_process_names == 1);
}

TEST_CASE("profiler output: gzip chrome trace") {
  auto events = sample_events();
  const std::string path = temp_path("trace.json.gz");
  if (!tp::chrome_trace_gzip_supported()) {
    try {
      tp::write_chrome_trace(events, path);
      FAIL("no error for .gz without zlib");
    } catch (const tensorlet::Error& err) {
      CHECK(std::string(err.what()).find("zlib") != std::string::npos);
    }
    return;
  }
  tp::write_chrome_trace(events, path);
  std::string bytes = read_all(path);
  REQUIRE(bytes.size() > 2);
  CHECK(static_cast<unsigned char>(bytes[0]) == 0x1f);  // gzip magic
  CHECK(static_cast<unsigned char>(bytes[1]) == 0x8b);
  // Parse it back through the gzip tool when this machine has one (the tests do not link zlib).
  if (std::system("gzip --version >/dev/null 2>&1") == 0) {
    std::string cmd = "gzip -dc '" + path + "'";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string text;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
    ::pclose(p);
    auto doc = nlohmann::json::parse(text);
    CHECK(doc["traceEvents"].size() > 8);
  }
  std::filesystem::remove(path);
}

TEST_CASE("profiler output: collapsed stacks") {
  auto events = sample_events();
  const std::string path = temp_path("stacks.txt");
  tp::write_stacks(events, path, "self_cpu_time_total");
  CHECK(lines_of(read_all(path)) == std::vector<std::string>{
                                        "thread 1;outer 5000",
                                        "thread 1;outer;tl::add 4400",
                                        "thread 1;outer;tl::add;cudaLaunchKernel 100",
                                        "thread 1;outer;tl::add;tl::empty 500",
                                        "thread 1;tl::mul 500",
                                        "thread 2;tl::add 1000",
                                    });
  tp::write_stacks(events, path, "self_cuda_time_total");
  CHECK(lines_of(read_all(path)) ==
        std::vector<std::string>{"thread 1;outer;tl::add;add_kernel 300"});
  // One thread: no thread frame; ';' in a name does not split it.
  Builder b;
  int64_t outer = b.scope("a;b", EventKind::UserScope, 0, 0, 0, 3 * kMs);
  b.scope("tl::add", EventKind::Op, outer, 1, 0, 1 * kMs);
  b.scope("tl::add", EventKind::Op, outer, 1, 2 * kMs, 2500 * kUs);
  tp::write_stacks(b.events, path, "self_cpu_time_total");
  CHECK(lines_of(read_all(path)) == std::vector<std::string>{"a,b 1500", "a,b;tl::add 1500"});
  std::filesystem::remove(path);
  CHECK_THROWS_AS(tp::write_stacks(events, path, "cpu_time_total"), tensorlet::Error);
}

TEST_CASE("profiler output: stacks of one thread have no thread frame whatever comes first") {
  // The first event is a kernel of unknown origin (thread 0, as the GPU merge leaves it); the
  // host work all ran on thread 1, with a memory record on another thread.
  Builder b;
  Event k;
  k.name = "orphan_kernel";
  k.kind = EventKind::Kernel;
  k.start_ns = 0;
  k.end_ns = 200 * kUs;
  k.device_index = 0;
  b.push(std::move(k));
  int64_t op = b.scope("tl::add", EventKind::Op, 0, 0, 1 * kMs, 2 * kMs);
  b.scope("cudaLaunchKernel", EventKind::Runtime, op, 1, 1100 * kUs, 1200 * kUs);
  Event k2;
  k2.name = "add_kernel";
  k2.kind = EventKind::Kernel;
  k2.parent = op;
  k2.start_ns = 1300 * kUs;
  k2.end_ns = 1400 * kUs;
  k2.device_index = 0;
  b.push(std::move(k2));
  b.memory(op, 1500 * kUs, 64, "cpu", /*thread=*/3);
  const std::string path = temp_path("one_thread_stacks.txt");
  tp::write_stacks(b.events, path, "self_cpu_time_total");
  CHECK(lines_of(read_all(path)) ==
        std::vector<std::string>{"tl::add 900", "tl::add;cudaLaunchKernel 100"});
  tp::write_stacks(b.events, path, "self_cuda_time_total");
  CHECK(lines_of(read_all(path)) ==
        std::vector<std::string>{"orphan_kernel 200", "tl::add;add_kernel 100"});
  std::filesystem::remove(path);
}

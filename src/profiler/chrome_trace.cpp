// write_chrome_trace: the events as Chrome trace-event JSON (Perfetto, chrome://tracing): host
// scopes per thread, GPU work per device and stream, memory, and launch -> kernel flow arrows.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#if defined(TL_WITH_ZLIB)
#include <zlib.h>
#endif

#include "tensorlet/profiler/export.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::profiler {

namespace {

using json = nlohmann::json;
constexpr const char* kWhere = "[tl::profiler::export_chrome_trace] ";
// GPU tracks get process ids of their own, above any Linux pid (pid_max <= 2^22), so they never
// merge with the host process's track.
constexpr int64_t kGpuPidBase = 1'000'000'000;

double to_us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

const char* category(EventKind kind) {
  switch (kind) {
    case EventKind::Op:
      return "cpu_op";
    case EventKind::UserScope:
      return "user_annotation";
    case EventKind::Kernel:
      return "kernel";
    case EventKind::Memcpy:
      return "gpu_memcpy";
    case EventKind::Memset:
      return "gpu_memset";
    case EventKind::Runtime:
      return "cuda_runtime";
    case EventKind::Memory:
      return "cpu_instant_event";
  }
  return "other";
}

json metadata(const char* what, int64_t pid, int64_t tid, json args) {
  json m = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", std::move(args)}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_file(const std::string& path, const std::string& text) {
  if (ends_with(path, ".gz")) {
#if defined(TL_WITH_ZLIB)
    gzFile f = gzopen(path.c_str(), "wb");
    if (f == nullptr) throw Error(std::string(kWhere) + "cannot open " + path + " for writing");
    // gzwrite takes an unsigned length: write in chunks so any size fits.
    const char* at = text.data();
    size_t left = text.size();
    bool ok = true;
    while (ok && left > 0) {
      unsigned chunk = left > (1u << 30) ? (1u << 30) : static_cast<unsigned>(left);
      ok = gzwrite(f, at, chunk) == static_cast<int>(chunk);
      at += chunk;
      left -= chunk;
    }
    ok = (gzclose(f) == Z_OK) && ok;
    if (!ok) throw Error(std::string(kWhere) + "writing " + path + " failed");
    return;
#else
    throw Error(std::string(kWhere) + "cannot write " + path +
                ": this build has no zlib for .gz output (install zlib1g-dev and reconfigure, or "
                "use a path without .gz)");
#endif
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(std::string(kWhere) + "cannot open " + path + " for writing");
  f << text;
  f.close();
  if (!f) throw Error(std::string(kWhere) + "writing " + path + " failed");
}

}  // namespace

bool chrome_trace_gzip_supported() {
#if defined(TL_WITH_ZLIB)
  return true;
#else
  return false;
#endif
}

void write_chrome_trace(const std::vector<Event>& events, const std::string& path) {
  const int64_t cpu_pid = static_cast<int64_t>(::getpid());
  json trace = json::array();

  // Small, stable track ids for GPU streams (handles can be pointers), per device in order of
  // first appearance; the thread_name keeps the real handle.
  std::map<std::pair<int, uint64_t>, int64_t> stream_tid;
  std::map<int, int64_t> streams_per_device;
  auto gpu_track = [&](const Event& e) {
    // An unknown device (-1) shares device 0's process track, so it must share its stream
    // numbering too, or two streams would get the same tid there.
    const int device = std::max(0, e.device_index);
    auto key = std::make_pair(device, e.stream);
    auto it = stream_tid.find(key);
    if (it == stream_tid.end()) {
      it = stream_tid.emplace(key, streams_per_device[device]++).first;
    }
    return std::make_pair(kGpuPidBase + device, it->second);
  };

  std::unordered_map<int64_t, const Event*> by_id;
  std::unordered_map<uint64_t, const Event*> runtime_by_correlation;
  std::map<uint32_t, bool> threads;
  for (const Event& e : events) {
    by_id.emplace(e.id, &e);
    if (e.kind == EventKind::Runtime && e.correlation != 0) {
      runtime_by_correlation.emplace(e.correlation, &e);
    }
    if (!e.is_gpu()) threads[e.thread] = true;
  }

  std::map<std::string, int64_t> allocated;  // running total per memory device, for counters
  for (const Event& e : events) {
    if (e.kind == EventKind::Memory) {
      const std::string device = e.device.empty() ? "cpu" : e.device;
      int64_t& total = allocated[device];
      total += e.bytes;
      trace.push_back({{"ph", "i"},
                       {"s", "t"},
                       {"cat", category(e.kind)},
                       {"name", "[memory]"},
                       {"pid", cpu_pid},
                       {"tid", e.thread},
                       {"ts", to_us(e.start_ns)},
                       {"args",
                        {{"Device", device},
                         {"Bytes", e.bytes},
                         {"Total Allocated", total},
                         {"Parent id", e.parent}}}});
      trace.push_back({{"ph", "C"},
                       {"name", "Memory (" + device + ")"},
                       {"pid", cpu_pid},
                       {"ts", to_us(e.start_ns)},
                       {"args", {{"Allocated", total}}}});
      continue;
    }

    json x = {{"ph", "X"},
              {"cat", category(e.kind)},
              {"name", e.name},
              {"ts", to_us(e.start_ns)},
              {"dur", to_us(e.duration_ns())}};
    json args = {{"External id", e.id}};
    if (e.is_gpu()) {
      auto [pid, tid] = gpu_track(e);
      x["pid"] = pid;
      x["tid"] = tid;
      args["device"] = e.device_index;
      args["stream"] = e.stream;
      args["correlation"] = e.correlation;
      args["Launched by"] = e.parent;
    } else {
      x["pid"] = cpu_pid;
      x["tid"] = e.thread;
      if (e.correlation != 0) args["correlation"] = e.correlation;
    }
    if (!e.input_shapes.empty()) args["Input Dims"] = e.input_shapes;
    if (!e.stack.empty()) args["Stack"] = e.stack;
    if (!e.source.empty()) args["Source"] = e.source;
    if (e.flops > 0) args["Flops"] = e.flops;
    if (e.sequence_nr >= 0) args["Sequence number"] = e.sequence_nr;
    x["args"] = std::move(args);
    trace.push_back(std::move(x));
    // Autograd: an arrow from the forward op that made a node to the backward scope that ran it
    // (PyTorch's "fwdbwd" flow).
    if (e.sequence_nr >= 0) {
      json flow = {{"cat", "fwdbwd"}, {"name", "fwdbwd"}, {"id", e.sequence_nr},
                   {"pid", cpu_pid},  {"tid", e.thread},  {"ts", to_us(e.start_ns)}};
      if (e.backward) {
        flow["ph"] = "f";
        flow["bp"] = "e";
      } else {
        flow["ph"] = "s";
      }
      trace.push_back(std::move(flow));
    }

    if (e.is_gpu()) {
      // The arrow starts at the runtime call of the same correlation when there is one (as
      // Kineto draws it), else at the op that launched the work.
      const Event* from = nullptr;
      if (e.correlation != 0) {
        auto it = runtime_by_correlation.find(e.correlation);
        if (it != runtime_by_correlation.end()) from = it->second;
      }
      if (from == nullptr && e.parent != 0) {
        auto it = by_id.find(e.parent);
        if (it != by_id.end()) from = it->second;
      }
      if (from != nullptr) {
        auto [pid, tid] = gpu_track(e);
        trace.push_back({{"ph", "s"},
                         {"cat", "ac2g"},
                         {"name", "ac2g"},
                         {"id", e.id},
                         {"pid", cpu_pid},
                         {"tid", from->thread},
                         {"ts", to_us(from->start_ns)}});
        trace.push_back({{"ph", "f"},
                         {"bp", "e"},
                         {"cat", "ac2g"},
                         {"name", "ac2g"},
                         {"id", e.id},
                         {"pid", pid},
                         {"tid", tid},
                         {"ts", to_us(e.start_ns)}});
      }
    }
  }

  // Track names, and the host first, then GPUs in device order.
  trace.push_back(metadata("process_name", cpu_pid, -1,
                           {{"name", "CPU (pid " + std::to_string(cpu_pid) + ")"}}));
  trace.push_back(metadata("process_sort_index", cpu_pid, -1, {{"sort_index", 0}}));
  for (const auto& [thread, unused] : threads) {
    (void)unused;
    trace.push_back(
        metadata("thread_name", cpu_pid, thread, {{"name", "thread " + std::to_string(thread)}}));
  }
  for (const auto& [device, count] : streams_per_device) {
    (void)count;
    const int64_t pid = kGpuPidBase + device;
    trace.push_back(metadata("process_name", pid, -1, {{"name", "GPU " + std::to_string(device)}}));
    trace.push_back(metadata("process_sort_index", pid, -1, {{"sort_index", 1 + device}}));
  }
  for (const auto& [key, tid] : stream_tid) {
    char handle[32];
    std::snprintf(handle, sizeof handle, key.second > 0xffff ? "0x%llx" : "%llu",
                  static_cast<unsigned long long>(key.second));
    trace.push_back(metadata("thread_name", kGpuPidBase + key.first, tid,
                             {{"name", std::string("stream ") + handle}}));
  }

  json doc = {{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ms"}};
  // Names come from user code (RecordFunction labels, demangled kernels) and need not be UTF-8:
  // write U+FFFD for bad bytes rather than let dump() throw json::type_error mid-export.
  write_file(path, doc.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace tensorlet::profiler

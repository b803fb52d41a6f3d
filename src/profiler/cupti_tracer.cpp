// CUPTI activity tracing: buffers CUPTI fills asynchronously, enabling and flushing around a
// recording, and turning the records into profiler Events on the profile clock.
#include "tensorlet/profiler/cupti_tracer.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "tensorlet/backends/cuda/cuda.h"

namespace tensorlet::profiler::detail::cupti {

namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kAlign = 8;  // CUPTI requires 8-byte aligned activity buffers

const CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    // Libraries such as cuBLAS launch through the driver API (cuLaunchKernelEx): without driver
    // records their kernels' correlation ids match no call made inside a scope.
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

// CUPTI is process-wide: one recording uses it at a time. Completed buffers wait here until stop
// parses them (parsing in the callback would race with a concurrent stop's reads).
struct State {
  std::mutex mutex;
  bool active = false;
  bool callbacks_registered = false;
  bool steady_timestamps = false;  // CUPTI stamps records with steady_clock (our clock)
  std::vector<uint8_t*> free_buffers;
  std::vector<std::pair<uint8_t*, size_t>> completed;
  uint64_t dropped = 0;
  int64_t offset_ns = 0;  // profile time = CUPTI time + offset_ns
};

State& state() {
  static State* s = new State;  // never destroyed: CUPTI may call back during process exit
  return *s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  State& s = state();
  uint8_t* b = nullptr;
  {
    std::lock_guard guard(s.mutex);
    if (!s.free_buffers.empty()) {
      b = s.free_buffers.back();
      s.free_buffers.pop_back();
    }
  }
  if (b == nullptr) b = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *buffer = b;
  *size = b == nullptr ? 0 : kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  State& s = state();
  std::lock_guard guard(s.mutex);
  s.dropped += dropped;
  if (valid > 0)
    s.completed.emplace_back(buffer, valid);
  else
    s.free_buffers.push_back(buffer);
}

uint64_t CUPTIAPI steady_timestamp() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

std::string result_string(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) return "CUPTI error";
  return text;
}

void disable_all() {
  for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
}

std::string demangle(const char* name) {
  if (name == nullptr) return "[unknown kernel]";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", as PyTorch's tables name runtime calls.
std::string api_name_uncached(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr)
    return (domain == CUPTI_CB_DOMAIN_DRIVER_API ? "cuDriver_" : "cudaRuntime_") +
           std::to_string(cbid);
  std::string s(name);
  const size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789", v + 2) == std::string::npos)
    s.resize(v);
  return s;
}

// Names by (domain, callback id): a profile makes the same few calls thousands of times. Only
// stop() reads records, and one recording uses CUPTI at a time, so the caches need no lock.
const std::string& api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  static std::unordered_map<uint64_t, std::string> cache;
  const uint64_t key = (uint64_t{domain} << 32) | cbid;
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, api_name_uncached(domain, cbid)).first;
  return it->second;
}

// Driver calls kept: the kernel launches (Kineto keeps the same). The others are the runtime's
// business or a library's internals, and would drown the table.
bool is_driver_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

const char* memcpy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "Memcpy PtoP";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "Memcpy HtoH";
    default:
      return "Memcpy";
  }
}

// Fills a device record's Event where it will stay (constructed in place: an Event is large, and a
// profile holds tens of thousands).
template <class Record>
Event& device_event(const Record& r, EventKind kind, const std::string& name, int64_t offset,
                    std::vector<Event>& out) {
  Event& e = out.emplace_back();
  e.name = name;
  e.kind = kind;
  e.start_ns = static_cast<int64_t>(r.start) + offset;
  e.end_ns = static_cast<int64_t>(r.end) + offset;
  e.device_index = static_cast<int>(r.deviceId);
  e.stream = r.streamId;
  e.correlation = r.correlationId;
  return e;
}

// Demangled kernel names by CUPTI's name pointer (stable per kernel): a profile of 20 000 launches
// of one kernel demangles it once, not 20 000 times. Unlocked for the reason api_name is.
const std::string& demangled(const char* name) {
  static std::unordered_map<const char*, std::string> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, demangle(name)).first;
  return it->second;
}

// Sizes the outputs for a buffer's records first: growing vectors of Events record by record
// moved each several times, into fresh memory, and cost more than the parsing itself.
void reserve_for(uint8_t* buffer, size_t valid, Collected& out) {
  size_t device = 0, runtime = 0, external = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_MEMCPY:
      case CUPTI_ACTIVITY_KIND_MEMSET:
        ++device;
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        ++runtime;
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        ++external;
        break;
      default:
        break;
    }
  }
  out.device.reserve(out.device.size() + device);
  out.runtime.reserve(out.runtime.size() + runtime);
  out.external.reserve(out.external.size() + external);
}

void parse(uint8_t* buffer, size_t valid, int64_t offset, Collected& out) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        device_event(k, EventKind::Kernel, demangled(k.name), offset, out.device);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        device_event(m, EventKind::Memcpy, memcpy_name(m.copyKind), offset, out.device).bytes =
            static_cast<int64_t>(m.bytes);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        static const std::string kMemset = "Memset";
        device_event(m, EventKind::Memset, kMemset, offset, out.device).bytes =
            static_cast<int64_t>(m.bytes);
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
        const bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
        if (driver && !is_driver_launch(a.cbid)) break;
        Event& e = out.runtime.emplace_back();
        e.name =
            api_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, a.cbid);
        e.kind = EventKind::Runtime;
        e.start_ns = static_cast<int64_t>(a.start) + offset;
        e.end_ns = static_cast<int64_t>(a.end) + offset;
        e.correlation = a.correlationId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& x = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (x.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
          out.external.emplace_back(x.correlationId, x.externalId);
        break;
      }
      default:
        break;
    }
  }
}

// CUPTI sets itself up on the first kernel launch after its kinds are enabled (0.5 ms on an H100,
// 5 ms the first time in a process): an empty kernel on each device's current stream takes that
// here, under an external id that the merge drops, instead of in the first profiled op.
void warm_up() {
  if (cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                             kWarmupExternalId) != CUPTI_SUCCESS)
    return;
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess) {
    const int devices = tensorlet::cuda::device_count();
    for (int d = 0; d < devices; ++d) {
      if (cudaSetDevice(d) != cudaSuccess) continue;
      try {
        launch_warmup_kernel(tensorlet::cuda::Stream::current(d).handle());
      } catch (...) {
        // No stream for this device: it only keeps its set-up cost.
      }
    }
    cudaSetDevice(current);
  }
  (void)cudaGetLastError();
  uint64_t id = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

}  // namespace

std::string start(int64_t origin_ns) {
  State& s = state();
  {
    std::lock_guard guard(s.mutex);
    if (s.active) return "CUPTI is in use by another Profile";
    s.active = true;
    s.dropped = 0;
  }
  auto fail = [&](const std::string& what, CUptiResult r) {
    disable_all();
    std::lock_guard guard(s.mutex);
    s.active = false;
    return what + ": " + result_string(r);
  };
  if (!s.callbacks_registered) {
    const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) return fail("cuptiActivityRegisterCallbacks", r);
    s.callbacks_registered = true;
    // CUPTI stamps with CLOCK_REALTIME by default, which a clock step (NTP) moves mid-recording;
    // given steady_clock, every record lands on the profile clock exactly. Registered before any
    // kind is enabled, as CUPTI asks; an older CUPTI without it keeps the offset taken below.
    s.steady_timestamps = cuptiActivityRegisterTimestampCallback(steady_timestamp) == CUPTI_SUCCESS;
  }
  for (CUpti_ActivityKind k : kKinds) {
    const CUptiResult r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS) return fail("cuptiActivityEnable", r);
  }
  warm_up();
  if (s.steady_timestamps) {
    s.offset_ns = -origin_ns;
    return "";
  }
  // Both clocks read back to back: CUPTI's timestamps map onto the profile clock by this offset.
  uint64_t cupti_now = 0;
  const CUptiResult r = cuptiGetTimestamp(&cupti_now);
  if (r != CUPTI_SUCCESS) return fail("cuptiGetTimestamp", r);
  const int64_t steady_now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
  s.offset_ns = (steady_now - origin_ns) - static_cast<int64_t>(cupti_now);
  return "";
}

bool push_scope(uint64_t external_id) {
  return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                external_id) == CUPTI_SUCCESS;
}

void pop_scope() {
  uint64_t id = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

namespace {
int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Collected stop() {
  const int64_t t0 = steady_ns();
  // Work still queued would be missing from the flush: wait once for every device, here only.
  const int devices = tensorlet::cuda::device_count();
  if (devices > 0) {
    int current = 0;
    cudaGetDevice(&current);
    for (int d = 0; d < devices; ++d) {
      if (cudaSetDevice(d) == cudaSuccess) cudaDeviceSynchronize();
    }
    cudaSetDevice(current);
    (void)cudaGetLastError();
  }
  const int64_t t1 = steady_ns();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_all();
  const int64_t t2 = steady_ns();
  State& s = state();
  std::vector<std::pair<uint8_t*, size_t>> completed;
  Collected out;
  int64_t offset = 0;
  {
    std::lock_guard guard(s.mutex);
    completed.swap(s.completed);
    out.dropped = s.dropped;
    offset = s.offset_ns;
  }
  for (auto& [buffer, valid] : completed) reserve_for(buffer, valid, out);
  for (auto& [buffer, valid] : completed) parse(buffer, valid, offset, out);
  out.sync_ns = t1 - t0;
  out.flush_ns = t2 - t1;
  out.parse_ns = steady_ns() - t2;
  std::lock_guard guard(s.mutex);
  for (auto& c : completed) s.free_buffers.push_back(c.first);
  s.active = false;
  return out;
}

}  // namespace tensorlet::profiler::detail::cupti

// Streams and events: the library's default stream and stream pools per device, the calling
// thread's current stream per device, StreamGuard, and tl::cuda::Event.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "tensorlet/backends/cuda/cuda_device_error.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_event_pool.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

constexpr int kPoolSize = 8;        // streams per device and priority level
constexpr int kPriorityLevels = 2;  // 0: normal, 1: high

// The library's streams of one device. Created lazily and never destroyed: work may still be
// enqueued from static destructors, and destroying streams after the runtime unloaded fails.
struct DeviceStreams {
  std::once_flag default_once;
  cudaStream_t default_stream = nullptr;
  std::mutex pool_mutex;
  std::array<std::array<cudaStream_t, kPoolSize>, kPriorityLevels> pool{};
  std::array<unsigned, kPriorityLevels> next{};
};

DeviceStreams& streams_of(int device) {
  // Indexes are validated by the callers (resolve_device).
  static DeviceStreams* all = new DeviceStreams[std::max(device_count(), 1)];
  return all[device];
}

cudaStream_t default_stream_handle(int device) {
  DeviceStreams& ds = streams_of(device);
  std::call_once(ds.default_once, [&] {
    OnDevice on_device(device);
    cudaStream_t s = nullptr;
    // Non-blocking: the library's work does not serialize with the legacy default stream.
    TL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ds.default_stream = s;
  });
  return ds.default_stream;
}

// The calling thread's current stream per device. Entries hold the resolved handle (the default
// stream once looked up), so the hot path is one thread-local read. `set` tells an unset entry
// from a wrapped null (legacy default) stream. Trivially constructed and destroyed, so reaching it
// needs no thread-local init guard; devices past kInlineDevices live in a vector.
struct CurrentStream {
  cudaStream_t handle;
  bool set;
};
constexpr int kInlineDevices = 16;
thread_local CurrentStream t_current[kInlineDevices] = {};

CurrentStream& current_entry(int device) {
  if (device < kInlineDevices) return t_current[device];
  thread_local std::vector<CurrentStream> more;
  const size_t i = static_cast<size_t>(device - kInlineDevices);
  if (more.size() <= i) more.resize(static_cast<size_t>(device_count()), CurrentStream{});
  return more[i];
}

[[gnu::noinline]] cudaStream_t current_stream_slow(int device) {
  const int d = resolve_device(device, current_op_name());
  CurrentStream& entry = current_entry(d);
  if (!entry.set) entry = CurrentStream{default_stream_handle(d), true};
  return entry.handle;
}

void set_current_stream(int device, cudaStream_t handle) {
  current_entry(device) = CurrentStream{handle, true};
}

}  // namespace

cudaStream_t current_stream_handle(int device) {
  if (device >= 0 && device < kInlineDevices) {
    const CurrentStream& entry = t_current[device];
    if (entry.set) return entry.handle;
  }
  return current_stream_slow(device);
}

// ---- Stream ----

Stream Stream::current(int device) {
  const int d = resolve_device(device, "tl::cuda::Stream::current");
  return Stream(current_stream_handle(d), d);
}

Stream Stream::default_stream(int device) {
  const int d = resolve_device(device, "tl::cuda::Stream::default_stream");
  return Stream(default_stream_handle(d), d);
}

Stream Stream::create(int device, int priority) {
  constexpr const char* op = "tl::cuda::Stream::create";
  const int d = resolve_device(device, op);
  const int level = priority < 0 ? 1 : 0;
  DeviceStreams& ds = streams_of(d);
  std::lock_guard<std::mutex> lock(ds.pool_mutex);
  const unsigned slot = ds.next[level] % kPoolSize;
  cudaStream_t& s = ds.pool[level][slot];
  if (s == nullptr) {
    OnDevice on_device(d);
    int least = 0, greatest = 0;
    TL_CUDA_CHECK_OP(op, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    TL_CUDA_CHECK_OP(
        op, cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, level == 1 ? greatest : least));
  }
  ++ds.next[level];  // only once the slot holds a stream, so a failure does not skip one
  return Stream(s, d);
}

Stream Stream::wrap(CUstream_st* handle, int device) {
  return Stream(handle, resolve_device(device, "tl::cuda::Stream::wrap"));
}

void Stream::synchronize() const {
  // The device matters for a wrapped null (legacy default) stream.
  check_not_capturing("waits for the GPU", "tl::cuda::Stream::synchronize");
  OnDevice on_device(device_);
  TL_CUDA_CHECK_OP("tl::cuda::Stream::synchronize", cudaStreamSynchronize(handle_));
  raise_device_errors(device_);
}

bool Stream::query() const {
  check_not_capturing("asks whether the GPU is done", "tl::cuda::Stream::query");
  OnDevice on_device(device_);
  const cudaError_t err = cudaStreamQuery(handle_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  TL_CUDA_CHECK_OP("tl::cuda::Stream::query", err);
  return true;
}

// ---- StreamGuard ----

StreamGuard::StreamGuard(const Stream& stream)
    : previous_stream_(Stream::current(stream.device())), previous_device_(current_device()) {
  if (previous_device_ != stream.device())
    TL_CUDA_CHECK_OP("tl::cuda::StreamGuard", cudaSetDevice(stream.device()));
  set_current_stream(stream.device(), stream.handle());
}

StreamGuard::~StreamGuard() {
  set_current_stream(previous_stream_.device(), previous_stream_.handle());
  // Unconditional, so a set_device inside the scope is undone too.
  if (cudaSetDevice(previous_device_) != cudaSuccess) (void)cudaGetLastError();
}

// ---- Event ----

Event::Event(bool enable_timing) : enable_timing_(enable_timing) {}

Event::~Event() {
  // Also runs for static events after the runtime unloaded: errors are ignored then.
  if (event_ != nullptr && cudaEventDestroy(event_) != cudaSuccess) (void)cudaGetLastError();
}

Event::Event(Event&& other) noexcept
    : event_(other.event_), device_(other.device_), enable_timing_(other.enable_timing_) {
  other.event_ = nullptr;
  other.device_ = -1;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this == &other) return *this;
  if (event_ != nullptr && cudaEventDestroy(event_) != cudaSuccess) (void)cudaGetLastError();
  event_ = other.event_;
  device_ = other.device_;
  enable_timing_ = other.enable_timing_;
  other.event_ = nullptr;
  other.device_ = -1;
  return *this;
}

void Event::record() { record(Stream::current()); }

void Event::record(const Stream& stream) {
  constexpr const char* op = "tl::cuda::Event::record";
  if (event_ != nullptr && device_ != stream.device())
    fail<DeviceError>(op, "the event belongs to cuda:", device_,
                      ", it cannot record a stream of cuda:", stream.device());
  OnDevice on_device(stream.device());
  if (event_ == nullptr) {
    cudaEvent_t e = nullptr;
    TL_CUDA_CHECK_OP(op, cudaEventCreateWithFlags(
                             &e, enable_timing_ ? cudaEventDefault : cudaEventDisableTiming));
    event_ = e;
    device_ = stream.device();
  }
  TL_CUDA_CHECK_OP(op, cudaEventRecord(event_, stream.handle()));
}

void Event::wait() { wait(Stream::current()); }

void Event::wait(const Stream& stream) {
  if (event_ == nullptr) return;  // nothing recorded: nothing to wait for
  OnDevice on_device(stream.device());
  TL_CUDA_CHECK_OP("tl::cuda::Event::wait", cudaStreamWaitEvent(stream.handle(), event_, 0));
}

void Event::synchronize() const {
  if (event_ == nullptr) return;
  check_not_capturing("waits for the GPU", "tl::cuda::Event::synchronize");
  TL_CUDA_CHECK_OP("tl::cuda::Event::synchronize", cudaEventSynchronize(event_));
  raise_device_errors(device_);
}

bool Event::query() const {
  if (event_ == nullptr) return true;
  const cudaError_t err = cudaEventQuery(event_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  TL_CUDA_CHECK_OP("tl::cuda::Event::query", err);
  return true;
}

float Event::elapsed_time(const Event& end) const {
  constexpr const char* op = "tl::cuda::Event::elapsed_time";
  if (!enable_timing_ || !end.enable_timing_)
    fail<Error>(op, "both events need enable_timing = true, got ",
                enable_timing_ ? "true" : "false", " (start) and ",
                end.enable_timing_ ? "true" : "false", " (end)");
  if (event_ == nullptr || end.event_ == nullptr)
    fail<Error>(op, "both events must be recorded first; ",
                event_ == nullptr ? "the start event" : "the end event", " was not");
  if (device_ != end.device_)
    fail<DeviceError>(op, "the events were recorded on different devices (cuda:", device_,
                      " and cuda:", end.device_, ")");
  float ms = 0.0f;
  const cudaError_t err = cudaEventElapsedTime(&ms, event_, end.event_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    fail<Error>(op, "the recorded work has not completed yet; call synchronize() on the end ",
                "event first");
  }
  TL_CUDA_CHECK_OP(op, err);
  return ms;
}

void order_with_external_stream(int device, std::intptr_t stream, bool exporting) {
  const char* op = current_op_name();
  // No GPU or no driver (a CUDA build on a machine without one): DeviceError, not a CUDA failure.
  const int d = resolve_device(device, op);
  OnDevice on_device(d);
  check_not_capturing(exporting ? "orders the tensor with another library's stream"
                                : "waits for another library's stream",
                      op);
  cudaStream_t outside = stream == 1   ? cudaStreamLegacy
                         : stream == 2 ? cudaStreamPerThread
                                       : reinterpret_cast<cudaStream_t>(stream);
  cudaStream_t ours = current_stream_handle(d);
  if (outside == ours) return;
  cudaStream_t from = exporting ? ours : outside;
  cudaStream_t to = exporting ? outside : ours;
  // The backend's pooled event: reusable as soon as the wait is enqueued (cuda_event_pool.h).
  ScopedEvent event(d);
  cudaError_t err = cudaEventRecord(event.get(), from);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(to, event.get(), 0);
  TL_CUDA_CHECK_OP(op, err);
}

}  // namespace tensorlet::cuda

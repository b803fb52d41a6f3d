// tl::cuda: devices, streams, events and memory statistics. Exists in every build: without the
// CUDA backend, a driver or a GPU the queries report no devices and the rest throws DeviceError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// The runtime's opaque handle types, so this header does not need cuda_runtime.h.
struct CUstream_st;
struct CUevent_st;

namespace tensorlet {
class Tensor;
}

namespace tensorlet::cuda {

// True when tensorlet was built with its CUDA backend.
bool is_built();
// True when the CUDA backend is built and at least one CUDA device can be used.
bool is_available();
// The number of usable CUDA devices; 0 without the backend, a driver or a GPU.
int device_count();

// The calling thread's current device (cudaGetDevice) and how to change it.
int current_device();
void set_device(int device);
// Waits for all work on `device` (-1: the current device), every stream.
void synchronize(int device = -1);

// True when copies from `peer`'s memory to `device` go directly between the GPUs (peer access,
// over NVLink or PCIe), false when they are staged through pinned host memory: a device is not
// its own peer, and TL_CUDA_NO_PEER=1 (read once) forces staging for every pair. Throws
// DeviceError for an index that names no device.
bool can_access_peer(int device, int peer);

// A device's fixed properties, under torch.cuda.get_device_properties' names.
struct DeviceProperties {
  std::string name;               // "NVIDIA H100 80GB HBM3"
  int64_t total_memory = 0;       // bytes of device memory
  int multi_processor_count = 0;  // SMs
  int major = 0, minor = 0;       // compute capability (9.0 for H100)
};
// Properties of `device` (-1: the current device). Throws DeviceError for an index that names no
// device, and without a usable device.
DeviceProperties get_device_properties(int device = -1);

// Free and total memory of a device in bytes as the driver sees it (every process's use and the
// allocator's cache count as used), as torch.cuda.mem_get_info: `auto [free, total] = ...`.
struct MemInfo {
  int64_t free = 0;
  int64_t total = 0;
};
// `device` -1: the current device. Throws DeviceError as get_device_properties does.
MemInfo mem_get_info(int device = -1);

// Makes `device` current for a scope and restores the previous device after it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// A CUDA stream of one device. Streams are light values: the library owns them (a fixed pool per
// device and priority, created on first use, as in PyTorch), so copies are cheap and never dangle.
class Stream {
 public:
  // The stream a new op on `device` (-1: current device) is enqueued on by the calling thread.
  // By default the library's own non-blocking stream of that device.
  static Stream current(int device = -1);
  // The library's default stream of a device (what current() gives unless a StreamGuard is open).
  static Stream default_stream(int device = -1);
  // A stream from the device's pool; priority 0 is normal, negative is higher (as in CUDA).
  static Stream create(int device = -1, int priority = 0);
  // Wraps a stream created elsewhere (for example by another library); not owned.
  static Stream wrap(CUstream_st* handle, int device);

  int device() const { return device_; }
  CUstream_st* handle() const { return handle_; }
  // Blocks the host until all work enqueued on this stream has run.
  void synchronize() const;
  // True when all work enqueued on this stream has run.
  bool query() const;

  bool operator==(const Stream& other) const {
    return handle_ == other.handle_ && device_ == other.device_;
  }
  bool operator!=(const Stream& other) const { return !(*this == other); }

 private:
  Stream(CUstream_st* handle, int device) : handle_(handle), device_(device) {}
  CUstream_st* handle_ = nullptr;
  int device_ = 0;
};

// Makes `stream` the calling thread's current stream of its device (and its device the current
// device) for a scope; restores both after it.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_stream_;
  int previous_device_;
};

// A CUDA event. Created on its first record(), on the recording stream's device.
class Event {
 public:
  explicit Event(bool enable_timing = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Records the work enqueued so far on `stream` (default: the current stream).
  void record();
  void record(const Stream& stream);
  // Makes `stream` (default: the current stream) wait for this event without blocking the host.
  void wait();
  void wait(const Stream& stream);
  // Blocks the host until the recorded work has run.
  void synchronize() const;
  // True when the recorded work has run (or nothing was recorded).
  bool query() const;
  // Milliseconds from this event to `end`; both recorded with enable_timing and completed.
  float elapsed_time(const Event& end) const;
  CUevent_st* handle() const { return event_; }

 private:
  CUevent_st* event_ = nullptr;
  int device_ = -1;
  bool enable_timing_;
};

// Device memory figures of the caching allocator, in bytes.
struct MemoryStats {
  int64_t allocated = 0;            // held by live tensors now
  int64_t reserved = 0;             // obtained from cudaMalloc, live or cached
  int64_t peak_allocated = 0;       // the largest `allocated` seen since start or reset_peak_stats
  int64_t num_device_allocs = 0;    // cudaMalloc calls made
  int64_t num_device_frees = 0;     // cudaFree calls made
  int64_t num_alloc_retries = 0;    // cudaMalloc failures recovered by freeing the cache
  int64_t graph_pools = 0;          // memory pools that CUDA graphs hold (graph.h)
  int64_t graph_pool_reserved = 0;  // bytes of `reserved` in those pools
};
MemoryStats memory_stats(int device = -1);
void reset_peak_stats(int device = -1);
// Returns cached, unused device blocks of every device to CUDA.
void empty_cache();
// Marks `t`'s memory as used by work on `stream` (other than the one it was allocated on), so the
// allocator does not hand it out again before that work has run, even after `t` is freed.
void record_stream(const Tensor& t, const Stream& stream);

// TF32 tensor cores for float32 matmul (off by default, as in PyTorch). Another view of
// tl::set_float32_matmul_precision (ops/linalg.h), as torch.backends.cuda.matmul.allow_tf32 is:
// set_allow_tf32(true) sets "high", false sets "highest"; allow_tf32() is precision != "highest".
// Works in every build (without CUDA the setting is kept and has no effect).
void set_allow_tf32(bool allow);
bool allow_tf32();

// Whether convolutions run on cuDNN (torch.backends.cudnn.is_available()): the library was built
// with it (meson's cudnn option) and a CUDA device is there; its version (90100 for 9.1.0) or 0.
// float32 convolutions use TF32 only where allow_tf32() says so: one setting for matmul and
// convolution, where torch has two (and allows TF32 in cuDNN by default).
bool cudnn_is_available();
int cudnn_version();

}  // namespace tensorlet::cuda

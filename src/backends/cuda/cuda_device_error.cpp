// Kernels' reports of bad data (cuda_device_error.h): one page-locked slot per device, a ring of
// the launches that may report (their op and message parts), and the check at every host wait.
#include "tensorlet/backends/cuda/cuda_device_error.h"

#include <array>
#include <atomic>
#include <mutex>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

// The launches a report can name. A graph replayed long after its capture may name a launch whose
// entry was reused: the error then keeps its kind and value but not the op.
constexpr uint32_t kRegistrySize = 4096;
constexpr int kMaxDevices = 64;

struct Launch {
  uint32_t ticket = 0;
  DeviceErrorKind kind = DeviceErrorKind::ZeroDivision;
  const char* op = nullptr;
  int64_t dim = 0;
  int64_t size = 0;
};

struct DeviceErrors {
  uint32_t* once = nullptr;             // device memory
  DeviceErrorReport* report = nullptr;  // mapped page-locked host memory, as the host sees it
  DeviceErrorReport* device_report = nullptr;  // the same, as kernels see it
  std::mutex mutex;                            // guards next_ticket and registry
  uint32_t next_ticket = 1;
  std::array<Launch, kRegistrySize> registry;
};

std::array<std::atomic<DeviceErrors*>, kMaxDevices> g_devices{};
std::mutex g_init_mutex;

DeviceErrors& errors_of(int device) {
  if (device < 0 || device >= kMaxDevices)
    fail<DeviceError>(current_op_name(), "cuda:", device, " is past the ", kMaxDevices,
                      " devices tensorlet supports");
  DeviceErrors* e = g_devices[device].load(std::memory_order_acquire);
  if (e) return *e;
  std::lock_guard<std::mutex> lock(g_init_mutex);
  e = g_devices[device].load(std::memory_order_relaxed);
  if (e) return *e;
  OnDevice on_device(device);
  auto* fresh = new DeviceErrors;  // lives as long as the process: kernels may hold its pointers
  void* host = nullptr;
  TL_CUDA_CHECK(
      cudaHostAlloc(&host, sizeof(DeviceErrorReport), cudaHostAllocMapped | cudaHostAllocPortable));
  fresh->report = static_cast<DeviceErrorReport*>(host);
  *fresh->report = DeviceErrorReport{};
  TL_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&fresh->device_report), host, 0));
  void* once = nullptr;
  TL_CUDA_CHECK(cudaMalloc(&once, sizeof(uint32_t)));
  TL_CUDA_CHECK(cudaMemset(once, 0, sizeof(uint32_t)));
  TL_CUDA_CHECK(cudaDeviceSynchronize());
  fresh->once = static_cast<uint32_t*>(once);
  g_devices[device].store(fresh, std::memory_order_release);
  return *fresh;
}

}  // namespace

void prepare_device_errors(int device) { (void)errors_of(device); }

DeviceErrorSink device_error_sink(int device, const char* op, DeviceErrorKind kind, int64_t dim,
                                  int64_t size) {
  DeviceErrors& e = errors_of(device);
  std::lock_guard<std::mutex> lock(e.mutex);
  const uint32_t ticket = e.next_ticket;
  e.next_ticket = ticket == UINT32_MAX ? 1 : ticket + 1;  // 0 means "no report"
  e.registry[ticket % kRegistrySize] = Launch{ticket, kind, op, dim, size};
  return DeviceErrorSink{e.once, e.device_report, ticket, static_cast<uint32_t>(kind)};
}

void raise_device_errors(int device) {
  if (device < 0 || device >= kMaxDevices) return;
  DeviceErrors* e = g_devices[device].load(std::memory_order_acquire);
  if (!e) return;
  const uint32_t ticket = *static_cast<volatile uint32_t*>(&e->report->ticket);
  if (ticket == 0) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  const auto kind = static_cast<DeviceErrorKind>(e->report->kind);
  const int64_t value = e->report->value;
  Launch launch;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    const Launch& entry = e->registry[ticket % kRegistrySize];
    if (entry.ticket == ticket) launch = entry;
  }
  // Cleared before throwing, so the next error can be reported; `once` is reset in stream order
  // after everything the host waited for.
  e->report->ticket = 0;
  {
    OnDevice on_device(device);
    cudaStream_t s = current_stream_handle(device);
    TL_CUDA_CHECK(cudaMemsetAsync(e->once, 0, sizeof(uint32_t), s));
    TL_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  const char* op = launch.op ? launch.op : "tl::cuda";
  const char* where = " (found on cuda device by a kernel; raised at the next wait for the device)";
  if (kind == DeviceErrorKind::ClassTargetOutOfRange)
    fail<IndexError>(op, "Target ", value, " is out of bounds (", launch.size, " classes)", where);
  if (kind == DeviceErrorKind::IndexOutOfRange) {
    if (launch.op)
      fail<IndexError>(op, "index ", value, " is out of bounds for dimension ", launch.dim,
                       " with size ", launch.size, " (expected indices in [0, ", launch.size, "))",
                       where);
    fail<IndexError>(op, "index ", value, " is out of bounds in a kernel launched earlier", where);
  }
  fail<Error>(op, "ZeroDivisionError: integer division or modulo by zero", where);
}

}  // namespace tensorlet::cuda

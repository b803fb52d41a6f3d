// tl::cuda devices: count and availability, properties and free memory, the current device and
// its guards, device-wide synchronization and the TF32 switch (built with the CUDA backend).
#ifdef TL_WITH_CUDNN
#include <cudnn.h>
#endif
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>

#include "tensorlet/backends/cuda/cuda_device_error.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_dependent_launch.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/matmul_precision.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {

bool is_built() { return true; }

int device_count() {
  // Counted once, as the driver's device list does not change while a process runs. No driver or
  // no GPU is a normal answer here (0), so the error is consumed rather than reported.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

bool is_available() { return device_count() > 0; }

int resolve_device(int device, const char* op) {
  const int n = device_count();
  if (n == 0) fail<DeviceError>(op, "no CUDA device is available (no GPU or no driver)");
  if (device == -1) {
    int current = 0;
    check(cudaGetDevice(&current), op, "cudaGetDevice");
    return current;
  }
  if (device < 0 || device >= n)
    fail<DeviceError>(op, "cannot use cuda:", device, ": expected -1 (the current device) or ",
                      "an index in [0, ", n, "), this machine has ", n, " CUDA device",
                      n == 1 ? "" : "s");
  return device;
}

int current_device() { return resolve_device(-1, "tl::cuda::current_device"); }

void set_device(int device) {
  const int d = resolve_device(device, "tl::cuda::set_device");
  TL_CUDA_CHECK_OP("tl::cuda::set_device", cudaSetDevice(d));
}

void synchronize(int device) {
  const int d = resolve_device(device, "tl::cuda::synchronize");
  OnDevice on_device(d);
  check_not_capturing("waits for the GPU", "tl::cuda::synchronize");
  TL_CUDA_CHECK_OP("tl::cuda::synchronize", cudaDeviceSynchronize());
  raise_device_errors(d);
}

bool dependent_launch_supported(int device) {
  // Per device, looked up once; devices beyond the table go without.
  static constexpr int kMaxDevices = 64;
  static const auto supported = [] {
    std::array<bool, kMaxDevices> table{};
    if (std::getenv("TL_CUDA_NO_DEPENDENT_LAUNCH") != nullptr) return table;
    const int n = std::min(device_count(), kMaxDevices);
    for (int d = 0; d < n; ++d) {
      int major = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess)
        (void)cudaGetLastError();
      table[static_cast<size_t>(d)] = major >= 9;
    }
    return table;
  }();
  return device >= 0 && device < kMaxDevices && supported[static_cast<size_t>(device)];
}

int multiprocessor_count(int device) {
  constexpr int kCached = 64;
  static std::atomic<int> cache[kCached];
  if (device < kCached) {
    const int n = cache[device].load(std::memory_order_relaxed);
    if (n > 0) return n;
  }
  int n = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  if (device < kCached) cache[device].store(n, std::memory_order_relaxed);
  return n;
}

DeviceProperties get_device_properties(int device) {
  constexpr const char* op = "tl::cuda::get_device_properties";
  const int d = resolve_device(device, op);
  cudaDeviceProp prop{};
  TL_CUDA_CHECK_OP(op, cudaGetDeviceProperties(&prop, d));
  return {prop.name, static_cast<int64_t>(prop.totalGlobalMem), prop.multiProcessorCount,
          prop.major, prop.minor};
}

MemInfo mem_get_info(int device) {
  constexpr const char* op = "tl::cuda::mem_get_info";
  const int d = resolve_device(device, op);
  DeviceGuard on_device(d);  // cudaMemGetInfo answers for the current device
  size_t free = 0, total = 0;
  TL_CUDA_CHECK_OP(op, cudaMemGetInfo(&free, &total));
  return {static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

DeviceGuard::DeviceGuard(int device) {
  const int d = resolve_device(device, "tl::cuda::DeviceGuard");
  int current = 0;
  TL_CUDA_CHECK_OP("tl::cuda::DeviceGuard", cudaGetDevice(&current));
  if (current == d) return;
  TL_CUDA_CHECK_OP("tl::cuda::DeviceGuard", cudaSetDevice(d));
  previous_ = current;
}

DeviceGuard::~DeviceGuard() {
  // Destructors must not throw; a failure here (runtime shutting down) leaves the device as is.
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

// The hot path of every kernel call: one cudaGetDevice (a thread-local read in the runtime), and
// cudaSetDevice only when the device actually changes.
OnDevice::OnDevice(int device) {
  // With one device it is always the current one: skip the runtime call on every op.
  if (device == 0 && device_count() == 1) return;
  int current = 0;
  TL_CUDA_CHECK(cudaGetDevice(&current));
  if (current == device) return;
  TL_CUDA_CHECK(cudaSetDevice(device));
  previous_ = current;
}

OnDevice::~OnDevice() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

// Views of tl::set_float32_matmul_precision, as torch.backends.cuda.matmul.allow_tf32 is.
void set_allow_tf32(bool allow) {
  set_matmul_precision(allow ? MatmulPrecision::High : MatmulPrecision::Highest);
}
bool allow_tf32() { return matmul_precision() != MatmulPrecision::Highest; }

#ifdef TL_WITH_CUDNN
bool cudnn_is_available() { return is_available(); }
int cudnn_version() { return static_cast<int>(cudnnGetVersion()); }
#else
bool cudnn_is_available() { return false; }
int cudnn_version() { return 0; }
#endif

}  // namespace tensorlet::cuda

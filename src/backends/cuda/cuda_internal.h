// What the CUDA backend's files share: checked runtime calls that throw tl::CudaError naming the
// op, the current stream, launch checking (with TL_LAUNCH_BLOCKING), and the per-device allocator.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/tensor/allocator.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::cuda {

// The op the calling thread is inside ("tl::add"), for error messages; "tl::cuda" outside ops.
const char* current_op_name();

// Throws CudaError "[<op>] <what>: <cudaGetErrorName>: <cudaGetErrorString>" when err is not
// cudaSuccess, after clearing the runtime's last error (when it is not sticky).
void check(cudaError_t err, const char* what);
#define TL_CUDA_CHECK(call) ::tensorlet::cuda::check((call), #call)
// As check(), naming `op` rather than the current op: for tl::cuda API calls made outside ops.
void check(cudaError_t err, const char* op, const char* what);
#define TL_CUDA_CHECK_OP(op, call) ::tensorlet::cuda::check((call), (op), #call)

// `device` (-1: the current device) once checked to name a CUDA device of this machine; throws
// DeviceError naming `op` otherwise.
int resolve_device(int device, const char* op);

// After a <<<>>> launch: checks cudaGetLastError; with TL_LAUNCH_BLOCKING=1 also synchronizes the
// stream and checks, so an asynchronous fault is reported with the op that launched it.
void check_launch(cudaStream_t stream, const char* kernel);
bool launch_blocking();
// The same for a launch through cudaLaunchKernel, whose result is `err`: saves the
// cudaGetLastError call on the hot path of small ops.
void check_launched(cudaError_t err, cudaStream_t stream, const char* kernel);

// Streaming multiprocessors of `device`, queried once (cuda_device.cpp).
int multiprocessor_count(int device);

// The calling thread's current stream of `device` as a raw handle (the fast path for kernels).
cudaStream_t current_stream_handle(int device);
// Orders the current stream of `device` with another library's `stream` (DLPack's encoding: 1
// legacy default, 2 per-thread default, else a cudaStream_t) through an event: exporting, `stream`
// waits for the work enqueued here so far; importing, the current stream waits for `stream`'s.
// DeviceError naming the current op during a capture (an outside stream cannot join it).
void order_with_external_stream(int device, std::intptr_t stream, bool exporting);

// Makes `device` current for a scope when it is not already (cheap when it is) and restores the
// previous device after; kernels of a tensor on cuda:N must launch with device N current.
class OnDevice {
 public:
  explicit OnDevice(int device);
  ~OnDevice();
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = -1;
};

// The caching allocator of one device (cuda_allocator.cpp).
Allocator& device_allocator(int device);
// Marks a device pointer handed out by the caching allocator (the block's base pointer, i.e. a
// storage's data()) as in use by `stream` too, a stream of the same device.
void record_stream_use(void* ptr, int device, cudaStream_t stream);

// Page-locked host allocator (cuda_pinned_allocator.cpp). After an asynchronous copy from or to a
// pinned block, record_pinned_use keeps the block from being handed out again until the copy ran.
Allocator& pinned_allocator();
bool is_pinned_pointer(const void* ptr);
// ptr may point anywhere inside a pinned block; call it with the stream's device current.
void record_pinned_use(const void* ptr, cudaStream_t stream);

// The kernel launch grid for n elements with `threads` per block, capped so that grid-stride
// loops cover the rest.
inline unsigned grid_for(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = int64_t{1} << 20;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

}  // namespace tensorlet::cuda

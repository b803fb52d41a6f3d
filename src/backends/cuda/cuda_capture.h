// What the CUDA backend needs to know about graph captures in progress (cuda_graph.cpp): which
// pool a capture allocates from, refusing work that waits for the GPU, and graph-safe Philox.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/generator.h"

namespace tensorlet::cuda {

// Captures the calling thread has open, on all devices; 0 on the hot path of every op. Inline and
// constant-initialized, so reading it is one TLS load, with no wrapper call.
inline thread_local int t_open_captures = 0;

// True when the calling thread is capturing work on `device`.
bool capturing_on(int device);

// The pool id the calling thread's capture on `device` allocates from, 0 when it has none (or
// inside OutsideCapturePool).
uint64_t capture_pool(int device);

// Throws DeviceError naming the current op when the calling thread is capturing (on any device:
// a host wait during one capture would wait for work that is not running), after ending and
// discarding its captures. `what` says what the op would do: "waits for the GPU to copy to the
// host". `op` names the public function when it is not the current op (tl::cuda::synchronize).
void fail_if_capturing(const char* what, const char* op = nullptr);
inline void check_not_capturing(const char* what, const char* op = nullptr) {
  if (t_open_captures != 0) fail_if_capturing(what, op);
}

// True when `stream` is being captured (by anyone: also a capture begun outside tensorlet).
bool stream_is_capturing(cudaStream_t stream);

// During a capture on `device` by the calling thread: reserves `blocks` Philox blocks of `gen` for
// a random op in the graph, filling params (the kernel reads the seed and base block from
// params.philox_base at run time, which each replay sets from a fresh reservation) and returns
// true. Otherwise returns false and reserves nothing.
bool reserve_philox_in_capture(const Generator& gen, uint64_t blocks, int device,
                               RandomParams& params);

// Allocations in this scope come from the ordinary free lists even during a capture (buffers
// that outlive the graph, such as cuBLAS's workspace of a stream).
class OutsideCapturePool {
 public:
  OutsideCapturePool();
  ~OutsideCapturePool();
  OutsideCapturePool(const OutsideCapturePool&) = delete;
  OutsideCapturePool& operator=(const OutsideCapturePool&) = delete;
};

// cudaMalloc, cudaFree and event queries are not captured and would invalidate a capture of the
// calling thread: the allocators run them in relaxed mode for a scope.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() {
    if (t_open_captures == 0) return;
    active_ = true;
    if (cudaThreadExchangeStreamCaptureMode(&mode_) != cudaSuccess) {
      (void)cudaGetLastError();
      active_ = false;
    }
  }
  ~RelaxedCaptureMode() {
    if (active_ && cudaThreadExchangeStreamCaptureMode(&mode_) != cudaSuccess)
      (void)cudaGetLastError();
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool active_ = false;
};

// The caching allocator's side of pools (cuda_allocator.cpp): a capture on `device` starts using
// pool `id` (creating it on first use), a graph keeps it, and releases it when reset; once no
// graph holds it, its blocks go back to the device's ordinary free lists. Blocks freed during a
// capture while other streams used them wait for end_pool_capture.
void retain_pool(int device, uint64_t id);
void release_pool(int device, uint64_t id);
void end_pool_capture(int device);

}  // namespace tensorlet::cuda

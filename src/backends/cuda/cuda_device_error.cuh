// The device side of cuda_device_error.h: a kernel's report of bad data, once per device.
#pragma once

#include <cuda/atomic>

#include "tensorlet/backends/cuda/cuda_device_error.h"

namespace tensorlet::cuda {

// Records `value` as the reported error unless another thread or kernel already did (checked on
// device memory first, so a launch full of bad elements writes to the host once). The ticket is
// published by a release store, not after a fence: a fence anywhere in a kernel makes ptxas turn
// every float atomicAdd of it into a returning atomic (ATOMG instead of REDG), which cost the
// scatter family 1.4x (bench O5, issue 30); the release store orders kind and value before the
// ticket all the same.
__device__ __forceinline__ void report_device_error(const DeviceErrorSink& sink, int64_t value) {
  if (atomicExch(sink.once, 1u) != 0u) return;
  sink.report->kind = sink.kind;
  sink.report->value = value;
  ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_system>(sink.report->ticket)
      .store(sink.ticket, ::cuda::std::memory_order_release);
}

}  // namespace tensorlet::cuda

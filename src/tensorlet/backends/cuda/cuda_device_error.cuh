// The device side of cuda_device_error.h: a kernel's report of bad data, once per device.
#pragma once

#include "tensorlet/backends/cuda/cuda_device_error.h"

namespace tensorlet::cuda {

// Records `value` as the reported error unless another thread or kernel already did (checked on
// device memory first, so a launch full of bad elements writes to the host once).
__device__ __forceinline__ void report_device_error(const DeviceErrorSink& sink, int64_t value) {
  if (atomicExch(sink.once, 1u) != 0u) return;
  sink.report->kind = sink.kind;
  sink.report->value = value;
  __threadfence_system();
  *static_cast<volatile uint32_t*>(&sink.report->ticket) = sink.ticket;
}

}  // namespace tensorlet::cuda

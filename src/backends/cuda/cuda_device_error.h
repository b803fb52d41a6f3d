// Errors a kernel finds in its data (an integer division by zero, an index out of range), reported
// to the host at its next wait on the device instead of stalling the launch to ask first.
//
// Why: checking such data before the launch means a reduction and a host wait per call (and no
// graph capture); torch's CUDA kernels never stall for it (they return unspecified values or
// assert, which kills the context). Here the kernel skips the bad element, the first one found
// is written to a page-locked host slot, and every place the library waits for the device
// (tl::cuda::synchronize, Stream/Event::synchronize, copies to the host, item()) raises it as the
// error the CPU raises at the call, naming the op that launched the kernel. A result computed
// from bad data can so never reach the host.
#pragma once

#include <cstdint>

namespace tensorlet::cuda {

// ClassTargetOutOfRange: a loss's class index (size: the number of classes), worded as the CPU's.
enum class DeviceErrorKind : uint32_t {
  ZeroDivision = 1,
  IndexOutOfRange = 2,
  ClassTargetOutOfRange = 3
};

// What the first failing kernel wrote (page-locked host memory mapped into the device's space).
// `ticket` is written last, after a system fence, so a non-zero ticket means value is there.
struct DeviceErrorReport {
  uint32_t ticket;
  uint32_t kind;
  int64_t value;
};

// A kernel's handle on its device's report: passed by value in the kernel's parameters.
struct DeviceErrorSink {
  uint32_t* once;             // device memory: the first reporter wins it (atomicExch)
  DeviceErrorReport* report;  // mapped host memory
  uint32_t ticket;            // names the launch (its op, dim and size) in the host's registry
  uint32_t kind;
};

// A sink for one launch on `device` by `op` (a string with static lifetime, e.g. an OpScope's
// name), remembering the message parts: for IndexOutOfRange, the dim and its size. Allocates the
// device's slot on first use (outside a capture: prepare_device_errors runs before one starts).
DeviceErrorSink device_error_sink(int device, const char* op, DeviceErrorKind kind, int64_t dim = 0,
                                  int64_t size = 0);

// Allocates `device`'s slot now, so that a launch inside a stream capture finds it ready.
void prepare_device_errors(int device);

// Throws the error a kernel on `device` reported since the last call, if any, and clears it:
// call after the host waited for work on the device. Costs one load from host memory when none.
void raise_device_errors(int device);

}  // namespace tensorlet::cuda

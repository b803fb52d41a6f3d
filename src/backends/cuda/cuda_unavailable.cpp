// tl::cuda device queries when tensorlet is built without its CUDA backend: no devices.
#include "backends/backend.h"
#include "backends/cuda/cuda.h"
#include "profiler/op_scope.h"
#include "tensor/error.h"

namespace tensorlet {

namespace cuda {

bool is_built() { return false; }
bool is_available() { return false; }
int device_count() { return 0; }

}  // namespace cuda

Allocator& pinned_host_allocator() {
  const char* op = profiler::current_op();
  fail<DeviceError>(op ? op : "tl::pin_memory",
                    "pinned host memory needs the CUDA backend (this build has none)");
}

}  // namespace tensorlet

// Checked CUDA runtime calls and kernel launches: failures become tl::CudaError (or
// OutOfMemoryError) naming the op, and TL_LAUNCH_BLOCKING=1 makes every launch synchronous.
#include <cstdlib>
#include <cstring>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

// Out of line and cold, so the success path of check() stays a compare and a return.
[[noreturn, gnu::cold, gnu::noinline]] void throw_cuda_error(cudaError_t err, const char* op,
                                                             const char* what) {
  // Clears the runtime's last error so later calls do not report it again; a sticky error (the
  // context is lost) keeps being returned by the runtime whatever we do.
  (void)cudaGetLastError();
  if (err == cudaErrorMemoryAllocation)
    fail<OutOfMemoryError>(op, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
  fail<CudaError>(op, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

}  // namespace

const char* current_op_name() {
  const char* op = profiler::user_op();
  return op ? op : "tl::cuda";
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw_cuda_error(err, current_op_name(), what);
}

void check(cudaError_t err, const char* op, const char* what) {
  if (err != cudaSuccess) throw_cuda_error(err, op, what);
}

bool launch_blocking() {
  static const bool blocking = [] {
    const char* value = std::getenv("TL_LAUNCH_BLOCKING");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return blocking;
}

void check_launch(cudaStream_t stream, const char* kernel) {
  check_launched(cudaGetLastError(), stream, kernel);
}

void check_launched(cudaError_t err, cudaStream_t stream, const char* kernel) {
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    const char* op = current_op_name();
    fail<CudaError>(op, "launch of kernel ", kernel, " failed: ", cudaGetErrorName(err), ": ",
                    cudaGetErrorString(err));
  }
  // (Not during a capture: nothing runs until the graph is replayed.)
  if (!launch_blocking() || t_open_captures != 0) return;
  err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    fail<CudaError>(current_op_name(), "kernel ", kernel,
                    " failed (TL_LAUNCH_BLOCKING=1): ", cudaGetErrorName(err), ": ",
                    cudaGetErrorString(err));
  }
}

}  // namespace tensorlet::cuda

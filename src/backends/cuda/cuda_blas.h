// cuBLAS plumbing for the CUDA backend: checked status codes, and one handle per device bound to
// the caller's stream, a per-stream workspace and the TF32 math mode.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {

// Throws CudaError "[<op>] <what>: CUBLAS_STATUS_...: <description>" on failure.
inline void check_blas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail<CudaError>(current_op_name(), what, ": ", cublasGetStatusName(status), ": ",
                  cublasGetStatusString(status));
}

// cuBLAS is column-major, so out^T = b^T a^T is computed: an operand of `rows` x `cols` is the
// column-major (cols x rows) matrix with leading dim `ld` when rows are evenly spaced (no
// transpose), or its transpose when columns are. A size-1 dim's stride never matters.
struct BlasOperand {
  cublasOperation_t op;
  int64_t ld;
};

inline bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, BlasOperand& out) {
  if (cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) {
      out = {CUBLAS_OP_N, ld};
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) {
      out = {CUBLAS_OP_T, ld};
      return true;
    }
  }
  return false;
}

// A device's cuBLAS handle and what is currently set on it, so that steady-state calls on one
// stream pay for none of the setters.
struct BlasState {
  std::mutex mutex;  // a handle's stream and workspace are per-handle state, not per-thread
  cublasHandle_t handle = nullptr;
  bool bound = false;  // stream/workspace below are in effect
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  size_t workspace_bytes = 0;
  // cuBLAS shares its built-in workspace between every stream of a handle, so kernels running
  // concurrently on two streams could race on it; each stream gets its own (kept for good).
  std::vector<std::pair<cudaStream_t, void*>> workspaces;
};

inline BlasState& blas_state(int device) {
  // Leaked on purpose: destroying handles at exit can run after the CUDA context is gone.
  static BlasState* const states = new BlasState[std::max(device_count(), 1)];
  return states[device];
}

// Holds `device`'s handle for one cuBLAS call (or a few) on `stream`; the device must be current.
class BlasHandle {
 public:
  BlasHandle(int device, cudaStream_t stream, bool tf32)
      : state_(blas_state(device)), lock_(state_.mutex) {
    if (!state_.handle) create(device);
    if (!state_.bound || state_.stream != stream) bind(device, stream);
    const cublasMath_t math = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    if (math != state_.math) {
      check_blas(cublasSetMathMode(state_.handle, math), "cublasSetMathMode");
      state_.math = math;
    }
  }
  cublasHandle_t get() const { return state_.handle; }
  // The stream's workspace, which cuBLASLt calls on the same stream share (they are ordered).
  void* workspace() const {
    for (const auto& [s, ptr] : state_.workspaces)
      if (s == state_.stream) return ptr;
    return nullptr;
  }
  size_t workspace_bytes() const { return state_.workspace_bytes; }

 private:
  void create(int device) {
    cublasHandle_t handle = nullptr;
    RelaxedCaptureMode relaxed;  // cublasCreate allocates: not captured, not a capture error
    check_blas(cublasCreate(&handle), "cublasCreate");
    state_.handle = handle;
    state_.math = CUBLAS_DEFAULT_MATH;
    // cuBLAS's recommended workspace: 32 MiB from Hopper on, 4 MiB before.
    int major = 0;
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    state_.workspace_bytes = static_cast<size_t>(major >= 9 ? 32 : 4) << 20;
  }

  void bind(int device, cudaStream_t stream) {
    state_.bound = false;
    void* workspace = nullptr;
    for (const auto& [s, ptr] : state_.workspaces)
      if (s == stream) workspace = ptr;
    if (!workspace) {
      // From the caching allocator while `stream` is the device's current stream, so the block
      // belongs to that stream; never from a graph's pool, since it outlives any graph.
      OutsideCapturePool outside;
      workspace = device_allocator(device).allocate(state_.workspace_bytes);
      state_.workspaces.emplace_back(stream, workspace);
    }
    check_blas(cublasSetStream(state_.handle, stream), "cublasSetStream");
    // cublasSetStream resets the workspace to the built-in one, so this comes after it.
    check_blas(cublasSetWorkspace(state_.handle, workspace, state_.workspace_bytes),
               "cublasSetWorkspace");
    state_.stream = stream;
    state_.bound = true;
  }

  BlasState& state_;
  std::lock_guard<std::mutex> lock_;
};

}  // namespace tensorlet::cuda

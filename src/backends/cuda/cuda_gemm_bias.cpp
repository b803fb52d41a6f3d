// addmm's row bias in the GEMM's epilogue (Backend::gemm_bias): one cuBLASLt matmul with
// CUBLASLT_EPILOGUE_BIAS computes out = alpha * (a @ b) + bias, where gemm needs the bias copied
// into out first and read back by the product (nn.Linear's forward; LibTorch's addmm does this).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/backends/cuda/cuda_blas.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail<CudaError>(current_op_name(), what, ": ", cublasGetStatusName(status), ": ",
                  cublasGetStatusString(status));
}

// One cuBLASLt handle per device, made on first use and kept (as the cuBLAS handles: destroying
// it at exit can run after the context is gone). cuBLASLt handles are thread-safe.
cublasLtHandle_t lt_handle(int device) {
  static std::mutex mutex;
  static cublasLtHandle_t* const handles = new cublasLtHandle_t[std::max(device_count(), 1)]();
  std::lock_guard<std::mutex> lock(mutex);
  if (!handles[device]) {
    RelaxedCaptureMode relaxed;  // creation allocates: not captured, not a capture error
    check_lt(cublasLtCreate(&handles[device]), "cublasLtCreate");
  }
  return handles[device];
}

// The descriptors of one call, destroyed however the call ends.
struct LtDescs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  LtDescs() = default;
  LtDescs(const LtDescs&) = delete;
  LtDescs& operator=(const LtDescs&) = delete;
  ~LtDescs() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// The largest power of two up to 16 dividing the address (cuBLASLt's heuristics otherwise assume
// 256-byte aligned pointers and may pick a kernel that faults on an offset view).
uint32_t alignment(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 16;
  while (a > 1 && addr % a != 0) a /= 2;
  return a;
}

template <typename V>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const V& v) {
  check_lt(cublasLtMatmulDescSetAttribute(desc, attr, &v, sizeof v),
           "cublasLtMatmulDescSetAttribute");
}

template <typename V>
void set(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const V& v) {
  check_lt(cublasLtMatmulPreferenceSetAttribute(pref, attr, &v, sizeof v),
           "cublasLtMatmulPreferenceSetAttribute");
}

}  // namespace

bool gemm_bias(const Tensor& a, const Tensor& b, const Tensor& bias, Scalar alpha_scalar,
               const Tensor& out) {
  cudaDataType_t type;
  switch (out.dtype()) {
    case DType::Float32:
      type = CUDA_R_32F;
      break;
    case DType::Float16:
      type = CUDA_R_16F;
      break;
    case DType::BFloat16:
      type = CUDA_R_16BF;
      break;
    default:
      return false;  // float64 and the rest: copy + gemm
  }
  const int64_t m = out.shape()[0], n = out.shape()[1], k = a.shape()[1];
  // Small products run on our kernels (cuBLAS's host cost dominates there); LibTorch's limits on
  // the Lt path's sizes; a 16-byte aligned bias (no preference attribute describes its alignment).
  constexpr int64_t kLtMaxDim = 65535LL * 32;
  if (matmul_uses_kernels(out, m, n, k) || m < 2 || n < 2 || k < 2 || m >= kLtMaxDim ||
      n >= kLtMaxDim || k >= kLtMaxDim || !out.is_contiguous() || alignment(bias.data_ptr()) < 16)
    return false;
  // Column-major terms as cuda_matmul.cu's: out^T (n x m) = op(b) (n x k) * op(a) (k x m), and
  // the bias runs along out^T's rows, as the epilogue adds it.
  BlasOperand lb{}, la{};
  if (!blas_layout(k, n, b.strides()[0], b.strides()[1], lb) ||
      !blas_layout(m, k, a.strides()[0], a.strides()[1], la))
    return false;
  const int device = out.device().index();
  cudaStream_t s = current_stream_handle(device);
  const bool f32 = out.dtype() == DType::Float32;
  const cublasComputeType_t compute =
      f32 && allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;

  LtDescs dsc;
  check_lt(cublasLtMatmulDescCreate(&dsc.op, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  set(dsc.op, CUBLASLT_MATMUL_DESC_TRANSA, lb.op);
  set(dsc.op, CUBLASLT_MATMUL_DESC_TRANSB, la.op);
  set(dsc.op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
  set(dsc.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias.data_ptr());
  // Stored (before op) shapes: N keeps (rows x cols) of the column-major view, T swaps them.
  const bool tb = lb.op == CUBLAS_OP_T, ta = la.op == CUBLAS_OP_T;
  check_lt(cublasLtMatrixLayoutCreate(&dsc.a, type, tb ? k : n, tb ? n : k, lb.ld),
           "cublasLtMatrixLayoutCreate");
  check_lt(cublasLtMatrixLayoutCreate(&dsc.b, type, ta ? m : k, ta ? k : m, la.ld),
           "cublasLtMatrixLayoutCreate");
  check_lt(cublasLtMatrixLayoutCreate(&dsc.d, type, n, m, n), "cublasLtMatrixLayoutCreate");

  // The stream's cuBLAS workspace, shared: calls on one stream are ordered.
  BlasHandle blas(device, s, allow_tf32());
  const uint64_t workspace_bytes = blas.workspace() ? blas.workspace_bytes() : 0;
  check_lt(cublasLtMatmulPreferenceCreate(&dsc.pref), "cublasLtMatmulPreferenceCreate");
  set(dsc.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace_bytes);
  set(dsc.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(b.data_ptr()));
  set(dsc.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(a.data_ptr()));
  set(dsc.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(out.data_ptr()));
  set(dsc.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(out.data_ptr()));

  const cublasLtHandle_t lt = lt_handle(device);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, dsc.op, dsc.a, dsc.b, dsc.d, dsc.d,
                                                           dsc.pref, 1, &heuristic, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) return false;  // no kernel for it: copy + gemm

  const float alpha = alpha_scalar.to<float>(), beta = 0;
  check_lt(cublasLtMatmul(lt, dsc.op, &alpha, b.data_ptr(), dsc.a, a.data_ptr(), dsc.b, &beta,
                          out.data_ptr(), dsc.d, out.data_ptr(), dsc.d, &heuristic.algo,
                          blas.workspace(), workspace_bytes, s),
           "cublasLtMatmul");
  check_launch(s, "cublasLtMatmul");
  return true;
}

}  // namespace tensorlet::cuda

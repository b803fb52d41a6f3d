// 2-D convolution on cuDNN 9 (Backend::conv2d_*): its convolution API with descriptors and an
// algorithm per direction chosen once per geometry by cuDNN's heuristics, as torch's default
// (cudnn.benchmark off) does, and workspaces from the caching allocator on the current stream.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

void check_dnn(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  fail<CudaError>(current_op_name(), what, ": ", cudnnGetErrorString(status));
}

// A device's handle, made on first use and kept (destroying it at exit can run after the context
// is gone); one call at a time uses it, since its stream is per-handle state.
struct DnnState {
  std::mutex mutex;
  cudnnHandle_t handle = nullptr;
};

DnnState& dnn_state(int device) {
  static DnnState* const states = new DnnState[std::max(device_count(), 1)];
  return states[device];
}

// Workspaces above this are not asked for (FFT algorithms can want gigabytes): the heuristics'
// next choice runs instead.
constexpr size_t kMaxWorkspace = size_t{1} << 30;

enum Direction { kForward, kBackwardData, kBackwardFilter, kDirections };

// One geometry's descriptors and chosen algorithms. The convolution descriptor carries the math
// type, which can differ per direction, so each direction has its own.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  std::array<cudnnConvolutionDescriptor_t, kDirections> conv{};
  std::array<int, kDirections> algo{-1, -1, -1};  // -1: not chosen yet; -2: none works
  std::array<size_t, kDirections> workspace{};
  // Kept for good with the plan cache (a few per network); never destroyed, as the handles.
};

using Key = std::array<int64_t, 17>;

struct PlanCache {
  std::mutex mutex;
  std::map<Key, std::unique_ptr<Plan>> plans;
};

PlanCache& plan_cache() {
  static PlanCache* const cache = new PlanCache;
  return *cache;
}

bool dnn_type(DType dtype, cudnnDataType_t& data, cudnnDataType_t& compute) {
  switch (dtype) {
    case DType::Float32:
      data = compute = CUDNN_DATA_FLOAT;
      return true;
    case DType::Float64:
      data = compute = CUDNN_DATA_DOUBLE;
      return true;
    case DType::Float16:
      data = CUDNN_DATA_HALF;
      compute = CUDNN_DATA_FLOAT;
      return true;
    case DType::BFloat16:
      data = CUDNN_DATA_BFLOAT16;
      compute = CUDNN_DATA_FLOAT;
      return true;
    default:
      return false;
  }
}

// What a math type may be for this data: float32 keeps full precision unless TF32 is allowed
// (tl::set_float32_matmul_precision, the setting matmul reads), as torch.backends.cudnn.allow_tf32.
cudnnMathType_t math_for(cudnnDataType_t data, cudnnMathType_t suggested) {
  if (data == CUDNN_DATA_DOUBLE) return CUDNN_DEFAULT_MATH;
  if (data == CUDNN_DATA_FLOAT && !allow_tf32()) return CUDNN_FMA_MATH;
  return suggested;
}

// Sizes cuDNN's int descriptors hold, and tensors its 32-bit indexing covers.
bool fits_int(const Tensor& t) {
  if (t.numel() > INT_MAX) return false;
  for (int64_t d : t.shape()) {
    if (d > INT_MAX) return false;
  }
  return true;
}

Plan* plan_for(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dArgs& a,
               cudnnDataType_t data, cudnnDataType_t compute) {
  const Key key{static_cast<int64_t>(x.dtype()),
                x.device().index(),
                x.size(0),
                x.size(1),
                x.size(2),
                x.size(3),
                w.size(0),
                w.size(2),
                w.size(3),
                a.stride[0],
                a.stride[1],
                a.padding[0],
                a.padding[1],
                a.dilation[0],
                a.dilation[1],
                a.groups,
                allow_tf32() ? 1 : 0};
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.plans.find(key);
  if (it != cache.plans.end()) return it->second.get();
  auto plan = std::make_unique<Plan>();
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  check_dnn(cudnnCreateTensorDescriptor(&plan->x), "cudnnCreateTensorDescriptor");
  check_dnn(cudnnCreateTensorDescriptor(&plan->y), "cudnnCreateTensorDescriptor");
  check_dnn(cudnnCreateFilterDescriptor(&plan->w), "cudnnCreateFilterDescriptor");
  check_dnn(cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NCHW, data, i(x.size(0)), i(x.size(1)),
                                       i(x.size(2)), i(x.size(3))),
            "cudnnSetTensor4dDescriptor");
  check_dnn(cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NCHW, data, i(y.size(0)), i(y.size(1)),
                                       i(y.size(2)), i(y.size(3))),
            "cudnnSetTensor4dDescriptor");
  check_dnn(cudnnSetFilter4dDescriptor(plan->w, data, CUDNN_TENSOR_NCHW, i(w.size(0)), i(w.size(1)),
                                       i(w.size(2)), i(w.size(3))),
            "cudnnSetFilter4dDescriptor");
  for (cudnnConvolutionDescriptor_t& conv : plan->conv) {
    check_dnn(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    check_dnn(cudnnSetConvolution2dDescriptor(conv, i(a.padding[0]), i(a.padding[1]),
                                              i(a.stride[0]), i(a.stride[1]), i(a.dilation[0]),
                                              i(a.dilation[1]), CUDNN_CROSS_CORRELATION, compute),
              "cudnnSetConvolution2dDescriptor");
    check_dnn(cudnnSetConvolutionGroupCount(conv, i(a.groups)), "cudnnSetConvolutionGroupCount");
    check_dnn(cudnnSetConvolutionMathType(conv, math_for(data, CUDNN_TENSOR_OP_MATH)),
              "cudnnSetConvolutionMathType");
  }
  Plan* raw = plan.get();
  cache.plans.emplace(key, std::move(plan));
  return raw;
}

// The heuristics' first algorithm that cuDNN can run here within kMaxWorkspace, its math type set
// on the direction's descriptor; false when there is none. Called with the handle held.
template <typename Perf>
bool pick(Plan& p, Direction dir, cudnnDataType_t data, const Perf* perf, int count) {
  for (int k = 0; k < count; ++k) {
    if (perf[k].status != CUDNN_STATUS_SUCCESS || perf[k].memory > kMaxWorkspace) continue;
    check_dnn(cudnnSetConvolutionMathType(p.conv[dir], math_for(data, perf[k].mathType)),
              "cudnnSetConvolutionMathType");
    p.algo[dir] = static_cast<int>(perf[k].algo);
    p.workspace[dir] = perf[k].memory;
    return true;
  }
  p.algo[dir] = -2;
  return false;
}

bool choose(cudnnHandle_t h, Plan& p, Direction dir, cudnnDataType_t data) {
  if (p.algo[dir] != -1) return p.algo[dir] >= 0;
  int found = 0;
  if (dir == kForward) {
    std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
    check_dnn(
        cudnnGetConvolutionForwardAlgorithm_v7(h, p.x, p.w, p.conv[dir], p.y,
                                               static_cast<int>(perf.size()), &found, perf.data()),
        "cudnnGetConvolutionForwardAlgorithm_v7");
    if (!pick(p, dir, data, perf.data(), found)) return false;
    // The heuristics' memory is an estimate for their math type; ask for the one chosen.
    size_t bytes = 0;
    check_dnn(cudnnGetConvolutionForwardWorkspaceSize(
                  h, p.x, p.w, p.conv[dir], p.y,
                  static_cast<cudnnConvolutionFwdAlgo_t>(p.algo[dir]), &bytes),
              "cudnnGetConvolutionForwardWorkspaceSize");
    p.workspace[dir] = bytes;
  } else if (dir == kBackwardData) {
    std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> perf{};
    check_dnn(
        cudnnGetConvolutionBackwardDataAlgorithm_v7(
            h, p.w, p.y, p.conv[dir], p.x, static_cast<int>(perf.size()), &found, perf.data()),
        "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    if (!pick(p, dir, data, perf.data(), found)) return false;
    size_t bytes = 0;
    check_dnn(cudnnGetConvolutionBackwardDataWorkspaceSize(
                  h, p.w, p.y, p.conv[dir], p.x,
                  static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo[dir]), &bytes),
              "cudnnGetConvolutionBackwardDataWorkspaceSize");
    p.workspace[dir] = bytes;
  } else {
    std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> perf{};
    check_dnn(
        cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            h, p.x, p.y, p.conv[dir], p.w, static_cast<int>(perf.size()), &found, perf.data()),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    if (!pick(p, dir, data, perf.data(), found)) return false;
    size_t bytes = 0;
    check_dnn(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                  h, p.x, p.y, p.conv[dir], p.w,
                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo[dir]), &bytes),
              "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    p.workspace[dir] = bytes;
  }
  return true;
}

// Runs one direction: x, w, y are the forward's tensors (the one written is y, x or w by dir).
bool run(Direction dir, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dArgs& a) {
  cudnnDataType_t data, compute;
  if (!dnn_type(x.dtype(), data, compute) || !fits_int(x) || !fits_int(w) || !fits_int(y))
    return false;
  const int device = x.device().index();
  Plan& p = *plan_for(x, w, y, a, data, compute);
  DnnState& state = dnn_state(device);
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.handle) {
    RelaxedCaptureMode relaxed;  // cudnnCreate allocates: not captured, not a capture error
    check_dnn(cudnnCreate(&state.handle), "cudnnCreate");
  }
  const cudnnHandle_t h = state.handle;
  {
    // The plan's algorithms are chosen under the cache's lock: another thread may share it.
    std::lock_guard<std::mutex> plan_lock(plan_cache().mutex);
    if (!choose(h, p, dir, data)) return false;
  }
  cudaStream_t s = current_stream_handle(device);
  check_dnn(cudnnSetStream(h, s), "cudnnSetStream");
  // The workspace lives until the end of this call; the caching allocator orders its reuse
  // after the stream's work, as any tensor's.
  const size_t bytes = p.workspace[dir];
  const Tensor ws =
      bytes > 0 ? make_tensor(Shape({static_cast<int64_t>(bytes)}), kUInt8, x.device()) : Tensor();
  void* wsp = bytes > 0 ? ws.data_ptr() : nullptr;
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const bool dbl = data == CUDNN_DATA_DOUBLE;
  const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
  switch (dir) {
    case kForward:
      check_dnn(cudnnConvolutionForward(h, one, p.x, x.data_ptr(), p.w, w.data_ptr(), p.conv[dir],
                                        static_cast<cudnnConvolutionFwdAlgo_t>(p.algo[dir]), wsp,
                                        bytes, zero, p.y, y.data_ptr()),
                "cudnnConvolutionForward");
      break;
    case kBackwardData:
      check_dnn(
          cudnnConvolutionBackwardData(h, one, p.w, w.data_ptr(), p.y, y.data_ptr(), p.conv[dir],
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo[dir]), wsp,
                                       bytes, zero, p.x, x.data_ptr()),
          "cudnnConvolutionBackwardData");
      break;
    default:
      check_dnn(
          cudnnConvolutionBackwardFilter(h, one, p.x, x.data_ptr(), p.y, y.data_ptr(), p.conv[dir],
                                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo[dir]),
                                         wsp, bytes, zero, p.w, w.data_ptr()),
          "cudnnConvolutionBackwardFilter");
      break;
  }
  check_launch(s, "cudnnConvolution");
  return true;
}

}  // namespace

bool cudnn_conv2d_forward(const Tensor& x, const Tensor& w, const Conv2dArgs& a, const Tensor& y) {
  return run(kForward, x, w, y, a);
}

bool cudnn_conv2d_backward_input(const Tensor& dy, const Tensor& w, const Conv2dArgs& a,
                                 const Tensor& dx) {
  return run(kBackwardData, dx, w, dy, a);
}

bool cudnn_conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dArgs& a,
                                  const Tensor& dw) {
  return run(kBackwardFilter, x, dw, dy, a);
}

}  // namespace tensorlet::cuda

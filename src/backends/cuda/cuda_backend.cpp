// The CUDA backend, registered for DeviceType::CUDA as the library loads: validates the device
// index, makes the tensors' device current, and routes each kernel family of the Backend
// interface to its file (cuda_kernels.h).
#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet {
namespace cuda {
namespace {

// The device every operand of a kernel lives on (the CUDA one for host <-> device copies).
int cuda_index_of(const Tensor& t) { return t.device().index(); }

// The caching allocator of a device, after checking that the device exists.
Allocator& allocator(Device device) {
  const int n = device_count();
  if (n == 0)
    fail<DeviceError>(current_op_name(), "cannot use ", device,
                      ": no CUDA device is available (no GPU or no driver)");
  if (device.index() < 0 || device.index() >= n)
    fail<DeviceError>(current_op_name(), "cannot use ", device, ": expected a device index in [0, ",
                      n, "), this machine has ", n, " CUDA device", n == 1 ? "" : "s");
  return device_allocator(device.index());
}

Allocator& pinned_host_allocator() {
  if (!is_available())
    fail<DeviceError>(current_op_name(),
                      "pinned host memory needs a CUDA device (no GPU or no driver here)");
  return pinned_allocator();
}

class CudaBackend final : public Backend {
 public:
  void copy(const Tensor& src, const Tensor& out, bool non_blocking) override {
    cuda::copy(src, out, non_blocking);
  }
  void fill(const Tensor& out, Scalar value) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::fill(out, value);
  }
  void order_with_stream(Device device, std::intptr_t stream, bool exporting) override {
    order_with_external_stream(device.index(), stream, exporting);
  }
  void unary(UnaryOp op, const Tensor& in, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::unary(op, in, out);
  }
  void binary(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b,
              const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::binary(op, a, b, out);
  }
  void add_scaled(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::add_scaled(a, b, alpha, out);
  }
  void add_n(const std::vector<Tensor>& in, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::add_n(in, out);
  }
  void lerp(const Tensor& start, const Tensor& end, const ElementwiseArg& weight,
            const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::lerp(start, end, weight, out);
  }
  void isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
               const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::isclose(a, b, rtol, atol, equal_nan, out);
  }
  void nan_to_num(const Tensor& in, Scalar nan, Scalar posinf, Scalar neginf,
                  const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::nan_to_num(in, nan, posinf, neginf, out);
  }
  void unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved,
                      const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::unary_backward(op, grad, saved, out);
  }
  void binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b,
                       const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::binary_backward(which, grad, a, b, out);
  }
  void fused_adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                  const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& step) override {
    if (params.empty()) return;
    OnDevice on_device(cuda_index_of(params.front()));
    cuda::fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step);
  }
  void fused_sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& momentum_buffers, const SgdStep& step) override {
    if (params.empty()) return;
    OnDevice on_device(cuda_index_of(params.front()));
    cuda::fused_sgd(params, grads, momentum_buffers, step);
  }
  void cross_entropy_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                             const Tensor& weight_total, const CrossEntropyArgs& args,
                             const Tensor& loss, const Tensor& row_weight,
                             const Tensor& lse) override {
    OnDevice on_device(cuda_index_of(x));
    cuda::cross_entropy_forward(x, target, weight, weight_total, args, loss, row_weight, lse);
  }
  void cross_entropy_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                              const Tensor& weight, const Tensor& weight_total, const Tensor& lse,
                              const CrossEntropyArgs& args, const Tensor& dx) override {
    OnDevice on_device(cuda_index_of(x));
    cuda::cross_entropy_backward(grad, x, target, weight, weight_total, lse, args, dx);
  }
  void where(const Tensor& cond, const ElementwiseArg& a, const ElementwiseArg& b,
             const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::where(cond, a, b, out);
  }
  void reduce(ReduceOp op, const Tensor& in, const std::vector<bool>& reduce_dims,
              const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::reduce(op, in, reduce_dims, out);
  }
  void arg_reduce(ArgReduceOp op, const Tensor& in, std::optional<int64_t> dim,
                  const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::arg_reduce(op, in, dim, out);
  }
  void softmax(const Tensor& in, int64_t dim, bool log, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::softmax(in, dim, log, out);
  }
  void sort(const Tensor& in, bool descending, const Tensor& values,
            const Tensor& indices) override {
    OnDevice on_device(cuda_index_of(in));
    cuda::sort(in, descending, values, indices);
  }
  void topk(const Tensor& in, int64_t k, bool largest, bool sorted, const Tensor& values,
            const Tensor& indices) override {
    OnDevice on_device(cuda_index_of(in));
    cuda::topk(in, k, largest, sorted, values, indices);
  }
  void kthvalue(const Tensor& in, int64_t k, const Tensor& values, const Tensor& indices) override {
    OnDevice on_device(cuda_index_of(in));
    cuda::kthvalue(in, k, values, indices);
  }
  void scan(ScanOp op, const Tensor& in, int64_t dim, const Tensor& values,
            const Tensor& indices) override {
    OnDevice on_device(cuda_index_of(values));
    cuda::scan(op, in, dim, values, indices);
  }
  void median(const Tensor& in, const Tensor& values, const Tensor& indices) override {
    OnDevice on_device(cuda_index_of(values));
    cuda::median(in, values, indices);
  }
  void matmul(const Tensor& a, const Tensor& b, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::matmul(a, b, out);
  }
  Tensor nonzero(const Tensor& in) override {
    OnDevice on_device(cuda_index_of(in));
    return cuda::nonzero(in);
  }
  Tensor masked_select(const Tensor& in, const Tensor& mask) override {
    OnDevice on_device(cuda_index_of(in));
    return cuda::masked_select(in, mask);
  }
  void index_select(const Tensor& in, int64_t dim, const Tensor& index,
                    const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::index_select(in, dim, index, out);
  }
  void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::gather(in, dim, index, out);
  }
  void cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::cat(inputs, dim, out);
  }
  void random(const RandomParams& params, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::random(params, out);
  }
  void reserve_random(const Generator& gen, uint64_t blocks, const Tensor& out,
                      RandomParams& params) override {
    if (!cuda::reserve_philox_in_capture(gen, blocks, cuda_index_of(out), params))
      Backend::reserve_random(gen, blocks, out, params);
  }
  void index_bounds(const Tensor& index, int64_t* lo, int64_t* hi) override {
    cuda::index_bounds(index, lo, hi);  // sets the device itself
  }
  void take(const Tensor& in, const Tensor& index, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::take(in, index, out);
  }
  void put(const Tensor& self, const Tensor& index, const Tensor& values,
           bool accumulate) override {
    OnDevice on_device(cuda_index_of(self));
    cuda::put(self, index, values, accumulate);
  }
  bool checks_data_in_kernels() const override { return true; }
  void scatter(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
               const ElementwiseArg& src, Scalar alpha) override {
    OnDevice on_device(cuda_index_of(self));
    cuda::scatter(op, self, dim, index, src, alpha);
  }
  void sample_from_cdf(const Tensor& cdf, const Tensor& u, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::sample_from_cdf(cdf, u, out);
  }
  UniqueResult unique(const Tensor& in, bool consecutive, bool want_inverse,
                      bool want_counts) override {
    OnDevice on_device(cuda_index_of(in));
    return cuda::unique(in, consecutive, want_inverse, want_counts);
  }
  void bincount(const Tensor& in, const Tensor& weights, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::bincount(in, weights, out);
  }
  void histc(const Tensor& in, double lo, double hi, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::histc(in, lo, hi, out);
  }
  void searchsorted(const Tensor& boundaries, const Tensor& values, const Tensor& sorter,
                    bool right, const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::searchsorted(boundaries, values, sorter, right, out);
  }
  void gemm(const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta,
            const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    cuda::gemm(a, b, alpha, beta, out);
  }
  bool gemm_bias(const Tensor& a, const Tensor& b, const Tensor& bias, Scalar alpha,
                 const Tensor& out) override {
    OnDevice on_device(cuda_index_of(out));
    return cuda::gemm_bias(a, b, bias, alpha, out);
  }
#ifdef TL_WITH_CUDNN
  bool has_conv2d(DType dtype) const override {
    return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 ||
           dtype == DType::BFloat16;
  }
  bool conv2d_forward(const Tensor& x, const Tensor& w, const Conv2dArgs& a,
                      const Tensor& y) override {
    OnDevice on_device(cuda_index_of(y));
    return cuda::cudnn_conv2d_forward(x, w, a, y);
  }
  bool conv2d_backward_input(const Tensor& dy, const Tensor& w, const Conv2dArgs& a,
                             const Tensor& dx) override {
    OnDevice on_device(cuda_index_of(dx));
    return cuda::cudnn_conv2d_backward_input(dy, w, a, dx);
  }
  bool conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dArgs& a,
                              const Tensor& dw) override {
    OnDevice on_device(cuda_index_of(dw));
    return cuda::cudnn_conv2d_backward_weight(x, dy, a, dw);
  }
#endif
};

Backend& instance() {
  static CudaBackend backend;
  return backend;
}

// What the CUDA runtime knows of a pointer; Unknown when it cannot tell (no GPU, no driver).
MemoryPlace locate(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
      return {MemoryPlace::Kind::Device, attributes.device};
    case cudaMemoryTypeManaged:
      return {MemoryPlace::Kind::Managed, attributes.device};
    case cudaMemoryTypeHost:
    case cudaMemoryTypeUnregistered:
      return {MemoryPlace::Kind::Host, -1};
  }
  return {};
}

[[maybe_unused]] const bool registered =
    register_backend({DeviceType::CUDA, &instance, &allocator, &pinned_host_allocator, &locate});

}  // namespace
}  // namespace cuda
}  // namespace tensorlet

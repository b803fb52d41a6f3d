// The CUDA backend as it stands before the CUDA issue: device memory through cudaMalloc/cudaFree,
// and kernels that report they are not there yet (a typed DeviceError naming the op).
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda.h"
#include "tensor/error.h"

namespace tensorlet {
namespace cuda {
namespace {

constexpr const char* kAllocOp = "tl::cuda::allocate";

// Makes `index` the current device for a scope and restores the previous one, so an allocation
// on cuda:1 does not change the device the calling thread works on. Never throws (it also runs in
// deallocate, from destructors); status() says whether the switch worked.
class ScopedDevice {
 public:
  explicit ScopedDevice(int index) noexcept {
    int current = -1;
    if ((status_ = cudaGetDevice(&current)) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    if (current == index) return;
    if ((status_ = cudaSetDevice(index)) == cudaSuccess)
      previous_ = current;
    else
      (void)cudaGetLastError();
  }
  ~ScopedDevice() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  cudaError_t status() const { return status_; }

 private:
  cudaError_t status_ = cudaSuccess;
  int previous_ = -1;
};

// Plain cudaMalloc/cudaFree for one device; the caching allocator arrives with the CUDA issue.
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(int index) : index_(index) {}

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    ScopedDevice guard(index_);
    if (guard.status() != cudaSuccess)
      fail<CudaError>(kAllocOp, "cannot select cuda:", index_, ": ",
                      cudaGetErrorString(guard.status()));
    void* ptr = nullptr;
    cudaError_t err = cudaMalloc(&ptr, nbytes);
    if (err == cudaSuccess) return ptr;
    (void)cudaGetLastError();  // out-of-memory is not sticky: leave the runtime usable
    if (err == cudaErrorMemoryAllocation) {
      size_t free_bytes = 0, total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
      fail<OutOfMemoryError>(kAllocOp, "CUDA out of memory: tried to allocate ", nbytes,
                             " bytes on cuda:", index_, " (", free_bytes, " of ", total_bytes,
                             " bytes free)");
    }
    fail<CudaError>(kAllocOp, "cudaMalloc of ", nbytes, " bytes on cuda:", index_,
                    " failed: ", cudaGetErrorString(err));
  }

  void deallocate(void* ptr, size_t) override {
    if (ptr == nullptr) return;
    // Cannot throw (runs from destructors); at process exit the runtime may already be gone.
    ScopedDevice guard(index_);
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  int index_;
};

[[noreturn]] void not_yet(const char* op) {
  fail<DeviceError>(
      op,
      "the CUDA backend's kernels arrive with the CUDA issue; this build can allocate "
      "CUDA tensors but not compute on them yet (use the CPU for now)");
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "tl::sum";
    case ReduceOp::Prod:
      return "tl::prod";
    case ReduceOp::Mean:
      return "tl::mean";
    case ReduceOp::Max:
      return "tl::max";
    case ReduceOp::Min:
      return "tl::min";
    case ReduceOp::All:
      return "tl::all";
    case ReduceOp::Any:
      return "tl::any";
  }
  return "tl::reduce";
}

const char* random_op_name(RandomKind kind) {
  switch (kind) {
    case RandomKind::Uniform:
      return "tl::rand";
    case RandomKind::Normal:
      return "tl::randn";
    case RandomKind::Integer:
      return "tl::randint";
  }
  return "tl::random";
}

class CudaBackend final : public Backend {
 public:
  Allocator& allocator(Device device) override {
    std::call_once(init_, [this] {
      for (int i = 0; i < device_count(); ++i)
        allocators_.push_back(std::make_unique<DeviceAllocator>(i));
    });
    const int n = static_cast<int>(allocators_.size());
    if (n == 0)
      fail<DeviceError>(kAllocOp, "cannot use ", device,
                        ": no CUDA device is available (no GPU or no driver)");
    if (device.index() < 0 || device.index() >= n)
      fail<DeviceError>(kAllocOp, "cannot use ", device, ": expected a device index in [0, ", n,
                        "), this machine has ", n, " CUDA device", n == 1 ? "" : "s");
    return *allocators_[device.index()];
  }

  void copy(const Tensor&, const Tensor&) override { not_yet("tl::copy_"); }
  void fill(const Tensor&, Scalar) override { not_yet("tl::fill_"); }
  void unary(UnaryOp op, const Tensor&, const Tensor&) override { not_yet(unary_op_name(op)); }
  void binary(BinaryOp op, const Tensor&, const Tensor&, const Tensor&) override {
    not_yet(binary_op_name(op));
  }
  void where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {
    not_yet("tl::where");
  }
  void reduce(ReduceOp op, const Tensor&, const std::vector<bool>&, const Tensor&) override {
    not_yet(reduce_op_name(op));
  }
  void arg_reduce(ArgReduceOp op, const Tensor&, std::optional<int64_t>, const Tensor&) override {
    not_yet(op == ArgReduceOp::ArgMax ? "tl::argmax" : "tl::argmin");
  }
  void matmul(const Tensor&, const Tensor&, const Tensor&) override { not_yet("tl::matmul"); }
  Tensor nonzero(const Tensor&) override { not_yet("tl::nonzero"); }
  Tensor masked_select(const Tensor&, const Tensor&) override { not_yet("tl::masked_select"); }
  void index_select(const Tensor&, int64_t, const Tensor&, const Tensor&) override {
    not_yet("tl::index_select");
  }
  void gather(const Tensor&, int64_t, const Tensor&, const Tensor&) override {
    not_yet("tl::gather");
  }
  void cat(const std::vector<Tensor>&, int64_t, const Tensor&) override { not_yet("tl::cat"); }
  void random(const RandomParams& params, const Tensor&) override {
    not_yet(random_op_name(params.kind));
  }

 private:
  std::once_flag init_;
  std::vector<std::unique_ptr<DeviceAllocator>> allocators_;
};

}  // namespace
}  // namespace cuda

Backend& cuda_backend() {
  static cuda::CudaBackend backend;
  return backend;
}

}  // namespace tensorlet

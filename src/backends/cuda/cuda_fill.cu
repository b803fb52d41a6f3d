// Fill of a CUDA tensor of any strides with one value (flat vector stores when contiguous).
#include <cstring>

#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

template <typename U>
struct FillOp {
  U value;
  __device__ __forceinline__ U operator()() const { return value; }
};

}  // namespace

void fill(const Tensor& out, Scalar value) {
  if (out.numel() == 0) return;
  dispatch_dtype<kAllDTypes>(out.dtype(), [&]<typename T>() {
    using U = BitsOf<T>;
    // Converted on the host exactly as the CPU backend does, then stored as its bit pattern.
    const T v = value.to<T>();
    U bits;
    std::memcpy(&bits, &v, sizeof(T));
    Elementwise<U>::run(FillOp<U>{bits}, out, {});
  });
}

}  // namespace tensorlet::cuda

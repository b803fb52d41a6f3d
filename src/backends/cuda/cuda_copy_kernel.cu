// Same-device copy on CUDA: any strides on either side, dtype conversion between all five dtypes.
#include <type_traits>

#include "backends/cuda/cuda_elementwise.cuh"
#include "backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

struct IdentityOp {
  template <typename U>
  __device__ __forceinline__ U operator()(U v) const {
    return v;
  }
};

// As the CPU backend converts (core/convert.h): to bool is v != 0 (NaN counts as true), and
// NaN, infinities and out-of-range floats give the integer type's minimum, as on x86, where the
// GPU's own conversion would saturate. A bool input arrives already read as its byte != 0.
template <typename To>
struct ConvertOp {
  template <typename From>
  __device__ __forceinline__ To operator()(From v) const {
    return convert<To>(v);
  }
};

}  // namespace

void copy_same_device(const Tensor& src, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  if (src.dtype() == out.dtype()) {
    // x.copy_(x) arrives here as is; an overlapping cudaMemcpy is undefined, and there is nothing
    // to do anyway.
    if (src.data_ptr() == out.data_ptr() && src.strides() == out.strides()) return;
    if (src.is_contiguous() && out.is_contiguous()) {
      cudaStream_t stream = current_stream_handle(out.device().index());
      TL_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(), src.data_ptr(), n * out.element_size(),
                                    cudaMemcpyDeviceToDevice, stream));
      return;
    }
    // Same dtype moves bits: one kernel per element size.
    dispatch_bits(out.element_size(), [&]<typename U>() {
      Elementwise<U, U>::run(IdentityOp{}, out, {&src});
    });
    return;
  }
  dispatch_dtype<kClassicDTypes>(out.dtype(), [&]<typename To>() {
    dispatch_dtype<kClassicDTypes>(src.dtype(), [&]<typename From>() {
      if constexpr (!std::is_same_v<To, From>)
        Elementwise<To, From>::run(ConvertOp<To>{}, out, {&src});
    });
  });
}

}  // namespace tensorlet::cuda

// Same-device copy on CUDA: any strides on either side, dtype conversion between all ten dtypes.
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_elementwise.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

struct IdentityOp {
  template <typename U>
  __device__ __forceinline__ U operator()(U v) const {
    return v;
  }
};

template <typename To, typename From>
__device__ __forceinline__ To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To r;
  memcpy(&r, &v, sizeof(To));
  return r;
}

// Calls f.template operator()<T>() with the element type of `dtype`, among the dtypes of U's size
// (the caller guarantees that dtype has that size).
template <typename U, typename F>
__device__ __forceinline__ auto with_dtype_of_size(DType dtype, F&& f) {
  switch (dtype) {
#define TL_SIZED_CASE(e, T, name, kind)                                      \
  case DType::e:                                                             \
    if constexpr (sizeof(T) == sizeof(U)) return f.template operator()<T>(); \
    break;
    TL_DTYPES(TL_SIZED_CASE)
#undef TL_SIZED_CASE
  }
  __builtin_unreachable();  // the caller passes a dtype of U's size
}

// A conversion kernel moves the bits of the element sizes (UOut from UIn) and picks the element
// types with a switch on two kernel-wide (so warp-uniform) dtypes: 16 size pairs x (flat +
// strided) = 32 kernels for all 90 conversions, where one kernel pair per (To, From) would be 180
// (about 4.5x the nvcc time of the five-dtype file; CI builds on two cores). The switch costs a
// few uniform branches per element in a memory-bound kernel. Each element goes through
// convert<To, From> (tensor/convert.h), as on the CPU, so both give the same bits: NaN, infinities
// and out-of-range floats give the integer type's minimum (as x86), not the GPU's saturation.
template <typename UOut>
struct ConvertBitsOp {
  DType to, from;
  template <typename UIn>
  __device__ __forceinline__ UOut operator()(UIn bits) const {
    return with_dtype_of_size<UOut>(to, [&]<typename To>() {
      return with_dtype_of_size<UIn>(from, [&]<typename From>() {
        // A bool byte other than 0/1 is true (from_stored), as everywhere.
        const From v = from_stored<From>(bits_as<Stored<From>>(bits));
        return bits_as<UOut>(static_cast<Stored<To>>(convert<To>(v)));
      });
    });
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
    dispatch_bits(out.element_size(),
                  [&]<typename U>() { Elementwise<U, U>::run(IdentityOp{}, out, {&src}); });
    return;
  }
  dispatch_bits(out.element_size(), [&]<typename UOut>() {
    dispatch_bits(src.element_size(), [&]<typename UIn>() {
      Elementwise<UOut, UIn>::run(ConvertBitsOp<UOut>{out.dtype(), src.dtype()}, out, {&src});
    });
  });
}

}  // namespace tensorlet::cuda

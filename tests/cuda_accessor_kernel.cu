// A kernel indexing through PackedTensorAccessor32/64, for test_accessor.cpp (CUDA builds only).
#include <tensorlet/tensorlet_cuda.h>

namespace {

// out[i][j] = in[i][j] * (i + 1) + j, each thread one element, through the views' strides.
template <typename Accessor, typename OutAccessor>
__global__ void scale_rows_kernel(Accessor in, OutAccessor out) {
  const int64_t i = blockIdx.x;
  for (int64_t j = threadIdx.x; j < in.size(1); j += blockDim.x)
    out[i][j] = in[i][j] * static_cast<float>(i + 1) + static_cast<float>(j);
}

}  // namespace

namespace tl_test {

// Launches the kernel over a 2-D float tensor (any strides) into a fresh contiguous one, with
// 32-bit accessors, or 64-bit ones with __restrict__ pointers.
tensorlet::Tensor scale_rows_packed(const tensorlet::Tensor& in, bool use64) {
  tensorlet::Tensor out = tensorlet::empty(in.shape(), in.options());
  tensorlet::cuda::DeviceGuard on(in.device().index());
  const dim3 grid(static_cast<unsigned>(in.size(0)));
  if (use64) {
    tensorlet::cuda::launch(
        "scale_rows_packed64",
        scale_rows_kernel<
            tensorlet::PackedTensorAccessor64<const float, 2, tensorlet::RestrictPtrTraits>,
            tensorlet::PackedTensorAccessor64<float, 2, tensorlet::RestrictPtrTraits>>,
        grid, dim3(64), 0, in.packed_accessor64<const float, 2, tensorlet::RestrictPtrTraits>(),
        out.packed_accessor64<float, 2, tensorlet::RestrictPtrTraits>());
  } else {
    tensorlet::cuda::launch("scale_rows_packed32",
                            scale_rows_kernel<tensorlet::PackedTensorAccessor32<const float, 2>,
                                              tensorlet::PackedTensorAccessor32<float, 2>>,
                            grid, dim3(64), 0, in.packed_accessor32<const float, 2>(),
                            out.packed_accessor32<float, 2>());
  }
  return out;
}

}  // namespace tl_test

// cuda::copy for every device pair with a CUDA side: same device (the copy kernel), host <->
// device (cudaMemcpyAsync, staged through contiguous temporaries), and between two GPUs
// (cuda_copy_peer.cpp).
#include "tensorlet/backends/cuda/cuda_device_error.h"
#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/cuda/cuda_copy_peer.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

// Host temporaries in this range are pinned: pageable transfers go through the driver's staging
// buffer at a fraction of the bandwidth, which matters once the copy is not tiny. Past the upper
// bound, pinning (cached by power-of-two size) would hold too much page-locked RAM.
constexpr size_t kMinPinnedStaging = size_t{1} << 20;
constexpr size_t kMaxPinnedStaging = size_t{256} << 20;

Tensor host_temp(const Tensor& like, DType dtype) {
  const size_t nbytes = static_cast<size_t>(like.numel()) * element_size(dtype);
  if (nbytes >= kMinPinnedStaging && nbytes <= kMaxPinnedStaging) {
    try {
      return make_tensor(like.shape(), dtype, Device::cpu(), true);
    } catch (const OutOfMemoryError&) {
      // Pinned memory is only faster; pageable memory does the same job.
    }
  }
  return make_tensor(like.shape(), dtype, Device::cpu());
}

void host_to_device(const Tensor& src, const Tensor& out, bool non_blocking) {
  const int device = out.device().index();
  // The host side in out's dtype and contiguous (also expands broadcast sources), on the CPU.
  Tensor host = src;
  if (src.dtype() != out.dtype() || !src.is_contiguous()) {
    host = host_temp(src, out.dtype());
    cpu_backend().copy(src, host);
  }
  if (t_open_captures != 0 && !(non_blocking && host.is_same(src) && host.is_pinned()))
    fail_if_capturing(non_blocking
                          ? "copies from pageable host memory or converts on the host, which a "
                            "replay cannot repeat (copy from a pinned tensor of the same dtype)"
                          : "waits for a copy from the host (a non_blocking copy from a pinned "
                            "tensor can be captured)");
  OnDevice on_device(device);
  cudaStream_t stream = current_stream_handle(device);
  const Tensor dst =
      out.is_contiguous() ? out : make_tensor(out.shape(), out.dtype(), out.device());
  TL_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), host.data_ptr(), out.nbytes(),
                                cudaMemcpyHostToDevice, stream));
  if (!dst.is_same(out)) copy_same_device(dst, out);
  if (!non_blocking) {
    // As PyTorch: a blocking copy has completed on return, so the caller may overwrite the
    // source at once, pinned or not.
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    raise_device_errors(device);
  } else if (host.is_pinned()) {
    // The DMA reads the pinned block later: keep it from being reused before then.
    record_pinned_use(host.data_ptr(), stream);
  }
  // A pageable non-blocking source needs no wait: cudaMemcpyAsync returns only once the driver
  // has copied it to its staging buffer.
}

void device_to_host(const Tensor& src, const Tensor& out, bool non_blocking) {
  const int device = src.device().index();
  OnDevice on_device(device);
  cudaStream_t stream = current_stream_handle(device);
  // A strided or broadcast source is gathered on the device (converting there too: fewer bytes
  // cross the bus when out's dtype is narrower).
  Tensor dsrc = src;
  if (!src.is_contiguous()) {
    dsrc = make_tensor(src.shape(), out.dtype(), src.device());
    copy_same_device(src, dsrc);
  }
  // Straight into out when it can take the bytes as they are; otherwise through a host temp that
  // the CPU converts or scatters from (cheaper than a conversion kernel for small copies).
  const bool direct = dsrc.dtype() == out.dtype() && out.is_contiguous();
  if (t_open_captures != 0 && !(direct && non_blocking && out.is_pinned()))
    fail_if_capturing(
        "waits for the GPU to copy to the host (a non_blocking copy into a pinned "
        "tensor of the same dtype can be captured)");
  const Tensor host = direct ? out : host_temp(dsrc, dsrc.dtype());
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data_ptr(), dsrc.data_ptr(), dsrc.nbytes(),
                                cudaMemcpyDeviceToHost, stream));
  if (direct && non_blocking && out.is_pinned()) {
    record_pinned_use(out.data_ptr(), stream);
    return;
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  raise_device_errors(device);
  if (!direct) cpu_backend().copy(host, out);
}

}  // namespace

void copy(const Tensor& src, const Tensor& out, bool non_blocking) {
  if (out.numel() == 0) return;
  if (src.is_cuda() && out.is_cuda()) {
    if (src.device() == out.device()) {
      OnDevice on_device(out.device().index());
      copy_same_device(src, out);
    } else {
      copy_between_devices(src, out);
    }
  } else if (out.is_cuda()) {
    host_to_device(src, out, non_blocking);
  } else {
    device_to_host(src, out, non_blocking);
  }
}

}  // namespace tensorlet::cuda

// cuda::copy for every device pair with a CUDA side: same device (the copy kernel), host <->
// device (cudaMemcpyAsync, staged through contiguous temporaries), and between two GPUs
// (cudaMemcpyPeerAsync ordered by events on both devices' current streams).
#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace tensorlet::cuda {
namespace {

// Host temporaries in this range are pinned: pageable transfers go through the driver's staging
// buffer at a fraction of the bandwidth, which matters once the copy is not tiny. Past the upper
// bound, pinning (cached by power-of-two size) would hold too much page-locked RAM.
constexpr size_t kMinPinnedStaging = size_t{1} << 20;
constexpr size_t kMaxPinnedStaging = size_t{256} << 20;

// Events that order cross-device copies, pooled per device (creating one costs microseconds).
// Reusing an event right after cudaStreamWaitEvent is safe: the wait captured its state.
class EventPool {
 public:
  // An event of `device`, which must be current.
  cudaEvent_t take(int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<cudaEvent_t>& pool = pool_of(device);
      if (!pool.empty()) {
        cudaEvent_t e = pool.back();
        pool.pop_back();
        return e;
      }
    }
    cudaEvent_t e = nullptr;
    TL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void give_back(int device, cudaEvent_t e) noexcept {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      pool_of(device).push_back(e);
    } catch (...) {
      // Losing an event to an allocation failure only leaks it.
    }
  }

 private:
  std::vector<cudaEvent_t>& pool_of(int device) {
    if (static_cast<size_t>(device) >= pools_.size())
      pools_.resize(static_cast<size_t>(device) + 1);
    return pools_[static_cast<size_t>(device)];
  }
  std::mutex mutex_;
  std::vector<std::vector<cudaEvent_t>> pools_;
};

EventPool& event_pool() {
  static auto* pool = new EventPool();  // never destroyed, as the streams it orders
  return *pool;
}

// A pooled event of `device` for one scope.
class ScopedEvent {
 public:
  explicit ScopedEvent(int device) : device_(device), event_(event_pool().take(device)) {}
  ~ScopedEvent() { event_pool().give_back(device_, event_); }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  int device_;
  cudaEvent_t event_;
};

// Lets `device` read `peer`'s memory directly when the hardware allows; asked once per pair.
// cudaMemcpyPeerAsync works either way (the driver stages through the host without it).
void enable_peer_access(int device, int peer) {
  static std::mutex mutex;
  static std::vector<char>* asked = new std::vector<char>();
  const int n = device_count();
  std::lock_guard<std::mutex> lock(mutex);
  if (asked->empty()) asked->assign(static_cast<size_t>(n) * static_cast<size_t>(n), 0);
  char& done = (*asked)[static_cast<size_t>(device) * static_cast<size_t>(n) + peer];
  if (done) return;
  done = 1;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || !can) {
    (void)cudaGetLastError();
    return;
  }
  OnDevice on_device(device);
  // Already enabled (by the user, or another library in the process) is fine, and so is any
  // other failure (too many peers): the copy then takes the staged path.
  if (cudaDeviceEnablePeerAccess(peer, 0) != cudaSuccess) (void)cudaGetLastError();
}

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
  const Tensor host = direct ? out : host_temp(dsrc, dsrc.dtype());
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data_ptr(), dsrc.data_ptr(), dsrc.nbytes(),
                                cudaMemcpyDeviceToHost, stream));
  if (direct && non_blocking && out.is_pinned()) {
    record_pinned_use(out.data_ptr(), stream);
    return;
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!direct) cpu_backend().copy(host, out);
}

// Between two GPUs. The copy runs on the destination's current stream, after the work enqueued
// so far on the source's current stream (which produced src), and the source stream then waits
// for the copy, so src's memory is not handed out again there before the copy read it.
void device_to_device(const Tensor& src, const Tensor& out) {
  const int from = src.device().index();
  const int to = out.device().index();
  Tensor dsrc = src;
  if (!src.is_contiguous() || src.dtype() != out.dtype()) {
    OnDevice on_from(from);
    dsrc = make_tensor(src.shape(), out.dtype(), src.device());
    copy_same_device(src, dsrc);
  }
  enable_peer_access(to, from);
  cudaStream_t from_stream = current_stream_handle(from);
  cudaStream_t to_stream = current_stream_handle(to);
  OnDevice on_to(to);
  const Tensor dst =
      out.is_contiguous() ? out : make_tensor(out.shape(), out.dtype(), out.device());
  {
    OnDevice on_from(from);
    ScopedEvent produced(from);
    TL_CUDA_CHECK(cudaEventRecord(produced.get(), from_stream));
    OnDevice back_on_to(to);
    TL_CUDA_CHECK(cudaStreamWaitEvent(to_stream, produced.get(), 0));
  }
  TL_CUDA_CHECK(
      cudaMemcpyPeerAsync(dst.data_ptr(), to, dsrc.data_ptr(), from, dsrc.nbytes(), to_stream));
  {
    ScopedEvent copied(to);
    TL_CUDA_CHECK(cudaEventRecord(copied.get(), to_stream));
    OnDevice on_from(from);
    TL_CUDA_CHECK(cudaStreamWaitEvent(from_stream, copied.get(), 0));
  }
  if (!dst.is_same(out)) copy_same_device(dst, out);
}

}  // namespace

void copy(const Tensor& src, const Tensor& out, bool non_blocking) {
  if (out.numel() == 0) return;
  if (src.is_cuda() && out.is_cuda()) {
    if (src.device() == out.device()) {
      OnDevice on_device(out.device().index());
      copy_same_device(src, out);
    } else {
      device_to_device(src, out);
    }
  } else if (out.is_cuda()) {
    host_to_device(src, out, non_blocking);
  } else {
    device_to_host(src, out, non_blocking);
  }
}

}  // namespace tensorlet::cuda

// Copies between two GPUs, and tl::cuda::can_access_peer. With peer access the copy is one
// cudaMemcpyPeerAsync on the destination's stream; without it, chunks go device -> pinned host
// on the source's stream and pinned host -> device on the destination's, ordered by an event
// each, so neither host nor either device waits for more than its own part.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_copy_peer.h"
#include "tensorlet/backends/cuda/cuda_event_pool.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::cuda {
namespace {

// Staging chunk: big enough to run the bus at full speed, small enough that the device -> host
// half of one chunk overlaps the host -> device half of the one before.
constexpr size_t kStagingChunk = size_t{8} << 20;

// TL_CUDA_NO_PEER=1: every copy between GPUs is staged through the host, as on machines without
// peer access (for tests of that path, and to compare the two).
bool peer_disabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("TL_CUDA_NO_PEER");
    return v != nullptr && v[0] == '1';
  }();
  return disabled;
}

bool hardware_peer(int device, int peer) {
  if (device == peer) return false;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return can != 0;
}

// Whether copies from `from` to `to` take the direct path. The first ask for a pair lets `to`
// read `from`'s memory (cudaDeviceEnablePeerAccess); a failure there (too many peers) means the
// staged path for good. One global lock, taken once per copy and never held for a copy.
bool use_peer_path(int to, int from) {
  static std::mutex mutex;
  static auto* state = new std::vector<signed char>();  // per pair: 0 unknown, 1 direct, -1 staged
  const int n = device_count();
  std::lock_guard<std::mutex> lock(mutex);
  if (state->empty()) state->assign(static_cast<size_t>(n) * static_cast<size_t>(n), 0);
  signed char& s = (*state)[static_cast<size_t>(to) * static_cast<size_t>(n) + from];
  if (s != 0) return s > 0;
  s = -1;
  if (peer_disabled() || !hardware_peer(to, from)) return false;
  OnDevice on_to(to);
  const cudaError_t err = cudaDeviceEnablePeerAccess(from, 0);
  // Already enabled (by the user, or another library in the process) is as good.
  if (err == cudaSuccess || err == cudaErrorPeerAccessAlreadyEnabled) s = 1;
  if (err != cudaSuccess) (void)cudaGetLastError();
  return s > 0;
}

// `bytes` from `src` on `from` to `dst` on `to` with cudaMemcpyPeerAsync on to's stream, after
// the work so far on from's stream (which produced src); from's stream then waits for the copy,
// so src is not handed out again there before the copy read it. Without peer access the driver
// stages the copy itself, so this is also the fallback when no pinned memory is left.
void peer_memcpy(void* dst, int to, const void* src, int from, size_t bytes, cudaStream_t to_stream,
                 cudaStream_t from_stream) {
  {
    OnDevice on_from(from);
    ScopedEvent produced(from);
    TL_CUDA_CHECK(cudaEventRecord(produced.get(), from_stream));
    OnDevice on_to(to);
    TL_CUDA_CHECK(cudaStreamWaitEvent(to_stream, produced.get(), 0));
  }
  OnDevice on_to(to);
  TL_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to, src, from, bytes, to_stream));
  ScopedEvent copied(to);
  TL_CUDA_CHECK(cudaEventRecord(copied.get(), to_stream));
  OnDevice on_from(from);
  TL_CUDA_CHECK(cudaStreamWaitEvent(from_stream, copied.get(), 0));
}

// A block of pinned host memory for one chunk; freed at scope end, when the pinned allocator
// keeps it until the copies recorded on it have run.
class PinnedChunk {
 public:
  explicit PinnedChunk(size_t bytes) : bytes_(bytes), ptr_(pinned_allocator().allocate(bytes)) {}
  ~PinnedChunk() { pinned_allocator().deallocate(ptr_, bytes_); }
  PinnedChunk(const PinnedChunk&) = delete;
  PinnedChunk& operator=(const PinnedChunk&) = delete;
  void* get() const { return ptr_; }

 private:
  size_t bytes_;
  void* ptr_;
};

// Device -> pinned host on from's stream, then pinned host -> device on to's stream once an
// event says the chunk arrived. Only the source stream reads src, so it never waits for `to`.
void staged_memcpy(char* dst, int to, const char* src, int from, size_t bytes,
                   cudaStream_t to_stream, cudaStream_t from_stream) {
  check_not_capturing("copies between GPUs through host memory");
  for (size_t done = 0; done < bytes;) {
    const size_t len = std::min(kStagingChunk, bytes - done);
    void* host = nullptr;
    try {
      PinnedChunk chunk(len);
      host = chunk.get();
      OnDevice on_from(from);
      TL_CUDA_CHECK(cudaMemcpyAsync(host, src + done, len, cudaMemcpyDeviceToHost, from_stream));
      record_pinned_use(host, from_stream);
      ScopedEvent staged(from);
      TL_CUDA_CHECK(cudaEventRecord(staged.get(), from_stream));
      OnDevice on_to(to);
      TL_CUDA_CHECK(cudaStreamWaitEvent(to_stream, staged.get(), 0));
      TL_CUDA_CHECK(cudaMemcpyAsync(dst + done, host, len, cudaMemcpyHostToDevice, to_stream));
      record_pinned_use(host, to_stream);
    } catch (const OutOfMemoryError&) {
      if (host != nullptr) throw;  // only a failed allocation of the chunk is recoverable
      // No pinned memory left: the driver stages the rest itself.
      peer_memcpy(dst + done, to, src + done, from, bytes - done, to_stream, from_stream);
      return;
    }
    done += len;
  }
}

}  // namespace

bool can_access_peer(int device, int peer) {
  constexpr const char* op = "tl::cuda::can_access_peer";
  const int d = resolve_device(device, op);
  const int p = resolve_device(peer, op);
  return !peer_disabled() && hardware_peer(d, p);
}

void copy_between_devices(const Tensor& src, const Tensor& out) {
  const int from = src.device().index();
  const int to = out.device().index();
  // Both ends contiguous and in out's dtype: a strided or converting source is packed on its
  // own device first, a strided destination is scattered on its device after.
  Tensor dsrc = src;
  if (!src.is_contiguous() || src.dtype() != out.dtype()) {
    OnDevice on_from(from);
    dsrc = make_tensor(src.shape(), out.dtype(), src.device());
    copy_same_device(src, dsrc);
  }
  const bool direct = use_peer_path(to, from);
  cudaStream_t from_stream = current_stream_handle(from);
  cudaStream_t to_stream = current_stream_handle(to);
  OnDevice on_to(to);
  const Tensor dst =
      out.is_contiguous() ? out : make_tensor(out.shape(), out.dtype(), out.device());
  if (direct)
    peer_memcpy(dst.data_ptr(), to, dsrc.data_ptr(), from, dsrc.nbytes(), to_stream, from_stream);
  else
    staged_memcpy(static_cast<char*>(dst.data_ptr()), to, static_cast<const char*>(dsrc.data_ptr()),
                  from, dsrc.nbytes(), to_stream, from_stream);
  if (!dst.is_same(out)) copy_same_device(dst, out);
}

}  // namespace tensorlet::cuda

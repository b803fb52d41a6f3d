// The backend's event pool: one list of free events per device behind one mutex, which is held
// for the list operations only, never across a CUDA call.
#include "tensorlet/backends/cuda/cuda_event_pool.h"

#include <mutex>
#include <vector>

#include "tensorlet/backends/cuda/cuda_internal.h"

namespace tensorlet::cuda {
namespace {

struct EventPool {
  std::mutex mutex;
  std::vector<std::vector<cudaEvent_t>> free;  // per device

  std::vector<cudaEvent_t>& of(int device) {
    if (static_cast<size_t>(device) >= free.size()) free.resize(static_cast<size_t>(device) + 1);
    return free[static_cast<size_t>(device)];
  }
};

EventPool& pool() {
  static auto* p = new EventPool();  // never destroyed, as the streams its events order
  return *p;
}

}  // namespace

namespace {

// A free event of `device`, or nullptr when its list is empty.
cudaEvent_t pop_free(int device) {
  EventPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  std::vector<cudaEvent_t>& list = p.of(device);
  if (list.empty()) return nullptr;
  cudaEvent_t e = list.back();
  list.pop_back();
  return e;
}

}  // namespace

cudaEvent_t take_pooled_event(int device) {
  if (cudaEvent_t e = pop_free(device)) return e;
  cudaEvent_t e = nullptr;
  TL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

cudaEvent_t try_take_pooled_event(int device) noexcept {
  try {
    if (cudaEvent_t e = pop_free(device)) return e;
  } catch (...) {
    return nullptr;  // the pool's bookkeeping could not grow
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return e;
}

void give_back_pooled_event(int device, cudaEvent_t event) noexcept {
  try {
    EventPool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.of(device).push_back(event);
  } catch (...) {
    // Losing an event to an allocation failure only leaks it.
  }
}

}  // namespace tensorlet::cuda

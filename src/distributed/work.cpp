// Work: waiting for a collective on the GPU (stream waits on its events) or on the host (polled
// under the communicator's timeout, so a missing peer aborts instead of hanging).
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed {

void Work::wait() {
  if (!state_) return;
  for (size_t i = 0; i < state_->devices.size(); ++i) {
    const int device = state_->devices[i];
    cuda::OnDevice on_device(device);
    cuda::check(
        cudaStreamWaitEvent(cuda::current_stream_handle(device), state_->events[i].get(), 0),
        state_->op, "cudaStreamWaitEvent");
  }
}

void Work::synchronize() {
  if (!state_) return;
  detail::CommState& s = detail::state_of(state_->comm, state_->op);
  std::vector<cudaEvent_t> events;
  for (const detail::DeviceEvent& e : state_->events) events.push_back(e.get());
  detail::wait_events(s, state_->op, events, detail::Clock::now() + s.options.timeout);
}

bool Work::is_completed() const {
  if (!state_) return true;
  const detail::CommState& s = detail::state_of(state_->comm, state_->op);
  for (const detail::DeviceEvent& e : state_->events) {
    const cudaError_t r = cudaEventQuery(e.get());
    if (r == cudaErrorNotReady) {
      // A collective whose peer failed never completes: report the error rather than "not yet".
      for (ncclComm_t comm : s.comms) {
        ncclResult_t async = ncclSuccess;
        detail::check_nccl(ncclCommGetAsyncError(comm, &async), comm, state_->op,
                           "ncclCommGetAsyncError");
        detail::check_nccl(async, comm, state_->op, "the collective");
      }
      return false;
    }
    cuda::check(r, state_->op, "cudaEventQuery");
  }
  return true;
}

}  // namespace tensorlet::distributed

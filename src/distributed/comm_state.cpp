// The lifetime of NCCL communicators: orderly destruction (finalize, then destroy), abort, and
// the CUDA events that mark where a collective ends on its stream.
#include <sstream>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed::detail {

CommState::~CommState() {
  if (aborted || comms.empty()) return;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
  // Finalize first: it lets the pending work drain. Several communicators of this process are
  // finalized in one group, so one thread drives them together (a finalize may wait on its peers,
  // as a collective does). Nonblocking ones are polled under the timeout like every wait;
  // anything but a clean finish falls back to an abort, which never waits for peers. A destructor
  // cannot report errors, so they are dropped.
  const Clock::time_point deadline = Clock::now() + options.timeout;
  bool clean = ncclGroupStart() == ncclSuccess;
  if (clean) {
    for (ncclComm_t comm : comms) {
      const ncclResult_t r = ncclCommFinalize(comm);
      clean = clean && (r == ncclSuccess || r == ncclInProgress);
    }
    const ncclResult_t r = ncclGroupEnd();
    clean = clean && (r == ncclSuccess || r == ncclInProgress);
  }
  Poller poller;
  for (size_t i = 0; clean && i < comms.size(); ++i) {
    while (true) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = ncclCommGetAsyncError(comms[i], &state);
      if (r != ncclSuccess || state != ncclInProgress) {
        clean = r == ncclSuccess && state == ncclSuccess;
        break;
      }
      if (Clock::now() >= deadline) {
        clean = false;
        break;
      }
      poller.pause();
    }
  }
  if (!clean) {
    abort();
    return;
  }
#endif
  for (ncclComm_t comm : comms) (void)ncclCommDestroy(comm);
  comms.clear();
}

void CommState::abort() noexcept {
  for (ncclComm_t comm : comms) (void)ncclCommAbort(comm);
  comms.clear();
  aborted = true;
}

std::string CommState::who() const {
  std::ostringstream os;
  if (ranks.size() == 1)
    os << "rank " << ranks[0] << " of " << world_size;
  else if (!ranks.empty())
    os << "ranks " << ranks.front() << "-" << ranks.back() << " of " << world_size;
  else
    os << "a communicator of " << world_size;
  return os.str();
}

CommState& state_of(const std::shared_ptr<CommState>& state, const char* op, bool usable) {
  if (!state)
    fail<Error>(op, "the communicator is empty (default-constructed or moved from); create one ",
                "with Communicator::local, init or from_env");
  if (usable && state->aborted)
    fail<Error>(op, state->who(), ": the communicator was aborted after an earlier timeout or ",
                "NCCL error; create a new one");
  return *state;
}

DeviceEvent::DeviceEvent(int device) {
  cuda::OnDevice on_device(device);
  cuda::check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), cuda::current_op_name(),
              "cudaEventCreateWithFlags");
}

DeviceEvent::~DeviceEvent() {
  if (event_ != nullptr) (void)cudaEventDestroy(event_);
}

}  // namespace tensorlet::distributed::detail

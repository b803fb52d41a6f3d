// Checked NCCL calls and the deadline-bounded polling that stands in for every blocking wait, so
// that a missing or failed peer ends in an error (and an aborted communicator), never a hang.
#include <sstream>
#include <thread>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed::detail {
namespace {

std::string nccl_message(ncclResult_t r, ncclComm_t comm, const char* op, const char* what) {
  std::ostringstream os;
  os << "[" << op << "] " << what << " failed: " << ncclGetErrorString(r);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
  // The last error may belong to an earlier asynchronous failure; it is still the best detail.
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') os << " (" << last << ")";
#else
  (void)comm;
#endif
  return os.str();
}

// The message is built before the abort frees the communicator it reads from.
[[noreturn]] void abort_and_throw(CommState& s, ncclResult_t r, size_t local, const char* op,
                                  const char* what) {
  std::string message = nccl_message(r, s.comms[local], op, what);
  message += "; " + s.who() + " aborted its communicator";
  s.abort();
  throw CudaError(message);
}

// NCCL reports a failed collective on the communicator, not on the stream: a peer lost mid-way
// shows here while the events never complete.
void check_async(CommState& s, const char* op) {
  for (size_t i = 0; i < s.comms.size(); ++i) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(s.comms[i], &state);
    if (r != ncclSuccess) abort_and_throw(s, r, i, op, "ncclCommGetAsyncError");
    if (state != ncclSuccess && state != ncclInProgress)
      abort_and_throw(s, state, i, op, "the collective");
  }
}

}  // namespace

void check_nccl(ncclResult_t r, ncclComm_t comm, const char* op, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress) throw_nccl(r, comm, op, what);
}

void throw_nccl(ncclResult_t r, ncclComm_t comm, const char* op, const char* what) {
  throw CudaError(nccl_message(r, comm, op, what));
}

std::string seconds_text(std::chrono::milliseconds duration) {
  std::ostringstream os;
  const auto ms = duration.count();
  if (ms % 1000 == 0)
    os << ms / 1000 << "s";
  else
    os << static_cast<double>(ms) / 1000.0 << "s";
  return os.str();
}

void Poller::pause() {
  if (rounds_ < 64) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(rounds_ < 2000 ? std::chrono::microseconds(50)
                                               : std::chrono::microseconds(1000));
  }
  ++rounds_;
}

void throw_timeout(const CommState& s, const char* op, const char* waiting_for) {
  fail<Error>(op, s.who(), ": timed out after ", seconds_text(s.options.timeout), " waiting for ",
              waiting_for, "; the communicator was aborted and cannot be used again");
}

void settle(CommState& s, const char* op, Clock::time_point deadline) {
  Poller poller;
  for (size_t i = 0; i < s.comms.size(); ++i) {
    while (true) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = ncclCommGetAsyncError(s.comms[i], &state);
      if (r != ncclSuccess) abort_and_throw(s, r, i, op, "ncclCommGetAsyncError");
      if (state == ncclSuccess) break;
      if (state != ncclInProgress) abort_and_throw(s, state, i, op, "NCCL");
      if (Clock::now() >= deadline) {
        s.abort();
        throw_timeout(s, op, "NCCL to issue the collective (a rank that never called it?)");
      }
      poller.pause();
    }
  }
}

void wait_events(CommState& s, const char* op, const std::vector<cudaEvent_t>& events,
                 Clock::time_point deadline) {
  Poller poller;
  while (true) {
    bool done = true;
    for (cudaEvent_t e : events) {
      const cudaError_t r = cudaEventQuery(e);
      if (r == cudaErrorNotReady)
        done = false;
      else
        cuda::check(r, op, "cudaEventQuery");
    }
    check_async(s, op);
    if (done) return;
    if (Clock::now() >= deadline) {
      s.abort();
      throw_timeout(s, op, "the collective to complete (a rank that never called it?)");
    }
    poller.pause();
  }
}

}  // namespace tensorlet::distributed::detail

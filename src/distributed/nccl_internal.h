// What the NCCL build of tl::distributed shares: the communicator and work state, checked NCCL
// calls, deadline polling, tensor checks, the cross-rank input check and the launch helper.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensorlet/distributed/distributed.h"

namespace tensorlet::distributed::detail {

using Clock = std::chrono::steady_clock;

// Everything a Communicator owns. Work handles share it, so a pending Work can still poll (and
// abort) its communicator after the Communicator object was moved or destroyed.
struct CommState {
  std::vector<ncclComm_t> comms;  // one per local device, in local order
  std::vector<int> devices;       // the CUDA index of each local device
  std::vector<Device> device_list;
  std::vector<int> ranks;  // the rank of each local device
  int world_size = 0;
  bool all_local = false;  // every rank lives in this process (Communicator::local)
  CommOptions options;
  bool aborted = false;

  CommState() = default;
  CommState(const CommState&) = delete;
  CommState& operator=(const CommState&) = delete;
  ~CommState();
  // ncclCommAbort on every communicator: frees them without waiting for peers or pending work.
  void abort() noexcept;
  // "rank 1 of 2", or "ranks 0-3 of 4" for a one-process communicator: for error messages.
  std::string who() const;
};

// The communicator behind a Communicator, or a tl::Error naming `op` when it is empty (moved from)
// or, unless only its description is needed (`usable` false), was aborted.
CommState& state_of(const std::shared_ptr<CommState>& state, const char* op, bool usable = true);

// Runs a rank's own checks of its arguments and returns their error instead of throwing it: across
// processes a failing rank still takes part in the input check, so its peers fail at once too
// rather than waiting out the timeout.
inline std::exception_ptr run_checks(const std::function<void()>& checks) {
  try {
    checks();
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

// A CUDA event of one device, created at construction (the device need not be current).
class DeviceEvent {
 public:
  explicit DeviceEvent(int device);
  ~DeviceEvent();
  DeviceEvent(DeviceEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  DeviceEvent& operator=(DeviceEvent&&) = delete;
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

struct WorkState {
  const char* op = "";
  std::shared_ptr<CommState> comm;
  std::vector<int> devices;
  std::vector<DeviceEvent> events;  // recorded after the collective, one per involved device
};

struct WorkAccess {
  static Work make(std::shared_ptr<WorkState> state) {
    Work work;
    work.state_ = std::move(state);
    return work;
  }
};

// Sets NCCL_NVLS_ENABLE=0 once, before this process's first NCCL call (nccl_env.cpp says why).
void prepare_nccl();

// Throws CudaError "[op] what: <ncclGetErrorString> (<ncclGetLastError>)" unless r is ncclSuccess
// or ncclInProgress (what a nonblocking communicator answers while it finishes in the background).
void check_nccl(ncclResult_t r, ncclComm_t comm, const char* op, const char* what);
[[noreturn]] void throw_nccl(ncclResult_t r, ncclComm_t comm, const char* op, const char* what);

// "3s", "0.5s": a timeout as the messages print it.
std::string seconds_text(std::chrono::milliseconds duration);

// Waits a little between two polls: yields at first so quick completions are seen at once, then
// sleeps so that a long wait does not keep a core busy.
class Poller {
 public:
  void pause();

 private:
  int rounds_ = 0;
};

// Polls until no communicator of s reports ncclInProgress. An NCCL error aborts the communicator
// and throws CudaError; passing `deadline` aborts it and throws the timeout tl::Error.
void settle(CommState& s, const char* op, Clock::time_point deadline);
// Polls until every event has completed, with the same error and deadline handling.
void wait_events(CommState& s, const char* op, const std::vector<cudaEvent_t>& events,
                 Clock::time_point deadline);
// The timeout error of `op` after `s` was aborted.
[[noreturn]] void throw_timeout(const CommState& s, const char* op, const char* waiting_for);

// ---- the NCCL unique id (unique_id.cpp) ----

std::string to_hex(const ncclUniqueId& id);
// Parses 2 * NCCL_UNIQUE_ID_BYTES hex digits; a tl::Error naming `op` and `source` otherwise.
ncclUniqueId from_hex(const std::string& hex, const char* op, const std::string& source);
// Writes the id to a temporary file beside `path` and renames it into place (atomic on POSIX).
void write_id_file(const std::string& path, const ncclUniqueId& id, const char* op);
// Polls until `path` exists and reads it; false when `deadline` passed first.
bool read_id_file(const std::string& path, ncclUniqueId* id, Clock::time_point deadline,
                  const char* op);

// ---- tensor checks (tensor_checks.cpp) ----

// The NCCL type of a dtype: every dtype but int16 (which NCCL lacks: DTypeError, as PyTorch);
// bool only moves as bytes (`reduction` false), else DTypeError.
ncclDataType_t nccl_type(DType dtype, const char* op, bool reduction);
// The NCCL reduction; Avg needs a floating dtype (as in PyTorch) and NCCL >= 2.10.
ncclRedOp_t nccl_op(ReduceOp op, DType dtype, const char* op_name);
const char* reduce_op_name(ReduceOp op);
// One defined, contiguous CUDA tensor per local device of s, each on its device, else a typed
// error naming `role` ("tensor", "output", "input") and its position.
void check_tensors(const CommState& s, const char* op, const std::vector<Tensor>& tensors,
                   const char* role);
// The single-tensor forms: s must have exactly one local device.
void check_one_device(const CommState& s, const char* op);
// [world_size * n0, ...] for [n0, ...]; [world_size] for a 0-dim shape.
Shape gathered_shape(const Shape& shape, int world_size);

// ---- cross-rank input check (agreement.cpp) ----

enum class Kind : int64_t { AllReduce = 1, Broadcast, AllGather, ReduceScatter, Send, Recv };

// What a rank passes to one collective, as int64s small enough to all_gather before it:
// status (0 ok, 1 the rank's own checks failed), kind, dtype, argument (op or root), numel, ndim,
// dims (kMaxDims slots).
inline constexpr int kDescriptorLength = 6 + kMaxDims;
using Descriptor = std::array<int64_t, kDescriptorLength>;
Descriptor describe(Kind kind, const Tensor& tensor, int64_t argument);
Descriptor failed_descriptor(Kind kind);

// Checks that every rank's descriptor agrees, after the ranks' own checks (`local_error`, null
// when they passed). One-process: compares the local descriptors on the host. Across
// processes (with check_inputs): all_gathers them first, so every rank throws the same error
// (a rank whose own checks failed rethrows its error, the others name it). Without check_inputs
// it only rethrows local_error.
void agree(CommState& s, const char* op, const std::vector<Descriptor>& local,
           std::exception_ptr local_error);
// The same between the two ranks of a send/recv pair.
void agree_with_peer(CommState& s, const char* op, const Descriptor& local, int peer,
                     std::exception_ptr local_error);

// ---- launch (launch.cpp) ----

// Issues call(i, stream) for every local device i inside one NCCL group, on the device's current
// stream, waits while NCCL finishes it in the background, and returns the Work that records it.
using NcclCall = std::function<ncclResult_t(size_t local, cudaStream_t stream)>;
Work launch(const std::shared_ptr<CommState>& state, const char* op, const char* nccl_function,
            const NcclCall& call);

}  // namespace tensorlet::distributed::detail

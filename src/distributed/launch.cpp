// Issuing a collective: one NCCL call per local device inside one group (a thread driving several
// GPUs deadlocks without it), each on its device's current stream, then an event per stream that
// the returned Work waits on.
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/distributed/nccl_internal.h"

namespace tensorlet::distributed::detail {
namespace {

// Closes the NCCL group on every path: an exception between start and end would otherwise leave
// the thread inside a group that swallows every later NCCL call.
class Group {
 public:
  explicit Group(const char* op) { check_nccl(ncclGroupStart(), nullptr, op, "ncclGroupStart"); }
  ~Group() {
    if (open_) (void)ncclGroupEnd();
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ncclResult_t end() {
    open_ = false;
    return ncclGroupEnd();
  }

 private:
  bool open_ = true;
};

}  // namespace

Work launch(const std::shared_ptr<CommState>& state, const char* op, const char* nccl_function,
            const NcclCall& call) {
  CommState& s = *state;
  const size_t n = s.comms.size();
  std::vector<cudaStream_t> streams(n);
  for (size_t i = 0; i < n; ++i) streams[i] = cuda::current_stream_handle(s.devices[i]);
  const Clock::time_point deadline = Clock::now() + s.options.timeout;
  {
    Group group(op);
    for (size_t i = 0; i < n; ++i) {
      cuda::OnDevice on_device(s.devices[i]);
      check_nccl(call(i, streams[i]), s.comms[i], op, nccl_function);
    }
    check_nccl(group.end(), n == 1 ? s.comms[0] : nullptr, op, "ncclGroupEnd");
  }
  // A nonblocking communicator may still be issuing the kernels (connecting to peers on first
  // use); the events must be recorded after them.
  settle(s, op, deadline);
  auto work = std::make_shared<WorkState>();
  work->op = op;
  work->comm = state;
  work->devices = s.devices;
  work->events.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    cuda::OnDevice on_device(s.devices[i]);
    work->events.emplace_back(s.devices[i]);
    cuda::check(cudaEventRecord(work->events.back().get(), streams[i]), op, "cudaEventRecord");
  }
  return WorkAccess::make(std::move(work));
}

}  // namespace tensorlet::distributed::detail

// send and recv between two ranks, each a process with one local device: the pair agrees on
// element count and dtype first (when check_inputs), then moves the bytes on the current stream.
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed {
namespace {

using detail::CommState;
using detail::Kind;

Work run_point_to_point(const std::shared_ptr<CommState>& state, const char* op, Kind kind,
                        const Tensor& tensor, int peer) {
  CommState& s = detail::state_of(state, op);
  detail::check_one_device(s, op);
  // A peer outside the communicator has no one to exchange the input check with: fail here.
  if (peer < 0 || peer >= s.world_size || peer == s.ranks[0])
    fail<Error>(op, "peer must be another rank in [0, ", s.world_size, "), got ", peer, " (",
                s.who(), ")");
  ncclDataType_t type{};
  const std::exception_ptr error = detail::run_checks([&] {
    detail::check_tensors(s, op, {tensor}, "tensor");
    type = detail::nccl_type(tensor.dtype(), op, false);
  });
  detail::agree_with_peer(
      s, op, error ? detail::failed_descriptor(kind) : detail::describe(kind, tensor, peer), peer,
      error);
  if (tensor.numel() == 0) return Work();
  const auto count = static_cast<size_t>(tensor.numel());
  if (kind == Kind::Send)
    return detail::launch(state, op, "ncclSend", [&](size_t, cudaStream_t stream) {
      return ncclSend(tensor.data_ptr(), count, type, peer, s.comms[0], stream);
    });
  return detail::launch(state, op, "ncclRecv", [&](size_t, cudaStream_t stream) {
    return ncclRecv(tensor.data_ptr(), count, type, peer, s.comms[0], stream);
  });
}

}  // namespace

Work Communicator::send(const Tensor& tensor, int peer) {
  constexpr const char* kOp = "tl::distributed::send";
  profiler::OpScope scope(kOp);
  scope.inputs({&tensor});
  return run_point_to_point(state_, kOp, Kind::Send, tensor, peer);
}

Work Communicator::recv(const Tensor& tensor, int peer) {
  constexpr const char* kOp = "tl::distributed::recv";
  profiler::OpScope scope(kOp);
  scope.inputs({&tensor});
  return run_point_to_point(state_, kOp, Kind::Recv, tensor, peer);
}

}  // namespace tensorlet::distributed

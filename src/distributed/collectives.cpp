// The collectives: all_reduce, broadcast, all_gather, reduce_scatter. Each front-end opens its
// profiler scope, runs its own checks, agrees with the other ranks on the inputs, and issues the
// NCCL call on every local device's current stream.
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed {
namespace {

using detail::CommState;
using detail::Descriptor;
using detail::Kind;

constexpr const char* kAllReduce = "tl::distributed::all_reduce";
constexpr const char* kBroadcast = "tl::distributed::broadcast";
constexpr const char* kAllGather = "tl::distributed::all_gather";
constexpr const char* kReduceScatter = "tl::distributed::reduce_scatter";

bool all_empty(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors)
    if (t.numel() != 0) return false;
  return true;
}

// The descriptors the input check compares: each tensor's, or a failure marker for this rank.
std::vector<Descriptor> descriptors(Kind kind, const std::vector<Tensor>& tensors, int64_t argument,
                                    const std::exception_ptr& error) {
  if (error) return {detail::failed_descriptor(kind)};
  std::vector<Descriptor> out;
  for (const Tensor& t : tensors) out.push_back(detail::describe(kind, t, argument));
  return out;
}

// An output and its input, matched in dtype and device, with shapes `gathered` apart.
void check_pairs(const CommState& s, const char* op, const std::vector<Tensor>& outputs,
                 const std::vector<Tensor>& inputs, bool output_gathered) {
  detail::check_tensors(s, op, outputs, "output");
  detail::check_tensors(s, op, inputs, "input");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    const Tensor& in = inputs[i];
    if (out.dtype() != in.dtype())
      fail<DTypeError>(op, "output ", i, " is ", out.dtype(), " but input ", i, " is ", in.dtype(),
                       "; they must match");
    const Tensor& big = output_gathered ? out : in;
    const Tensor& small = output_gathered ? in : out;
    const Shape expected = detail::gathered_shape(small.shape(), s.world_size);
    if (big.shape() != expected)
      fail<ShapeError>(op, output_gathered ? "output " : "input ", i, " has shape ", big.shape(),
                       " but ", expected, " is needed for ", output_gathered ? "input " : "output ",
                       i, " of shape ", small.shape(), " (world_size ", s.world_size,
                       " blocks along dim 0)");
  }
}

Work run_all_reduce(const std::shared_ptr<CommState>& state, const std::vector<Tensor>& tensors,
                    ReduceOp op) {
  CommState& s = detail::state_of(state, kAllReduce);
  std::vector<ncclDataType_t> types;
  std::vector<ncclRedOp_t> ops;
  const std::exception_ptr error = detail::run_checks([&] {
    detail::check_tensors(s, kAllReduce, tensors, "tensor");
    for (const Tensor& t : tensors) {
      types.push_back(detail::nccl_type(t.dtype(), kAllReduce, true));
      ops.push_back(detail::nccl_op(op, t.dtype(), kAllReduce));
    }
  });
  detail::agree(s, kAllReduce,
                descriptors(Kind::AllReduce, tensors, static_cast<int64_t>(op), error), error);
  if (all_empty(tensors)) return Work();
  return detail::launch(state, kAllReduce, "ncclAllReduce", [&](size_t i, cudaStream_t stream) {
    void* data = tensors[i].data_ptr();
    return ncclAllReduce(data, data, static_cast<size_t>(tensors[i].numel()), types[i], ops[i],
                         s.comms[i], stream);
  });
}

Work run_broadcast(const std::shared_ptr<CommState>& state, const std::vector<Tensor>& tensors,
                   int root) {
  CommState& s = detail::state_of(state, kBroadcast);
  std::vector<ncclDataType_t> types;
  const std::exception_ptr error = detail::run_checks([&] {
    if (root < 0 || root >= s.world_size)
      fail<Error>(kBroadcast, "root must be a rank in [0, ", s.world_size, "), got ", root);
    detail::check_tensors(s, kBroadcast, tensors, "tensor");
    for (const Tensor& t : tensors)
      types.push_back(detail::nccl_type(t.dtype(), kBroadcast, false));
  });
  detail::agree(s, kBroadcast, descriptors(Kind::Broadcast, tensors, root, error), error);
  if (all_empty(tensors)) return Work();
  return detail::launch(state, kBroadcast, "ncclBroadcast", [&](size_t i, cudaStream_t stream) {
    void* data = tensors[i].data_ptr();
    return ncclBroadcast(data, data, static_cast<size_t>(tensors[i].numel()), types[i], root,
                         s.comms[i], stream);
  });
}

Work run_all_gather(const std::shared_ptr<CommState>& state, const std::vector<Tensor>& outputs,
                    const std::vector<Tensor>& inputs) {
  CommState& s = detail::state_of(state, kAllGather);
  std::vector<ncclDataType_t> types;
  const std::exception_ptr error = detail::run_checks([&] {
    check_pairs(s, kAllGather, outputs, inputs, /*output_gathered=*/true);
    for (const Tensor& t : inputs) types.push_back(detail::nccl_type(t.dtype(), kAllGather, false));
  });
  detail::agree(s, kAllGather, descriptors(Kind::AllGather, inputs, 0, error), error);
  if (all_empty(inputs)) return Work();
  return detail::launch(state, kAllGather, "ncclAllGather", [&](size_t i, cudaStream_t stream) {
    return ncclAllGather(inputs[i].data_ptr(), outputs[i].data_ptr(),
                         static_cast<size_t>(inputs[i].numel()), types[i], s.comms[i], stream);
  });
}

Work run_reduce_scatter(const std::shared_ptr<CommState>& state, const std::vector<Tensor>& outputs,
                        const std::vector<Tensor>& inputs, ReduceOp op) {
  CommState& s = detail::state_of(state, kReduceScatter);
  std::vector<ncclDataType_t> types;
  std::vector<ncclRedOp_t> ops;
  const std::exception_ptr error = detail::run_checks([&] {
    check_pairs(s, kReduceScatter, outputs, inputs, /*output_gathered=*/false);
    for (const Tensor& t : inputs) {
      types.push_back(detail::nccl_type(t.dtype(), kReduceScatter, true));
      ncclRedOp_t nccl = detail::nccl_op(op, t.dtype(), kReduceScatter);
      // One rank: the average is the sum. NCCL 2.28's one-rank path for an out-of-place ncclAvg
      // reduce_scatter left the last elements unwritten for some counts (4097 float32, 5000
      // float64 on an H100, 2026-11-23), while ncclSum copied them right.
      if (s.world_size == 1 && nccl == ncclAvg) nccl = ncclSum;
      ops.push_back(nccl);
    }
  });
  detail::agree(s, kReduceScatter,
                descriptors(Kind::ReduceScatter, inputs, static_cast<int64_t>(op), error), error);
  if (all_empty(outputs)) return Work();
  return detail::launch(state, kReduceScatter, "ncclReduceScatter",
                        [&](size_t i, cudaStream_t stream) {
                          return ncclReduceScatter(inputs[i].data_ptr(), outputs[i].data_ptr(),
                                                   static_cast<size_t>(outputs[i].numel()),
                                                   types[i], ops[i], s.comms[i], stream);
                        });
}

}  // namespace

Work Communicator::all_reduce(const std::vector<Tensor>& tensors, ReduceOp op) {
  profiler::OpScope scope(kAllReduce);
  scope.inputs_of(tensors);
  return run_all_reduce(state_, tensors, op);
}

Work Communicator::all_reduce(const Tensor& tensor, ReduceOp op) {
  profiler::OpScope scope(kAllReduce);
  scope.inputs({&tensor});
  detail::check_one_device(detail::state_of(state_, kAllReduce), kAllReduce);
  return run_all_reduce(state_, {tensor}, op);
}

Work Communicator::broadcast(const std::vector<Tensor>& tensors, int root) {
  profiler::OpScope scope(kBroadcast);
  scope.inputs_of(tensors);
  return run_broadcast(state_, tensors, root);
}

Work Communicator::broadcast(const Tensor& tensor, int root) {
  profiler::OpScope scope(kBroadcast);
  scope.inputs({&tensor});
  detail::check_one_device(detail::state_of(state_, kBroadcast), kBroadcast);
  return run_broadcast(state_, {tensor}, root);
}

Work Communicator::all_gather(const std::vector<Tensor>& outputs,
                              const std::vector<Tensor>& inputs) {
  profiler::OpScope scope(kAllGather);
  scope.inputs_of(inputs);
  return run_all_gather(state_, outputs, inputs);
}

Work Communicator::all_gather(const Tensor& output, const Tensor& input) {
  profiler::OpScope scope(kAllGather);
  scope.inputs({&output, &input});
  detail::check_one_device(detail::state_of(state_, kAllGather), kAllGather);
  return run_all_gather(state_, {output}, {input});
}

Work Communicator::reduce_scatter(const std::vector<Tensor>& outputs,
                                  const std::vector<Tensor>& inputs, ReduceOp op) {
  profiler::OpScope scope(kReduceScatter);
  scope.inputs_of(inputs);
  return run_reduce_scatter(state_, outputs, inputs, op);
}

Work Communicator::reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) {
  profiler::OpScope scope(kReduceScatter);
  scope.inputs({&output, &input});
  detail::check_one_device(detail::state_of(state_, kReduceScatter), kReduceScatter);
  return run_reduce_scatter(state_, {output}, {input}, op);
}

}  // namespace tensorlet::distributed

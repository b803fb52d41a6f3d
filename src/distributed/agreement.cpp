// The cross-rank input check: every rank describes its arguments in a few int64s, the ranks
// exchange them (an NCCL all_gather, or a send/recv pair, on scratch buffers) and each compares
// them on the host, so a mismatch throws the same typed error everywhere instead of corrupting
// memory or hanging. One-process communicators compare their tensors directly.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed::detail {
namespace {

enum Slot { kStatus = 0, kKind, kDType, kArgument, kNumel, kNdim, kDims };

const char* kind_name(int64_t kind) {
  switch (static_cast<Kind>(kind)) {
    case Kind::AllReduce:
      return "tl::distributed::all_reduce";
    case Kind::Broadcast:
      return "tl::distributed::broadcast";
    case Kind::AllGather:
      return "tl::distributed::all_gather";
    case Kind::ReduceScatter:
      return "tl::distributed::reduce_scatter";
    case Kind::Send:
      return "tl::distributed::send";
    case Kind::Recv:
      return "tl::distributed::recv";
  }
  return "an unknown collective";
}

Shape shape_of(const Descriptor& d) {
  Shape s;
  for (int64_t i = 0; i < std::min<int64_t>(d[kNdim], kMaxDims); ++i) s.push_back(d[kDims + i]);
  return s;
}

std::string argument_text(const Descriptor& d) {
  const auto kind = static_cast<Kind>(d[kKind]);
  std::ostringstream os;
  if (kind == Kind::AllReduce || kind == Kind::ReduceScatter)
    os << "ReduceOp::" << reduce_op_name(static_cast<ReduceOp>(d[kArgument]));
  else if (kind == Kind::Broadcast)
    os << "root " << d[kArgument];
  else
    os << "peer " << d[kArgument];
  return os.str();
}

// "rank 2" (a process of its own) or "rank 2 (tensor 2)" (one process driving every rank).
std::string rank_text(const CommState& s, int rank) {
  std::ostringstream os;
  os << "rank " << rank;
  if (s.all_local) os << " (tensor " << rank << ")";
  return os.str();
}

// Every rank runs this on the same descriptors, so all of them throw the same error.
void compare(const CommState& s, const char* op, const std::vector<Descriptor>& all) {
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r][kStatus] != 0)
      fail<Error>(op, rank_text(s, static_cast<int>(r)), " failed its own checks of ",
                  kind_name(all[r][kKind]), " (its error says why); nothing was exchanged");
  const Descriptor& first = all[0];
  const std::string who0 = rank_text(s, 0);
  for (size_t r = 1; r < all.size(); ++r) {
    const Descriptor& d = all[r];
    const std::string who = rank_text(s, static_cast<int>(r));
    if (d[kKind] != first[kKind])
      fail<Error>(op, who, " called ", kind_name(d[kKind]), " while ", who0, " called ",
                  kind_name(first[kKind]),
                  ": every rank must issue the same collectives in the same order");
    if (d[kDType] != first[kDType])
      fail<DTypeError>(op, who, " passed ", static_cast<DType>(d[kDType]), " but ", who0,
                       " passed ", static_cast<DType>(first[kDType]),
                       ": every rank must pass the same dtype");
    if (d[kNdim] != first[kNdim] || d[kNumel] != first[kNumel] ||
        !std::equal(d.begin() + kDims, d.end(), first.begin() + kDims))
      fail<ShapeError>(op, who, " passed shape ", shape_of(d), " but ", who0, " passed ",
                       shape_of(first), ": every rank must pass the same shape");
    if (d[kArgument] != first[kArgument])
      fail<Error>(op, who, " asked for ", argument_text(d), " but ", who0, " for ",
                  argument_text(first), ": every rank must pass the same arguments");
  }
}

// A send pairs with a recv of the same number of elements and dtype, each naming the other.
void compare_pair(const char* op, const Descriptor& mine, const Descriptor& theirs, int peer) {
  if (theirs[kStatus] != 0)
    fail<Error>(op, "rank ", peer, " failed its own checks of ", kind_name(theirs[kKind]),
                " (its error says why); nothing was exchanged");
  const auto expected = static_cast<int64_t>(
      mine[kKind] == static_cast<int64_t>(Kind::Send) ? Kind::Recv : Kind::Send);
  if (theirs[kKind] != expected)
    fail<Error>(op, "rank ", peer, " called ", kind_name(theirs[kKind]), " but ",
                kind_name(expected), " was expected to pair with this ", kind_name(mine[kKind]));
  if (theirs[kDType] != mine[kDType])
    fail<DTypeError>(op, "rank ", peer, " passed ", static_cast<DType>(theirs[kDType]),
                     " but this rank ", static_cast<DType>(mine[kDType]),
                     ": a send and its recv must have the same dtype");
  if (theirs[kNumel] != mine[kNumel])
    fail<ShapeError>(op, "rank ", peer, " passed ", theirs[kNumel], " elements (shape ",
                     shape_of(theirs), ") but this rank ", mine[kNumel], " (shape ", shape_of(mine),
                     "): a send and its recv must have the same number of elements");
}

// Exchanges descriptors through NCCL on the current stream of the only local device: mine goes
// into slot 0 of a device buffer, `exchange` fills the slots after it, and the result comes back
// through pinned memory (a pageable copy would block the host without a deadline). The host
// wait is the one sync per checked collective.
std::vector<Descriptor> run_exchange(
    CommState& s, const char* op, const Descriptor& mine, int slots, const char* nccl_function,
    const std::function<ncclResult_t(int64_t* device, ncclComm_t comm, cudaStream_t stream)>&
        exchange) {
  const int device = s.devices[0];
  const Clock::time_point deadline = Clock::now() + s.options.timeout;
  cuda::OnDevice on_device(device);
  cudaStream_t stream = cuda::current_stream_handle(device);
  const int64_t n = static_cast<int64_t>(slots + 1) * kDescriptorLength;
  Tensor host = make_tensor({n}, kInt64, Device::cpu(), /*pinned=*/true);
  Tensor buffer = make_tensor({n}, kInt64, Device::cuda(device));
  auto* h = static_cast<int64_t*>(host.data_ptr());
  auto* d = static_cast<int64_t*>(buffer.data_ptr());
  const size_t bytes = sizeof(int64_t) * kDescriptorLength;
  std::memcpy(h, mine.data(), bytes);
  cuda::check(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, stream), op, "cudaMemcpyAsync");
  // Should a timeout or error below free `host` before its copies ran, the block is not handed
  // out again until they have.
  cuda::record_pinned_use(h, stream);
  check_nccl(exchange(d, s.comms[0], stream), s.comms[0], op, nccl_function);
  settle(s, op, deadline);
  cuda::check(cudaMemcpyAsync(h + kDescriptorLength, d + kDescriptorLength, bytes * slots,
                              cudaMemcpyDeviceToHost, stream),
              op, "cudaMemcpyAsync");
  cuda::record_pinned_use(h, stream);
  DeviceEvent done(device);
  cuda::check(cudaEventRecord(done.get(), stream), op, "cudaEventRecord");
  wait_events(s, op, {done.get()}, deadline);
  std::vector<Descriptor> out(static_cast<size_t>(slots));
  for (int i = 0; i < slots; ++i)
    std::memcpy(out[i].data(), h + static_cast<int64_t>(i + 1) * kDescriptorLength, bytes);
  return out;
}

}  // namespace

Descriptor describe(Kind kind, const Tensor& tensor, int64_t argument) {
  Descriptor d{};
  d[kKind] = static_cast<int64_t>(kind);
  d[kDType] = static_cast<int64_t>(tensor.dtype());
  d[kArgument] = argument;
  d[kNumel] = tensor.numel();
  d[kNdim] = tensor.dim();
  for (int64_t i = 0; i < tensor.dim(); ++i) d[kDims + i] = tensor.shape()[i];
  return d;
}

Descriptor failed_descriptor(Kind kind) {
  Descriptor d{};
  d[kStatus] = 1;
  d[kKind] = static_cast<int64_t>(kind);
  return d;
}

void agree(CommState& s, const char* op, const std::vector<Descriptor>& local,
           std::exception_ptr local_error) {
  if (s.all_local || !s.options.check_inputs) {
    if (local_error) std::rethrow_exception(local_error);
    if (s.all_local && s.options.check_inputs) compare(s, op, local);
    return;
  }
  const int world = s.world_size;
  std::vector<Descriptor> all = run_exchange(
      s, op, local[0], world, "ncclAllGather (the input check)",
      [](int64_t* d, ncclComm_t comm, cudaStream_t stream) {
        return ncclAllGather(d, d + kDescriptorLength, kDescriptorLength, ncclInt64, comm, stream);
      });
  if (local_error) std::rethrow_exception(local_error);
  compare(s, op, all);
}

void agree_with_peer(CommState& s, const char* op, const Descriptor& local, int peer,
                     std::exception_ptr local_error) {
  if (!s.options.check_inputs) {
    if (local_error) std::rethrow_exception(local_error);
    return;
  }
  std::vector<Descriptor> theirs = run_exchange(
      s, op, local, 1, "ncclSend/ncclRecv (the input check)",
      [peer](int64_t* d, ncclComm_t comm, cudaStream_t stream) {
        // Both directions in one group: each rank sends its descriptor and receives the other's,
        // whichever of the two calls it made.
        ncclResult_t r = ncclGroupStart();
        if (r != ncclSuccess) return r;
        const ncclResult_t sent = ncclSend(d, kDescriptorLength, ncclInt64, peer, comm, stream);
        const ncclResult_t received =
            ncclRecv(d + kDescriptorLength, kDescriptorLength, ncclInt64, peer, comm, stream);
        r = ncclGroupEnd();
        if (sent != ncclSuccess && sent != ncclInProgress) return sent;
        if (received != ncclSuccess && received != ncclInProgress) return received;
        return r;
      });
  if (local_error) std::rethrow_exception(local_error);
  compare_pair(op, local, theirs[0], peer);
}

}  // namespace tensorlet::distributed::detail

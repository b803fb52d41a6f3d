// tl::distributed: NCCL communicators and asynchronous collectives over CUDA tensors (exists in
// every build; without NCCL is_available() is false and everything else throws DeviceError).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::distributed {

// True when tensorlet was built with NCCL (it says nothing about GPUs being present).
bool is_available();

enum class ReduceOp { Sum, Max, Min, Avg };

struct CommOptions {
  // Bounds communicator creation and every host wait (Work::synchronize, the input check), so a
  // peer that never shows up ends in an error instead of a hang.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // Before each collective, verify that every rank passes the same shape, dtype and arguments.
  // Across processes this costs one extra tiny all_gather and one host sync per collective (it
  // waits for the work already on the stream); false removes both.
  bool check_inputs = true;
};

namespace detail {
struct CommState;
struct WorkState;
struct WorkAccess;
}  // namespace detail

// The handle of an asynchronous collective. A default-constructed Work is already complete.
class Work {
 public:
  Work() = default;
  // Makes the current stream of each involved device wait for the collective; no host block.
  void wait();
  // Blocks the host until the collective ran. Throws tl::Error after CommOptions::timeout (and
  // aborts the communicator, which then cannot be used again), CudaError on an NCCL error.
  void synchronize();
  // True once the collective ran; throws when NCCL reported an asynchronous error.
  bool is_completed() const;

 private:
  friend struct detail::WorkAccess;
  std::shared_ptr<detail::WorkState> state_;
};

// A set of NCCL ranks. One Communicator (and the Work it issued) must be driven by one thread at a
// time, as NCCL requires. Movable, not copyable; destroying it destroys its NCCL communicators.
class Communicator {
 public:
  Communicator() = default;  // empty: every call throws until a factory's result is assigned
  Communicator(Communicator&&) noexcept = default;
  Communicator& operator=(Communicator&&) noexcept = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() = default;

  // One process, one rank per listed device (rank i on devices[i]); empty: all visible devices.
  static Communicator local(std::vector<int> devices = {}, CommOptions options = {});
  // Several processes, one device each. Rank 0 writes a fresh NCCL id to `id_file` (a temporary
  // file renamed into place, so readers never see half of it) and removes it once every rank
  // joined; the other ranks poll for it. Use a path no earlier run left behind.
  static Communicator init(int rank, int world_size, int device, const std::string& id_file,
                           CommOptions options = {});
  // As torchrun: RANK, WORLD_SIZE, LOCAL_RANK (the device; default RANK); the id through
  // TL_DIST_ID_FILE (a path, as init) or TL_NCCL_UNIQUE_ID (unique_id_hex() of a process that
  // stays alive until every rank joined: NCCL's rendezvous runs in the process that made the id).
  static Communicator from_env(CommOptions options = {});
  // A fresh NCCL unique id as 256 hex digits.
  static std::string unique_id_hex();

  int world_size() const;
  int rank(size_t local = 0) const;            // the rank of the local-th local device
  const std::vector<Device>& devices() const;  // the local devices, in local order

  // Collectives. The vector forms take one contiguous tensor per local device, in devices()
  // order; the single-tensor forms need a communicator with one local device. Each is enqueued
  // on the current stream of its tensor's device, after the work already there, and returns
  // at once. The tensors must stay alive until the collective ran (or be used on that stream).
  Work all_reduce(const std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::Sum);  // in place
  Work all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
  Work broadcast(const std::vector<Tensor>& tensors, int root);  // in place
  Work broadcast(const Tensor& tensor, int root);
  // output [world_size * n0, ...] from input [n0, ...] (torch's all_gather_into_tensor).
  Work all_gather(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs);
  Work all_gather(const Tensor& output, const Tensor& input);
  // input [world_size * n0, ...] reduced into output [n0, ...], rank r keeping block r.
  Work reduce_scatter(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                      ReduceOp op = ReduceOp::Sum);
  Work reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum);
  // Point to point between two ranks of a communicator with one local device.
  Work send(const Tensor& tensor, int peer);
  Work recv(const Tensor& tensor, int peer);

 private:
  explicit Communicator(std::shared_ptr<detail::CommState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::CommState> state_;
};

}  // namespace tensorlet::distributed

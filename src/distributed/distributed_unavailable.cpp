// tl::distributed when tensorlet is built without NCCL (or without CUDA): is_available() says so
// and every entry point throws DeviceError naming itself; an empty Work is still complete.
#include "tensorlet/distributed/distributed.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed {
namespace {

[[noreturn]] void unavailable(const char* op) {
  fail<DeviceError>(op, "tensorlet was built without NCCL (it needs the CUDA backend and ",
                    "nccl.h with libnccl when configuring: meson setup -Dnccl=enabled)");
}

}  // namespace

bool is_available() { return false; }

void Work::wait() {}
void Work::synchronize() {}
bool Work::is_completed() const { return true; }

Communicator Communicator::local(std::vector<int>, CommOptions) {
  unavailable("tl::distributed::local");
}
Communicator Communicator::init(int, int, int, const std::string&, CommOptions) {
  unavailable("tl::distributed::init");
}
Communicator Communicator::from_env(CommOptions) { unavailable("tl::distributed::from_env"); }
std::string Communicator::unique_id_hex() { unavailable("tl::distributed::unique_id_hex"); }

int Communicator::world_size() const { unavailable("tl::distributed::Communicator::world_size"); }
int Communicator::rank(size_t) const { unavailable("tl::distributed::Communicator::rank"); }
const std::vector<Device>& Communicator::devices() const {
  unavailable("tl::distributed::Communicator::devices");
}

Work Communicator::all_reduce(const std::vector<Tensor>&, ReduceOp) {
  unavailable("tl::distributed::all_reduce");
}
Work Communicator::all_reduce(const Tensor&, ReduceOp) {
  unavailable("tl::distributed::all_reduce");
}
Work Communicator::broadcast(const std::vector<Tensor>&, int) {
  unavailable("tl::distributed::broadcast");
}
Work Communicator::broadcast(const Tensor&, int) { unavailable("tl::distributed::broadcast"); }
Work Communicator::all_gather(const std::vector<Tensor>&, const std::vector<Tensor>&) {
  unavailable("tl::distributed::all_gather");
}
Work Communicator::all_gather(const Tensor&, const Tensor&) {
  unavailable("tl::distributed::all_gather");
}
Work Communicator::reduce_scatter(const std::vector<Tensor>&, const std::vector<Tensor>&,
                                  ReduceOp) {
  unavailable("tl::distributed::reduce_scatter");
}
Work Communicator::reduce_scatter(const Tensor&, const Tensor&, ReduceOp) {
  unavailable("tl::distributed::reduce_scatter");
}
Work Communicator::send(const Tensor&, int) { unavailable("tl::distributed::send"); }
Work Communicator::recv(const Tensor&, int) { unavailable("tl::distributed::recv"); }

}  // namespace tensorlet::distributed

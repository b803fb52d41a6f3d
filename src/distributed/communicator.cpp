// Creating communicators: all ranks in this process (ncclCommInitAll), one rank per process with
// the id shared through a file or the environment (nonblocking init polled under the timeout),
// and what a Communicator reports about itself.
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed {
namespace {

constexpr const char* kInit = "tl::distributed::init";

[[noreturn]] void throw_init_timeout(int rank, int world_size, std::chrono::milliseconds timeout,
                                     const std::string& waiting_for) {
  fail<Error>(kInit, "rank ", rank, " of ", world_size, ": timed out after ",
              detail::seconds_text(timeout), " waiting for ", waiting_for);
}

void check_rank(const char* op, int rank, int world_size) {
  if (world_size < 1) fail<Error>(op, "world_size must be at least 1, got ", world_size);
  if (rank < 0 || rank >= world_size)
    fail<Error>(op, "rank must be in [0, ", world_size, "), got ", rank);
}

// One rank of a multi-process communicator. The communicator is nonblocking, so its creation can
// be polled and abandoned (ncclCommAbort) when a peer never joins, instead of blocking for ever.
std::shared_ptr<detail::CommState> init_rank(int rank, int world_size, int device,
                                             const ncclUniqueId& id, const CommOptions& options,
                                             detail::Clock::time_point deadline) {
  cuda::OnDevice on_device(device);
  ncclComm_t comm = nullptr;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&comm, world_size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    if (comm != nullptr) (void)ncclCommAbort(comm);
    detail::throw_nccl(r, nullptr, kInit, "ncclCommInitRankConfig");
  }
  detail::Poller poller;
  while (true) {
    ncclResult_t state = ncclInProgress;
    r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
      const std::string what = "ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " +
                               std::to_string(world_size) + ")";
      try {
        detail::throw_nccl(r != ncclSuccess ? r : state, comm, kInit, what.c_str());
      } catch (...) {
        (void)ncclCommAbort(comm);
        throw;
      }
    }
    if (state == ncclSuccess) break;
    if (detail::Clock::now() >= deadline) {
      (void)ncclCommAbort(comm);
      throw_init_timeout(rank, world_size, options.timeout, "the other ranks");
    }
    poller.pause();
  }
#else
  // Before NCCL 2.14 there is no nonblocking init: a missing peer blocks here.
  (void)deadline;
  detail::check_nccl(ncclCommInitRank(&comm, world_size, id, rank), nullptr, kInit,
                     "ncclCommInitRank");
#endif
  auto state = std::make_shared<detail::CommState>();
  state->comms = {comm};
  state->devices = {device};
  state->device_list = {Device::cuda(device)};
  state->ranks = {rank};
  state->world_size = world_size;
  state->options = options;
  return state;
}

int env_int(const char* op, const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0')
    fail<Error>(op, "the environment variable ", name, " is not set (as torchrun sets RANK, ",
                "WORLD_SIZE and LOCAL_RANK)");
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < INT_MIN || value > INT_MAX)
    fail<Error>(op, "the environment variable ", name, "=\"", text, "\" is not an integer");
  return static_cast<int>(value);
}

}  // namespace

Communicator Communicator::local(std::vector<int> devices, CommOptions options) {
  constexpr const char* kOp = "tl::distributed::local";
  const int count = cuda::device_count();
  if (count == 0) fail<DeviceError>(kOp, "no CUDA device is available (no GPU or no driver)");
  if (devices.empty())
    for (int i = 0; i < count; ++i) devices.push_back(i);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] < 0 || devices[i] >= count)
      fail<DeviceError>(kOp, "cannot use cuda:", devices[i], ": this machine has ", count,
                        " CUDA device", count == 1 ? "" : "s");
    for (size_t j = 0; j < i; ++j)
      if (devices[j] == devices[i])
        fail<DeviceError>(kOp, "cuda:", devices[i],
                          " is listed twice; NCCL allows one rank per device");
  }
  detail::prepare_nccl();
  const int n = static_cast<int>(devices.size());
  auto state = std::make_shared<detail::CommState>();
  state->comms.assign(devices.size(), nullptr);
  detail::check_nccl(ncclCommInitAll(state->comms.data(), n, devices.data()), nullptr, kOp,
                     "ncclCommInitAll");
  state->devices = devices;
  for (int i = 0; i < n; ++i) {
    state->device_list.push_back(Device::cuda(devices[i]));
    state->ranks.push_back(i);  // ncclCommInitAll ranks the devices in list order
  }
  state->world_size = n;
  state->all_local = true;
  state->options = options;
  return Communicator(std::move(state));
}

Communicator Communicator::init(int rank, int world_size, int device, const std::string& id_file,
                                CommOptions options) {
  check_rank(kInit, rank, world_size);
  device = cuda::resolve_device(device, kInit);
  if (id_file.empty()) fail<Error>(kInit, "id_file is empty; pass a path every rank can read");
  detail::prepare_nccl();
  const detail::Clock::time_point deadline = detail::Clock::now() + options.timeout;
  ncclUniqueId id;
  if (rank == 0) {
    detail::check_nccl(ncclGetUniqueId(&id), nullptr, kInit, "ncclGetUniqueId");
    detail::write_id_file(id_file, id, kInit);
  } else if (!detail::read_id_file(id_file, &id, deadline, kInit)) {
    throw_init_timeout(rank, world_size, options.timeout, "rank 0 to write the id file " + id_file);
  }
  std::shared_ptr<detail::CommState> state;
  try {
    state = init_rank(rank, world_size, device, id, options, deadline);
  } catch (...) {
    if (rank == 0) std::remove(id_file.c_str());
    throw;
  }
  // Every rank has read the file by now (none could join without it): removing it keeps a later
  // run that reuses the path from reading this run's stale id.
  if (rank == 0) std::remove(id_file.c_str());
  return Communicator(std::move(state));
}

Communicator Communicator::from_env(CommOptions options) {
  constexpr const char* kOp = "tl::distributed::from_env";
  const int rank = env_int(kOp, "RANK");
  const int world_size = env_int(kOp, "WORLD_SIZE");
  const int device = std::getenv("LOCAL_RANK") != nullptr ? env_int(kOp, "LOCAL_RANK") : rank;
  if (const char* path = std::getenv("TL_DIST_ID_FILE"); path != nullptr && path[0] != '\0')
    return init(rank, world_size, device, path, options);
  const char* hex = std::getenv("TL_NCCL_UNIQUE_ID");
  if (hex == nullptr || hex[0] == '\0')
    fail<Error>(kOp, "set TL_DIST_ID_FILE (a path every rank can read; rank 0 writes it) or ",
                "TL_NCCL_UNIQUE_ID (Communicator::unique_id_hex() of a process that stays alive ",
                "until every rank joined)");
  check_rank(kOp, rank, world_size);
  const int d = cuda::resolve_device(device, kOp);
  const ncclUniqueId id = detail::from_hex(hex, kOp, "TL_NCCL_UNIQUE_ID");
  detail::prepare_nccl();
  return Communicator(
      init_rank(rank, world_size, d, id, options, detail::Clock::now() + options.timeout));
}

int Communicator::world_size() const {
  return detail::state_of(state_, "tl::distributed::Communicator::world_size", false).world_size;
}

int Communicator::rank(size_t local) const {
  constexpr const char* kOp = "tl::distributed::Communicator::rank";
  const detail::CommState& s = detail::state_of(state_, kOp, false);
  if (local >= s.ranks.size())
    fail<IndexError>(kOp, "local device ", local, " does not exist; this communicator has ",
                     s.ranks.size());
  return s.ranks[local];
}

const std::vector<Device>& Communicator::devices() const {
  return detail::state_of(state_, "tl::distributed::Communicator::devices", false).device_list;
}

}  // namespace tensorlet::distributed

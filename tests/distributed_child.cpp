// A child process for the distributed suite: one rank of a multi-process communicator, on device
// `rank`, that runs collectives against values every rank can compute and checks the results.
//   distributed_child collectives RANK WORLD ID_FILE   every collective and send/recv (init)
//   distributed_child from_env                         the same through Communicator::from_env
//   distributed_child mismatch RANK WORLD ID_FILE      mismatched inputs throw typed errors
//   distributed_child timeout ID_FILE                  rank 0 of 2 alone: init must time out
// Prints what failed and exits 1 on a wrong result, 0 when every check passed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

namespace {

namespace dist = tl::distributed;

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++g_failures;
  }
}

// What rank r holds at position i: every rank can compute every other rank's values.
double value(int r, int64_t i) { return static_cast<double>((r + 1) * (i % 7 + 1)); }

tl::Tensor values_of_rank(int r, int64_t n, tl::DType dtype, int device) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value(r, i);
  return tl::from_vector(v).to(tl::TensorOptions(dtype).device(tl::Device::cuda(device)));
}

void expect_values(const tl::Tensor& t, const std::function<double(int64_t)>& want,
                   const std::string& what) {
  const std::vector<double> got = t.cpu().to(tl::kFloat64).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = want(static_cast<int64_t>(i));
    if (got[i] != w) {
      expect(false, what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
                        ", expected " + std::to_string(w));
      return;
    }
  }
}

// Runs fn and checks it throws E with `needle` in its message.
template <typename E>
void expect_throws(const std::function<void()>& fn, const std::string& needle,
                   const std::string& what) {
  try {
    fn();
  } catch (const E& e) {
    expect(std::string(e.what()).find(needle) != std::string::npos,
           what + ": message lacks \"" + needle + "\": " + e.what());
    std::printf("%s: %s\n", what.c_str(), e.what());
    return;
  } catch (const std::exception& e) {
    expect(false, what + ": another error: " + e.what());
    return;
  }
  expect(false, what + ": nothing was thrown");
}

void run_collectives(dist::Communicator& comm) {
  const int rank = comm.rank();
  const int world = comm.world_size();
  const int device = comm.devices()[0].index();
  double rank_sum = 0;
  for (int r = 0; r < world; ++r) rank_sum += r + 1;
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{4097}}) {
    const std::string size = " n=" + std::to_string(n);
    tl::Tensor a = values_of_rank(rank, n, tl::kFloat32, device);
    dist::Work w = comm.all_reduce(a);
    w.synchronize();
    expect(w.is_completed(), "all_reduce is_completed after synchronize");
    expect_values(
        a, [&](int64_t i) { return rank_sum * (i % 7 + 1); }, "all_reduce sum" + size);

    tl::Tensor m = values_of_rank(rank, n, tl::kInt64, device);
    comm.all_reduce(m, dist::ReduceOp::Max).synchronize();
    expect_values(
        m, [&](int64_t i) { return value(world - 1, i); }, "all_reduce max" + size);

    tl::Tensor lo = values_of_rank(rank, n, tl::kInt32, device);
    comm.all_reduce(lo, dist::ReduceOp::Min).synchronize();
    expect_values(
        lo, [&](int64_t i) { return value(0, i); }, "all_reduce min" + size);

    tl::Tensor avg = values_of_rank(rank, n, tl::kFloat64, device);
    comm.all_reduce(avg, dist::ReduceOp::Avg).synchronize();
    expect_values(
        avg, [&](int64_t i) { return rank_sum * (i % 7 + 1) / world; }, "all_reduce avg" + size);

    tl::Tensor b = values_of_rank(rank, n, tl::kInt32, device);
    comm.broadcast(b, world - 1).synchronize();
    expect_values(
        b, [&](int64_t i) { return value(world - 1, i); }, "broadcast" + size);

    tl::Tensor in = values_of_rank(rank, n, tl::kFloat32, device);
    tl::Tensor out = tl::zeros({world * n}, tl::TensorOptions(tl::kFloat32).device(in.device()));
    comm.all_gather(out, in).synchronize();
    expect_values(
        out, [&](int64_t i) { return value(static_cast<int>(i / n), i % n); }, "all_gather" + size);

    tl::Tensor big = values_of_rank(rank, world * n, tl::kInt64, device);
    tl::Tensor mine = tl::zeros({n}, tl::TensorOptions(tl::kInt64).device(big.device()));
    comm.reduce_scatter(mine, big).synchronize();
    expect_values(
        mine, [&](int64_t i) { return rank_sum * ((rank * n + i) % 7 + 1); },
        "reduce_scatter" + size);

    // Rank 0 sends to rank 1, which sends its own values back.
    if (rank <= 1 && world >= 2) {
      const int peer = 1 - rank;
      tl::Tensor x = values_of_rank(rank, n, tl::kFloat64, device);
      tl::Tensor y = tl::zeros({n}, tl::TensorOptions(tl::kFloat64).device(x.device()));
      if (rank == 0) {
        comm.send(x, peer).synchronize();
        comm.recv(y, peer).synchronize();
      } else {
        comm.recv(y, peer).synchronize();
        comm.send(x, peer).synchronize();
      }
      expect_values(
          y, [&](int64_t i) { return value(peer, i); }, "send/recv" + size);
    }
  }
  // Nothing to move, still agreed on by every rank.
  tl::Tensor empty = tl::zeros({0}, tl::Device::cuda(device));
  comm.all_reduce(empty).synchronize();
}

void run_mismatch(dist::Communicator& comm) {
  const int rank = comm.rank();
  const tl::Device gpu = comm.devices()[0];
  expect_throws<tl::ShapeError>([&] { comm.all_reduce(tl::ones({4 + rank}, gpu)).synchronize(); },
                                "rank 1 passed shape [5] but rank 0 passed [4]", "shape mismatch");
  expect_throws<tl::DTypeError>(
      [&] {
        const tl::DType d = rank == 0 ? tl::kFloat32 : tl::kInt32;
        comm.all_reduce(tl::ones({4}, tl::TensorOptions(d).device(gpu))).synchronize();
      },
      "rank 1 passed int32 but rank 0 passed float32", "dtype mismatch");
  expect_throws<tl::Error>(
      [&] {
        tl::Tensor t = tl::ones({4}, gpu);
        comm.all_reduce(t, rank == 0 ? dist::ReduceOp::Sum : dist::ReduceOp::Max).synchronize();
      },
      "rank 1 asked for ReduceOp::Max but rank 0 for ReduceOp::Sum", "op mismatch");
  expect_throws<tl::Error>(
      [&] {
        tl::Tensor t = tl::ones({4}, gpu);
        if (rank == 0)
          comm.all_reduce(t).synchronize();
        else
          comm.broadcast(t, 0).synchronize();
      },
      "called tl::distributed::broadcast while rank 0 called tl::distributed::all_reduce",
      "collective mismatch");
  // Rank 1's own checks fail (a CPU tensor); rank 0 hears of it instead of waiting.
  if (rank == 1)
    expect_throws<tl::DeviceError>([&] { comm.all_reduce(tl::ones({4})); }, "expected CUDA tensors",
                                   "own check");
  else
    expect_throws<tl::Error>([&] { comm.all_reduce(tl::ones({4}, gpu)); },
                             "rank 1 failed its own checks", "peer's own check");
  expect_throws<tl::ShapeError>(
      [&] {
        tl::Tensor t = tl::ones({3 + rank}, gpu);
        if (rank == 0)
          comm.send(t, 1).synchronize();
        else
          comm.recv(t, 0).synchronize();
      },
      "a send and its recv must have the same number of elements", "send/recv mismatch");
  // After all that the communicator still works.
  tl::Tensor t = tl::ones({4}, gpu);
  comm.all_reduce(t).synchronize();
  expect_values(
      t, [&](int64_t) { return comm.world_size(); }, "all_reduce after mismatches");
}

int finish() {
  if (g_failures == 0) std::puts("ok");
  std::fflush(stdout);
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  if (!dist::is_available() || !tl::cuda::is_available()) {
    std::puts("skipped: no NCCL or no CUDA device");
    return 0;
  }
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "timeout" && argc == 3) {
      dist::CommOptions options;
      options.timeout = std::chrono::seconds(3);
      expect_throws<tl::Error>(
          [&] { dist::Communicator::init(0, 2, 0, argv[2], options); },
          "[tl::distributed::init] rank 0 of 2: timed out after 3s waiting for the other ranks",
          "init timeout");
      return finish();
    }
    if (mode == "from_env") {
      dist::Communicator comm = dist::Communicator::from_env({.timeout = std::chrono::minutes(2)});
      run_collectives(comm);
      return finish();
    }
    if ((mode == "collectives" || mode == "mismatch") && argc == 5) {
      const int rank = std::atoi(argv[2]);
      const int world = std::atoi(argv[3]);
      dist::Communicator comm = dist::Communicator::init(rank, world, rank, argv[4],
                                                         {.timeout = std::chrono::minutes(2)});
      if (mode == "collectives")
        run_collectives(comm);
      else
        run_mismatch(comm);
      return finish();
    }
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  std::puts(
      "usage: distributed_child collectives|mismatch RANK WORLD ID_FILE | from_env | "
      "timeout ID_FILE");
  return 2;
}

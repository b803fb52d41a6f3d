// tl::distributed: the errors every build can check (no NCCL, no GPU, bad arguments), one-rank
// communicators on one GPU (each collective returns its input), two local ranks against CPU
// results, mismatched inputs, and two processes (distributed_child) including a peer that never
// joins. Cases skip, as the CUDA suites do, when NCCL or enough GPUs are missing.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
namespace dist = tl::distributed;
using tl::DType;
using tl::Shape;
using tl::Tensor;

const std::vector<DType> kNcclDtypes{tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64};
// Odd, prime, empty and multi-dim shapes: NCCL splits buffers into chunks, so ragged sizes matter.
const std::vector<Shape> kShapes{Shape{}, {0}, {1}, {7}, {1000}, {4097}, {3, 5}, {2, 0, 3}};

// NVLink multicast stays off in this process and every child it starts (the library also forces
// it: on a shared host NVLS has taken every GPU down).
void nvls_off() { setenv("NCCL_NVLS_ENABLE", "0", 1); }

// Sets (or, with nullopt, unsets) environment variables for a scope and restores them after.
class EnvGuard {
 public:
  explicit EnvGuard(const std::map<std::string, std::optional<std::string>>& values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A path in a fresh temporary folder, for an id file no earlier run left behind.
std::string fresh_path(const std::string& name) {
  char dir[] = "/tmp/tl_dist_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return std::string(dir) + "/" + name;
}

// Element-wise combination of host values, for the CPU references.
std::vector<double> combine(const std::vector<std::vector<double>>& values, dist::ReduceOp op) {
  std::vector<double> out = values[0];
  for (size_t r = 1; r < values.size(); ++r)
    for (size_t i = 0; i < out.size(); ++i) {
      const double v = values[r][i];
      switch (op) {
        case dist::ReduceOp::Sum:
        case dist::ReduceOp::Avg:
          out[i] += v;
          break;
        case dist::ReduceOp::Max:
          out[i] = std::max(out[i], v);
          break;
        case dist::ReduceOp::Min:
          out[i] = std::min(out[i], v);
          break;
      }
    }
  if (op == dist::ReduceOp::Avg)
    for (double& v : out) v /= static_cast<double>(values.size());
  return out;
}

std::vector<dist::ReduceOp> ops_for(DType d) {
  std::vector<dist::ReduceOp> ops{dist::ReduceOp::Sum, dist::ReduceOp::Max, dist::ReduceOp::Min};
  if (tl::is_floating_point(d)) ops.push_back(dist::ReduceOp::Avg);
  return ops;
}

}  // namespace

// Ends a case when tensorlet has no NCCL or the machine fewer than `gpus` CUDA devices.
#define TL_TEST_REQUIRE_NCCL(gpus)                                                \
  do {                                                                            \
    if (!::tensorlet::distributed::is_available()) {                              \
      MESSAGE("skipped: tensorlet was built without NCCL");                       \
      return;                                                                     \
    }                                                                             \
    if (::tensorlet::cuda::device_count() < (gpus)) {                             \
      MESSAGE("skipped: needs " << (gpus) << " CUDA device(s), this machine has " \
                                << ::tensorlet::cuda::device_count());            \
      return;                                                                     \
    }                                                                             \
    nvls_off();                                                                   \
  } while (0)

// ---- every build ----

TEST_CASE("distributed: without NCCL every entry point throws DeviceError naming itself") {
  if (dist::is_available()) {
    MESSAGE("skipped: tensorlet was built with NCCL");
    return;
  }
  const std::string why = "built without NCCL";
  check_throws<tl::DeviceError>([] { dist::Communicator::local(); }, "[tl::distributed::local]");
  check_throws<tl::DeviceError>([] { dist::Communicator::local({0}); }, why);
  check_throws<tl::DeviceError>([] { dist::Communicator::init(0, 2, 0, "/tmp/x"); },
                                "[tl::distributed::init]");
  check_throws<tl::DeviceError>([] { dist::Communicator::from_env(); },
                                "[tl::distributed::from_env]");
  check_throws<tl::DeviceError>([] { dist::Communicator::unique_id_hex(); }, why);
  dist::Communicator comm;
  Tensor t = tl::ones({4});
  check_throws<tl::DeviceError>([&] { comm.all_reduce(t); }, "[tl::distributed::all_reduce]");
  check_throws<tl::DeviceError>([&] { comm.broadcast(t, 0); }, "[tl::distributed::broadcast]");
  check_throws<tl::DeviceError>([&] { comm.all_gather(t, t); }, "[tl::distributed::all_gather]");
  check_throws<tl::DeviceError>([&] { comm.reduce_scatter(t, t); },
                                "[tl::distributed::reduce_scatter]");
  check_throws<tl::DeviceError>([&] { comm.send(t, 1); }, "[tl::distributed::send]");
  check_throws<tl::DeviceError>([&] { comm.recv(t, 1); }, "[tl::distributed::recv]");
  check_throws<tl::DeviceError>([&] { (void)comm.world_size(); }, why);
  CHECK(tl::ones({2}).numel() == 2);  // the library stays usable
}

TEST_CASE("distributed: an empty Work is complete and an empty Communicator throws") {
  dist::Work work;
  CHECK(work.is_completed());
  CHECK_NOTHROW(work.wait());
  CHECK_NOTHROW(work.synchronize());
  dist::Communicator comm;
  Tensor t = tl::ones({4});
  check_throws<tl::Error>([&] { comm.all_reduce(t); }, "[tl::distributed::all_reduce]");
  check_throws<tl::Error>([&] { (void)comm.world_size(); }, "[tl::distributed::");
  check_throws<tl::Error>([&] { (void)comm.devices(); }, "[tl::distributed::");
  dist::CommOptions options;
  CHECK(options.timeout == std::chrono::minutes(5));
  CHECK(options.check_inputs);
}

TEST_CASE("distributed: bad ranks, devices and environments are rejected before NCCL runs") {
  if (!dist::is_available()) {
    MESSAGE("skipped: tensorlet was built without NCCL");
    return;
  }
  check_throws<tl::Error>([] { dist::Communicator::init(2, 2, 0, "/tmp/unused"); },
                          "[tl::distributed::init] rank must be in [0, 2)");
  check_throws<tl::Error>([] { dist::Communicator::init(0, 0, 0, "/tmp/unused"); },
                          "world_size must be at least 1");
  check_throws<tl::Error>([] { dist::Communicator::init(-1, 2, 0, "/tmp/unused"); },
                          "rank must be in");
  const int n = tl::cuda::device_count();
  if (n == 0) {
    check_throws<tl::DeviceError>([] { dist::Communicator::local(); },
                                  "[tl::distributed::local] no CUDA device");
    check_throws<tl::DeviceError>(
        [] {
          dist::Communicator::local({0, 1});
        },
        "[tl::distributed::local]");
    check_throws<tl::DeviceError>([] { dist::Communicator::init(0, 2, 0, "/tmp/unused"); },
                                  "[tl::distributed::init]");
  } else {
    check_throws<tl::DeviceError>([n] { dist::Communicator::local({n}); }, "cannot use cuda:");
    check_throws<tl::DeviceError>([] { dist::Communicator::local({0, 0}); }, "listed twice");
    check_throws<tl::DeviceError>([n] { dist::Communicator::init(0, 2, n, "/tmp/unused"); },
                                  "[tl::distributed::init]");
  }
  {
    EnvGuard env({{"RANK", std::nullopt}, {"WORLD_SIZE", "2"}});
    check_throws<tl::Error>([] { dist::Communicator::from_env(); },
                            "[tl::distributed::from_env] the environment variable RANK");
  }
  {
    EnvGuard env({{"RANK", "zero"}, {"WORLD_SIZE", "2"}});
    check_throws<tl::Error>([] { dist::Communicator::from_env(); }, "is not an integer");
  }
  {
    EnvGuard env({{"RANK", "0"},
                  {"WORLD_SIZE", "2"},
                  {"LOCAL_RANK", std::nullopt},
                  {"TL_DIST_ID_FILE", std::nullopt},
                  {"TL_NCCL_UNIQUE_ID", std::nullopt}});
    check_throws<tl::Error>([] { dist::Communicator::from_env(); }, "TL_DIST_ID_FILE");
  }
  if (n > 0) {
    EnvGuard env({{"RANK", "0"},
                  {"WORLD_SIZE", "1"},
                  {"LOCAL_RANK", "0"},
                  {"TL_DIST_ID_FILE", std::nullopt},
                  {"TL_NCCL_UNIQUE_ID", "abc"}});
    check_throws<tl::Error>([] { dist::Communicator::from_env(); }, "TL_NCCL_UNIQUE_ID");
  }
}

// ---- one GPU ----

TEST_CASE("distributed: one rank: every collective returns its input, all shapes and dtypes") {
  TL_TEST_REQUIRE_NCCL(1);
  dist::Communicator comm = dist::Communicator::local({0});
  REQUIRE(comm.world_size() == 1);
  CHECK(comm.rank() == 0);
  REQUIRE(comm.devices().size() == 1);
  CHECK(comm.devices()[0] == tl::Device::cuda(0));
  const tl::Device gpu = tl::Device::cuda(0);
  for (DType d : kNcclDtypes) {
    for (const Shape& s : kShapes) {
      INFO("dtype " << d << ", shape " << s);
      const Tensor x = random_tensor(s, d);
      const std::vector<double> expected = values_of(x);
      for (dist::ReduceOp op : ops_for(d)) {
        Tensor t = x.to(gpu);
        dist::Work w = comm.all_reduce(t, op);
        w.synchronize();
        CHECK(w.is_completed());
        check_values(t, expected);
      }
      Tensor b = x.to(gpu);
      comm.broadcast(b, 0).synchronize();
      check_values(b, expected);
      // With one rank the gathered shape is [1 * n0, ...] (or [1] for a 0-dim input).
      const Shape gathered = s.size() == 0 ? Shape{1} : s;
      const tl::TensorOptions on_gpu = tl::TensorOptions(d).device(gpu);
      Tensor out = tl::full(gathered, 5, on_gpu);
      comm.all_gather(out, x.to(gpu)).synchronize();
      check_values(out, expected);
      if (s.size() > 0) {
        for (dist::ReduceOp op : ops_for(d)) {
          Tensor scattered = tl::full(s, 5, on_gpu);
          comm.reduce_scatter(scattered, x.to(gpu), op).synchronize();
          check_values(scattered, expected);
        }
      } else {
        Tensor scattered = tl::full(Shape{}, 5, on_gpu);
        comm.reduce_scatter(scattered, x.reshape({1}).to(gpu)).synchronize();
        check_values(scattered, expected);
      }
    }
  }
}

TEST_CASE("distributed: one rank: bool moves as bytes but does not reduce; Avg needs floats") {
  TL_TEST_REQUIRE_NCCL(1);
  dist::Communicator comm = dist::Communicator::local({0});
  const tl::Device gpu = tl::Device::cuda(0);
  const Tensor mask = random_tensor({33}, tl::kBool);
  Tensor b = mask.to(gpu);
  comm.broadcast(b, 0).synchronize();
  check_values(b, values_of(mask));
  Tensor out = tl::zeros({33}, tl::TensorOptions(tl::kBool).device(gpu));
  comm.all_gather(out, mask.to(gpu)).synchronize();
  check_values(out, values_of(mask));
  check_throws<tl::DTypeError>([&] { comm.all_reduce(b); }, "[tl::distributed::all_reduce]");
  check_throws<tl::DTypeError>([&] { comm.reduce_scatter(out, b); },
                               "[tl::distributed::reduce_scatter]");
  for (DType d : {tl::kInt32, tl::kInt64}) {
    Tensor t = tl::ones({4}, tl::TensorOptions(d).device(gpu));
    check_throws<tl::DTypeError>([&] { comm.all_reduce(t, dist::ReduceOp::Avg); }, "Avg");
  }
  // The communicator is still usable after the errors.
  Tensor t = tl::full({5}, 2.5, gpu);
  comm.all_reduce(t, dist::ReduceOp::Avg).synchronize();
  check_values(t, std::vector<double>(5, 2.5));
}

TEST_CASE("distributed: one rank: argument errors name the op and what was wrong") {
  TL_TEST_REQUIRE_NCCL(1);
  dist::Communicator comm = dist::Communicator::local({0});
  const tl::Device gpu = tl::Device::cuda(0);
  Tensor t = tl::ones({4, 6}, gpu);
  check_throws<tl::DeviceError>([&] { comm.all_reduce(tl::ones({4})); }, "expected CUDA tensors");
  check_throws<tl::Error>([&] { comm.all_reduce(t.t()); }, "is not contiguous");
  check_throws<tl::Error>([&] { comm.broadcast(t.slice(1, 0, 3), 0); }, "is not contiguous");
  check_throws<tl::DeviceError>(
      [&] {
        comm.all_reduce(std::vector<Tensor>{t, t});
      },
      "one tensor per local device");
  check_throws<tl::Error>([&] { comm.all_reduce(Tensor()); }, "undefined");
  check_throws<tl::Error>([&] { comm.broadcast(t, 1); }, "root must be a rank in [0, 1)");
  check_throws<tl::ShapeError>(
      [&] {
        comm.all_gather(tl::ones({8, 6}, gpu), t);
      },
      "[tl::distributed::all_gather] output 0 has shape [8, 6]");
  check_throws<tl::DTypeError>(
      [&] {
        comm.all_gather(tl::ones({4, 6}, tl::TensorOptions(tl::kInt32).device(gpu)), t);
      },
      "must match");
  check_throws<tl::ShapeError>(
      [&] {
        comm.reduce_scatter(tl::ones({2, 6}, gpu), t);
      },
      "[tl::distributed::reduce_scatter] input 0 has shape [4, 6]");
  check_throws<tl::Error>([&] { comm.send(t, 0); }, "[tl::distributed::send] peer must be");
  check_throws<tl::Error>([&] { comm.recv(t, 1); }, "[tl::distributed::recv] peer must be");
  check_throws<tl::IndexError>([&] { (void)comm.rank(1); }, "local device 1");
  Tensor ok = tl::full({4}, 3.0, gpu);
  comm.all_reduce(ok).synchronize();
  check_values(ok, std::vector<double>(4, 3.0));
}

TEST_CASE("distributed: collectives run on the current stream and Work::wait orders others") {
  TL_TEST_REQUIRE_NCCL(1);
  dist::Communicator comm = dist::Communicator::local({0});
  tl::cuda::Stream side = tl::cuda::Stream::create(0);
  Tensor t;
  dist::Work w;
  {
    tl::cuda::StreamGuard guard(side);
    t = tl::full({1 << 16}, 1.5, tl::Device::cuda(0));
    w = comm.all_reduce(t);
  }
  w.wait();  // the default stream now waits for the collective on `side`
  Tensor doubled = t * 2.0;
  check_values(doubled, std::vector<double>(1 << 16, 3.0));
  w.synchronize();
  CHECK(w.is_completed());
}

TEST_CASE("distributed: the profiler records each collective as an op") {
  TL_TEST_REQUIRE_NCCL(1);
  dist::Communicator comm = dist::Communicator::local({0});
  const tl::Device gpu = tl::Device::cuda(0);
  Tensor t = tl::ones({16}, gpu);
  Tensor out = tl::ones({16}, gpu);
  tl::profiler::Profile profile;
  comm.all_reduce(t);
  comm.broadcast(t, 0);
  comm.all_gather(out, t);
  comm.reduce_scatter(out, t).synchronize();
  profile.stop();
  std::map<std::string, int> seen;
  for (const auto& e : profile.events()) ++seen[e.name];
  CHECK(seen["tl::distributed::all_reduce"] == 1);
  CHECK(seen["tl::distributed::broadcast"] == 1);
  CHECK(seen["tl::distributed::all_gather"] == 1);
  CHECK(seen["tl::distributed::reduce_scatter"] == 1);
}

TEST_CASE("distributed: one process, one rank through init and from_env (nonblocking NCCL)") {
  TL_TEST_REQUIRE_NCCL(1);
  const std::string hex = dist::Communicator::unique_id_hex();
  CHECK(hex.size() == 256);
  CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(dist::Communicator::unique_id_hex() != hex);
  const tl::Device gpu = tl::Device::cuda(0);
  {
    // world_size 1: the input check still runs through NCCL (an all_gather of descriptors).
    const std::string path = fresh_path("id");
    dist::Communicator comm = dist::Communicator::init(0, 1, 0, path);
    CHECK(comm.world_size() == 1);
    CHECK(comm.rank() == 0);
    CHECK(access(path.c_str(), F_OK) != 0);  // removed once every rank joined
    Tensor t = tl::full({1001}, 4, tl::TensorOptions(tl::kInt64).device(gpu));
    comm.all_reduce(t, dist::ReduceOp::Max).synchronize();
    check_values(t, std::vector<double>(1001, 4));
    Tensor out = tl::zeros({2002}, tl::TensorOptions(tl::kInt64).device(gpu));
    check_throws<tl::ShapeError>([&] { comm.all_gather(out, t); }, "output 0 has shape [2002]");
    Tensor small = tl::zeros({1001}, tl::TensorOptions(tl::kInt64).device(gpu));
    comm.all_gather(small, t).synchronize();
    check_values(small, std::vector<double>(1001, 4));
  }
  {
    EnvGuard env({{"RANK", "0"},
                  {"WORLD_SIZE", "1"},
                  {"LOCAL_RANK", "0"},
                  {"TL_DIST_ID_FILE", std::nullopt},
                  {"TL_NCCL_UNIQUE_ID", dist::Communicator::unique_id_hex()}});
    dist::Communicator comm = dist::Communicator::from_env({.check_inputs = false});
    CHECK(comm.world_size() == 1);
    Tensor t = tl::full({7}, 1.25, tl::TensorOptions(tl::kFloat64).device(gpu));
    comm.all_reduce(t).synchronize();
    check_values(t, std::vector<double>(7, 1.25));
    dist::Communicator moved = std::move(comm);
    CHECK(moved.world_size() == 1);
    check_throws<tl::Error>([&] { (void)comm.world_size(); }, "empty");
  }
}

// ---- two processes (distributed_child) ----

#ifdef TL_DISTRIBUTED_CHILD
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs a command and returns its output (stdout and stderr) and wait status.
std::pair<std::string, int> run_command(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  return {output, pclose(pipe)};
}

// The child, checked to exist; empty when this build has none.
std::string child_path() {
  const std::string child = TL_DISTRIBUTED_CHILD;
  if (access(child.c_str(), X_OK) != 0) {
    FAIL_CHECK("distributed_child is not built (" << child << "): build the whole project first");
    return "";
  }
  return child;
}

// The shell command that runs one child rank, bounded by coreutils' timeout so that a hang fails
// the test instead of stalling the suite (it is not a timed assertion: a bound far above need).
std::string child_command(const std::string& child, const std::string& args,
                          const std::string& env = "") {
  return "NCCL_NVLS_ENABLE=0 " + env + " timeout 300 '" + child + "' " + args;
}

// Starts both ranks at once (popen does not wait) and collects their outputs and statuses.
std::vector<std::pair<std::string, int>> run_pair(const std::vector<std::string>& commands) {
  std::vector<FILE*> pipes;
  for (const std::string& c : commands) pipes.push_back(popen((c + " 2>&1").c_str(), "r"));
  std::vector<std::pair<std::string, int>> results;
  for (FILE* pipe : pipes) {
    std::string output;
    int status = -1;
    if (pipe != nullptr) {
      char buffer[512];
      while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
      status = pclose(pipe);
    } else {
      output = "popen failed";
    }
    results.emplace_back(output, status);
  }
  return results;
}

void check_exit_ok(const std::pair<std::string, int>& result, const char* what) {
  INFO(what << " output: " << result.first);
  CHECK(WIFEXITED(result.second));
  CHECK(WEXITSTATUS(result.second) == 0);
}

}  // namespace
#endif

TEST_CASE("distributed: a peer that never joins: init times out and throws") {
  TL_TEST_REQUIRE_NCCL(1);
#ifndef TL_DISTRIBUTED_CHILD
  MESSAGE("skipped: this build has no distributed_child");
#else
  const std::string child = child_path();
  if (child.empty()) return;
  // world_size 2 but only rank 0 starts; the child expects the timeout error after 3 s. It runs in
  // a process of its own, so the abandoned rendezvous leaves nothing behind in this one.
  auto [output, status] = run_command(child_command(child, "timeout '" + fresh_path("id") + "'"));
  INFO("child output: " << output);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(contains(output,
                 "[tl::distributed::init] rank 0 of 2: timed out after 3s waiting for the "
                 "other ranks"));
#endif
}

TEST_CASE("distributed: two processes: every collective, send/recv, init and from_env") {
  TL_TEST_REQUIRE_NCCL(2);
#ifndef TL_DISTRIBUTED_CHILD
  MESSAGE("skipped: this build has no distributed_child");
#else
  const std::string child = child_path();
  if (child.empty()) return;
  {
    const std::string id = fresh_path("id");
    auto results = run_pair({child_command(child, "collectives 0 2 '" + id + "'"),
                             child_command(child, "collectives 1 2 '" + id + "'")});
    check_exit_ok(results[0], "rank 0");
    check_exit_ok(results[1], "rank 1");
  }
  {
    const std::string id = fresh_path("id");
    const std::string env = "TL_DIST_ID_FILE='" + id + "' WORLD_SIZE=2";
    auto results = run_pair({child_command(child, "from_env", env + " RANK=0 LOCAL_RANK=0"),
                             child_command(child, "from_env", env + " RANK=1 LOCAL_RANK=1")});
    check_exit_ok(results[0], "rank 0");
    check_exit_ok(results[1], "rank 1");
  }
#endif
}

TEST_CASE("distributed: two processes: mismatched inputs throw the same typed error on both") {
  TL_TEST_REQUIRE_NCCL(2);
#ifndef TL_DISTRIBUTED_CHILD
  MESSAGE("skipped: this build has no distributed_child");
#else
  const std::string child = child_path();
  if (child.empty()) return;
  const std::string id = fresh_path("id");
  auto results = run_pair({child_command(child, "mismatch 0 2 '" + id + "'"),
                           child_command(child, "mismatch 1 2 '" + id + "'")});
  check_exit_ok(results[0], "rank 0");
  check_exit_ok(results[1], "rank 1");
#endif
}

// ---- two GPUs, one process ----

TEST_CASE("distributed: two local ranks: every collective matches the CPU") {
  TL_TEST_REQUIRE_NCCL(2);
  dist::Communicator comm = dist::Communicator::local({0, 1});
  REQUIRE(comm.world_size() == 2);
  CHECK(comm.rank(0) == 0);
  CHECK(comm.rank(1) == 1);
  const std::vector<tl::Device> gpus{tl::Device::cuda(0), tl::Device::cuda(1)};
  for (DType d : kNcclDtypes) {
    for (const Shape& s : kShapes) {
      INFO("dtype " << d << ", shape " << s);
      const std::vector<Tensor> x{random_tensor(s, d), random_tensor(s, d)};
      const std::vector<std::vector<double>> xv{values_of(x[0]), values_of(x[1])};
      const double rtol = d == tl::kFloat32 ? 1e-5 : 1e-12;
      for (dist::ReduceOp op : ops_for(d)) {
        INFO("op " << static_cast<int>(op));
        std::vector<Tensor> t{x[0].to(gpus[0]), x[1].to(gpus[1])};
        comm.all_reduce(t, op).synchronize();
        const std::vector<double> expected = combine(xv, op);
        check_values(t[0], expected, rtol);
        check_values(t[1], expected, rtol);
      }
      for (int root = 0; root < 2; ++root) {
        std::vector<Tensor> b{x[0].to(gpus[0]), x[1].to(gpus[1])};
        comm.broadcast(b, root).synchronize();
        check_values(b[0], xv[root]);
        check_values(b[1], xv[root]);
      }
      // all_gather: [2 * n0, ...], rank 0's block first.
      std::vector<double> cat_values = xv[0];
      cat_values.insert(cat_values.end(), xv[1].begin(), xv[1].end());
      Shape out_shape = s;
      if (s.size() == 0)
        out_shape = Shape{2};
      else
        out_shape[0] = 2 * s[0];
      std::vector<Tensor> outs;
      for (const tl::Device& g : gpus)
        outs.push_back(tl::full(out_shape, 7, tl::TensorOptions(d).device(g)));
      comm.all_gather(outs, {x[0].to(gpus[0]), x[1].to(gpus[1])}).synchronize();
      check_values(outs[0], cat_values);
      check_values(outs[1], cat_values);
    }
    // reduce_scatter: each rank's input [2 * n0, ...]; rank r keeps the reduced block r.
    for (const Shape& s : std::vector<Shape>{{0}, {1}, {7}, {1000}, {3, 5}}) {
      INFO("dtype " << d << ", output shape " << s);
      Shape in_shape = s;
      in_shape[0] = 2 * s[0];
      const std::vector<Tensor> x{random_tensor(in_shape, d), random_tensor(in_shape, d)};
      const std::vector<std::vector<double>> xv{values_of(x[0]), values_of(x[1])};
      const size_t block = static_cast<size_t>(s.numel());
      for (dist::ReduceOp op : ops_for(d)) {
        INFO("op " << static_cast<int>(op));
        const std::vector<double> full = combine(xv, op);
        std::vector<Tensor> outs{tl::full(s, 7, tl::TensorOptions(d).device(gpus[0])),
                                 tl::full(s, 7, tl::TensorOptions(d).device(gpus[1]))};
        comm.reduce_scatter(outs, {x[0].to(gpus[0]), x[1].to(gpus[1])}, op).synchronize();
        for (size_t r = 0; r < 2; ++r)
          check_values(
              outs[r],
              std::vector<double>(full.begin() + r * block, full.begin() + (r + 1) * block),
              d == tl::kFloat32 ? 1e-5 : 1e-12);
      }
    }
  }
}

TEST_CASE("distributed: two local ranks: mismatched inputs and foreign devices are typed errors") {
  TL_TEST_REQUIRE_NCCL(2);
  dist::Communicator comm = dist::Communicator::local({0, 1});
  const tl::Device g0 = tl::Device::cuda(0), g1 = tl::Device::cuda(1);
  Tensor a = tl::ones({4}, g0), b = tl::ones({4}, g1);
  check_throws<tl::ShapeError>(
      [&] {
        comm.all_reduce({a, tl::ones({5}, g1)});
      },
      "rank 1 (tensor 1) passed shape [5] but rank 0 (tensor 0)");
  check_throws<tl::ShapeError>(
      [&] {
        comm.broadcast({a, tl::ones({2, 2}, g1)}, 0);
      },
      "every rank must pass the same shape");
  check_throws<tl::DTypeError>(
      [&] {
        comm.all_reduce({a, tl::ones({4}, tl::TensorOptions(tl::kInt32).device(g1))});
      },
      "passed int32 but rank 0 (tensor 0) passed float32");
  check_throws<tl::DeviceError>([&] { comm.all_reduce({b, a}); }, "devices() order");
  check_throws<tl::DeviceError>([&] { comm.all_reduce(a); }, "drives 2 local devices");
  {
    dist::Communicator one = dist::Communicator::local({0});
    check_throws<tl::DeviceError>([&] { one.all_reduce(b); },
                                  "is on cuda:1, which is not in this communicator");
  }
  // Still usable: a + b on both devices.
  comm.all_reduce({a, b}).synchronize();
  check_values(a, std::vector<double>(4, 2.0));
  check_values(b, std::vector<double>(4, 2.0));
}

// Several devices: torch.chunk's chunk sizes, scatter/gather, DataParallel against the single-
// device result (CPU, one GPU, two GPUs; uneven and empty batches) and its errors,
// can_access_peer, copies between two GPUs on the peer and the staged path, interleaved work on
// two GPUs, and a copy to pinned host memory on a side stream overlapping compute. Nothing here
// is timed. Cases that need a GPU or two report "skipped" without them.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DataParallel;
using tl::Device;
using tl::Tensor;
using tl::cuda::Event;
using tl::cuda::Stream;
using tl::cuda::StreamGuard;

// Ends a case on a machine with fewer than two usable CUDA devices, reported as skipped.
#define TL_TEST_REQUIRE_TWO_GPUS()                \
  do {                                            \
    TL_TEST_REQUIRE_CUDA();                       \
    if (::tensorlet::cuda::device_count() < 2) {  \
      MESSAGE("skipped: needs two CUDA devices"); \
      return;                                     \
    }                                             \
  } while (0)

const Device kCpu = Device::cpu();
const std::vector<int64_t> kBatches{1, 7, 10, 0};

// A small two-layer model: tanh(x W1 + b1) W2, with float64 parameters so results on different
// devices agree to rounding.
std::vector<Tensor> model_params(Device device = kCpu) {
  return {random_tensor({5, 8}, tl::kFloat64, device), random_tensor({8}, tl::kFloat64, device),
          random_tensor({8, 3}, tl::kFloat64, device)};
}

Tensor model_forward(const std::vector<Tensor>& p, const Tensor& x) {
  return tl::matmul(tl::tanh(tl::matmul(x, p[0]) + p[1]), p[2]);
}

// dp(x) equals the model run on one device, in shape, device and values.
void check_matches_single(DataParallel& dp, const std::vector<Tensor>& params, const Tensor& x) {
  INFO("batch " << x.size(0) << " from " << x.device());
  const Tensor got = dp(x);
  const Tensor want = model_forward(params, x.to(params[0].device()));
  CHECK(got.device() == dp.output_device());
  CHECK(got.shape() == want.shape());
  CHECK(tl::allclose(got.cpu(), want.cpu(), 1e-10, 1e-12));
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- chunking, scatter, gather (CPU) ----

TEST_CASE("multi device: chunk_sizes split as torch.chunk does") {
  using tl::parallel::chunk_sizes;
  CHECK(chunk_sizes(10, 3) == std::vector<int64_t>{4, 4, 2});
  CHECK(chunk_sizes(10, 4) == std::vector<int64_t>{3, 3, 3, 1});
  CHECK(chunk_sizes(7, 3) == std::vector<int64_t>{3, 3, 1});
  CHECK(chunk_sizes(6, 4) == std::vector<int64_t>{2, 2, 2});  // fewer chunks than parts
  CHECK(chunk_sizes(1, 3) == std::vector<int64_t>{1});
  CHECK(chunk_sizes(5, 1) == std::vector<int64_t>{5});
  CHECK(chunk_sizes(0, 3).empty());
  check_throws<tl::ShapeError>([] { (void)chunk_sizes(4, 0); }, "tl::parallel::chunk_sizes");
}

TEST_CASE("multi device: scatter and gather on the CPU keep values and order") {
  const Tensor x = random_tensor({10, 3});
  const std::vector<Tensor> chunks = tl::parallel::scatter(x, {kCpu, kCpu, kCpu});
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].shape() == tl::Shape{4, 3});
  CHECK(chunks[2].shape() == tl::Shape{2, 3});
  CHECK(tl::equal(tl::parallel::gather(chunks, kCpu), x));
  // A transposed input is split by rows of its logical shape.
  const Tensor xt = random_tensor({3, 7}).t();
  CHECK(tl::equal(tl::parallel::gather(tl::parallel::scatter(xt, {kCpu, kCpu}), kCpu), xt));
  check_throws<tl::ShapeError>([] { (void)tl::parallel::scatter(tl::ones(tl::Shape{}), {kCpu}); },
                               "tl::parallel::scatter");
  check_throws<tl::ShapeError>(
      [] {
        (void)tl::parallel::gather({tl::ones({2, 3}), tl::ones({2, 4})}, kCpu);
      },
      "tl::parallel::gather");
}

// ---- DataParallel on the CPU ----

TEST_CASE("multi device: DataParallel on the CPU equals the single-device result") {
  const std::vector<Tensor> params = model_params();
  // One CPU replica, and the CPU listed three times (three chunks, run in turn).
  for (const std::vector<Device>& devices :
       {std::vector<Device>{kCpu}, std::vector<Device>{kCpu, kCpu, kCpu}}) {
    DataParallel dp(model_forward, params, devices);
    INFO(devices.size() << " CPU entries");
    for (int64_t n : kBatches)
      check_matches_single(dp, params, random_tensor({n, 5}, tl::kFloat64));
    // A strided batch.
    check_matches_single(dp, params, random_tensor({5, 9}, tl::kFloat64).t());
    // The parameters' own device uses them as they are.
    CHECK(dp.replica_params(0)[0].is_same(params[0]));
  }
  const Tensor empty_out =
      DataParallel(model_forward, params, {kCpu, kCpu})(tl::ones({0, 5}, tl::kFloat64));
  CHECK(empty_out.shape() == tl::Shape{0, 3});
}

TEST_CASE("multi device: DataParallel's default devices and output device") {
  DataParallel dp(model_forward, model_params());
  const int n = tl::cuda::device_count();
  if (n == 0) {
    CHECK(dp.devices() == std::vector<Device>{kCpu});
  } else {
    REQUIRE(static_cast<int>(dp.devices().size()) == n);
    for (int i = 0; i < n; ++i) CHECK(dp.devices()[static_cast<size_t>(i)] == Device::cuda(i));
  }
  CHECK(dp.output_device() == dp.devices()[0]);
}

TEST_CASE("multi device: DataParallel set_params replaces, and the same device sees updates") {
  std::vector<Tensor> params = model_params();
  DataParallel dp(model_forward, params, {kCpu, kCpu});
  const Tensor x = random_tensor({6, 5}, tl::kFloat64);
  // On the parameters' own device an in-place update is seen at once.
  params[2].mul_(2.0);
  CHECK(tl::allclose(dp(x), model_forward(params, x), 1e-12, 1e-12));
  const std::vector<Tensor> other = model_params();
  dp.set_params(other);
  CHECK(tl::allclose(dp(x), model_forward(other, x), 1e-12, 1e-12));
  CHECK_NOTHROW(dp.sync_params());
}

TEST_CASE("multi device: DataParallel errors are typed and name the op") {
  const std::vector<Tensor> params = model_params();
  check_throws<tl::DeviceError>([&] { DataParallel dp(model_forward, params, {}); },
                                "[tl::DataParallel] ");
  const int n = tl::cuda::device_count();
  check_throws<tl::DeviceError>([&] { DataParallel dp(model_forward, params, {Device::cuda(n)}); },
                                "[tl::DataParallel] ");
  check_throws<tl::DeviceError>(
      [&] { DataParallel dp(model_forward, params, {kCpu}, Device::cuda(n)); }, "output device");
  check_throws<tl::Error>([&] { DataParallel dp(DataParallel::Forward(), params, {kCpu}); },
                          "[tl::DataParallel] ");
  check_throws<tl::Error>(
      [&] {
        DataParallel dp(model_forward, {params[0], Tensor()}, {kCpu});
      },
      "parameter 1");
  DataParallel dp(model_forward, params, {kCpu, kCpu});
  check_throws<tl::ShapeError>([&] { (void)dp(tl::ones(tl::Shape{}, tl::kFloat64)); },
                               "[tl::DataParallel::forward] ");
  check_throws<tl::Error>([&] { (void)dp(Tensor()); }, "[tl::DataParallel::forward] ");
  check_throws<tl::IndexError>([&] { (void)dp.replica_params(2); }, "tl::DataParallel");
  DataParallel scalar_out([](const std::vector<Tensor>&, const Tensor& x) { return tl::sum(x); },
                          {}, {kCpu});
  check_throws<tl::ShapeError>(
      [&] {
        (void)scalar_out(tl::ones({4, 2}));
      },
      "[tl::DataParallel::forward] ");
  if (tl::cuda::is_available()) {
    check_throws<tl::DeviceError>(
        [&] {
          DataParallel bad(model_forward, {params[0], params[1].cuda(0), params[2]}, {kCpu});
        },
        "expected every parameter on one device");
  }
}

TEST_CASE("multi device: can_access_peer answers for valid devices and rejects others") {
  if (!tl::cuda::is_available()) {
    check_throws<tl::DeviceError>([] { (void)tl::cuda::can_access_peer(0, 1); },
                                  "tl::cuda::can_access_peer");
    return;
  }
  const int n = tl::cuda::device_count();
  CHECK_FALSE(tl::cuda::can_access_peer(0, 0));  // a device is not its own peer
  check_throws<tl::DeviceError>([n] { (void)tl::cuda::can_access_peer(0, n); },
                                "tl::cuda::can_access_peer");
  check_throws<tl::DeviceError>([n] { (void)tl::cuda::can_access_peer(n, 0); },
                                "tl::cuda::can_access_peer");
  if (n >= 2) MESSAGE("cuda:0 reads cuda:1 directly: " << tl::cuda::can_access_peer(0, 1));
}

// ---- one GPU ----

TEST_CASE("multi device: DataParallel on one GPU equals the single-device result") {
  TL_TEST_REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  const std::vector<Tensor> host_params = model_params();
  const std::vector<Tensor> gpu_params{host_params[0].to(gpu), host_params[1].to(gpu),
                                       host_params[2].to(gpu)};
  for (const std::vector<Tensor>& params : {host_params, gpu_params}) {
    for (const std::vector<Device>& devices :
         {std::vector<Device>{gpu}, std::vector<Device>{gpu, gpu, gpu}}) {
      for (Device out : {gpu, kCpu}) {
        INFO(devices.size() << " entries, params on " << params[0].device() << ", output on "
                            << out);
        DataParallel dp(model_forward, params, devices, out);
        for (int64_t n : kBatches) {
          const Tensor x = random_tensor({n, 5}, tl::kFloat64);
          check_matches_single(dp, params, x);          // scattered from the host (pinned)
          check_matches_single(dp, params, x.to(gpu));  // already on the GPU
        }
        check_matches_single(dp, params, random_tensor({5, 9}, tl::kFloat64, gpu).t());
      }
    }
  }
}

TEST_CASE("multi device: DataParallel copies parameters once and again on sync_params") {
  TL_TEST_REQUIRE_CUDA();
  std::vector<Tensor> params = model_params();  // on the CPU: the GPU replica is a copy
  DataParallel dp(model_forward, params, {Device::cuda(0)});
  CHECK(dp.replica_params(0)[0].device() == Device::cuda(0));
  const Tensor x = random_tensor({9, 5}, tl::kFloat64);
  const Tensor before = model_forward(params, x);
  params[0].mul_(-0.5);  // an in-place update the replica does not see yet
  CHECK(tl::allclose(dp(x).cpu(), before, 1e-10, 1e-12));
  dp.sync_params();
  CHECK(tl::allclose(dp(x).cpu(), model_forward(params, x), 1e-10, 1e-12));
}

TEST_CASE("multi device: a copy to pinned memory on a side stream overlaps the next compute") {
  TL_TEST_REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  const Stream main = Stream::current(0);
  const Stream side = Stream::create(0);
  const Tensor a = random_tensor({384, 384}, tl::kFloat32, gpu) * 0.05;
  std::vector<Tensor> on_host;
  std::vector<Tensor> want;
  Tensor x = random_tensor({384, 384}, tl::kFloat32, gpu);
  for (int step = 0; step < 6; ++step) {
    Tensor y = tl::tanh(tl::matmul(x, a));  // main stream
    Event produced;
    produced.record(main);
    {
      StreamGuard on_side(side);
      produced.wait(side);  // the copy starts once y is written
      on_host.push_back(y.to(Device::cpu(), /*non_blocking=*/true));
      // y was allocated on the main stream and is read on the side one: freeing it below must
      // not let the main stream's next allocation overwrite it before the copy ran.
      tl::cuda::record_stream(y, side);
    }
    CHECK(on_host.back().is_pinned());
    want.push_back(y.clone());  // main stream; what the host copy must hold
    x = y;
    // The next computation, enqueued while the copy may still run, reusing freed blocks.
    Tensor scratch = tl::matmul(x, a) * 3.0;
    (void)scratch;
  }
  side.synchronize();
  for (size_t i = 0; i < on_host.size(); ++i) {
    INFO("step " << i);
    CHECK(tl::equal(on_host[i], want[i].cpu()));
  }
}

// ---- two GPUs ----

TEST_CASE("multi device: two GPUs: copies between them keep every layout and dtype") {
  TL_TEST_REQUIRE_TWO_GPUS();
  const char* no_peer = std::getenv("TL_CUDA_NO_PEER");
  const bool staged_forced = no_peer != nullptr && no_peer[0] == '1';
  MESSAGE((staged_forced                     ? "staged"
           : tl::cuda::can_access_peer(1, 0) ? "peer"
                                             : "staged")
          << " path between cuda:0 and cuda:1");
  if (staged_forced) CHECK_FALSE(tl::cuda::can_access_peer(1, 0));
  const Device d0 = Device::cuda(0), d1 = Device::cuda(1);
  for (tl::DType dtype : {tl::kFloat32, tl::kFloat64, tl::kInt64, tl::kBool}) {
    for (const Layout& layout : layouts_of(random_tensor({67, 45}, dtype))) {
      INFO(dtype << " " << layout.name);
      const Tensor on0 = same_layout_on(layout.tensor, d0);
      const Tensor on1 = on0.to(d1);
      CHECK(on1.device() == d1);
      CHECK(tl::equal(on1.cpu(), layout.tensor));
      CHECK(tl::equal(on1.to(d0).cpu(), layout.tensor));
      // Into a strided destination, with a conversion.
      Tensor dst = tl::zeros({45, 67}, tl::TensorOptions(tl::kFloat64).device(d1)).t();
      dst.copy_(on0);
      CHECK(tl::equal(dst.cpu(), layout.tensor.to(tl::kFloat64)));
    }
  }
  // Larger than one staging chunk (8 MiB), both ways.
  const Tensor big = random_tensor({5'000'003}, tl::kFloat32);
  const Tensor big0 = big.to(d0);
  CHECK(tl::equal(big0.to(d1).to(d0).cpu(), big));
  tl::cuda::synchronize(0);
  tl::cuda::synchronize(1);
}

TEST_CASE("multi device: two GPUs: the staged path, forced with TL_CUDA_NO_PEER=1") {
  TL_TEST_REQUIRE_TWO_GPUS();
  const char* no_peer = std::getenv("TL_CUDA_NO_PEER");
  if (no_peer != nullptr && no_peer[0] == '1') {
    MESSAGE("skipped: this run already has TL_CUDA_NO_PEER=1");
    return;
  }
  // The variable is read once per process, so the copy case runs again in a child process.
  char self[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(len > 0);
  const std::string log = "tl_multi_device_no_peer." + std::to_string(getpid()) + ".log";
  const std::string command = std::string("TL_CUDA_NO_PEER=1 '") + self +
                              "' --no-version --test-case='multi device: two GPUs: copies*' > " +
                              log + " 2>&1";
  const int status = std::system(command.c_str());
  std::string output;
  if (FILE* f = std::fopen(log.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) output.append(buf, n);
    std::fclose(f);
    std::remove(log.c_str());
  }
  INFO("the child's output:\n" << output);
  CHECK(status == 0);
  CHECK(contains(output, "1 passed"));
}

TEST_CASE("multi device: two GPUs: interleaved work on both gives the right results") {
  TL_TEST_REQUIRE_TWO_GPUS();
  const Device d0 = Device::cuda(0), d1 = Device::cuda(1);
  const Tensor w0 = random_tensor({64, 64}, tl::kFloat64) * 0.1;
  const Tensor w1 = random_tensor({64, 64}, tl::kFloat64) * 0.1;
  Tensor h0 = random_tensor({32, 64}, tl::kFloat64), h1 = random_tensor({32, 64}, tl::kFloat64);
  Tensor g0 = h0.to(d0), g1 = h1.to(d1);
  const Tensor gw0 = w0.to(d0), gw1 = w1.to(d1);
  const Stream side1 = Stream::create(1);
  tl::cuda::record_stream(gw1, side1);
  for (int step = 0; step < 40; ++step) {
    // The same step on the CPU, as the reference.
    h0 = tl::tanh(tl::matmul(h0, w0)) + 0.5;
    h1 = tl::tanh(tl::matmul(h1, w1)) - 0.5;
    g0 = tl::tanh(tl::matmul(g0, gw0)) + 0.5;  // enqueued on cuda:0
    Event ready1;
    ready1.record(Stream::current(1));  // g1 may come from a copy on cuda:1's default stream
    {
      StreamGuard on_side(side1);  // cuda:1 on a side stream: its own allocations and cuBLAS
      ready1.wait(side1);
      tl::cuda::record_stream(g1, side1);  // a no-op when g1 was allocated on side1
      g1 = tl::tanh(tl::matmul(g1, gw1)) - 0.5;
      tl::cuda::record_stream(g1, Stream::default_stream(1));
    }
    Event done1;
    done1.record(side1);
    done1.wait(Stream::current(1));  // the default stream of cuda:1 reads g1 next
    if (step % 10 == 9) {
      // Swap halves across the devices.
      std::swap(h0, h1);
      const Tensor to1 = g0.to(d1);
      g0 = g1.to(d0);
      g1 = to1;
    }
  }
  CHECK(g0.device() == d0);
  CHECK(g1.device() == d1);
  CHECK(tl::allclose(g0.cpu(), h0, 1e-9, 1e-12));
  CHECK(tl::allclose(g1.cpu(), h1, 1e-9, 1e-12));
}

TEST_CASE("multi device: two GPUs: DataParallel equals the single-device result") {
  TL_TEST_REQUIRE_TWO_GPUS();
  const Device d0 = Device::cuda(0), d1 = Device::cuda(1);
  const std::vector<Tensor> host_params = model_params();
  std::vector<Tensor> on1;
  for (const Tensor& p : host_params) on1.push_back(p.to(d1));
  for (const std::vector<Tensor>& params : {host_params, on1}) {
    for (Device out : {d0, d1, kCpu}) {
      DataParallel dp(model_forward, params, {d0, d1}, out);
      INFO("params on " << params[0].device() << ", output on " << out);
      for (int64_t n : kBatches) {
        const Tensor x = random_tensor({n, 5}, tl::kFloat64);
        check_matches_single(dp, params, x);
        check_matches_single(dp, params, x.to(d1));
      }
    }
  }
  // Parameters on cuda:1 are used there as they are, and copied to cuda:0.
  DataParallel dp(model_forward, on1, {d0, d1});
  CHECK(dp.replica_params(1)[0].is_same(on1[0]));
  CHECK(dp.replica_params(0)[0].device() == d0);
  check_throws<tl::DeviceError>(
      [&] {
        DataParallel bad(model_forward, {on1[0], host_params[1].to(d0), on1[2]}, {d0, d1});
      },
      "expected every parameter on one device");
}

}  // namespace

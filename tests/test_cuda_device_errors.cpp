// Errors CUDA kernels find in their data (backends/cuda/cuda_device_error.h): an out-of-range
// scatter/index_add index and an integer division by zero are skipped by the kernel and raised at
// the host's next wait for the device, naming the op that launched it; raised once, then cleared;
// found in a graph's replay too. Skipped without a CUDA device.
#include <cstdint>
#include <functional>
#include <vector>

#include "test_util.h"

namespace {

using tl::Tensor;
using tl_test::check_throws;

tl::TensorOptions on_cuda(tl::DType d) { return tl::TensorOptions(d).device(tl::Device::cuda(0)); }

Tensor longs(const std::vector<int64_t>& v) { return tl::from_vector(v).cuda(); }

}  // namespace

TEST_CASE("cuda device errors: a bad scatter_add index is skipped and raised at the next wait") {
  TL_TEST_REQUIRE_CUDA();
  Tensor self = tl::zeros({4}, on_cuda(tl::kFloat32));
  Tensor src = tl::ones({3}, on_cuda(tl::kFloat32));
  Tensor out = tl::scatter_add(self, 0, longs({0, 9, 2}), src);  // returns without waiting
  check_throws<tl::IndexError>(
      [&] { (void)out.cpu(); },
      "[tl::scatter_add] index 9 is out of bounds for dimension 0 with size 4");
  // Raised once: the next wait is clean. The kernel skipped only the bad element.
  CHECK(out.cpu().to_vector<float>() == std::vector<float>{1, 0, 1, 0});
  tl::cuda::synchronize();
}

TEST_CASE("cuda device errors: every wait raises a pending error, naming the op that found it") {
  TL_TEST_REQUIRE_CUDA();
  Tensor self = tl::zeros({2, 3}, on_cuda(tl::kFloat32));
  Tensor src = tl::ones({2, 2}, on_cuda(tl::kFloat32));
  Tensor bad = longs({-1, 0}).view({1, 2}).expand({2, 2});
  // Stream::synchronize, Event::synchronize, tl::cuda::synchronize and item() all raise it.
  const std::vector<std::function<void()>> waits{
      [] { tl::cuda::Stream::current().synchronize(); },
      [] {
        tl::cuda::Event e;
        e.record();
        e.synchronize();
      },
      [] { tl::cuda::synchronize(); },
      [] { (void)tl::ones({1}, on_cuda(tl::kFloat32)).sum().item<float>(); },
  };
  for (const auto& wait : waits) {
    const Tensor index = longs({0, 7});
    self.index_add_(1, index, src);
    check_throws<tl::IndexError>(wait, "[tl::index_add_] index 7 is out of bounds for dimension 1");
    wait();  // cleared
  }
  // A later error after a clean wait is reported again; the first of two is the one raised.
  // (Inputs made first: copying them to the device is a wait, which would raise the first.)
  Tensor five = longs({5}), row = tl::ones({1, 3}, on_cuda(tl::kFloat32));
  (void)tl::scatter(self, 1, bad, src);
  (void)tl::index_copy(self, 0, five, row);
  check_throws<tl::IndexError>([] { tl::cuda::synchronize(); }, "[tl::scatter] index -1");
  tl::cuda::synchronize();
}

TEST_CASE("cuda device errors: integer division by a zero tensor raises at the next wait") {
  TL_TEST_REQUIRE_CUDA();
  for (tl::DType d : {tl::kInt8, tl::kUInt8, tl::kInt16, tl::kInt32, tl::kInt64}) {
    CAPTURE(d);
    Tensor a = tl::full({5}, 7, on_cuda(d)), b = tl::full({5}, 2, on_cuda(d));
    b.narrow(0, 3, 1).fill_(0);
    Tensor q = tl::floor_divide(a, b);  // no wait: the kernel checks the divisor
    check_throws<tl::Error>(
        [&] { (void)q.cpu(); },
        "[tl::floor_divide] ZeroDivisionError: integer division or modulo by zero");
    CHECK(q.to(tl::kInt64).cpu().to_vector<int64_t>() == std::vector<int64_t>{3, 3, 3, 0, 3});
    check_throws<tl::Error>([&] { (void)tl::fmod(a, b).cpu(); }, "[tl::fmod] ZeroDivisionError");
    check_throws<tl::Error>([&] { (void)tl::remainder(a, b).cpu(); },
                            "[tl::remainder] ZeroDivisionError");
    // Divisors without a zero: no error, exact answers.
    CHECK(
        tl::remainder(a, tl::full({5}, 4, on_cuda(d))).to(tl::kInt64).cpu().to_vector<int64_t>() ==
        std::vector<int64_t>(5, 3));
  }
  tl::cuda::synchronize();
}

TEST_CASE("cuda device errors: captured in a graph, an integer division reports at replay") {
  TL_TEST_REQUIRE_CUDA();
  Tensor a = tl::full({8}, 9, on_cuda(tl::kInt32)), b = tl::full({8}, 2, on_cuda(tl::kInt32));
  Tensor q;
  tl::cuda::Graph g;
  g.capture([&] { q = tl::floor_divide(a, b); });  // captured: no wait for a scan of b
  g.replay();
  CHECK(q.cpu().to_vector<int32_t>() == std::vector<int32_t>(8, 4));
  b.narrow(0, 5, 1).fill_(0);
  g.replay();
  check_throws<tl::Error>([] { tl::cuda::synchronize(); }, "[tl::floor_divide] ZeroDivisionError");
  tl::cuda::synchronize();
}

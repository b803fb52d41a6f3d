// Autograd from several threads at once: independent graphs (4 threads x 50) with a leaf all of
// them share, checked against closed-form gradients, and grad mode being per thread.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <atomic>
#include <cmath>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using tl_test::random_tensor;
using tl_test::values_of;

namespace {

bool close(const tl::Tensor& got, const tl::Tensor& want) {
  if (!got.defined()) return false;
  const std::vector<double> g = values_of(got), w = values_of(want);
  if (g.size() != w.size()) return false;
  for (size_t i = 0; i < g.size(); ++i)
    if (std::abs(g[i] - w[i]) > 1e-4 * (1 + std::abs(w[i]))) return false;
  return true;
}

}  // namespace

TEST_CASE("autograd threads: backward of independent graphs from 4 threads at once") {
  constexpr int kThreads = 4, kGraphs = 50;
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    // Inputs made up front (one generator), leaves of each graph its own; `shared` is in all.
    std::vector<tl::Tensor> xs, ws;
    for (int i = 0; i < kThreads * kGraphs; ++i) {
      xs.push_back(random_tensor({3, 4}, tl::kFloat32, device).requires_grad_());
      ws.push_back(random_tensor({4, 2}, tl::kFloat32, device).requires_grad_());
    }
    tl::Tensor shared = random_tensor({2}, tl::kFloat32, device);
    shared.requires_grad_();
    std::atomic<int> wrong{0};
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        try {
          for (int k = 0; k < kGraphs; ++k) {
            const tl::Tensor& x = xs[t * kGraphs + k];
            const tl::Tensor& w = ws[t * kGraphs + k];
            // loss = sum((x w)^2) + sum(shared * 1): dx = 2 (x w) w^T, dw = 2 x^T (x w).
            tl::Tensor y = tl::matmul(x, w);
            tl::Tensor loss = (y * y).sum() + (shared * 1.0).sum();
            loss.backward();
            tl::NoGradGuard no_grad;
            const tl::Tensor xw = tl::matmul(x, w);
            if (!close(x.grad(), tl::matmul(xw, w.t()) * 2.0)) ++wrong;
            if (!close(w.grad(), tl::matmul(x.t(), xw) * 2.0)) ++wrong;
          }
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    for (std::thread& th : threads) th.join();
    for (const std::string& e : errors) CHECK(e.empty());
    CHECK(wrong.load() == 0);
    // Every graph's gradient reached the shared leaf: one per graph, none lost to a race.
    CHECK(close(shared.grad(), tl::full({2}, double(kThreads * kGraphs))));
  }
}

TEST_CASE("autograd threads: grad mode is per thread") {
  std::atomic<int> stage{0};
  bool recorded_elsewhere = false;
  std::thread no_grad_thread([&] {
    tl::NoGradGuard no_grad;
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  // The other thread holds NoGradGuard; this one still records.
  tl::Tensor x = random_tensor({3});
  x.requires_grad_();
  recorded_elsewhere = (x * x).requires_grad();
  stage = 2;
  no_grad_thread.join();
  CHECK(recorded_elsewhere);
  CHECK(tl::GradMode::is_enabled());
}

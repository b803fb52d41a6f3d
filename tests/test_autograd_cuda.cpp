// Autograd on the GPU beyond gradcheck: saved tensors freed as backward passes them (allocator
// statistics), and a forward + backward captured in a CUDA graph replaying to eager gradients.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include "test_util.h"

namespace {

const tl::Device kCuda = tl::Device::cuda(0);

tl::Tensor cuda_leaf(const tl::Shape& shape) {
  tl::Tensor t = tl_test::random_tensor(shape).to(kCuda);
  t.requires_grad_();
  return t;
}

int64_t allocated() {
  tl::cuda::synchronize();
  return tl::cuda::memory_stats(0).allocated;
}

}  // namespace

TEST_CASE("autograd cuda: backward frees what the graph saved; retain_graph keeps it") {
  TL_TEST_REQUIRE_CUDA();
  tl::Tensor x = cuda_leaf({256, 256}), w = cuda_leaf({256, 256});
  const int64_t grads = 2 * 256 * 256 * 4;
  const int64_t base = allocated();
  {
    tl::Tensor loss = tl::sum(tl::sigmoid(x * w));  // sigmoid saves its output
    loss.backward();
  }
  CHECK(allocated() == base + grads);
  x.mutable_grad() = tl::Tensor();
  w.mutable_grad() = tl::Tensor();
  CHECK(allocated() == base);
  {
    tl::Tensor loss = tl::sum(tl::sigmoid(x * w));
    loss.backward({}, /*retain_graph=*/true);
    CHECK(allocated() > base + grads);  // the sigmoid's output is still held
  }
  // The graph went with the loss.
  CHECK(allocated() == base + grads);
  // Under NoGradGuard nothing is saved: only the result stays.
  x.mutable_grad() = tl::Tensor();
  w.mutable_grad() = tl::Tensor();
  {
    tl::NoGradGuard no_grad;
    tl::Tensor y = tl::sigmoid(x * w);
    CHECK(y.grad_fn() == nullptr);
    CHECK(allocated() == base + 256 * 256 * 4);
  }
}

TEST_CASE("autograd cuda: forward + backward captured in a CUDA graph replays to eager gradients") {
  TL_TEST_REQUIRE_CUDA();
  tl::Tensor x = cuda_leaf({33, 17}), w = cuda_leaf({17, 9}), b = cuda_leaf({9});
  std::vector<tl::Tensor> grads;
  auto step = [&] {
    tl::Tensor h = tl::tanh(tl::matmul(x, w) + b);
    tl::Tensor loss = tl::mean(tl::sigmoid(h) * h);
    return tl::autograd::grad({loss}, {x, w, b});
  };
  step();  // warm-up outside the capture (cuBLAS handles, workspaces)
  tl::cuda::Graph g;
  g.capture([&] { grads = step(); });
  REQUIRE(g.is_captured());
  for (int round = 0; round < 3; ++round) {
    {
      tl::NoGradGuard no_grad;
      x.copy_(tl_test::random_tensor({33, 17}).to(kCuda));
      w.copy_(tl_test::random_tensor({17, 9}).to(kCuda));
      b.copy_(tl_test::random_tensor({9}).to(kCuda));
    }
    g.replay();
    const std::vector<tl::Tensor> eager = step();
    for (size_t i = 0; i < eager.size(); ++i) {
      INFO("round " << round << " input " << i);
      tl_test::check_values(grads[i], tl_test::values_of(eager[i]), 1e-5, 1e-6);
    }
  }
}

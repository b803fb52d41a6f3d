// How backward sums a gradient's parts (autograd/grad_sum.h): add_n equals the chain of adds bit
// for bit on every floating dtype and device, into a poisoned out and in place; the engine holds
// small parts and adds large ones, with the same gradients either way; add_n's bad inputs.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <functional>
#include <limits>
#include <vector>

#include "tensorlet/autograd/grad_sum.h"
#include "tensorlet/backends/backend.h"
#include "test_util.h"

using tl_test::bits_of;
using tl_test::random_tensor;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const tl::DType kDTypes[] = {tl::kFloat64, tl::kFloat32, tl::kFloat16, tl::kBFloat16};

std::vector<tl::Tensor> random_parts(size_t n, const tl::Shape& shape, tl::DType dtype,
                                     tl::Device device) {
  std::vector<tl::Tensor> parts;
  for (size_t i = 0; i < n; ++i) parts.push_back(random_tensor(shape, dtype, device));
  return parts;
}

tl::Tensor chain_of_adds(const std::vector<tl::Tensor>& parts) {
  tl::Tensor sum = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) sum = tl::add(sum, parts[i]);
  return sum;
}

// Counts the profiler's top-level op rows named `name` while body runs.
int rows_named(const char* name, const std::function<void()>& body) {
  tl::profiler::Profile profile;
  body();
  profile.stop();
  int n = 0;
  for (const tl::profiler::Event& e : profile.events())
    if (e.kind == tl::profiler::EventKind::Op && e.name == name) ++n;
  return n;
}

}  // namespace

TEST_CASE("add_n: the chain of adds bit for bit, every dtype, count and size, poisoned out") {
  // 16 is one CUDA launch, 17 and 40 go on from the partial sum; odd sizes, one past the CPU's
  // grain, zero elements.
  const size_t counts[] = {2, 3, 16, 17, 40};
  const tl::Shape shapes[] = {{5, 7}, {70001}, {0, 3}};
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::DType dtype : kDTypes)
      for (const size_t n : counts)
        for (const tl::Shape& shape : shapes) {
          INFO(device.str() << ", " << dtype << ", " << n << " parts of " << shape);
          const std::vector<tl::Tensor> parts = random_parts(n, shape, dtype, device);
          const tl::Tensor want = chain_of_adds(parts);
          const tl::Tensor out = tl::full(shape, kNaN, tl::TensorOptions(dtype).device(device));
          tl::backend_for(device).add_n(parts, out);
          CHECK(bits_of(out) == bits_of(want));
          CHECK(bits_of(tl::autograd::add_n(parts)) == bits_of(want));
          // In place: out is the first part's memory.
          std::vector<tl::Tensor> in_place = parts;
          in_place[0] = parts[0].clone();
          tl::backend_for(device).add_n(in_place, in_place[0]);
          CHECK(bits_of(in_place[0]) == bits_of(want));
        }
}

TEST_CASE("add_n: one row in the profiler, and its bad inputs name it") {
  for (const tl::Device device : tl_test::test_devices()) {
    INFO(device.str());
    const std::vector<tl::Tensor> parts = random_parts(5, {4, 3}, tl::kFloat32, device);
    CHECK(rows_named("tl::add_n", [&] { tl::autograd::add_n(parts); }) == 1);
    const tl::Tensor a = random_tensor({4, 3}, tl::kFloat32, device);
    using tl::autograd::add_n;
    tl_test::check_throws<tl::Error>([&] { add_n({a}); }, "tl::add_n");
    tl_test::check_throws<tl::Error>([&] { add_n({a, tl::Tensor()}); }, "tl::add_n");
    tl_test::check_throws<tl::DTypeError>([&] { add_n({a, a.to(tl::kFloat64)}); }, "tl::add_n");
    tl_test::check_throws<tl::DTypeError>(
        [&] {
          add_n({a.to(tl::kInt32), a.to(tl::kInt32)});
        },
        "tl::add_n");
    tl_test::check_throws<tl::ShapeError>([&] { add_n({a, a.reshape({3, 4})}); }, "tl::add_n");
    tl_test::check_throws<tl::Error>([&] { add_n({a, a.t().contiguous().t()}); }, "tl::add_n");
    if (device.is_cuda())
      tl_test::check_throws<tl::DeviceError>([&] { add_n({a, a.cpu()}); }, "tl::add_n");
    // Still usable after.
    CHECK(bits_of(add_n({a, a})) == bits_of(tl::add(a, a)));
  }
}

TEST_CASE("autograd: a weight used by many ops gets the chain of adds' gradient, in few sums") {
  for (const tl::Device device : tl_test::test_devices())
    for (const tl::Shape& shape : {tl::Shape{10, 10}, tl::Shape{300, 300}}) {
      // 300 x 300 is past kMaxHeldGradNumel: its parts are added as they come.
      INFO(device.str() << ", " << shape);
      const bool held = shape.numel() <= tl::autograd::kMaxHeldGradNumel;
      tl::Tensor w = random_tensor(shape, tl::kFloat32, device);
      w.requires_grad_();
      std::vector<tl::Tensor> xs = random_parts(40, shape, tl::kFloat32, device);
      tl::Tensor y = tl::mul(xs[0], w);
      for (size_t i = 1; i < xs.size(); ++i) y = tl::add(y, tl::mul(xs[i], w));
      const tl::Tensor g = random_tensor(shape, tl::kFloat32, device);
      // MulBackward0's parts g * x_i reach w in the reverse order of the forward's adds.
      std::vector<tl::Tensor> want_parts;
      for (size_t i = xs.size(); i-- > 0;) want_parts.push_back(tl::mul(g, xs[i]));
      const tl::Tensor want = chain_of_adds(want_parts);
      int sums = 0, adds = 0;
      {
        tl::profiler::Profile profile;
        y.backward(g);
        profile.stop();
        for (const tl::profiler::Event& e : profile.events())
          if (e.kind == tl::profiler::EventKind::Op && e.depth == 0) {
            sums += e.name == "tl::add_n";
            adds += e.name == "tl::add";
          }
      }
      CHECK(bits_of(w.grad()) == bits_of(want));
      if (held) {
        CHECK(sums == 3);  // 40 parts: 16, then 15 more, then the last 9 when the leaf runs
        CHECK(adds == 0);
      } else {
        CHECK(sums == 0);
        CHECK(adds == 39);
      }
      // With create_graph and a grad_output that requires grad, the sum is recorded (adds),
      // and equal. (With a plain g the gradient would not require grad, as torch's.)
      tl::Tensor w2 = w.detach().clone();
      w2.requires_grad_();
      tl::Tensor gg = g.detach().clone();
      gg.requires_grad_();
      tl::Tensor y2 = tl::mul(xs[0], w2);
      for (size_t i = 1; i < xs.size(); ++i) y2 = tl::add(y2, tl::mul(xs[i], w2));
      const tl::Tensor g2 = tl::autograd::grad({y2}, {w2}, {gg}, true, true)[0];
      CHECK(g2.requires_grad());
      CHECK(bits_of(g2) == bits_of(want));
    }
}

// CUDA graphs (tl::cuda::Graph, graphed): capture and replay against eager results, the graph's
// memory pool (static outputs, shared pools, memory_stats), random numbers that are fresh on each
// replay and equal the CPU's stream, side streams, cuBLAS inside a capture, ops that wait for the
// GPU refused during a capture (which is then discarded, the library still working), a long
// cumsum (its tile counter zeroed inside the graph), and misuse.
// The device cases skip without a CUDA device.
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using tl::Tensor;
using tl::cuda::Graph;

const tl::Device kCuda = tl::Device::cuda(0);

Tensor random_cuda(const tl::Shape& shape) { return tl_test::random_tensor(shape).to(kCuda); }

// The graph pools cuda:0 holds now.
int64_t graph_pools() { return tl::cuda::memory_stats(0).graph_pools; }

}  // namespace

TEST_CASE("cuda graph: without a usable device, capturing throws DeviceError") {
  if (tl::cuda::is_available()) {
    MESSAGE("skipped: a CUDA device is present");
    return;
  }
  Graph g;
  tl_test::check_throws<tl::DeviceError>([&] { g.capture([] {}); }, "tl::cuda::Graph");
  tl_test::check_throws<tl::Error>([&] { g.replay(); }, "tl::cuda::Graph::replay");
  CHECK_FALSE(g.is_captured());
}

TEST_CASE("cuda graph: a replay recomputes the captured ops from the static inputs") {
  TL_TEST_REQUIRE_CUDA();
  Tensor x = random_cuda({37, 19});
  Tensor y;
  Graph g;
  g.capture([&] { y = x * 2.0 + 1.0; });
  REQUIRE(g.is_captured());
  CHECK(g.num_nodes() == 2);
  CHECK(g.devices() == std::vector<int>{0});
  for (int round = 0; round < 3; ++round) {
    const Tensor fresh = tl_test::random_tensor({37, 19});
    x.copy_(fresh);
    g.replay();
    tl_test::check_values(y, tl_test::values_of(fresh * 2.0 + 1.0), 1e-6, 1e-6);
  }
}

TEST_CASE("cuda graph: a chain of ops that free their temporaries replays to the eager result") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor x0 = random_cuda({1000});
  Tensor x = x0.clone();
  Tensor out;
  Graph g;
  // Each step's result is freed by the next: blocks are reused inside the capture's pool.
  g.capture([&] {
    Tensor t = x;
    for (int i = 0; i < 20; ++i) t = t + 1.0;
    out = t;
  });
  CHECK(g.num_nodes() == 20);
  for (int round = 0; round < 3; ++round) {
    g.replay();
    tl_test::check_values(out, tl_test::values_of(x0.cpu() + 20.0), 1e-5, 1e-5);
  }
  // In-place work accumulates over replays.
  Tensor acc = tl::zeros({64}, kCuda);
  Graph inc;
  inc.capture([&] { acc.add_(1.0); });
  for (int i = 0; i < 5; ++i) inc.replay();
  tl_test::check_values(acc, std::vector<double>(64, 5.0), 0, 0);
}

TEST_CASE("cuda graph: a long cumsum replays with fresh inputs (its tile counter restarts)") {
  TL_TEST_REQUIRE_CUDA();
  // The single-pass scan hands out tiles from a counter in its temp storage: a kernel inside the
  // graph zeroes it, so every replay starts from tile 0 (a stale one would hand out tiles past
  // the end).
  const int64_t n = (int64_t{1} << 20) + 3;
  Tensor x = random_cuda({n});
  Tensor y;
  Graph g;
  g.capture([&] { y = tl::cumsum(x, 0); });
  for (int round = 0; round < 3; ++round) {
    const Tensor fresh = tl_test::random_tensor({n});
    x.copy_(fresh);
    g.replay();
    // The CPU adds in order and the GPU in tiles, both in double: an output may round to the
    // neighbouring float32.
    tl_test::check_values(y, tl_test::values_of(tl::cumsum(fresh, 0)), 1e-6, 1e-12 + 1e-15 * n);
  }
}

TEST_CASE("cuda graph: kernels launched early inside a graph still see every earlier write") {
  TL_TEST_REQUIRE_CUDA();
  // On Hopper, elementwise and random kernels captured in a graph launch while the kernel before
  // them runs (cuda_dependent_launch.h) and wait on the device before touching memory. Kernels of
  // many waves, read-after-write and write-after-read through blocks the pool reuses, strided and
  // transposed operands, cuBLAS and a reduction in between: the replay must equal the eager run.
  const Tensor x0 = random_cuda({1024, 768});
  Tensor x = x0.clone();
  const Tensor w = random_cuda({768, 64});
  const auto work = [&] {
    Tensor t = x * 0.5;
    for (int i = 0; i < 6; ++i) {
      Tensor u = t + 1.0;                     // reads t
      t = u * t;                              // t's old block is free now: a later op reuses it
      t = t.t().contiguous().t() - u * 0.25;  // strided copy, then a flat op
      t = t / (tl::abs(t) + 1.0);
    }
    Tensor r = tl::rand({1024, 768}, kCuda);
    Tensor m = tl::matmul(t + r * 0.0, w);  // cuBLAS reads the elementwise results
    return tl::sum(m * m, {1}) + t.narrow(1, 3, 64).sum({1});
  };
  const Tensor want = work();
  Tensor out;
  Graph g;
  g.capture([&] { out = work(); });
  for (int round = 0; round < 3; ++round) {
    out.fill_(-1.0);  // poison: every replay rewrites it
    g.replay();
    tl_test::check_values(out, tl_test::values_of(want), 1e-3, 1e-4);
  }
  // Static inputs change between replays.
  x.copy_(tl_test::random_tensor({1024, 768}));
  const Tensor want2 = work();
  g.replay();
  tl_test::check_values(out, tl_test::values_of(want2), 1e-3, 1e-4);
}

TEST_CASE("cuda graph: the pool keeps the graph's memory apart until the last graph is reset") {
  TL_TEST_REQUIRE_CUDA();
  tl::cuda::synchronize();
  const int64_t pools_before = graph_pools();
  Tensor x = random_cuda({1 << 20});
  Tensor y;
  {
    Graph g;
    g.capture([&] { y = x * 3.0; });
    const tl::cuda::MemoryStats s = tl::cuda::memory_stats(0);
    CHECK(s.graph_pools == pools_before + 1);
    CHECK(s.graph_pool_reserved >= 4 << 20);
    // Eager work cannot get the graph's output block, even once y is dropped.
    void* graph_block = y.data_ptr();
    y = Tensor();
    for (int i = 0; i < 4; ++i) CHECK(tl::empty({1 << 20}, kCuda).data_ptr() != graph_block);
    g.replay();
  }
  CHECK(graph_pools() == pools_before);

  // Two graphs sharing a pool hold it once; it goes when both are reset.
  const tl::cuda::GraphPool pool = tl::cuda::graph_pool_handle();
  Tensor a, b;
  Graph g1, g2;
  g1.capture([&] { a = x + 1.0; }, pool);
  g2.capture([&] { b = a * 2.0; }, pool);
  CHECK(g1.pool() == pool);
  CHECK(g2.pool() == pool);
  CHECK(graph_pools() == pools_before + 1);
  g1.replay();
  g2.replay();
  tl_test::check_values(b, tl_test::values_of((x.cpu() + 1.0) * 2.0), 1e-6, 1e-6);
  g1.reset();
  CHECK(graph_pools() == pools_before + 1);
  g2.reset();
  CHECK(graph_pools() == pools_before);
  // A reset graph captures again.
  g1.capture([&] { a = x - 1.0; });
  g1.replay();
  tl_test::check_values(a, tl_test::values_of(x.cpu() - 1.0), 1e-6, 1e-6);
}

TEST_CASE("cuda graph: random ops draw fresh numbers on every replay, the CPU's stream's") {
  TL_TEST_REQUIRE_CUDA();
  constexpr uint64_t kSeed = 1234;
  tl::manual_seed(kSeed);
  Tensor u, n;
  Graph g;
  g.capture([&] {
    u = tl::rand({33, 7}, kCuda);
    n = tl::randn({101}, kCuda) * 1.0;
  });
  CHECK(g.num_nodes() == 3);  // the seed kernel the graph runs first is not counted
  // The capture drew nothing: replay k draws what the k-th eager call would have.
  std::vector<Tensor> us, ns;
  for (int k = 0; k < 3; ++k) {
    g.replay();
    us.push_back(u.cpu().clone());
    ns.push_back(n.cpu().clone());
  }
  tl::manual_seed(kSeed);
  for (int k = 0; k < 3; ++k) {
    INFO("replay " << k);
    const Tensor cu = tl::rand({33, 7});
    const Tensor cn = tl::randn({101});
    CHECK(tl_test::bits_of(us[k]) == tl_test::bits_of(cu));
    tl_test::check_values(ns[k], tl_test::values_of(cn), 1e-6, 1e-6);
  }
  CHECK(tl_test::bits_of(us[0]) != tl_test::bits_of(us[1]));
  // The generator moved on by the replays' draws: an eager draw after them is the 4th.
  tl::manual_seed(kSeed);
  for (int k = 0; k < 3; ++k) g.replay();
  const Tensor next = tl::rand({33, 7}, kCuda);
  tl::manual_seed(kSeed);
  for (int k = 0; k < 3; ++k) {
    (void)tl::rand({33, 7});
    (void)tl::randn({101});
  }
  CHECK(tl_test::bits_of(next) == tl_test::bits_of(tl::rand({33, 7})));
}

TEST_CASE("cuda graph: matmuls (cuBLAS) and a side stream joined by events are captured") {
  TL_TEST_REQUIRE_CUDA();
  Tensor a = random_cuda({100, 100}), b = random_cuda({100, 100});
  Tensor c, d;
  (void)tl::matmul(a, b);  // cuBLAS set up outside the capture, as warm-up would
  tl::cuda::Stream side = tl::cuda::Stream::create();
  Graph g;
  g.capture([&] {
    tl::cuda::Event fork, join;
    fork.record();
    fork.wait(side);
    {
      tl::cuda::StreamGuard on_side(side);
      d = tl::matmul(b, a);
      join.record(side);
    }
    c = tl::matmul(a, b);
    for (int i = 0; i < 9; ++i) c = tl::matmul(c, b) * 0.01;
    join.wait();
  });
  g.replay();
  Tensor want = tl::matmul(a, b);
  for (int i = 0; i < 9; ++i) want = tl::matmul(want, b) * 0.01;
  tl_test::check_values(c, tl_test::values_of(want), 1e-4, 1e-4);
  tl_test::check_values(d, tl_test::values_of(tl::matmul(b, a)), 1e-4, 1e-4);
  // Replayed on another stream: the result is ordered on that stream.
  a.copy_(tl_test::random_tensor({100, 100}));
  tl::cuda::Stream other = tl::cuda::Stream::create();
  tl::cuda::Event ready;
  ready.record();
  ready.wait(other);
  {
    tl::cuda::StreamGuard on_other(other);
    g.replay();
  }
  other.synchronize();
  tl_test::check_values(d, tl_test::values_of(tl::matmul(b, a)), 1e-4, 1e-4);
}

TEST_CASE("cuda graph: ops that wait for the GPU throw during a capture, which is discarded") {
  TL_TEST_REQUIRE_CUDA();
  Tensor x = random_cuda({16});
  const auto refused = [&](const std::function<void()>& op, const std::string& name) {
    INFO(name);
    const int64_t pools = graph_pools();
    Graph g;
    g.begin_capture();
    tl_test::check_throws<tl::DeviceError>(op, name);
    CHECK_FALSE(g.is_capturing());
    CHECK_FALSE(g.is_captured());
    tl_test::check_throws<tl::Error>([&] { g.end_capture(); }, "discarded");
    CHECK(graph_pools() == pools);
    // The library works on: eager ops, waits, and another capture.
    CHECK((x + 1.0).sum().item<float>() == doctest::Approx((x.cpu() + 1.0).sum().item<float>()));
    tl::cuda::synchronize();
    Tensor y;
    g.capture([&] { y = x * 2.0; });
    g.replay();
    tl_test::check_values(y, tl_test::values_of(x.cpu() * 2.0), 0, 0);
  };
  refused([&] { (void)x.sum().item<float>(); }, "tl::item");
  refused([&] { (void)x.cpu(); }, "cannot run while a CUDA graph is being captured");
  refused([&] { (void)x.to_vector<float>(); }, "to_vector");
  refused([&] { (void)tl::nonzero(x > 0.0); }, "tl::nonzero");
  refused([] { tl::cuda::synchronize(); }, "tl::cuda::synchronize");
  refused([] { tl::cuda::Stream::current().synchronize(); }, "tl::cuda::Stream::synchronize");
  refused([&] { x.copy_(tl_test::random_tensor({16})); }, "copy");
  refused([] { tl::cuda::empty_cache(); }, "tl::cuda::empty_cache");

  // capture(fn): an exception out of fn discards the capture and propagates.
  Graph g;
  CHECK_THROWS_AS(g.capture([] { throw std::runtime_error("user failure"); }), std::runtime_error);
  CHECK_FALSE(g.is_capturing());
  CHECK_FALSE(g.is_captured());
  tl_test::check_throws<tl::DeviceError>([&] { g.capture([&] { (void)x.cpu(); }); }, "discarded");
  CHECK_FALSE(g.is_captured());
}

TEST_CASE("cuda graph: misuse throws tl::Error naming the function") {
  TL_TEST_REQUIRE_CUDA();
  Graph g;
  tl_test::check_throws<tl::Error>([&] { g.replay(); }, "tl::cuda::Graph::replay");
  tl_test::check_throws<tl::Error>([&] { g.end_capture(); }, "tl::cuda::Graph::end_capture");
  g.begin_capture();
  tl_test::check_throws<tl::Error>([&] { g.begin_capture(); }, "already capturing");
  g.end_capture();
  tl_test::check_throws<tl::Error>([&] { g.begin_capture(); }, "reset()");
  g.replay();  // an empty graph replays
  tl_test::check_throws<tl::DeviceError>(
      [&] {
        Graph h;
        h.begin_capture({0, 0});
      },
      "twice");
  tl_test::check_throws<tl::DeviceError>(
      [&] {
        Graph h;
        h.begin_capture({tl::cuda::device_count()});
      },
      "tl::cuda::Graph::begin_capture");
  // A graph destroyed mid-capture ends it cleanly.
  {
    Graph h;
    h.begin_capture();
    (void)(tl::rand({4}, kCuda) + 1.0);
  }
  tl::cuda::synchronize();
}

TEST_CASE("cuda graph: the profiler shows a replay as a \"graph replay\" row with its kernels") {
  TL_TEST_REQUIRE_CUDA();
  namespace prof = tl::profiler;
  Tensor x = random_cuda({256});
  Tensor y;
  Graph g;
  g.capture([&] {
    y = x;
    for (int i = 0; i < 5; ++i) y = y * 1.5;
  });
  g.replay();
  tl::cuda::synchronize();
  prof::Profile profile({.activities = {prof::Activity::CPU, prof::Activity::CUDA}});
  g.replay();
  profile.stop();
  const std::vector<prof::Event> events = profile.events();
  const prof::Event* replay = nullptr;
  for (const prof::Event& e : events)
    if (e.name == "graph replay") replay = &e;
  REQUIRE(replay != nullptr);
  const prof::KeyAverages averages = profile.key_averages();
  // Under compute-sanitizer CUPTI cannot start: the CUDA-event fallback times the replay as a
  // whole (no kernel records), which the row's GPU time below still checks.
  if (averages.table().find("CUPTI unavailable") == std::string::npos) {
    int kernels = 0;
    for (const prof::Event& e : events)
      if (e.kind == prof::EventKind::Kernel && e.parent == replay->id) ++kernels;
    CHECK(kernels == 5);
  } else {
    MESSAGE("CUPTI unavailable here: the replay's kernels are timed by CUDA events as a whole");
  }
  bool row = false;
  for (const auto& r : averages.rows())
    if (r.key == "graph replay") {
      row = true;
      CHECK(r.count == 1);
      CHECK(r.cuda_time_total_ns > 0);
    }
  CHECK(row);
  tl_test::check_values(y, tl_test::values_of(x.cpu() * 1.5 * 1.5 * 1.5 * 1.5 * 1.5), 1e-5, 1e-5);
}

TEST_CASE("cuda graph: graphed() copies new inputs in, replays and returns the static outputs") {
  TL_TEST_REQUIRE_CUDA();
  const auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] * in[1] + 1.0, tl::matmul(in[0], in[1].t())};
  };
  auto g = tl::cuda::graphed(fn, {random_cuda({8, 5}), random_cuda({8, 5})});
  void* static_output = nullptr;
  std::vector<Tensor> out;
  for (int round = 0; round < 3; ++round) {
    const Tensor a = tl_test::random_tensor({8, 5}), b = tl_test::random_tensor({8, 5});
    out = g({round == 1 ? a.to(kCuda) : a, b.to(kCuda)});  // host or device arguments
    REQUIRE(out.size() == 2);
    tl_test::check_values(out[0], tl_test::values_of(a * b + 1.0), 1e-6, 1e-6);
    tl_test::check_values(out[1], tl_test::values_of(tl::matmul(a, b.t())), 1e-5, 1e-5);
    // The same static output every call.
    if (static_output == nullptr) static_output = out[0].data_ptr();
    CHECK(out[0].data_ptr() == static_output);
  }
  tl_test::check_throws<tl::ShapeError>(
      [&] {
        g({random_cuda({8, 4}), random_cuda({8, 5})});
      },
      "tl::cuda::graphed");
  tl_test::check_throws<tl::DTypeError>(
      [&] {
        g({random_cuda({8, 5}).to(tl::kFloat64), random_cuda({8, 5})});
      },
      "tl::cuda::graphed");
  tl_test::check_throws<tl::ShapeError>([&] { g({random_cuda({8, 5})}); }, "tl::cuda::graphed");
  tl_test::check_throws<tl::DeviceError>(
      [&] { (void)tl::cuda::graphed(fn, {tl_test::random_tensor({2})}); }, "tl::cuda::graphed");
}

// The CUDA runtime as users see it: streams, StreamGuard and events, asynchronous ops, device
// guards, the caching allocator (statistics, reuse on a stream, blocks kept per stream,
// record_stream, empty_cache, out of memory), pinned memory and non-blocking copies, copies
// between host and devices with conversion and strides, device-mismatch errors, TF32, and
// asynchronous faults reported with their op (in a child process). Skipped without a CUDA device.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;
using tl::cuda::Event;
using tl::cuda::MemoryStats;
using tl::cuda::Stream;
using tl::cuda::StreamGuard;

const tl::Device kCuda = tl::Device::cuda(0);
const std::vector<DType> kAllDtypes{tl::kBool, tl::kInt32, tl::kInt64, tl::kFloat32, tl::kFloat64};

tl::TensorOptions on_cuda(DType d = tl::kFloat32, int index = 0) {
  return tl::TensorOptions(d).device(tl::Device::cuda(index));
}

// Large-pool sizes (multiples of 2 MiB), so the allocator's rounding leaves them as they are and
// memory figures can be compared exactly.
constexpr int64_t kMiB = int64_t{1} << 20;

// A 2048 x 2048 float32 operand: each matmul with it is about 17 GFLOP, a fraction of a
// millisecond of GPU time on an H100 (far more under compute-sanitizer), long against the few
// microseconds the host needs to observe work that has not run yet. Made on the current stream
// and synchronized, so any stream may use it.
Tensor busy_operand() {
  Tensor m = tl::full({2048, 2048}, 0.5f, kCuda);
  tl::cuda::synchronize();
  return m;
}

// Enqueues about a millisecond of work on the current stream.
void keep_busy(const Tensor& m, int matmuls = 3) {
  for (int i = 0; i < matmuls; ++i) (void)tl::matmul(m, m);
}

// A clean slate for allocator checks: no pending work and no cached blocks.
void settle() {
  tl::cuda::synchronize();
  tl::cuda::empty_cache();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Restores the TF32 setting when a test ends, also on failure.
struct Tf32Restore {
  bool previous = tl::cuda::allow_tf32();
  ~Tf32Restore() { tl::cuda::set_allow_tf32(previous); }
};

// A view of `s` in dtype d inside a larger tensor on `device` holding a sentinel: "sliced" (every
// other element of the last dim), "transposed", "offset" (contiguous, misaligned) or "contiguous".
Tensor poisoned_view(const Shape& s, DType d, const std::string& layout, tl::Device device) {
  const tl::Scalar sentinel = d == tl::kBool ? tl::Scalar(true) : tl::Scalar(77);
  const tl::TensorOptions o = tl::TensorOptions(d).device(device);
  const int64_t n = s.size();
  if (layout == "sliced" && n >= 1) {
    Shape wide = s;
    wide[n - 1] = 2 * s[n - 1] + 1;
    return tl::full(wide, sentinel, o).slice(-1, 1, std::nullopt, 2);
  }
  if (layout == "transposed" && n >= 2) {
    Shape swapped = s;
    std::swap(swapped[n - 1], swapped[n - 2]);
    return tl::full(swapped, sentinel, o).transpose(-1, -2);
  }
  if (layout == "offset") return tl::full({s.numel() + 2}, sentinel, o).slice(0, 1, -1).view(s);
  return tl::full(s, sentinel, o);
}

// A source of `s` in dtype d on the CPU in a layout: contiguous, transposed, sliced, expanded.
Tensor source_in(const Shape& s, DType d, const std::string& layout) {
  const int64_t n = s.size();
  if (layout == "transposed" && n >= 2) {
    Shape swapped = s;
    std::swap(swapped[n - 1], swapped[n - 2]);
    return random_tensor(swapped, d).transpose(-1, -2);
  }
  if (layout == "sliced" && n >= 1) {
    Shape wide = s;
    wide[n - 1] = 2 * s[n - 1];
    return random_tensor(wide, d).slice(-1, 0, std::nullopt, 2);
  }
  if (layout == "expanded" && n >= 1) {
    Shape one = s;
    one[0] = 1;
    return random_tensor(one, d).expand(s);
  }
  return random_tensor(s, d);
}

}  // namespace

// ---- without a device ----

TEST_CASE("cuda runtime: without a device the runtime calls throw DeviceError") {
  if (tl::cuda::is_available()) {
    MESSAGE("skipped: a CUDA device is present");
    return;
  }
  check_throws<tl::DeviceError>([] { Stream::create(0); }, "[tl::");
  check_throws<tl::DeviceError>([] { (void)tl::ones({2}).pin_memory(); }, "[tl::");
  check_throws<tl::DeviceError>([] { tl::empty({2}, tl::TensorOptions().pinned_memory(true)); },
                                "[tl::");
  if (!tl::cuda::is_built()) {
    const MemoryStats s = tl::cuda::memory_stats();
    CHECK(s.allocated == 0);
    CHECK(s.reserved == 0);
    CHECK_NOTHROW(tl::cuda::empty_cache());
  }
  CHECK(tl::ones({2}).numel() == 2);  // the library stays usable
}

// ---- streams and events ----

TEST_CASE("cuda runtime: streams, StreamGuard switching and restoring the current stream") {
  TL_TEST_REQUIRE_CUDA();
  const Stream def = Stream::default_stream(0);
  CHECK(def.device() == 0);
  CHECK(def.handle() != nullptr);  // the library's own non-blocking stream, not the legacy one
  CHECK(Stream::current(0) == def);
  Stream a = Stream::create(0), b = Stream::create(0), high = Stream::create(0, -1);
  CHECK(a != b);
  CHECK(a != def);
  CHECK(b != def);
  CHECK(high != def);
  CHECK(high.device() == 0);
  {
    StreamGuard guard(a);
    CHECK(Stream::current(0) == a);
    CHECK(Stream::current() == a);
    {
      StreamGuard inner(b);
      CHECK(Stream::current(0) == b);
    }
    CHECK(Stream::current(0) == a);
  }
  CHECK(Stream::current(0) == def);
  CHECK(Stream::wrap(a.handle(), 0) == a);
  a.synchronize();
  CHECK(a.query());
  const int n = tl::cuda::device_count();
  check_throws<tl::DeviceError>([n] { Stream::create(n); }, "tl::cuda::Stream::create");
  check_throws<tl::DeviceError>([n] { Stream::current(n); }, "[tl::");
}

TEST_CASE("cuda runtime: ops enqueue on the current stream and return before the GPU ran them") {
  TL_TEST_REQUIRE_CUDA();
  Tensor m = busy_operand();
  Stream s = Stream::create(0);
  Tensor out;
  {
    StreamGuard guard(s);
    out = tl::matmul(m, m);
    out = tl::matmul(out, m);
    out = tl::matmul(out, m);
    const bool done = s.query();
    // Everything went to s: the default stream has nothing pending.
    CHECK(Stream::default_stream(0).query());
    if (done)
      MESSAGE("the matmuls finished before query(); asynchrony not checked this run");
    else
      CHECK_FALSE(done);
    s.synchronize();
    CHECK(s.query());
    // 0.5 * 0.5 * 2048 = 2^9, then 2^19, then 2^29: exact in float32 in any summation order.
    CHECK(out[0][0].item<float>() == 536870912.0f);
    CHECK(out[2047][17].item<float>() == 536870912.0f);
  }
  tl::cuda::synchronize();
}

TEST_CASE("cuda runtime: an event makes one stream wait for another's work") {
  TL_TEST_REQUIRE_CUDA();
  Tensor m = busy_operand();
  Stream a = Stream::create(0), b = Stream::create(0);
  REQUIRE(a != b);
  Tensor x, y;
  Event ready;
  {
    StreamGuard guard(a);
    x = tl::full({1 << 22}, 1.0f, kCuda);
    keep_busy(m);  // the final write to x comes about a millisecond later
    x.fill_(3.0f);
    ready.record();
  }
  {
    StreamGuard guard(b);
    ready.wait();
    y = x * 2 + 1;  // must see 3, not 1
    tl::cuda::record_stream(x, b);
    const std::vector<float> v = y.to_vector<float>();  // synchronizes b, the current stream
    CHECK(std::count(v.begin(), v.end(), 7.0f) == static_cast<long>(v.size()));
  }
  CHECK(ready.query());
  // The same with explicit streams and no guards: record on a, wait on b.
  Event second;
  {
    StreamGuard guard(a);
    keep_busy(m, 1);
    x.fill_(5.0f);
  }
  second.record(a);
  second.wait(b);
  {
    StreamGuard guard(b);
    y = x - 1;
    CHECK(y[12345].item<float>() == 4.0f);
    CHECK(y[(1 << 22) - 1].item<float>() == 4.0f);
  }
  second.synchronize();
  CHECK(second.query());
  tl::cuda::synchronize();
}

TEST_CASE("cuda runtime: events time GPU work, report completion and need timing to be timed") {
  TL_TEST_REQUIRE_CUDA();
  Tensor m = busy_operand();
  Event start(true), stop(true), untimed;
  CHECK(start.query());  // nothing recorded yet
  CHECK_NOTHROW(start.synchronize());
  start.record();
  keep_busy(m);
  stop.record();
  stop.synchronize();
  CHECK(stop.query());
  CHECK(start.query());
  const float ms = start.elapsed_time(stop);
  CHECK(ms > 0);
  Event moved = std::move(stop);
  CHECK(moved.query());
  CHECK(start.elapsed_time(moved) == ms);
  untimed.record();
  untimed.synchronize();
  check_throws<tl::Error>([&] { (void)start.elapsed_time(untimed); }, "[tl::");
  tl::cuda::synchronize();
}

TEST_CASE("cuda runtime: DeviceGuard and set_device make a device current and restore it") {
  TL_TEST_REQUIRE_CUDA();
  const int before = tl::cuda::current_device();
  const int n = tl::cuda::device_count();
  {
    tl::cuda::DeviceGuard guard(0);
    CHECK(tl::cuda::current_device() == 0);
  }
  CHECK(tl::cuda::current_device() == before);
  if (n >= 2) {
    {
      tl::cuda::DeviceGuard guard(1);
      CHECK(tl::cuda::current_device() == 1);
      {
        tl::cuda::DeviceGuard inner(0);
        CHECK(tl::cuda::current_device() == 0);
      }
      CHECK(tl::cuda::current_device() == 1);
    }
    CHECK(tl::cuda::current_device() == before);
    // An op on another device leaves the current device alone.
    Tensor y = tl::ones({5}, on_cuda(tl::kFloat32, 1)) + 1;
    CHECK(y.device() == tl::Device::cuda(1));
    CHECK(tl::cuda::current_device() == before);
    CHECK(values_of(y) == std::vector<double>(5, 2));
  }
  check_throws<tl::DeviceError>([n] { tl::cuda::set_device(n); }, "tl::cuda::set_device");
  check_throws<tl::DeviceError>([n] { tl::cuda::DeviceGuard guard(n); }, "[tl::");
  CHECK(tl::cuda::current_device() == before);
  CHECK_NOTHROW(tl::cuda::synchronize(0));
  CHECK_NOTHROW(tl::cuda::synchronize());
}

// ---- the caching allocator ----

TEST_CASE("cuda runtime: memory_stats follow allocations, frees, the cache and the peak") {
  TL_TEST_REQUIRE_CUDA_CACHING();
  settle();
  const MemoryStats s0 = tl::cuda::memory_stats(0);
  CHECK(s0.allocated >= 0);
  CHECK(s0.reserved >= s0.allocated);
  CHECK(s0.peak_allocated >= s0.allocated);
  const int64_t n = 6 * kMiB;
  void* p = nullptr;
  {
    Tensor t = tl::empty({n / 4}, on_cuda());
    p = t.data_ptr();
    const MemoryStats s1 = tl::cuda::memory_stats(0);
    CHECK(s1.allocated == s0.allocated + n);
    CHECK(s1.reserved == s0.reserved + n);
    CHECK(s1.num_device_allocs == s0.num_device_allocs + 1);
    CHECK(s1.peak_allocated >= s1.allocated);
  }
  const MemoryStats s2 = tl::cuda::memory_stats(0);
  CHECK(s2.allocated == s0.allocated);
  CHECK(s2.reserved == s0.reserved + n);  // cached, not returned to CUDA
  {
    // The same size on the same stream reuses the cached block: no cudaMalloc.
    Tensor u = tl::empty({n / 4}, on_cuda());
    CHECK(u.data_ptr() == p);
    CHECK(tl::cuda::memory_stats(0).num_device_allocs == s2.num_device_allocs);
  }
  {
    Tensor d = tl::empty({n / 8}, on_cuda(tl::kFloat64));  // same bytes, other dtype
    CHECK(d.data_ptr() == p);
    CHECK(tl::cuda::memory_stats(0).num_device_allocs == s2.num_device_allocs);
  }
  // The peak: reset to what is allocated now, then raised by two live blocks.
  tl::cuda::reset_peak_stats(0);
  CHECK(tl::cuda::memory_stats(0).peak_allocated == tl::cuda::memory_stats(0).allocated);
  {
    Tensor a = tl::empty({n / 4}, on_cuda()), b = tl::empty({n / 4}, on_cuda());
    CHECK(tl::cuda::memory_stats(0).allocated == s0.allocated + 2 * n);
  }
  CHECK(tl::cuda::memory_stats(0).peak_allocated >= s0.allocated + 2 * n);
  CHECK(tl::cuda::memory_stats(0).allocated == s0.allocated);
  // Zero bytes take nothing; a small tensor takes at least its size, rounded up a little.
  {
    Tensor z = tl::empty({0}, on_cuda());
    CHECK(tl::cuda::memory_stats(0).allocated == s0.allocated);
    Tensor small = tl::empty({100}, on_cuda());
    const int64_t grew = tl::cuda::memory_stats(0).allocated - s0.allocated;
    CHECK(grew >= 400);
    CHECK(grew <= 4096);
  }
  // empty_cache gives every cached block back.
  const MemoryStats s3 = tl::cuda::memory_stats(0);
  tl::cuda::empty_cache();
  const MemoryStats s4 = tl::cuda::memory_stats(0);
  CHECK(s4.allocated == s0.allocated);
  CHECK(s4.reserved == s0.reserved);
  CHECK(s4.num_device_frees > s3.num_device_frees);
  CHECK(s4.num_device_frees - s0.num_device_frees == s4.num_device_allocs - s0.num_device_allocs);
}

TEST_CASE("cuda runtime: a block freed on one stream is reused there, never on another stream") {
  TL_TEST_REQUIRE_CUDA_CACHING();
  Tensor m = busy_operand();
  settle();
  Stream a = Stream::create(0), b = Stream::create(0);
  REQUIRE(a != b);
  const int64_t n = 10 * kMiB / 4;
  void* pa = nullptr;
  {
    StreamGuard guard(a);
    Tensor t = tl::empty({n}, on_cuda());
    pa = t.data_ptr();
    keep_busy(m);  // a is still running when t is freed
    t.fill_(1.0f);
  }
  {
    StreamGuard guard(b);
    Tensor u = tl::empty({n}, on_cuda());
    CHECK(u.data_ptr() != pa);  // b never gets a's block, finished or not
  }
  {
    StreamGuard guard(a);
    const int64_t mallocs = tl::cuda::memory_stats(0).num_device_allocs;
    Tensor v = tl::empty({n}, on_cuda());  // a's later work is ordered after its earlier work
    CHECK(v.data_ptr() == pa);
    CHECK(tl::cuda::memory_stats(0).num_device_allocs == mallocs);
  }
  tl::cuda::synchronize();
}

TEST_CASE("cuda runtime: record_stream keeps a block from reuse until the other stream ran") {
  TL_TEST_REQUIRE_CUDA_CACHING();
  Tensor m = busy_operand();
  settle();
  Stream a = Stream::create(0), b = Stream::create(0);
  REQUIRE(a != b);
  const int64_t n = 10 * kMiB / 4;
  void* pa = nullptr;
  Tensor y;
  {
    StreamGuard on_a(a);
    Tensor t = tl::full({n}, 2.0f, kCuda);  // allocated and written on a
    pa = t.data_ptr();
    Event written;
    written.record();
    {
      StreamGuard on_b(b);
      written.wait();
      keep_busy(m);  // b reads t only about a millisecond from now
      y = t * 3;
      tl::cuda::record_stream(t, b);
    }
  }  // t is freed on the host while b still has to read it
  void* pv = nullptr;
  {
    StreamGuard on_a(a);
    Tensor v = tl::empty({n}, on_cuda());
    pv = v.data_ptr();
    // Checked after the allocation: if b is still busy now, it was busy when v was allocated.
    if (b.query())
      MESSAGE("stream b finished early; the pending-block check is skipped this run");
    else
      CHECK(pv != pa);
    v.fill_(-1.0f);  // would corrupt y's input if v had t's block
  }
  {
    StreamGuard on_b(b);
    const std::vector<float> values = y.to_vector<float>();
    CHECK(std::count(values.begin(), values.end(), 6.0f) == static_cast<long>(values.size()));
  }
  // Once b's work has run, t's block is back in a's cache.
  b.synchronize();
  {
    StreamGuard on_a(a);
    const int64_t mallocs = tl::cuda::memory_stats(0).num_device_allocs;
    Tensor w1 = tl::empty({n}, on_cuda()), w2 = tl::empty({n}, on_cuda());
    CHECK(((w1.data_ptr() == pa && w2.data_ptr() == pv) ||
           (w1.data_ptr() == pv && w2.data_ptr() == pa)));
    CHECK(tl::cuda::memory_stats(0).num_device_allocs == mallocs);
  }
  tl::cuda::synchronize();
}

TEST_CASE("cuda runtime: out of memory throws OutOfMemoryError and the library keeps working") {
  TL_TEST_REQUIRE_CUDA();
  tl::cuda::synchronize();
  Tensor keep = tl::arange(0, 1000, 1, on_cuda());
  const MemoryStats before = tl::cuda::memory_stats(0);
  const int64_t huge = int64_t{1} << 38;  // float32 elements: 1 TiB, more than any GPU has
  bool thrown = false;
  try {
    tl::empty({huge}, on_cuda());
  } catch (const tl::OutOfMemoryError& e) {
    thrown = true;
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("[tl::", 0) == 0);
    CHECK((contains(msg, "1.00 TiB") || contains(msg, "1024.00 GiB") ||
           contains(msg, "1099511627776")));
  }
  CHECK(thrown);
  check_throws<tl::OutOfMemoryError>([&] { tl::zeros({huge}, on_cuda()); }, "tl::zeros");
  // Inside an op: the output of an outer product of two small vectors is 1 TiB.
  Tensor col = tl::ones({int64_t{1} << 19, 1}, on_cuda()),
         row = tl::ones({1, int64_t{1} << 19}, on_cuda());
  check_throws<tl::OutOfMemoryError>([&] { tl::matmul(col, row); }, "tl::matmul");
  check_throws<tl::OutOfMemoryError>(
      [&] {
        (void)row.expand({int64_t{1} << 19, int64_t{1} << 19}).contiguous();
      },
      "[tl::");
  const MemoryStats after = tl::cuda::memory_stats(0);
  CHECK(after.allocated == before.allocated + 2 * 2 * kMiB);  // col and row
  CHECK(after.reserved >= after.allocated);
  // Earlier tensors are intact and new work runs.
  std::vector<double> want(1000);
  for (int i = 0; i < 1000; ++i) want[i] = i;
  check_values(keep, want, 0, 0);
  for (double& v : want) v = 2 * v + 1;
  check_values(keep * 2 + 1, want, 0, 0);
  Tensor big = tl::ones({1 << 22}, on_cuda());
  CHECK(tl::sum(big).item<float>() == static_cast<float>(1 << 22));
}

// ---- pinned memory and host copies ----

TEST_CASE("cuda runtime: pinned host tensors and non-blocking copies") {
  TL_TEST_REQUIRE_CUDA();
  Tensor h = random_tensor({1000, 33});
  CHECK_FALSE(h.is_pinned());
  Tensor p = h.pin_memory();
  CHECK(p.is_pinned());
  CHECK(p.is_cpu());
  CHECK(values_of(p) == values_of(h));
  CHECK(p.pin_memory().is_same(p));
  CHECK(tl::empty({7}, tl::TensorOptions(tl::kFloat64).pinned_memory(true)).is_pinned());
  CHECK(tl::zeros({7}, tl::TensorOptions().pinned_memory(true)).is_pinned());
  CHECK(tl::empty({0}, tl::TensorOptions().pinned_memory(true)).is_pinned());
  check_throws<tl::DeviceError>(
      [] { tl::empty({2}, tl::TensorOptions().device(kCuda).pinned_memory(true)); }, "tl::empty");
  check_throws<tl::DeviceError>([] { (void)tl::ones({2}, kCuda).pin_memory(); }, "tl::pin_memory");

  // Pinned -> device, non-blocking: ordered before later work on the stream.
  Tensor d = p.to(kCuda, true);
  CHECK(d.device() == kCuda);
  CHECK(values_of(d) == values_of(h));

  // Device -> pinned, non-blocking: the values are there after a stream synchronize.
  const int64_t n = int64_t{1} << 22;
  Tensor src = random_tensor({n});
  const std::vector<float> want = src.to_vector<float>();
  Tensor dsrc = src.to(kCuda);
  Tensor back = dsrc.to(tl::Device::cpu(), true);
  CHECK(back.is_pinned());
  Stream::current(0).synchronize();
  CHECK(back.to_vector<float>() == want);
  Tensor into = tl::full({n}, -1.0f, tl::TensorOptions().pinned_memory(true));
  into.copy_(dsrc * 2, true);
  Stream::current(0).synchronize();
  std::vector<float> got = into.to_vector<float>();
  long wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += got[i] != 2 * want[i];
  CHECK(wrong == 0);

  // A pinned source freed right after its non-blocking upload is not handed out (and written)
  // again before the upload has read it.
  Tensor m = busy_operand();
  Tensor up;
  {
    Tensor staged = tl::full({n}, 5.0f, tl::TensorOptions().pinned_memory(true));
    keep_busy(m);  // the upload waits behind about a millisecond of work
    up = staged.to(kCuda, true);
  }
  Tensor other = tl::full({n}, 9.0f, tl::TensorOptions().pinned_memory(true));
  CHECK(tl::all(up == 5.0f).item<bool>());
  CHECK(other[n - 1].item<float>() == 9.0f);
  tl::cuda::synchronize();
}

TEST_CASE("cuda runtime: host <-> device and device copies convert dtypes and honour strides") {
  TL_TEST_REQUIRE_CUDA();
  struct Direction {
    const char* name;
    tl::Device from, to;
  };
  const std::vector<Direction> directions{
      {"H2D", tl::Device::cpu(), kCuda}, {"D2H", kCuda, tl::Device::cpu()}, {"D2D", kCuda, kCuda}};
  struct Layouts {
    Shape shape;
    const char* src;
    const char* dst;
  };
  const std::vector<Layouts> layouts{
      {{33, 7}, "contiguous", "contiguous"}, {{33, 7}, "transposed", "sliced"},
      {{33, 7}, "sliced", "transposed"},     {{1025}, "expanded", "offset"},
      {{1025}, "contiguous", "offset"},      {{}, "contiguous", "contiguous"},
      {{0, 5}, "contiguous", "sliced"}};
  for (const Direction& dir : directions) {
    for (DType from : kAllDtypes) {
      for (DType to : kAllDtypes) {
        for (const Layouts& l : layouts) {
          INFO(dir.name << " " << from << " -> " << to << " " << l.shape << " " << l.src << " -> "
                        << l.dst);
          Tensor src = source_in(l.shape, from, l.src);
          Tensor dst = poisoned_view(l.shape, to, l.dst, tl::Device::cpu());
          Tensor want = same_layout_on(dst, tl::Device::cpu());
          want.copy_(src);  // the CPU's conversion is the reference
          Tensor s = same_layout_on(src, dir.from), o = same_layout_on(dst, dir.to);
          o.copy_(s);
          CHECK(o.device() == dir.to);
          check_values(whole_storage(o), values_of(whole_storage(want)), 0, 0);
          // to(options) makes a contiguous converted copy on the other device.
          Tensor moved = s.to(tl::TensorOptions(to).device(dir.to));
          CHECK(moved.device() == dir.to);
          CHECK(moved.dtype() == to);
          check_values(moved, values_of(src.to(to)), 0, 0);
        }
      }
    }
  }
}

TEST_CASE("cuda runtime: two GPUs: copies between them, ops on each, and mixing them fails") {
  TL_TEST_REQUIRE_CUDA();
  if (tl::cuda::device_count() < 2) {
    MESSAGE("skipped: needs two CUDA devices");
    return;
  }
  const tl::Device cuda1 = tl::Device::cuda(1);
  Tensor h = random_tensor({333, 77});
  Tensor d0 = h.to(kCuda), d1 = d0.to(cuda1);
  CHECK(d1.device() == cuda1);
  CHECK(values_of(d1) == values_of(h));
  CHECK(values_of(d1.to(kCuda)) == values_of(h));
  // Strided views and conversions on both sides, both ways.
  for (DType from : {tl::kFloat32, tl::kInt64, tl::kBool}) {
    for (DType to : {tl::kFloat64, tl::kInt32, tl::kFloat32}) {
      INFO(from << " -> " << to);
      Tensor src = source_in({41, 9}, from, "transposed");
      Tensor dst = poisoned_view({41, 9}, to, "sliced", tl::Device::cpu());
      Tensor want = same_layout_on(dst, tl::Device::cpu());
      want.copy_(src);
      for (auto [a, b] : {std::pair{kCuda, cuda1}, std::pair{cuda1, kCuda}}) {
        Tensor o = same_layout_on(dst, b);
        o.copy_(same_layout_on(src, a));
        check_values(whole_storage(o), values_of(whole_storage(want)), 0, 0);
      }
    }
  }
  // Ops on cuda:1 run there; the current device stays as it was.
  const int before = tl::cuda::current_device();
  Tensor r = tl::matmul(d1 * 2, d1.t());
  CHECK(r.device() == cuda1);
  CHECK(tl::cuda::current_device() == before);
  Tensor want = tl::matmul(h * 2, h.t());
  check_values(r, values_of(want), 1e-4, 1e-3);
  // Memory is counted per device.
  const MemoryStats m1 = tl::cuda::memory_stats(1);
  {
    Tensor t = tl::empty({6 * kMiB / 4}, on_cuda(tl::kFloat32, 1));
    CHECK(tl::cuda::memory_stats(1).allocated == m1.allocated + 6 * kMiB);
  }
  // A StreamGuard on cuda:1 makes cuda:1 current and restores both.
  Stream s1 = Stream::create(1);
  {
    StreamGuard guard(s1);
    CHECK(tl::cuda::current_device() == 1);
    CHECK(Stream::current(1) == s1);
    Tensor y = tl::ones({4}, on_cuda(tl::kFloat32, 1)) * 3;
    CHECK(values_of(y) == std::vector<double>(4, 3));
  }
  CHECK(tl::cuda::current_device() == before);
  CHECK(Stream::current(1) == Stream::default_stream(1));
  // An event recorded on cuda:1 orders work on cuda:0.
  Event done;
  Tensor x1 = tl::full({1 << 20}, 2.0f, on_cuda(tl::kFloat32, 1));
  done.record(Stream::current(1));
  done.wait(Stream::current(0));
  CHECK(tl::sum(x1.to(kCuda)).item<float>() == 2.0f * (1 << 20));
  check_throws<tl::DeviceError>([&] { tl::add(d0, d1); }, "tl::add");
  check_throws<tl::DeviceError>([&] { tl::matmul(d0, d1.t()); }, "tl::matmul");
  check_throws<tl::DeviceError>([&] { tl::cat({d0, d1}); }, "tl::cat");
  tl::cuda::synchronize(0);
  tl::cuda::synchronize(1);
}

// ---- errors ----

TEST_CASE("cuda runtime: mixing CPU and CUDA tensors in one op throws DeviceError naming it") {
  TL_TEST_REQUIRE_CUDA();
  Tensor c = random_tensor({3, 4}), g = random_tensor({3, 4}, tl::kFloat32, kCuda);
  Tensor ci = tl::zeros({3, 4}, tl::kInt64), cb = c > 0, gb = g > 0;
  const std::vector<std::pair<const char*, std::function<void()>>> cases{
      {"tl::add", [&] { tl::add(c, g); }},
      {"tl::sub", [&] { tl::sub(g, c); }},
      {"tl::mul", [&] { (void)(c * g); }},
      {"tl::div", [&] { tl::div(g, c); }},
      {"tl::pow", [&] { tl::pow(c, g); }},
      {"tl::maximum", [&] { tl::maximum(g, c); }},
      {"tl::gt", [&] { (void)(g > c); }},
      {"tl::eq", [&] { tl::eq(c, g); }},
      {"tl::logical_and", [&] { tl::logical_and(cb, gb); }},
      {"tl::where", [&] { tl::where(cb, g, g); }},
      {"tl::where", [&] { tl::where(gb, c, g); }},
      {"tl::clamp", [&] { tl::clamp(g, std::optional<Tensor>(c), std::nullopt); }},
      {"tl::matmul", [&] { tl::matmul(c, g.t()); }},
      {"tl::mm", [&] { tl::mm(g, c.t()); }},
      {"tl::bmm", [&] { tl::bmm(c.unsqueeze(0), g.t().unsqueeze(0)); }},
      {"tl::dot", [&] { tl::dot(c[0], g[0]); }},
      {"tl::linear", [&] { tl::linear(c, g); }},
      {"tl::cat",
       [&] {
         tl::cat({c, g});
       }},
      {"tl::stack",
       [&] {
         tl::stack({g, c});
       }},
      {"tl::index_select", [&] { tl::index_select(g, 0, ci[0]); }},
      {"tl::gather", [&] { tl::gather(g, 0, ci); }},
      {"tl::masked_select", [&] { tl::masked_select(g, cb); }},
      {"tl::add_", [&] { g.add_(c); }},
      {"tl::mul_", [&] { c.mul_(g); }},
      {"tl::equal", [&] { (void)tl::equal(c, g); }},
      {"tl::allclose", [&] { (void)tl::allclose(g, c); }},
  };
  for (const auto& [op, fn] : cases) {
    INFO(op);
    check_throws<tl::DeviceError>(fn, op);
  }
  // Nothing was written, and both devices keep working.
  check_values(g + 1, [&] {
    std::vector<double> v = values_of(g);
    for (double& x : v) x += 1;
    return v;
  }());
  check_values(c, values_of(c.to(kCuda)), 0, 0);
}

// ---- TF32 ----

TEST_CASE("cuda runtime: set_allow_tf32 toggles TF32 and float32 matmul stays close to the CPU") {
  TL_TEST_REQUIRE_CUDA();
  Tf32Restore restore;
  tl::cuda::set_allow_tf32(false);
  CHECK_FALSE(tl::cuda::allow_tf32());
  Tensor a = random_tensor({512, 256}), b = random_tensor({256, 384});
  const std::vector<double> exact = values_of(tl::matmul(a.to(tl::kFloat64), b.to(tl::kFloat64)));
  auto max_error = [&](const Tensor& got) {
    const std::vector<double> v = values_of(got);
    double worst = 0;
    for (size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::abs(v[i] - exact[i]));
    return worst;
  };
  Tensor da = a.to(kCuda), db = b.to(kCuda);
  // True float32 (not TF32, whose 10-bit mantissa would be off by about 1e-2 here).
  const double fp32 = max_error(tl::matmul(da, db));
  CHECK(fp32 < 1e-3);
  tl::cuda::set_allow_tf32(true);
  CHECK(tl::cuda::allow_tf32());
  const Tensor got_tf32 = tl::matmul(da, db);
  const double tf32 = max_error(got_tf32);
  {
    // Each element within TF32's rounding bound, which scales with |a| @ |b|: a fixed bound on
    // the largest error holds for most data, this one for any.
    const std::vector<double> mag =
        values_of(tl::matmul(tl::abs(a.to(tl::kFloat64)), tl::abs(b.to(tl::kFloat64))));
    std::vector<double> bound(mag.size());
    for (size_t i = 0; i < mag.size(); ++i) bound[i] = tf32_matmul_bound(exact[i], mag[i], 256);
    check_values_within(got_tf32, exact, bound);
  }
  // float64 never uses TF32.
  CHECK(max_error(tl::matmul(da.to(tl::kFloat64), db.to(tl::kFloat64))) < 1e-9);
  tl::cuda::set_allow_tf32(false);
  CHECK_FALSE(tl::cuda::allow_tf32());
  CHECK(max_error(tl::matmul(da, db)) < 1e-3);
  MESSAGE("max |error| against float64 for 512x256 @ 256x384: float32 " << fp32 << ", TF32 "
                                                                        << tf32);
}

// ---- asynchronous faults ----

#ifdef TL_CUDA_FAULT_CHILD
namespace {

// Runs a command and returns its output (stdout and stderr) and wait status.
std::pair<std::string, int> run_command(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  return {output, pclose(pipe)};
}

}  // namespace
#endif

TEST_CASE(
    "cuda runtime: a faulting kernel is reported as CudaError naming the op that launched it") {
  TL_TEST_REQUIRE_CUDA();
#ifndef TL_CUDA_FAULT_CHILD
  MESSAGE("skipped: this build has no cuda_fault_child");
#else
  const std::string child = TL_CUDA_FAULT_CHILD;
  if (access(child.c_str(), X_OK) != 0) {
    FAIL_CHECK("cuda_fault_child is not built (" << child << "): build the whole project first");
    return;
  }
  // TL_LAUNCH_BLOCKING=1: the launch itself reports the fault, with the op's name.
  {
    auto [output, status] = run_command("TL_LAUNCH_BLOCKING=1 '" + child + "' blocking");
    INFO("child output: " << output);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(contains(output, "CudaError: [tl_test::bad_write]"));
    CHECK(contains(output, "cudaError"));
  }
  // Without it, the fault surfaces at the next synchronizing call, still as a CudaError.
  {
    auto [output, status] = run_command("env -u TL_LAUNCH_BLOCKING '" + child + "' deferred");
    INFO("child output: " << output);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(contains(output, "CudaError: [tl::"));
  }
#endif
}

// ---- split reductions ----

TEST_CASE("cuda runtime: split reductions give the same bits on every run and stream") {
  TL_TEST_REQUIRE_CUDA();
  // Each is big enough to be split over blocks, whose last block to finish folds the partials:
  // one output; a few outputs each in its own block; outputs side by side in one block (their
  // partials share cache lines); an arg reduction with many ties; a half sum (bench row H3).
  struct Case {
    const char* name;
    Tensor input;  // on the CPU
    std::function<Tensor(const Tensor&)> op;
  };
  const std::vector<Case> cases{
      {"sum of 4M float32", random_tensor({int64_t{1} << 22}),
       [](const Tensor& t) { return t.sum(); }},
      {"sum over dim 1 of [6, 512K] float32", random_tensor({6, int64_t{1} << 19}),
       [](const Tensor& t) { return tl::sum(t, {1}); }},
      {"mean over dim 0 of [256K, 40] float64", random_tensor({int64_t{1} << 18, 40}, tl::kFloat64),
       [](const Tensor& t) { return tl::mean(t, {0}); }},
      {"argmax of 4M int32 with ties", random_tensor({int64_t{1} << 22}, tl::kInt32),
       [](const Tensor& t) { return tl::argmax(t); }},
      {"argmin over dim 0 of [128K, 40] int16", random_tensor({int64_t{1} << 17, 40}, tl::kInt16),
       [](const Tensor& t) { return tl::argmin(t, 0); }},
      {"sum of 4M float16", random_tensor({int64_t{1} << 22}, tl::kFloat16),
       [](const Tensor& t) { return t.sum(); }},
  };
  const Stream streams[2] = {Stream::create(), Stream::create()};
  for (const Case& c : cases) {
    INFO(c.name);
    const Tensor expected = c.op(c.input);
    const Tensor on_gpu = c.input.to(kCuda);
    tl::cuda::synchronize();
    // Launches alternate between two streams without waiting, so they may overlap on the GPU.
    std::vector<Tensor> results;
    for (int run = 0; run < 8; ++run) {
      StreamGuard guard(streams[run % 2]);
      results.push_back(c.op(on_gpu));
    }
    tl::cuda::synchronize();
    const std::vector<uint64_t> first = bits_of(results[0]);
    for (const Tensor& r : results) CHECK(bits_of(r) == first);
    // Against the CPU: exact for arg reductions, within float rounding of the sum's terms.
    CHECK(results[0].dtype() == expected.dtype());
    const std::vector<double> got = values_of(results[0]);
    const std::vector<double> want = values_of(expected);
    REQUIRE(got.size() == want.size());
    const bool integral = !tl::is_floating_point(expected.dtype());
    // |sum| ~ 2e3, sometimes past 8192, where float16's ulp is 8: the two float sums may round
    // to neighbouring float16 values, so an ulp of the result (2^-10 of it) on top of the float
    // sums' own difference (a few hundredths here).
    const bool half = expected.dtype() == tl::kFloat16;
    for (size_t i = 0; i < got.size(); ++i) {
      if (integral)
        CHECK(got[i] == want[i]);
      else
        CHECK(std::abs(got[i] - want[i]) <= (half ? 1e-3 * std::abs(want[i]) + 0.5 : 1e-2));
    }
  }
}

// Random numbers on CUDA: for the same seed and shape, cuda:0 draws the CPU's numbers bit for bit
// (uniform float32 and float64, integers of narrow and wide ranges in every integer dtype, bools),
// normals to within the math library's rounding, and both generators advance by the same number
// of Philox blocks per call, so sequences of calls match too. Skipped without a CUDA device.
#include <cmath>
#include <cstring>
#include <functional>

#include "test_util.h"

namespace {

using tl::DType;
using tl::Shape;
using tl::Tensor;

const tl::Device kCuda = tl::Device::cuda(0);
constexpr int64_t kBig = (int64_t{1} << 20) + 3;

using Draw = std::function<Tensor(tl::Device)>;

// The same draw after the same seed on the CPU and on cuda:0.
std::pair<Tensor, Tensor> draw_both(uint64_t seed, const Draw& draw) {
  tl::manual_seed(seed);
  Tensor cpu = draw(tl::Device::cpu());
  tl::manual_seed(seed);
  Tensor cuda = draw(kCuda);
  return {cpu, cuda};
}

void check_same_meta(const Tensor& cpu, const Tensor& cuda) {
  CHECK(cuda.device() == kCuda);
  CHECK(cuda.dtype() == cpu.dtype());
  REQUIRE(cuda.shape() == cpu.shape());
}

// Bit-identical elements (the host bytes of both tensors, which random factories make contiguous).
void check_identical(const Tensor& cpu, const Tensor& cuda) {
  check_same_meta(cpu, cuda);
  Tensor host = cuda.cpu().contiguous();
  Tensor ref = cpu.contiguous();
  if (std::memcmp(ref.data_ptr(), host.data_ptr(), ref.nbytes()) == 0) return;
  const std::vector<double> a = tl_test::values_of(ref), b = tl_test::values_of(host);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(static_cast<const char*>(ref.data_ptr()) + i * ref.element_size(),
                    static_cast<const char*>(host.data_ptr()) + i * ref.element_size(),
                    ref.element_size()) != 0 &&
        bad++ == 0)
      first = static_cast<int64_t>(i);
  FAIL_CHECK(bad << " of " << a.size() << " elements differ in their bits; first at " << first
                 << ": cuda " << b[first] << ", cpu " << a[first]);
}

// Normals: Box-Muller in double on both, through each side's log/sqrt/cos; a relative 1e-6.
void check_close(const Tensor& cpu, const Tensor& cuda) {
  check_same_meta(cpu, cuda);
  const std::vector<double> a = tl_test::values_of(cpu), b = tl_test::values_of(cuda);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= 1e-6 * std::abs(a[i]) + 1e-12) && bad++ == 0)
      first = static_cast<int64_t>(i);
  if (bad > 0)
    FAIL_CHECK(bad << " of " << a.size() << " normals differ; first at " << first << ": cuda "
                   << b[first] << ", cpu " << a[first]);
}

tl::TensorOptions opts(DType d, tl::Device device) { return tl::TensorOptions(d).device(device); }

const std::vector<Shape> kShapes{{}, {1}, {2}, {3}, {7}, {33}, {1025}, {3, 5, 7}, {0, 4}};
const std::vector<uint64_t> kSeeds{0, 42, (uint64_t{1} << 40) + 7, ~uint64_t{0}};

}  // namespace

TEST_CASE("cuda random: rand is bit-identical to the CPU's for float32 and float64") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : {tl::kFloat32, tl::kFloat64}) {
    for (uint64_t seed : kSeeds) {
      for (const Shape& shape : kShapes) {
        INFO("rand " << d << " " << shape << " seed " << seed);
        auto [cpu, cuda] =
            draw_both(seed, [&](tl::Device x) { return tl::rand(shape, opts(d, x)); });
        check_identical(cpu, cuda);
      }
    }
    INFO("rand " << d << " large");
    auto [cpu, cuda] = draw_both(7, [&](tl::Device x) { return tl::rand({kBig}, opts(d, x)); });
    check_identical(cpu, cuda);
  }
}

TEST_CASE("cuda random: randint is bit-identical for narrow and wide ranges and every dtype") {
  TL_TEST_REQUIRE_CUDA();
  struct Range {
    int64_t low, high;
    DType dtype;
  };
  const int64_t two32 = int64_t{1} << 32;
  const std::vector<Range> ranges{
      {0, 2, tl::kBool},
      {-5, 5, tl::kInt32},
      {-5, 5, tl::kInt64},
      {0, 10, tl::kInt64},
      {-(int64_t{1} << 31), (int64_t{1} << 31) - 1, tl::kInt32},
      {0, two32, tl::kInt64},      // the widest range drawn from 32-bit words
      {0, two32 + 1, tl::kInt64},  // the narrowest drawn from 64-bit words
      {-(int64_t{1} << 40), int64_t{1} << 40, tl::kInt64},
      {-(int64_t{1} << 62), int64_t{1} << 62, tl::kInt64},
      {1000, 1001, tl::kInt32},  // a single value
  };
  for (const Range& r : ranges) {
    for (uint64_t seed : {uint64_t{3}, uint64_t{1} << 33}) {
      for (const Shape& shape : kShapes) {
        INFO("randint [" << r.low << ", " << r.high << ") " << r.dtype << " " << shape << " seed "
                         << seed);
        auto [cpu, cuda] = draw_both(seed, [&](tl::Device x) {
          return tl::randint(r.low, r.high, shape, opts(r.dtype, x));
        });
        check_identical(cpu, cuda);
      }
    }
  }
  auto [cpu, cuda] = draw_both(11, [](tl::Device x) { return tl::randint(100, {kBig}, x); });
  check_identical(cpu, cuda);
  auto [wcpu, wcuda] =
      draw_both(12, [&](tl::Device x) { return tl::randint(-two32, two32, {kBig}, x); });
  check_identical(wcpu, wcuda);
}

TEST_CASE("cuda random: randn matches the CPU's to 1e-6, odd sizes included") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : {tl::kFloat32, tl::kFloat64}) {
    for (uint64_t seed : kSeeds) {
      for (const Shape& shape : kShapes) {
        INFO("randn " << d << " " << shape << " seed " << seed);
        auto [cpu, cuda] =
            draw_both(seed, [&](tl::Device x) { return tl::randn(shape, opts(d, x)); });
        check_close(cpu, cuda);
      }
    }
    INFO("randn " << d << " large");
    auto [cpu, cuda] = draw_both(5, [&](tl::Device x) { return tl::randn({kBig}, opts(d, x)); });
    check_close(cpu, cuda);
  }
}

TEST_CASE("cuda random: both generators advance alike, call after call") {
  TL_TEST_REQUIRE_CUDA();
  // A sequence mixing kinds, dtypes and odd sizes (partial Philox blocks, normals in pairs).
  struct Step {
    const char* what;
    Draw draw;
    bool exact;
  };
  const std::vector<Step> steps{
      {"rand 7", [](tl::Device x) { return tl::rand({7}, x); }, true},
      {"randn 33", [](tl::Device x) { return tl::randn({33}, x); }, false},
      {"randint wide 5", [](tl::Device x) { return tl::randint(0, int64_t{1} << 40, {5}, x); },
       true},
      {"rand float64 3", [](tl::Device x) { return tl::rand({3}, opts(tl::kFloat64, x)); }, true},
      {"randn float64 1", [](tl::Device x) { return tl::randn({1}, opts(tl::kFloat64, x)); },
       false},
      {"rand empty",
       [](tl::Device x) {
         return tl::rand({0, 3}, x);
       },
       true},
      {"randint bool 1025",
       [](tl::Device x) { return tl::randint(0, 2, {1025}, opts(tl::kBool, x)); }, true},
      {"rand 1", [](tl::Device x) { return tl::rand({1}, x); }, true},
      {"rand_like",
       [](tl::Device x) {
         return tl::rand_like(tl::zeros({2, 9}, x));
       },
       true},
      {"randn_like float64",
       [](tl::Device x) { return tl::randn_like(tl::zeros({5}, x), tl::kFloat64); }, false},
  };
  auto compare = [](const Step& s, const Tensor& cpu, const Tensor& cuda) {
    INFO(s.what);
    if (s.exact)
      check_identical(cpu, cuda);
    else
      check_close(cpu, cuda);
  };
  // The whole sequence on the CPU, then on cuda:0, from the same seed.
  tl::manual_seed(2024);
  std::vector<Tensor> cpu;
  for (const Step& s : steps) cpu.push_back(s.draw(tl::Device::cpu()));
  tl::manual_seed(2024);
  for (size_t i = 0; i < steps.size(); ++i) compare(steps[i], cpu[i], steps[i].draw(kCuda));
  // Interleaved after one seed: each device type has its own generator, so the pairs still match.
  tl::manual_seed(77);
  for (const Step& s : steps) {
    Tensor c = s.draw(tl::Device::cpu());
    compare(s, c, s.draw(kCuda));
  }
  // Later calls differ from earlier ones on the device too.
  tl::manual_seed(1);
  Tensor first = tl::rand({64}, kCuda), second = tl::rand({64}, kCuda);
  CHECK_FALSE(tl::equal(first, second));
}

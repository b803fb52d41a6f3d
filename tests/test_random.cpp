// Philox known answers, determinism under manual_seed, and the distributions' ranges and moments.
#include <cmath>

#include <tensorlet/backends/math/philox.h>

#include "test_util.h"

using namespace tl_test;

TEST_CASE("random: Philox4x32-10 matches the published known-answer vectors") {
  using tl::philox::Block;
  Block zero = tl::philox::philox4x32_10(Block{{0, 0, 0, 0}}, 0, 0);
  CHECK(zero.v[0] == 0x6627e8d5u);
  CHECK(zero.v[1] == 0xe169c58du);
  CHECK(zero.v[2] == 0xbc57ac4cu);
  CHECK(zero.v[3] == 0x9b00dbd8u);
  Block ones = tl::philox::philox4x32_10(Block{{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u);
  CHECK(ones.v[0] == 0x408f276du);
  CHECK(ones.v[1] == 0x41c83b0eu);
  CHECK(ones.v[2] == 0xa20bc7c6u);
  CHECK(ones.v[3] == 0x6d5451fdu);
}

TEST_CASE("random: the same seed gives the same numbers, later calls differ") {
  tl::manual_seed(42);
  std::vector<double> a = values_of(tl::rand({1000}));
  std::vector<double> b = values_of(tl::rand({1000}));
  tl::manual_seed(42);
  CHECK(values_of(tl::rand({1000})) == a);
  CHECK(values_of(tl::rand({1000})) == b);
  CHECK(a != b);
  tl::manual_seed(43);
  CHECK(values_of(tl::rand({1000})) != a);
}

TEST_CASE(
    "random: element i depends only on seed, offset and i (layout defined for all backends)") {
  // The first call after manual_seed starts at block 0: element i of float32 rand is word i%4 of
  // block i/4, mapped (w >> 8) * 2^-24.
  tl::manual_seed(7);
  std::vector<float> u = tl::rand({9}).to_vector<float>();
  for (int64_t i = 0; i < 9; ++i) {
    uint32_t w = tl::philox::word32(7, 0, i);
    CHECK(u[i] == static_cast<float>(w >> 8) * 0x1.0p-24f);
  }
  // The next call starts after the 3 blocks the 9 elements used.
  std::vector<float> next = tl::rand({1}).to_vector<float>();
  CHECK(next[0] == tl::philox::uniform_float(tl::philox::word32(7, 3, 0)));
  // float64 uses two words per element.
  tl::manual_seed(7);
  std::vector<double> d = tl::rand({3}, tl::kFloat64).to_vector<double>();
  for (int64_t i = 0; i < 3; ++i)
    CHECK(d[i] == tl::philox::uniform_double(tl::philox::word64(7, 0, i)));
  // A multi-threaded fill (large) gives the same numbers as the element formula.
  tl::manual_seed(9);
  std::vector<float> big = tl::rand({200001}).to_vector<float>();
  for (int64_t i : {int64_t{0}, int64_t{65536}, int64_t{131071}, int64_t{200000}})
    CHECK(big[i] == tl::philox::uniform_float(tl::philox::word32(9, 0, i)));
}

TEST_CASE("random: rand is uniform in [0, 1), randn is standard normal") {
  tl::manual_seed(1);
  for (tl::DType dt : {tl::kFloat32, tl::kFloat64}) {
    std::vector<double> u = values_of(tl::rand({100000}, dt));
    for (double x : u) REQUIRE((x >= 0 && x < 1));
    CHECK(std::abs(mean_of(u) - 0.5) < 0.01);
    CHECK(std::abs(var_of(u) - 1.0 / 12) < 0.005);
    std::vector<double> n = values_of(tl::randn({100001}, dt));
    for (double x : n) REQUIRE(std::isfinite(x));
    CHECK(std::abs(mean_of(n)) < 0.02);
    CHECK(std::abs(var_of(n) - 1.0) < 0.03);
  }
  CHECK(tl::rand({2, 3}).shape() == tl::Shape{2, 3});
  CHECK(tl::rand({0}).numel() == 0);
  check_throws<tl::DTypeError>([] { tl::rand({2}, tl::kInt32); }, "tl::rand");
  check_throws<tl::DTypeError>([] { tl::randn({2}, tl::kInt64); }, "tl::randn");
}

TEST_CASE("random: randint covers [low, high) and respects dtype") {
  tl::manual_seed(3);
  tl::Tensor r = tl::randint(-5, 5, {10000});
  CHECK(r.dtype() == tl::kInt64);
  std::vector<int64_t> v = r.to_vector<int64_t>();
  std::vector<int> counts(10, 0);
  for (int64_t x : v) {
    REQUIRE((x >= -5 && x < 5));
    counts[x + 5]++;
  }
  for (int c : counts) CHECK(c > 800);
  // A range wider than 32 bits uses 64-bit words.
  int64_t lo = -(int64_t{1} << 40), hi = int64_t{1} << 40;
  for (int64_t x : tl::randint(lo, hi, {1000}).to_vector<int64_t>()) REQUIRE((x >= lo && x < hi));
  CHECK(tl::randint(10, {3}, tl::kInt32).dtype() == tl::kInt32);
  CHECK(tl::randint(0, 2, {8}, tl::kBool).dtype() == tl::kBool);
  check_throws<tl::ShapeError>([] { tl::randint(3, 3, {2}); }, "[tl::randint] ");
  check_throws<tl::DTypeError>([] { tl::randint(0, int64_t{1} << 40, {2}, tl::kInt32); },
                               "tl::randint");
}

TEST_CASE("random: randint over the whole int64 range wraps in unsigned arithmetic") {
  // [INT64_MIN, INT64_MAX) is 2^64 - 1 values: the offset must be added without signed overflow.
  for (tl::Device device : test_devices()) {
    CAPTURE(device);
    tl::manual_seed(11);
    std::vector<int64_t> v =
        tl::randint(INT64_MIN, INT64_MAX, {4096}, tl::TensorOptions(tl::kInt64).device(device))
            .to_vector<int64_t>();
    int below = 0, above = 0;
    for (int64_t x : v) {
      REQUIRE(x != INT64_MAX);
      below += x < -(int64_t{1} << 62);
      above += x > (int64_t{1} << 62);
    }
    // Each quarter of the range holds about 1024 of the draws.
    CHECK(below > 800);
    CHECK(above > 800);
    // int32's whole range too.
    for (int64_t x : tl::randint(INT32_MIN, int64_t{INT32_MAX} + 1, {512},
                                 tl::TensorOptions(tl::kInt32).device(device))
                         .to(tl::kInt64)
                         .to_vector<int64_t>())
      REQUIRE((x >= INT32_MIN && x <= INT32_MAX));
  }
}

TEST_CASE("random: rand_like keeps shape, dtype and device") {
  tl::Tensor x = tl::zeros({2, 5}, tl::kFloat64);
  tl::Tensor r = tl::rand_like(x);
  CHECK(r.shape() == x.shape());
  CHECK(r.dtype() == tl::kFloat64);
  CHECK(tl::randn_like(x, tl::kFloat32).dtype() == tl::kFloat32);
}

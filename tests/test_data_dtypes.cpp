// Ops that move or make data on all ten dtypes, every test device: conversions between every pair
// (bit-exact with torch's CPU table), fills, cat/stack, index ops, random, and host round trips.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "data_dtypes_table.h"
#include "test_util.h"

using namespace tl_test;
using tl::DType;
using tl::Tensor;

namespace {

const std::vector<DType> kTen{tl::kBool,  tl::kUInt8,   tl::kInt8,     tl::kInt16,   tl::kInt32,
                              tl::kInt64, tl::kFloat16, tl::kBFloat16, tl::kFloat32, tl::kFloat64};

DType dtype_named(const std::string& name) {
  for (DType d : kTen)
    if (name == std::string(tl::dtype_name(d))) return d;
  FAIL("unknown dtype " << name);
  return tl::kBool;
}

// A CPU tensor holding these bit patterns (each element's low bytes, little-endian).
Tensor from_bits(const std::vector<uint64_t>& bits, DType d) {
  Tensor t = tl::empty({static_cast<int64_t>(bits.size())}, d);
  char* p = static_cast<char*>(t.data_ptr());
  for (size_t i = 0; i < bits.size(); ++i)
    std::memcpy(p + i * t.element_size(), &bits[i], t.element_size());
  return t;
}

// Bit-exact, except that any NaN matches a NaN: NaN bits are not a value, and torch's own differ
// between its vectorized and scalar loops (float -> bfloat16 NaN is 0xFFFF vectorized, 0x7FC0
// scalar) and on a GPU (float -> half gives 0x7FFF there).
void check_bits(const std::vector<uint64_t>& actual, const std::vector<uint64_t>& expected,
                DType d) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i << " expected " << expected[i] << " got " << actual[i]);
    if (is_nan_bits(expected[i], d))
      CHECK(is_nan_bits(actual[i], d));
    else
      CHECK(actual[i] == expected[i]);
  }
}

// Values of a dtype with no zeros in [-9, 10) (bool: random), made in int64 and converted.
Tensor values(const tl::Shape& shape, DType d, tl::Device device = tl::Device::cpu()) {
  return (d == tl::kBool ? tl::randint(0, 2, shape, tl::kBool) : tl::randint(-9, 10, shape))
      .to(d)
      .to(device);
}

}  // namespace

TEST_CASE("data dtypes: conversion of edge values between every pair is bit-exact with torch") {
  for (tl::Device device : test_devices()) {
    for (const ConversionRow& row : conversion_table()) {
      const DType from = dtype_named(row.from), to = dtype_named(row.to);
      INFO(std::string(row.from) << " -> " << std::string(row.to) << " on " << device);
      const Tensor src = from_bits(row.src, from).to(device);
      const int64_t n = src.numel();
      // .to: contiguous to contiguous (the flat kernels).
      check_bits(bits_of(src.to(to)), row.dst, to);
      // copy_ from a transposed source into a strided slice of a poisoned buffer: both columns of
      // the {n, 2} view get the values; the buffer's other columns stay poisoned.
      Tensor rows = tl::empty({2, n}, from).to(device);
      rows.select(0, 0).copy_(src);
      rows.select(0, 1).copy_(src);
      const Tensor transposed = rows.t();  // {n, 2}, strides {1, n}
      std::vector<uint64_t> poison(static_cast<size_t>(4 * n), 0xA5A5A5A5A5A5A5A5ull);
      Tensor holder = from_bits(poison, to).view({n, 4}).to(device);
      Tensor out = holder.slice(1, 0, 4, 2);
      out.copy_(transposed);
      check_bits(bits_of(out.select(1, 0)), row.dst, to);
      check_bits(bits_of(out.select(1, 1)), row.dst, to);
      const std::vector<uint64_t> rest = bits_of(holder.slice(1, 1, 4, 2));
      const uint64_t mask = to == tl::kFloat64 || to == tl::kInt64
                                ? ~uint64_t{0}
                                : (uint64_t{1} << (8 * tl::element_size(to))) - 1;
      for (uint64_t b : rest) CHECK(b == (0xA5A5A5A5A5A5A5A5ull & mask));
    }
  }
}

TEST_CASE("data dtypes: conversions across devices, of sliced and zero-size tensors") {
  for (tl::Device device : test_devices()) {
    for (DType from : kTen) {
      for (DType to : kTen) {
        // Small integers survive every dtype (negative ones not uint8; bool: they are 0/1).
        const Tensor src = to == tl::kUInt8 || from == tl::kUInt8
                               ? tl::randint(0, 10, {6, 5}).to(from)
                               : values({6, 5}, from);
        const std::vector<double> expect = values_of(src);
        INFO(std::string(tl::dtype_name(from))
             << " -> " << std::string(tl::dtype_name(to)) << " on " << device);
        if (to != tl::kBool) {
          CHECK(values_of(src.to(device).to(to)) == expect);
          CHECK(values_of(src.to(tl::TensorOptions(to).device(device))) == expect);
          const Tensor sliced = src.to(device).slice(0, 1, 6, 2).slice(1, 1, 4);
          CHECK(values_of(sliced.to(to)) == values_of(src.slice(0, 1, 6, 2).slice(1, 1, 4)));
        }
        CHECK(tl::empty({0}, from).to(device).to(to).numel() == 0);
        CHECK(tl::empty({3, 0}, from).to(device).to(to).shape() == tl::Shape{3, 0});
      }
    }
  }
}

TEST_CASE("data dtypes: fill and full on every dtype and layout") {
  struct Case {
    DType dtype;
    tl::Scalar value;
    double expect;
  };
  // Accepted values as torch.full takes them (uint8 takes -255..255, wrapping; a float's
  // fraction is truncated).
  const std::vector<Case> cases{
      {tl::kUInt8, 255, 255},
      {tl::kUInt8, -255, 1},
      {tl::kUInt8, -1, 255},
      {tl::kUInt8, 1.5, 1},
      {tl::kUInt8, 255.5, 255},
      {tl::kUInt8, -0.0, 0},
      {tl::kInt8, 127, 127},
      {tl::kInt8, -128, -128},
      {tl::kInt8, 127.5, 127},
      {tl::kInt16, 32767, 32767},
      {tl::kInt16, -32768, -32768},
      {tl::kFloat16, 65504.0, 65504},
      {tl::kFloat16, 1e-8, 0},
      {tl::kFloat16, 0.1, 0.0999755859375},
      {tl::kBFloat16, 0.1, 0.10009765625},
      {tl::kBool, 7, 1},
      {tl::kFloat16, std::numeric_limits<double>::infinity(), HUGE_VAL},
      // torch 2.15 refuses a finite value beyond float16's range ("cannot be converted to type
      // c10::Half without overflow"); Scalar::fits (the lead's) lets it round to infinity.
      {tl::kFloat16, 70000, HUGE_VAL},
      {tl::kFloat16, -70000.0, -HUGE_VAL},
  };
  for (tl::Device device : test_devices()) {
    for (const Case& c : cases) {
      INFO(std::string(tl::dtype_name(c.dtype)) << " " << c.value << " on " << device);
      const Tensor t = tl::full({3, 4}, c.value, tl::TensorOptions(c.dtype).device(device));
      CHECK(values_of(t) == std::vector<double>(12, c.expect));
      const double background = c.dtype == tl::kBool ? 0.0 : 3.0;
      Tensor holder = tl::full({4, 6}, background, tl::TensorOptions(c.dtype).device(device));
      holder.t().slice(0, 1, 6, 2).fill_(c.value);  // columns 1, 3, 5, transposed view
      const std::vector<double> v = values_of(holder);
      for (int64_t i = 0; i < 24; ++i) CHECK(v[i] == (i % 2 == 1 ? c.expect : background));
    }
    for (DType d : kTen) {
      INFO(std::string(tl::dtype_name(d)) << " on " << device);
      const tl::TensorOptions o = tl::TensorOptions(d).device(device);
      CHECK(values_of(tl::zeros({2, 3}, o)) == std::vector<double>(6, 0));
      CHECK(values_of(tl::ones({2, 3}, o)) == std::vector<double>(6, 1));
      CHECK(values_of(tl::eye(3, o)) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
      if (d != tl::kBool) {
        CHECK(values_of(tl::arange(0, 5, 1, o)) == std::vector<double>{0, 1, 2, 3, 4});
        CHECK(tl::full({2}, 3, o).dtype() == d);
      }
      if (tl::is_floating_point(d))
        CHECK(values_of(tl::linspace(0, 1, 5, o)) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
    }
  }
  // Refused as torch refuses them (the value and the dtype named).
  for (auto [d, v] : std::vector<std::pair<DType, tl::Scalar>>{{tl::kUInt8, 256},
                                                               {tl::kUInt8, -256},
                                                               {tl::kUInt8, -0.5},
                                                               {tl::kUInt8, 300.7},
                                                               {tl::kInt8, 128},
                                                               {tl::kInt8, -129},
                                                               {tl::kInt8, -255},
                                                               {tl::kInt8, -128.5},
                                                               {tl::kInt16, 32768},
                                                               {tl::kInt16, -65536},
                                                               {tl::kInt16, 1e5}}) {
    INFO(std::string(tl::dtype_name(d)) << " " << v);
    CHECK_THROWS_AS(tl::full({2}, v, d), tl::Error);
    CHECK_THROWS_AS(tl::zeros({2}, d).fill_(v), tl::Error);
  }
}

TEST_CASE("data dtypes: cat and stack of every dtype and layout") {
  for (tl::Device device : test_devices()) {
    for (DType d : kTen) {
      INFO(std::string(tl::dtype_name(d)) << " on " << device);
      const Tensor a = values({4, 3}, d, device), b = values({3, 4}, d, device).t();
      const Tensor c = values({4, 6}, d, device).slice(1, 0, 6, 2);
      const Tensor e = tl::empty({4, 0}, d).to(device);
      const Tensor r = tl::cat({a, b, e, c}, 1);
      CHECK(r.dtype() == d);
      REQUIRE(r.shape() == tl::Shape{4, 9});
      std::vector<double> expect;
      const auto va = values_of(a), vb = values_of(b), vc = values_of(c);
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 3; ++j) expect.push_back(va[i * 3 + j]);
        for (int j = 0; j < 3; ++j) expect.push_back(vb[i * 3 + j]);
        for (int j = 0; j < 3; ++j) expect.push_back(vc[i * 3 + j]);
      }
      CHECK(values_of(r) == expect);
      const Tensor s = tl::stack({a, b}, 0);
      std::vector<double> sv = va;
      sv.insert(sv.end(), vb.begin(), vb.end());
      CHECK(values_of(s) == sv);
      CHECK(values_of(tl::cat({a, b}, 0).slice(0, 4, 8)) == vb);
    }
  }
}

TEST_CASE("data dtypes: index_select, gather, masked_select and nonzero on every dtype") {
  for (tl::Device device : test_devices()) {
    for (DType d : kTen) {
      INFO(std::string(tl::dtype_name(d)) << " on " << device);
      const Tensor x = values({5, 4}, d, device).t();  // {4, 5}, transposed
      const std::vector<double> v = values_of(x);
      const Tensor idx = tl::from_vector<int64_t>({4, 0, 2, 2}).to(device);
      const std::vector<double> sel = values_of(tl::index_select(x, 1, idx));
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k) CHECK(sel[i * 4 + k] == v[i * 5 + std::vector{4, 0, 2, 2}[k]]);
      const Tensor gidx = tl::from_vector<int64_t>({1, 3, 0, 2, 4, 4, 1, 0}, {4, 2}).to(device);
      const std::vector<double> g = values_of(tl::gather(x, 1, gidx));
      const std::vector<int64_t> gi{1, 3, 0, 2, 4, 4, 1, 0};
      for (int i = 0; i < 8; ++i) CHECK(g[i] == v[(i / 2) * 5 + gi[i]]);
      const Tensor mask = tl::randint(0, 2, {4, 5}, tl::kBool).to(device);
      const std::vector<double> m = values_of(mask), ms = values_of(tl::masked_select(x, mask));
      std::vector<double> expect;
      for (int i = 0; i < 20; ++i)
        if (m[i] != 0) expect.push_back(v[i]);
      CHECK(ms == expect);
      std::vector<double> nz;
      for (int i = 0; i < 20; ++i)
        if (v[i] != 0) {
          nz.push_back(i / 5);
          nz.push_back(i % 5);
        }
      CHECK(values_of(tl::nonzero(x)) == nz);
    }
    // -0.0 is zero and NaN is not, in the half types too.
    for (DType d : {tl::kFloat16, tl::kBFloat16}) {
      const Tensor z = tl::from_vector<double>({0.0, -0.0, NAN, 1.0, -0.0}).to(d).to(device);
      CHECK(values_of(tl::nonzero(z)) == std::vector<double>{2, 3});
    }
  }
}

TEST_CASE("data dtypes: random ranges of the new dtypes, the same numbers on every device") {
  std::vector<std::vector<uint64_t>> first;
  for (tl::Device device : test_devices()) {
    std::vector<std::vector<uint64_t>> got;
    for (DType d : {tl::kFloat16, tl::kBFloat16}) {
      INFO(std::string(tl::dtype_name(d)) << " on " << device);
      tl::manual_seed(5);
      const Tensor u = tl::rand({20001}, tl::TensorOptions(d).device(device));
      CHECK(u.dtype() == d);
      const std::vector<double> uv = values_of(u);
      double sum = 0;
      for (double x : uv) {
        CHECK(x >= 0);
        CHECK(x < 1);
        sum += x;
      }
      CHECK(sum / uv.size() == doctest::Approx(0.5).epsilon(0.02));
      CHECK(std::set<double>(uv.begin(), uv.end()).size() > 200);
      got.push_back(bits_of(u));
      const Tensor g = tl::randn({20001}, tl::TensorOptions(d).device(device));
      const std::vector<double> gv = values_of(g);
      double s1 = 0, s2 = 0;
      for (double x : gv) s1 += x, s2 += x * x;
      CHECK(s1 / gv.size() == doctest::Approx(0).epsilon(0.03).scale(1));
      CHECK(s2 / gv.size() == doctest::Approx(1).epsilon(0.05));
      got.push_back(bits_of(g));
    }
    struct Range {
      int64_t low, high;
      DType d;
    };
    for (const Range& r : std::vector<Range>{{0, 256, tl::kUInt8},
                                             {-128, 128, tl::kInt8},
                                             {-32768, 32768, tl::kInt16},
                                             {-5, 5, tl::kInt8},
                                             {0, 2048, tl::kFloat16},
                                             {-100, 100, tl::kBFloat16}}) {
      INFO("randint [" << r.low << ", " << r.high << ") " << std::string(tl::dtype_name(r.d))
                       << " on " << device);
      tl::manual_seed(9);
      const Tensor t = tl::randint(r.low, r.high, {30000}, tl::TensorOptions(r.d).device(device));
      CHECK(t.dtype() == r.d);
      const std::vector<double> v = values_of(t);
      std::set<double> seen(v.begin(), v.end());
      CHECK(*seen.begin() >= r.low);
      CHECK(*seen.rbegin() <= r.high - 1);
      CHECK(seen.size() >= std::min<size_t>(static_cast<size_t>(r.high - r.low) * 9 / 10, 2000));
      for (double x : v) CHECK(x == std::floor(x));
      got.push_back(bits_of(t));
    }
    if (first.empty())
      first = got;
    else
      CHECK(got == first);  // CUDA draws the CPU's numbers
  }
}

TEST_CASE("data dtypes: from_vector, item and to_vector round trips of every element type") {
  for (tl::Device device : test_devices()) {
    INFO(device);
    auto round_trip = [&]<typename T>(std::vector<T> v) {
      const Tensor t = tl::from_vector(v, {}, device);
      CHECK(t.dtype() == tl::dtype_of_v<T>);
      const std::vector<T> back = t.to_vector<T>();
      REQUIRE(back.size() == v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        CHECK(std::memcmp(&back[i], &v[i], sizeof(T)) == 0);
        const T one = t.select(0, static_cast<int64_t>(i)).item<T>();
        CHECK(std::memcmp(&one, &v[i], sizeof(T)) == 0);
      }
      const Tensor m = tl::from_vector(v, {1, static_cast<int64_t>(v.size())}, device);
      CHECK(m.shape() == tl::Shape{1, static_cast<int64_t>(v.size())});
      CHECK(tl::from_vector(std::vector<T>{}, {0}, device).numel() == 0);
    };
    round_trip(std::vector<uint8_t>{0, 1, 200, 255});
    round_trip(std::vector<int8_t>{-128, -1, 0, 127});
    round_trip(std::vector<int16_t>{-32768, -7, 300, 32767});
    round_trip(std::vector<tl::Half>{tl::Half(1.5f), tl::Half(-65504.0f),
                                     tl::Half(0.0999755859375f), tl::Half::from_bits(0x0001)});
    round_trip(std::vector<tl::BFloat16>{tl::BFloat16(1.5f), tl::BFloat16(-3e38f),
                                         tl::BFloat16::from_bits(0x0001)});
    round_trip(std::vector<int32_t>{INT32_MIN, 5});
    round_trip(std::vector<int64_t>{INT64_MIN, INT64_MAX});
    round_trip(std::vector<float>{1.25f, -0.0f});
    round_trip(std::vector<double>{1e300, 0.1});
    // item converts from the tensor's dtype: a uint8 255 read as int8 is refused (torch refuses
    // 255 as int8 too), a float16 as double is exact.
    const Tensor b = tl::full({}, 255, tl::TensorOptions(tl::kUInt8).device(device));
    CHECK(b.item<int64_t>() == 255);
    CHECK_THROWS_AS(b.item<int8_t>(), tl::Error);
    CHECK(tl::full({}, 0.1, tl::TensorOptions(tl::kFloat16).device(device)).item<double>() ==
          0.0999755859375);
    CHECK(static_cast<float>(tl::full({}, 2.5, device).item<tl::Half>()) == 2.5f);
  }
}

// cumsum, cumprod, cummax, cummin against references computed here (double sums and products,
// wrapping int64 ones, torch's tie and NaN rules), on every device: dims, layouts, dtype rules,
// 0-dim, zero-size, NaN, ties, rounding of half types and int overflow.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "numeric_refs.h"
#include "test_util.h"

using namespace tl_test;

namespace {

// Integers in [lo, hi) in any dtype (wrapped into uint8), never all zero.
tl::Tensor ints_in(int64_t lo, int64_t hi, const tl::Shape& s, tl::DType d) {
  return tl::randint(lo, hi, s, tl::kInt64).to(d);
}

const double kNaN = std::nan("");

// Calls f(positions) for each slice along dim: the row-major indices of its elements in order.
template <typename F>
void for_each_slice(const tl::Shape& s, int64_t dim, F&& f) {
  const Geometry g = geometry(s, dim);
  std::vector<int64_t> at(g.n);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t j = 0; j < g.inner; ++j) {
      for (int64_t i = 0; i < g.n; ++i) at[i] = (o * g.n + i) * g.inner + j;
      f(at);
    }
}

// Running sums or products in double (floating results).
std::vector<double> arithmetic_ref(const std::vector<double>& x, const tl::Shape& s, int64_t dim,
                                   bool prod) {
  std::vector<double> y(x.size());
  for_each_slice(s, dim, [&](const std::vector<int64_t>& at) {
    double acc = prod ? 1 : 0;
    for (int64_t p : at) y[p] = acc = prod ? acc * x[p] : acc + x[p];
  });
  return y;
}

// Running sums or products in wrapping int64 (integer results, before narrowing).
std::vector<int64_t> integer_ref(const std::vector<int64_t>& x, const tl::Shape& s, int64_t dim,
                                 bool prod) {
  std::vector<int64_t> y(x.size());
  for_each_slice(s, dim, [&](const std::vector<int64_t>& at) {
    uint64_t acc = prod ? 1 : 0;
    for (int64_t p : at) {
      acc = prod ? acc * static_cast<uint64_t>(x[p]) : acc + static_cast<uint64_t>(x[p]);
      y[p] = static_cast<int64_t>(acc);
    }
  });
  return y;
}

// torch's cummax/cummin loop: an element replaces the running value when it is NaN, or when the
// running value is not NaN and the element is >= it (<= for min).
void extremum_ref(const std::vector<double>& x, const tl::Shape& s, int64_t dim, bool max,
                  std::vector<double>& values, std::vector<int64_t>& indices) {
  values.assign(x.size(), 0);
  indices.assign(x.size(), 0);
  for_each_slice(s, dim, [&](const std::vector<int64_t>& at) {
    double best = 0;
    int64_t where = 0;
    for (size_t i = 0; i < at.size(); ++i) {
      const double v = x[at[i]];
      if (i == 0 || std::isnan(v) || (!std::isnan(best) && (max ? v >= best : v <= best))) {
        best = v;
        where = static_cast<int64_t>(i);
      }
      values[at[i]] = best;
      indices[at[i]] = where;
    }
  });
}

struct Tols {
  double rtol, atol;
};
// A double running value rounded once per output: exact up to the output's rounding.
Tols tols_for(tl::DType d) {
  switch (d) {
    case tl::kFloat64:  // a GPU scan adds in another order: errors grow with the running sum
      return {1e-12, 1e-10};
    case tl::kFloat16:
      return {1e-3, 1e-3};
    case tl::kBFloat16:
      return {8e-3, 8e-3};
    default:
      return {1e-6, 1e-6};
  }
}

const std::vector<tl::DType> kScanDTypes = {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16,
                                            tl::kInt32,   tl::kInt64,   tl::kUInt8,   tl::kInt8,
                                            tl::kInt16,   tl::kBool};

// Random values; products stay small: floats in [-1.5, 1.5), integers in [-3, 4).
tl::Tensor scan_values(const tl::Shape& s, tl::DType d, bool prod) {
  if (d == tl::kBool || (!prod && tl::is_floating_point(d))) return random_tensor(s, d);
  if (tl::is_floating_point(d)) return (tl::rand(s, tl::kFloat64) * 3.0 - 1.5).to(d);
  return prod ? ints_in(-3, 4, s, d) : ints_in(-9, 10, s, d);
}

void check_arithmetic(const tl::Tensor& x, int64_t dim, bool prod, const std::string& what) {
  INFO(what << (prod ? " cumprod" : " cumsum") << " dim " << dim);
  const tl::Tensor y = prod ? tl::cumprod(x, dim) : tl::cumsum(x, dim);
  const tl::DType want = tl::is_integral(x.dtype(), true) ? tl::kInt64 : x.dtype();
  CHECK(y.dtype() == want);
  CHECK(y.shape() == x.shape());
  CHECK(y.device() == x.device());
  if (tl::is_floating_point(want)) {
    const Tols t = tols_for(want);
    check_values(y, arithmetic_ref(values_of(x), x.shape(), dim, prod), t.rtol, t.atol);
  } else {
    const std::vector<int64_t> in = x.cpu().to(tl::kInt64).to_vector<int64_t>();
    CHECK(y.cpu().to_vector<int64_t>() == integer_ref(in, x.shape(), dim, prod));
  }
}

void check_extremum(const tl::Tensor& x, int64_t dim, bool max, const std::string& what) {
  INFO(what << (max ? " cummax" : " cummin") << " dim " << dim);
  auto [values, indices] = max ? tl::cummax(x, dim) : tl::cummin(x, dim);
  CHECK(values.dtype() == x.dtype());
  CHECK(indices.dtype() == tl::kInt64);
  CHECK(values.shape() == x.shape());
  CHECK(indices.shape() == x.shape());
  std::vector<double> want_values;
  std::vector<int64_t> want_indices;
  extremum_ref(values_of(x), x.shape(), dim, max, want_values, want_indices);
  check_values(values, want_values, 0, 0);
  CHECK(indices.cpu().to_vector<int64_t>() == want_indices);
}

}  // namespace

TEST_CASE("cumsum, cumprod, cummax, cummin: every dtype, dim and layout against references") {
  const std::vector<std::pair<tl::Shape, std::vector<int64_t>>> cases{
      {{7}, {0, -1}}, {{3, 5}, {0, 1, -1}}, {{2, 3, 4}, {0, 1, 2, -2}}, {{4, 1, 3}, {1}}};
  for (tl::Device dev : test_devices()) {
    for (tl::DType d : kScanDTypes) {
      for (const auto& [shape, dims] : cases) {
        for (bool prod : {false, true}) {
          const tl::Tensor values = scan_values(shape, d, prod);
          for (const Layout& l : layouts_of(values)) {
            const tl::Tensor x = same_layout_on(l.tensor, dev);
            const std::string what =
                dev.str() + " " + tl::dtype_name(d) + " " + shape.str() + " " + l.name;
            for (int64_t dim : dims) {
              check_arithmetic(x, dim, prod, what);
              check_extremum(x, dim, prod, what);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("cumsum / cumprod: dtype argument, 0-dim, zero-size and methods") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    const tl::TensorOptions on(dev);
    const tl::Tensor i = tl::randint(-9, 10, {4, 6}, tl::TensorOptions(tl::kInt32).device(dev));
    // dtype converts the input first, as torch: int32 summed as float64, float as int64.
    const tl::Tensor as_double = tl::cumsum(i, 1, tl::kFloat64);
    CHECK(as_double.dtype() == tl::kFloat64);
    check_values(as_double, values_of(tl::cumsum(i, 1)), 0, 0);
    const tl::Tensor f = tl::from_vector<float>({1.5f, -2.7f, 3.9f}, {3}).to(dev);
    CHECK(tl::cumsum(f, 0, tl::kInt64).cpu().to_vector<int64_t>() ==
          std::vector<int64_t>{1, -1, 2});
    const tl::Tensor as_int32 = tl::cumprod(i, 0, tl::kInt32);
    CHECK(as_int32.dtype() == tl::kInt32);
    CHECK(tl::cumsum(f, 0, tl::kFloat16).dtype() == tl::kFloat16);
    // Methods forward.
    CHECK(tl::equal(i.cumsum(1).cpu(), tl::cumsum(i, 1).cpu()));
    CHECK(tl::equal(i.cumprod(0).cpu(), tl::cumprod(i, 0).cpu()));
    CHECK(tl::equal(i.cummax(1).indices.cpu(), tl::cummax(i, 1).indices.cpu()));
    CHECK(tl::equal(i.cummin(-1).values.cpu(), tl::cummin(i, -1).values.cpu()));
    // 0-dim: dim 0 and -1, the element itself (bool and ints as int64).
    for (int64_t dim : {0, -1}) {
      const tl::Tensor s = tl::scalar_tensor(2.5, on);
      CHECK(tl::cumsum(s, dim).dim() == 0);
      CHECK(tl::cumsum(s, dim).item<float>() == 2.5f);
      CHECK(tl::cumprod(tl::full({}, true, on), dim).item<int64_t>() == 1);
      auto [v, ix] = tl::cummax(s, dim);
      CHECK(v.dim() == 0);
      CHECK(v.item<float>() == 2.5f);
      CHECK(ix.item<int64_t>() == 0);
    }
    // Zero-size: same shape, the result dtype, no kernel.
    for (int64_t dim : {0, 1}) {
      const tl::Tensor e = tl::empty({0, 3}, tl::TensorOptions(tl::kInt16).device(dev));
      CHECK(tl::cumsum(e, dim).shape() == tl::Shape{0, 3});
      CHECK(tl::cumsum(e, dim).dtype() == tl::kInt64);
      auto [v, ix] = tl::cummin(e, dim);
      CHECK(v.shape() == tl::Shape{0, 3});
      CHECK(ix.shape() == tl::Shape{0, 3});
    }
    const tl::Tensor e2 = tl::empty({3, 0}, on);
    CHECK(tl::cumprod(e2, 0).shape() == tl::Shape{3, 0});
  }
}

TEST_CASE("cumsum / cumprod: accumulation types, rounding once, overflow wraps, NaN") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    // float16 keeps its running sum in float and rounds each output once: 2048 + 1 rounds to
    // 2048 (ties to even), 2048 + 2 is exact, 2048 + 3 rounds to 2052. Rounding the running value
    // instead would stay at 2048.
    const tl::Tensor h = tl::from_vector<float>({2048, 1, 1, 1}, {4}).to(tl::kFloat16).to(dev);
    check_values(tl::cumsum(h, 0), {2048, 2048, 2050, 2052}, 0, 0);
    const tl::Tensor b = tl::from_vector<float>({256, 1, 1, 1}, {4}).to(tl::kBFloat16).to(dev);
    check_values(tl::cumsum(b, 0), {256, 256, 258, 260}, 0, 0);
    // float32 accumulates in double (torch's CPU accumulation type; here on every device).
    const tl::Tensor f = tl::from_vector<float>({1e8f, 1, -1e8f}, {3}).to(dev);
    check_values(tl::cumsum(f, 0), {1e8, 1e8, 1}, 0, 0);
    // Integers accumulate in int64 and wrap; a narrower result wraps at its width.
    const int64_t big = std::numeric_limits<int64_t>::max();
    const tl::Tensor l = tl::from_vector<int64_t>({big, 1, 1}, {3}).to(dev);
    CHECK(tl::cumsum(l, 0).cpu().to_vector<int64_t>() ==
          std::vector<int64_t>{big, std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::min() + 1});
    const tl::Tensor w = tl::from_vector<int32_t>({65536, 65536, 3}, {3}).to(dev);
    CHECK(tl::cumprod(w, 0, tl::kInt32).cpu().to_vector<int32_t>() ==
          std::vector<int32_t>{65536, 0, 0});
    CHECK(tl::cumprod(w, 0).cpu().to_vector<int64_t>() ==
          std::vector<int64_t>{65536, int64_t{1} << 32, int64_t{3} << 32});
    // uint8 input gives int64 (no wrap at 255).
    const tl::Tensor u = tl::full({300}, 1, tl::TensorOptions(tl::kUInt8).device(dev));
    CHECK(tl::cumsum(u, 0).cpu().to_vector<int64_t>().back() == 300);
    // Bool counts.
    const tl::Tensor t = tl::from_vector<bool>({true, false, true, true}, {4}).to(dev);
    CHECK(tl::cumsum(t, 0).cpu().to_vector<int64_t>() == std::vector<int64_t>{1, 1, 2, 3});
    // NaN and infinities propagate as in a running sum.
    const double inf = std::numeric_limits<double>::infinity();
    const tl::Tensor n = tl::from_vector<double>({1, kNaN, 2, inf}, {4}).to(dev);
    check_values(tl::cumsum(n, 0), {1, kNaN, kNaN, kNaN}, 0, 0);
    const tl::Tensor i = tl::from_vector<double>({1, inf, -inf, 2}, {4}).to(dev);
    check_values(tl::cumsum(i, 0), {1, inf, kNaN, kNaN}, 0, 0);
    check_values(tl::cumprod(tl::from_vector<double>({2, 0, inf}, {3}).to(dev), 0), {2, 0, kNaN}, 0,
                 0);
  }
}

TEST_CASE("cummax / cummin: ties give the last position, NaN as torch, bool and -0") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    auto check = [&](const tl::Tensor& x, bool max, const std::vector<double>& values,
                     const std::vector<int64_t>& indices) {
      auto [v, i] = max ? tl::cummax(x.to(dev), 0) : tl::cummin(x.to(dev), 0);
      check_values(v, values, 0, 0);
      CHECK(i.cpu().to_vector<int64_t>() == indices);
    };
    const tl::Tensor ties = tl::from_vector<float>({1, 3, 3, 2, 3}, {5});
    check(ties, true, {1, 3, 3, 3, 3}, {0, 1, 2, 2, 4});
    const tl::Tensor low = tl::from_vector<int32_t>({2, 1, 1, 3, 1}, {5});
    check(low, false, {2, 1, 1, 1, 1}, {0, 1, 2, 2, 4});
    // From the first NaN the values are NaN; the index follows the most recent NaN.
    const tl::Tensor nan = tl::from_vector<double>({1, kNaN, 2, kNaN, 3}, {5});
    check(nan, true, {1, kNaN, kNaN, kNaN, kNaN}, {0, 1, 1, 3, 3});
    check(nan, false, {1, kNaN, kNaN, kNaN, kNaN}, {0, 1, 1, 3, 3});
    for (tl::DType d : {tl::kFloat16, tl::kBFloat16, tl::kFloat32})
      check(nan.to(d), true, {1, kNaN, kNaN, kNaN, kNaN}, {0, 1, 1, 3, 3});
    // -0 equals 0: the later one wins, for max and for min.
    const tl::Tensor zeros = tl::from_vector<float>({0.0f, -0.0f, 0.0f}, {3});
    check(zeros, true, {0, 0, 0}, {0, 1, 2});
    check(zeros, false, {0, 0, 0}, {0, 1, 2});
    // Bool ranks false < true; its result is bool.
    const tl::Tensor b = tl::from_vector<bool>({false, true, false, true}, {4});
    check(b, true, {0, 1, 1, 1}, {0, 1, 1, 3});
    check(b, false, {0, 0, 0, 0}, {0, 0, 2, 2});
    CHECK(tl::cummax(b.to(dev), 0).values.dtype() == tl::kBool);
    // Integer extremes.
    const tl::Tensor ext = tl::from_vector<int64_t>(
        {0, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}, {3});
    check(ext, false, {0, -9.223372036854775808e18, -9.223372036854775808e18}, {0, 1, 1});
  }
}

TEST_CASE("scans: long rows and columns above the CPU grain") {
  for (tl::Device dev : test_devices()) {
    for (const auto& [shape, dim] : std::vector<std::pair<tl::Shape, int64_t>>{
             {{40000}, 0}, {{300, 200}, 0}, {{300, 200}, 1}, {{3, 20000, 2}, 1}}) {
      const tl::Tensor x = random_tensor(shape, tl::kFloat64).to(dev);
      check_arithmetic(x, dim, false, dev.str() + " " + shape.str());
      check_extremum(x, dim, true, dev.str() + " " + shape.str());
      const tl::Tensor ints = ints_in(-9, 10, shape, tl::kInt32).to(dev);
      check_arithmetic(ints, dim, false, dev.str() + " int32 " + shape.str());
      check_extremum(ints, dim, false, dev.str() + " int32 " + shape.str());
    }
  }
}

// unique, unique_consecutive, bincount, searchsorted and histc against naive references computed
// here, on every device: every dtype, ties, NaN (each NaN its own value in unique), signed zeros,
// layouts, dims, 0-dim and zero-size inputs, weights and their dtypes, sorters, and histc's range
// rules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "test_util.h"

using namespace tl_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

// unique's order: NaN above everything, -0.0 == 0.0. Equality is ==: NaN equals nothing.
bool less_key(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
  return a < b;
}
bool equal_value(double a, double b) { return a == b; }  // NaN != NaN, -0.0 == 0.0

// Slices of t along d as rows of doubles (row i = t.select(d, i) flattened).
std::vector<std::vector<double>> slices(const tl::Tensor& t, int64_t d) {
  const int64_t n = t.shape()[d];
  const std::vector<double> flat = values_of(t.movedim(d, 0));  // row-major: slice by slice
  const size_t m = n == 0 ? 0 : flat.size() / static_cast<size_t>(n);
  std::vector<std::vector<double>> rows;
  for (int64_t i = 0; i < n; ++i)
    rows.emplace_back(flat.begin() + static_cast<int64_t>(i * m),
                      flat.begin() + static_cast<int64_t>((i + 1) * m));
  return rows;
}

struct Expected {
  std::vector<std::vector<double>> values;  // each group's row
  std::vector<int64_t> inverse, counts;
};

// The reference: rows ordered by a stable sort (lexicographic, NaN last), or left in place
// (consecutive); a group starts where a row is not == the previous one.
Expected reference_unique(const std::vector<std::vector<double>>& rows, bool consecutive) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!consecutive)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::lexicographical_compare(rows[a].begin(), rows[a].end(), rows[b].begin(),
                                          rows[b].end(), less_key);
    });
  Expected e;
  e.inverse.resize(rows.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& row = rows[order[k]];
    const bool same =
        k > 0 && std::equal(row.begin(), row.end(), rows[order[k - 1]].begin(), equal_value);
    if (!same) {
      e.values.push_back(row);
      e.counts.push_back(0);
    }
    ++e.counts.back();
    e.inverse[order[k]] = static_cast<int64_t>(e.values.size()) - 1;
  }
  return e;
}

std::vector<int64_t> int64s(const tl::Tensor& t) {
  return t.cpu().contiguous().to_vector<int64_t>();
}

// Checks a unique result (with dim or flattened) against the reference.
void check_unique(const tl::Tensor& x, std::optional<int64_t> dim, bool consecutive) {
  const tl::UniqueResult r = consecutive ? tl::unique_consecutive(x, true, true, dim)
                                         : tl::unique(x, true, true, true, dim);
  REQUIRE(r.values.dtype() == x.dtype());
  CHECK(r.values.device() == x.device());
  CHECK(r.inverse.dtype() == tl::kInt64);
  CHECK(r.counts.dtype() == tl::kInt64);
  if (!dim) {
    const tl::Tensor flat = x.reshape({x.numel()}).unsqueeze(1);
    const Expected e = reference_unique(slices(flat, 0), consecutive);
    REQUIRE(r.values.dim() == 1);
    REQUIRE(r.values.numel() == static_cast<int64_t>(e.values.size()));
    std::vector<double> want;
    for (const auto& row : e.values) want.push_back(row[0]);
    check_values(r.values, want, 0, 0);
    CHECK(r.inverse.shape() == x.shape());
    CHECK(int64s(r.inverse) == e.inverse);
    CHECK(int64s(r.counts) == e.counts);
    return;
  }
  const int64_t d = *dim < 0 ? *dim + x.dim() : *dim;
  const Expected e = reference_unique(slices(x, d), consecutive);
  tl::Shape shape = x.shape();
  shape[d] = static_cast<int64_t>(e.values.size());
  REQUIRE(r.values.shape() == shape);
  for (size_t g = 0; g < e.values.size(); ++g)
    check_values(r.values.select(d, static_cast<int64_t>(g)), e.values[g], 0, 0);
  CHECK(int64s(r.inverse) == e.inverse);
  CHECK(int64s(r.counts) == e.counts);
}

// Few distinct values (many ties), with NaN, infinities and both zeros among floats.
tl::Tensor tied(const tl::Shape& s, tl::DType d) {
  if (d == tl::kBool) return tl::randint(0, 2, s) != 0;
  if (!tl::is_floating_point(d)) return tl::randint(-4, 5, s).to(d);
  tl::Tensor x = tl::randint(-3, 4, s).to(tl::kFloat64) * 0.5;
  tl::Tensor u = tl::rand(s);
  x = tl::where(u < 0.08, tl::full({}, kNaN, tl::kFloat64), x);
  x = tl::where((u >= 0.08) & (u < 0.12), tl::full({}, kInf, tl::kFloat64), x);
  x = tl::where((u >= 0.12) & (u < 0.2), tl::full({}, -0.0, tl::kFloat64), x);
  return x.to(d);
}

}  // namespace

TEST_CASE("unique and unique_consecutive: every dtype, layouts, flattened and along dims") {
  const std::vector<tl::Shape> shapes{{1}, {17}, {6, 5}, {3, 4, 2}};
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : all_dtypes()) {
      for (const tl::Shape& s : shapes) {
        for (const Layout& l : layouts_of(tied(s, dt))) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          for (bool consecutive : {false, true}) {
            INFO(dev.str() << " " << tl::dtype_name(dt) << " " << s.str() << " " << l.name
                           << (consecutive ? " consecutive" : ""));
            check_unique(x, std::nullopt, consecutive);
            for (int64_t d = -1; d < static_cast<int64_t>(s.size()); ++d) {
              INFO("dim " << d);
              check_unique(x, d, consecutive);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("unique: each NaN is its own value; -0.0 and 0.0 are one; results as torch") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      // torch.unique(torch.tensor([nan, 1, nan, 0., -0., 1]), return_inverse=True,
      // return_counts=True) == ([0., 1., nan, nan], [2, 1, 3, 0, 0, 1], [2, 2, 1, 1])
      const tl::Tensor x = tl::from_vector<double>({kNaN, 1, kNaN, 0.0, -0.0, 1}).to(dt).to(dev);
      auto [values, inverse, counts] = tl::unique(x, true, true, true);
      check_values(values, {0, 1, kNaN, kNaN}, 0, 0);
      CHECK(int64s(inverse) == std::vector<int64_t>{2, 1, 3, 0, 0, 1});
      CHECK(int64s(counts) == std::vector<int64_t>{2, 2, 1, 1});
      // The first of the equal zeros (0.0 at position 3) is the one kept.
      CHECK_FALSE(std::signbit(values_of(values)[0]));
      // Consecutive NaNs stay apart too.
      auto c = tl::unique_consecutive(tl::from_vector<double>({kNaN, kNaN, 2, 2}).to(dt).to(dev),
                                      false, true);
      check_values(c.values, {kNaN, kNaN, 2}, 0, 0);
      CHECK(int64s(c.counts) == std::vector<int64_t>{1, 1, 2});
      CHECK_FALSE(c.inverse.defined());
    }
  }
}

TEST_CASE("unique: results not asked for are undefined; methods; 0-dim and zero-size inputs") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    const tl::Tensor x = tl::from_vector<int64_t>({3, 1, 3, 2}).to(dev);
    auto [v, inv, cnt] = x.unique();
    check_values(v, {1, 2, 3}, 0, 0);
    CHECK_FALSE(inv.defined());
    CHECK_FALSE(cnt.defined());
    CHECK(int64s(x.unique(false, true).inverse) == std::vector<int64_t>{2, 0, 2, 1});
    CHECK(int64s(x.unique_consecutive(false, true).counts) == std::vector<int64_t>{1, 1, 1, 1});
    // A 0-dim input: a 1-D result, a 0-dim inverse.
    auto s = tl::unique(tl::scalar_tensor(2.5).to(dev), true, true, true);
    CHECK(s.values.shape() == tl::Shape{1});
    CHECK(s.inverse.shape() == tl::Shape{});
    CHECK(int64s(s.counts) == std::vector<int64_t>{1});
    // Zero-size: empty values, an inverse of the input's shape.
    auto z = tl::unique(tl::zeros({0, 3}, tl::TensorOptions(tl::kFloat32).device(dev)), true, true,
                        true);
    CHECK(z.values.shape() == tl::Shape{0});
    CHECK(z.inverse.shape() == tl::Shape{0, 3});
    CHECK(z.counts.shape() == tl::Shape{0});
    // Along an empty dim (the only empty one): the input's shape, empty inverse and counts.
    auto zd = tl::unique(tl::zeros({0, 3}, tl::TensorOptions(tl::kInt32).device(dev)), true, true,
                         true, 0);
    CHECK(zd.values.shape() == tl::Shape{0, 3});
    CHECK(zd.inverse.shape() == tl::Shape{0});
    CHECK(zd.counts.shape() == tl::Shape{0});
    // Rows with a NaN are distinct; lexicographic order of rows.
    const tl::Tensor rows = tl::from_vector<double>({1, kNaN, 0, 5, 1, kNaN, 0, 2}).view({4, 2});
    auto ur = tl::unique(rows.to(dev), true, true, true, 0);
    check_values(ur.values, {0, 2, 0, 5, 1, kNaN, 1, kNaN}, 0, 0);
    CHECK(int64s(ur.inverse) == std::vector<int64_t>{2, 1, 3, 0});
  }
}

TEST_CASE("unique: long inputs on each side of the device paths") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kInt32, tl::kFloat32, tl::kInt64, tl::kUInt8}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      const tl::Tensor x = tl::randint(0, 200, {5003}).to(dt);
      check_unique(x.to(dev), std::nullopt, false);
      check_unique(x.view({5003, 1}).expand({5003, 3}).to(dev), 0, false);
    }
  }
}

TEST_CASE("bincount: counts, weights and their dtypes, minlength, empty input, method") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kUInt8, tl::kInt8, tl::kInt16, tl::kInt32, tl::kInt64}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      const tl::Tensor x = tl::randint(0, 40, {1000}).to(dt);
      const std::vector<double> xs = values_of(x);
      const tl::Tensor w = tl::rand({1000}) * 4.0 - 2.0;
      const std::vector<double> ws = values_of(w);
      const int64_t top = static_cast<int64_t>(*std::max_element(xs.begin(), xs.end()));
      for (int64_t minlength : {int64_t{0}, int64_t{5}, top + 7}) {
        const int64_t bins = std::max(top + 1, minlength);
        std::vector<double> counts(bins, 0), sums(bins, 0);
        for (size_t i = 0; i < xs.size(); ++i) {
          counts[static_cast<size_t>(xs[i])] += 1;
          sums[static_cast<size_t>(xs[i])] += ws[i];
        }
        for (const Layout& l : layouts_of(x)) {
          const tl::Tensor xd = same_layout_on(l.tensor, dev);
          INFO(l.name << " minlength " << minlength);
          const tl::Tensor c = tl::bincount(xd, {}, minlength);
          CHECK(c.dtype() == tl::kInt64);
          check_values(c, counts, 0, 0);
          // float32 weights stay float32; float64, integer and bool weights give float64.
          const tl::Tensor cf = xd.bincount(w.to(dev), minlength);
          CHECK(cf.dtype() == tl::kFloat32);
          check_values(cf, sums, 1e-5, 1e-5);
          const tl::Tensor cd = tl::bincount(xd, w.to(tl::kFloat64).to(dev), minlength);
          CHECK(cd.dtype() == tl::kFloat64);
          check_values(cd, sums, 1e-12, 1e-12);
          CHECK(tl::bincount(xd, w.to(tl::kFloat16).to(dev), minlength).dtype() == tl::kFloat64);
          const tl::Tensor ci = tl::bincount(xd, tl::ones({1000}, tl::kInt32).to(dev), minlength);
          CHECK(ci.dtype() == tl::kFloat64);
          check_values(ci, counts, 0, 0);
        }
      }
    }
    // Empty input: int64 zeros of minlength, with weights too (as torch).
    const tl::Tensor e = tl::zeros({0}, tl::TensorOptions(tl::kInt64).device(dev));
    CHECK(tl::bincount(e).shape() == tl::Shape{0});
    const tl::Tensor ew = tl::bincount(e, tl::zeros({0}).to(dev), 3);
    CHECK(ew.dtype() == tl::kInt64);
    check_values(ew, {0, 0, 0}, 0, 0);
  }
}

namespace {

// Left: how many boundaries are < v; right: how many are <= v (a sorted row without NaN); a NaN
// value lands past the end.
int64_t naive_position(const std::vector<double>& row, double v, bool right) {
  if (std::isnan(v)) return static_cast<int64_t>(row.size());
  int64_t n = 0;
  for (double b : row) n += right ? b <= v : b < v;
  return n;
}

}  // namespace

TEST_CASE("searchsorted: 1-D and batched sequences, sides, dtypes, sorter, layouts") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16, tl::kInt32,
                         tl::kInt64, tl::kUInt8, tl::kInt16}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      const bool fl = tl::is_floating_point(dt);
      // Boundaries [3, 9] (ties included), sorted per row; values [3, 7] with NaN for floats.
      const tl::Tensor raw = fl ? tl::randint(-8, 9, {3, 9}).to(tl::kFloat64) * 0.5
                                : tl::randint(0, 12, {3, 9}).to(tl::kFloat64);
      const tl::Tensor seq = tl::sort(raw, 1).values.to(dt);
      tl::Tensor vals = fl ? tl::randint(-10, 11, {3, 7}).to(tl::kFloat64) * 0.5
                           : tl::randint(0, 13, {3, 7}).to(tl::kFloat64);
      if (fl) vals = tl::where(tl::rand({3, 7}) < 0.1, tl::full({}, kNaN, tl::kFloat64), vals);
      vals = vals.to(dt);
      const auto seq_rows = slices(seq, 0);
      const auto val_rows = slices(vals, 0);
      for (const Layout& l : layouts_of(vals)) {
        const tl::Tensor v = same_layout_on(l.tensor, dev);
        for (bool right : {false, true}) {
          INFO(l.name << (right ? " right" : " left"));
          // Batched: row r of values searches row r.
          std::vector<double> want;
          for (size_t r = 0; r < 3; ++r)
            for (double x : val_rows[r]) want.push_back(naive_position(seq_rows[r], x, right));
          const tl::Tensor got = tl::searchsorted(seq.to(dev), v, false, right);
          CHECK(got.dtype() == tl::kInt64);
          CHECK(got.shape() == v.shape());
          check_values(got, want, 0, 0);
          // side = "right" is right = true; out_int32 gives int32.
          const tl::Tensor by_side =
              tl::searchsorted(seq.to(dev), v, true, false, right ? "right" : "left");
          CHECK(by_side.dtype() == tl::kInt32);
          check_values(by_side, want, 0, 0);
          // 1-D: every value searches row 0.
          std::vector<double> want1;
          for (const auto& row : val_rows)
            for (double x : row) want1.push_back(naive_position(seq_rows[0], x, right));
          check_values(tl::searchsorted(seq[0].to(dev), v, false, right), want1, 0, 0);
        }
      }
      // A sorter: the rows shuffled, the sorter their ascending order.
      const tl::Tensor perm = tl::argsort(tl::rand({3, 9}), 1);
      const tl::Tensor shuffled = tl::gather(seq, 1, perm);
      const tl::Tensor sorter = tl::argsort(shuffled, 1, false, true);
      std::vector<double> want;
      for (size_t r = 0; r < 3; ++r)
        for (double x : val_rows[r]) want.push_back(naive_position(seq_rows[r], x, false));
      check_values(
          tl::searchsorted(shuffled.to(dev), vals.to(dev), false, false, "", sorter.to(dev)), want,
          0, 0);
    }
  }
}

TEST_CASE("searchsorted: NaN as torch's bisection; numbers; promotion; empty inputs") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    // torch.searchsorted(torch.tensor([1., 2., nan]), ...): a NaN boundary is stepped over.
    const tl::Tensor seq = tl::from_vector<double>({1, 2, kNaN}).to(dev);
    check_values(tl::searchsorted(seq, tl::from_vector<double>({1.5, 5, kNaN, 2}).to(dev)),
                 {1, 3, 3, 1}, 0, 0);
    check_values(
        tl::searchsorted(seq, tl::from_vector<double>({1.5, 5, kNaN, 2}).to(dev), false, true),
        {1, 3, 3, 3}, 0, 0);
    // A number: a 0-dim result; an int sequence with a float number compares in float32.
    const tl::Tensor ints = tl::from_vector<int32_t>({1, 3, 5, 7}).to(dev);
    const tl::Tensor r = tl::searchsorted(ints, 4.5);
    CHECK(r.shape() == tl::Shape{});
    CHECK(r.item<int64_t>() == 2);
    CHECK(tl::searchsorted(ints, 5, false, true).item<int64_t>() == 3);
    CHECK(tl::searchsorted(ints, tl::from_vector<double>({0.5, 7.0}).to(dev)).dtype() ==
          tl::kInt64);
    check_values(tl::searchsorted(ints, tl::from_vector<double>({0.5, 7.0}).to(dev)), {0, 3}, 0, 0);
    // Empty boundaries: every position 0; empty values: an empty result.
    const tl::Tensor none = tl::zeros({0}, tl::TensorOptions(tl::kFloat32).device(dev));
    check_values(tl::searchsorted(none, tl::ones({3}).to(dev)), {0, 0, 0}, 0, 0);
    CHECK(tl::searchsorted(ints, tl::zeros({2, 0}, tl::kInt32).to(dev)).shape() == tl::Shape{2, 0});
    // A 0-dim tensor value with a 1-D sequence.
    CHECK(tl::searchsorted(ints, tl::scalar_tensor(6, tl::kInt32).to(dev)).item<int64_t>() == 3);
  }
}

namespace {

// histc's bin of v computed in T's arithmetic (float for float32), -1 outside [lo, hi].
template <typename T>
int64_t naive_bin(double value, double lo, double hi, int64_t bins) {
  const T v = static_cast<T>(value), l = static_cast<T>(lo), h = static_cast<T>(hi);
  if (!(v >= l && v <= h)) return -1;
  const T pos = (v - l) * static_cast<T>(bins) / (h - l);
  const int64_t b = static_cast<int64_t>(pos);
  return b >= bins ? bins - 1 : b;
}

std::vector<double> naive_histc(const tl::Tensor& x, int64_t bins, double lo, double hi) {
  std::vector<double> h(static_cast<size_t>(bins), 0);
  for (double v : values_of(x)) {
    const int64_t b = x.dtype() == tl::kFloat64 ? naive_bin<double>(v, lo, hi, bins)
                                                : naive_bin<float>(v, lo, hi, bins);
    if (b >= 0) h[static_cast<size_t>(b)] += 1;
  }
  return h;
}

}  // namespace

TEST_CASE("histc: explicit and data ranges, edges, outside values and NaN ignored, layouts") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kFloat32, tl::kFloat64}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      tl::Tensor x = (tl::rand({40, 25}, tl::kFloat64) * 6.0 - 3.0);
      x = tl::where(tl::rand({40, 25}) < 0.05, tl::full({}, kNaN, tl::kFloat64), x).to(dt);
      for (const Layout& l : layouts_of(x)) {
        const tl::Tensor xd = same_layout_on(l.tensor, dev);
        INFO(l.name);
        for (int64_t bins : {int64_t{1}, int64_t{7}, int64_t{100}, int64_t{10000}}) {
          const tl::Tensor h = tl::histc(xd, bins, -1.5, 2.25);
          CHECK(h.dtype() == dt);
          CHECK(h.shape() == tl::Shape{bins});
          check_values(h, naive_histc(x, bins, -1.5, 2.25), 0, 0);
        }
      }
      // The data's range (no NaN): min and max fall in the first and last bins.
      const tl::Tensor clean = tl::rand({999}, tl::kFloat64).to(dt) * 10.0;
      const std::vector<double> cv = values_of(clean);
      const double lo = *std::min_element(cv.begin(), cv.end());
      const double hi = *std::max_element(cv.begin(), cv.end());
      const tl::Tensor h = clean.to(dev).histc(13);
      check_values(h, naive_histc(clean, 13, lo, hi), 0, 0);
      CHECK(values_of(h)[12] >= 1);
      // min == max (not 0) also takes the data's range; one distinct value widens by 1.
      check_values(tl::histc(clean.to(dev), 13, 4, 4), naive_histc(clean, 13, lo, hi), 0, 0);
      check_values(tl::histc(tl::full({5}, 2.0, dt).to(dev), 4), {0, 0, 5, 0}, 0, 0);
      // Empty input: the range [-1, 1], zero counts.
      check_values(tl::histc(tl::zeros({0}, dt).to(dev), 3), {0, 0, 0}, 0, 0);
      // max is in the last bin; values at internal edges go right.
      check_values(tl::histc(tl::from_vector<double>({0, 1, 2, 3, 4}).to(dt).to(dev), 4, 0, 4),
                   {1, 1, 1, 2}, 0, 0);
    }
    // float16 / bfloat16: counts in the input's dtype.
    for (tl::DType dt : {tl::kFloat16, tl::kBFloat16}) {
      const tl::Tensor x = tl::from_vector<double>({0.25, 0.5, 0.75, 1.5, -3, kNaN}).to(dt);
      const tl::Tensor h = tl::histc(x.to(dev), 4, 0, 2);
      CHECK(h.dtype() == dt);
      check_values(h, {1, 2, 0, 1}, 0, 0);
    }
  }
}

// sort, argsort, topk and kthvalue against std:: references computed here, on every device: every
// dtype, ties, NaN placement, descending, the stable order of ties, layouts, dims other than the
// last, 0-dim and zero-size inputs, k = 0 and k = n.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "test_util.h"

using namespace tl_test;

namespace {

using Key = long double;  // holds every value of every dtype exactly (int64 included)
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

// torch's order: NaN above everything (equal to each other), -0.0 == 0.0.
bool before(Key a, Key b, bool descending) {
  if (std::isnan(a) || std::isnan(b)) return descending ? !std::isnan(b) : !std::isnan(a);
  return descending ? a > b : a < b;
}
bool same(Key a, Key b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::vector<Key> keys_of(const tl::Tensor& t) {
  std::vector<Key> out;
  if (t.dtype() == tl::kInt64) {
    for (int64_t v : t.cpu().contiguous().to_vector<int64_t>()) out.push_back(v);
  } else {
    for (double v : values_of(t)) out.push_back(v);
  }
  return out;
}

// The rows of t along dim d (d moved last), as keys; a 0-dim tensor is one row of one.
std::vector<std::vector<Key>> rows_along(const tl::Tensor& t, int64_t d) {
  tl::Tensor m = t.dim() == 0 ? t.reshape({1}) : t;
  if (m.dim() > 0) {
    if (d < 0) d += m.dim();
    tl::Shape perm;
    for (int64_t i = 0; i < m.dim(); ++i)
      if (i != d) perm.push_back(i);
    perm.push_back(d);
    m = m.permute(perm);
  }
  const int64_t n = m.dim() == 0 ? 1 : m.shape().back();
  std::vector<Key> flat = keys_of(m.contiguous());
  std::vector<std::vector<Key>> rows;
  for (size_t i = 0; n > 0 && i < flat.size(); i += static_cast<size_t>(n))
    rows.emplace_back(flat.begin() + static_cast<int64_t>(i),
                      flat.begin() + static_cast<int64_t>(i) + n);
  return rows;
}

// The stable sort's positions of one row.
std::vector<int64_t> stable_order(const std::vector<Key>& row, bool descending) {
  std::vector<int64_t> pos(row.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(),
                   [&](int64_t a, int64_t b) { return before(row[a], row[b], descending); });
  return pos;
}

// Checks a per-row result (values, indices: rows of m along d) against the input's rows: each
// index is in range and distinct, points at its value, and the values are the expected ones
// (`expected` gives each row's positions in the wanted order, first m used). exact_indices: the
// positions themselves must match (stable order); else only equal keys may be permuted.
void check_rows(const tl::Tensor& x, int64_t d, const tl::Tensor& values, const tl::Tensor& indices,
                int64_t m, bool exact_indices,
                const std::function<std::vector<int64_t>(const std::vector<Key>&)>& expected,
                bool any_order = false) {
  REQUIRE(values.dtype() == x.dtype());
  REQUIRE(indices.dtype() == tl::kInt64);
  CHECK(values.device() == x.device());
  CHECK(indices.device() == x.device());
  const auto in_rows = rows_along(x, d);
  const auto v_rows = rows_along(values, d);
  const auto i_rows = rows_along(indices, d);
  REQUIRE(v_rows.size() == (m == 0 ? 0 : in_rows.size()));
  REQUIRE(i_rows.size() == v_rows.size());
  for (size_t r = 0; r < v_rows.size(); ++r) {
    const std::vector<Key>& row = in_rows[r];
    const std::vector<int64_t> want = expected(row);
    REQUIRE(v_rows[r].size() == static_cast<size_t>(m));
    std::vector<Key> got_keys = v_rows[r], want_keys;
    for (int64_t j = 0; j < m; ++j) want_keys.push_back(row[want[j]]);
    std::vector<bool> used(row.size(), false);
    for (int64_t j = 0; j < m; ++j) {
      const Key pos = i_rows[r][j];
      INFO("row " << r << " rank " << j);
      REQUIRE((pos >= 0 && pos < static_cast<Key>(row.size())));
      const auto p = static_cast<size_t>(pos);
      CHECK_FALSE(used[p]);
      used[p] = true;
      CHECK(same(row[p], got_keys[j]));
      if (row[p] == 0) CHECK(std::signbit(row[p]) == std::signbit(got_keys[j]));  // -0.0 stays
      if (exact_indices) CHECK(static_cast<int64_t>(p) == want[j]);
    }
    if (any_order) {  // topk(sorted=false): the same elements in some order
      auto by_key = [](Key a, Key b) { return before(a, b, false); };
      std::sort(got_keys.begin(), got_keys.end(), by_key);
      std::sort(want_keys.begin(), want_keys.end(), by_key);
    }
    for (int64_t j = 0; j < m; ++j) {
      INFO("row " << r << " rank " << j << ": got " << static_cast<double>(got_keys[j])
                  << ", expected " << static_cast<double>(want_keys[j]));
      CHECK(same(got_keys[j], want_keys[j]));
    }
  }
}

// Random values with many ties, and (floating) NaN, infinities and signed zeros among them.
tl::Tensor tied_values(const tl::Shape& s, tl::DType d) {
  if (d == tl::kBool) return tl::randint(0, 2, s) != 0;
  // [-9, 10), wrapped into the unsigned type: ties in any longer row.
  if (!tl::is_floating_point(d)) return tl::randint(-9, 10, s).to(d);
  tl::Tensor x = tl::randint(-6, 7, s).to(tl::kFloat64) * 0.5;
  tl::Tensor u = tl::rand(s);
  x = tl::where(u < 0.06, tl::full({}, kNaN, tl::kFloat64), x);
  x = tl::where((u >= 0.06) & (u < 0.09), tl::full({}, kInf, tl::kFloat64), x);
  x = tl::where((u >= 0.09) & (u < 0.12), tl::full({}, -kInf, tl::kFloat64), x);
  x = tl::where((u >= 0.12) & (u < 0.16), tl::full({}, -0.0, tl::kFloat64), x);
  return x.to(d);
}

// tied_values with specials written over every 7th element: for floats both zeros, NaNs of both
// signs and other payloads, infinities and denormals (as d holds them); for integers the
// dtype's extremes.
tl::Tensor with_specials(const tl::Shape& s, tl::DType d) {
  tl::Tensor x = tied_values(s, d).contiguous();
  if (d == tl::kBool) return x;
  tl::Tensor specials;
  if (tl::is_floating_point(d)) {
    std::vector<float> v;
    for (uint32_t b : {0x80000000u, 0x00000000u, 0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0xff812345u,
                       0x00000001u, 0x80000001u, 0x7f800000u, 0xff800000u})
      v.push_back(std::bit_cast<float>(b));
    specials = tl::from_vector(v).to(d);
  } else {
    specials = tl::dispatch_dtype(d, [&]<typename T>() {
      const auto lo = static_cast<int64_t>(std::numeric_limits<T>::min());
      const auto hi = static_cast<int64_t>(std::numeric_limits<T>::max());
      return tl::from_vector<int64_t>({lo, hi, lo + 1, hi - 1, 0}).to(d);
    });
  }
  char* p = static_cast<char*>(x.data_ptr());
  const char* q = static_cast<const char*>(specials.data_ptr());
  const auto size = static_cast<size_t>(x.element_size());
  for (int64_t i = 0; i < x.numel(); i += 7)
    std::memcpy(p + i * size, q + (i / 7 % specials.numel()) * size, size);
  return x;
}

// Checks that each value is the input's element at its index, bit for bit, in [rows, n] results
// of m columns (x: [rows, n] or [n]).
void check_bits_at_indices(const tl::Tensor& x, const tl::Tensor& values, const tl::Tensor& indices,
                           int64_t n, int64_t m) {
  const std::vector<uint64_t> xb = bits_of(x), vb = bits_of(values);
  const std::vector<int64_t> at = indices.cpu().contiguous().to_vector<int64_t>();
  REQUIRE(vb.size() == at.size());
  int64_t bad = 0, first = -1;
  for (size_t o = 0; o < vb.size(); ++o) {
    const int64_t row = static_cast<int64_t>(o) / m;
    if (vb[o] != xb[static_cast<size_t>(row * n + at[o])] && bad++ == 0)
      first = static_cast<int64_t>(o);
  }
  INFO(bad << " values differ from the input's element at their index; the first at " << first);
  CHECK(bad == 0);
}

struct ShapeDims {
  tl::Shape shape;
  std::vector<int64_t> dims;
};
const std::vector<ShapeDims> kShapes = {
    {{1}, {0}}, {{9}, {-1}}, {{4, 33}, {1, 0}}, {{3, 4, 5}, {0, 1, 2}}, {{2, 300}, {-1}}};

}  // namespace

TEST_CASE("sort and argsort: every dtype, dims, layouts, descending, stable order of ties") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : all_dtypes()) {
      for (const ShapeDims& sd : kShapes) {
        for (const Layout& l : layouts_of(tied_values(sd.shape, dt))) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          for (int64_t d : sd.dims) {
            for (bool descending : {false, true}) {
              for (bool stable : {false, true}) {
                INFO(dev.str() << " " << tl::dtype_name(dt) << " " << sd.shape.str() << " "
                               << l.name << " dim " << d << (descending ? " descending" : "")
                               << (stable ? " stable" : ""));
                auto [v, i] = tl::sort(x, d, descending, stable);
                CHECK(v.shape() == x.shape());
                CHECK(i.shape() == x.shape());
                const int64_t n = x.shape()[d < 0 ? d + x.dim() : d];
                check_rows(x, d, v, i, n, stable, [&](const std::vector<Key>& row) {
                  return stable_order(row, descending);
                });
                // argsort is sort's indices (both stable here: every order agrees).
                tl::Tensor a = tl::argsort(x, d, descending, true);
                CHECK(tl::equal(a.cpu(), tl::sort(x, d, descending, true).indices.cpu()));
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("sort: NaN last ascending and first descending; ties stable; -0.0 ties 0.0") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      tl::Tensor x =
          tl::from_vector<double>({3, kNaN, 1, -kInf, kNaN, 2, -0.0, 0.0, kInf, 1}).to(dt).to(dev);
      auto [v, i] = x.sort(0, false, true);
      check_values(v, {-kInf, -0.0, 0.0, 1, 1, 2, 3, kInf, kNaN, kNaN}, 0, 0);
      CHECK(i.cpu().to_vector<int64_t>() == std::vector<int64_t>{3, 6, 7, 2, 9, 5, 0, 8, 1, 4});
      auto [vd, id] = x.sort(0, true, true);
      check_values(vd, {kNaN, kNaN, kInf, 3, 2, 1, 1, 0.0, -0.0, -kInf}, 0, 0);
      CHECK(id.cpu().to_vector<int64_t>() == std::vector<int64_t>{1, 4, 8, 0, 5, 2, 9, 6, 7, 3});
      // The values are the input's own elements: -0.0 keeps its sign.
      CHECK(std::signbit(values_of(v)[1]));
      CHECK_FALSE(std::signbit(values_of(v)[2]));
    }
    // Ties of every kind keep their order when stable, also descending.
    tl::Tensor t = tl::from_vector<int32_t>({2, 1, 2, 1, 2}).to(dev);
    CHECK(t.argsort(0, false, true).cpu().to_vector<int64_t>() ==
          std::vector<int64_t>{1, 3, 0, 2, 4});
    CHECK(t.argsort(0, true, true).cpu().to_vector<int64_t>() ==
          std::vector<int64_t>{0, 2, 4, 1, 3});
    tl::Tensor b = tl::from_vector<bool>({true, false, true, false}).to(dev);
    CHECK(tl::argsort(b, 0, false, true).cpu().to_vector<int64_t>() ==
          std::vector<int64_t>{1, 3, 0, 2});
  }
}

TEST_CASE("sort: integer extremes of every width and long rows") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : {tl::kUInt8, tl::kInt8, tl::kInt16, tl::kInt32, tl::kInt64}) {
      INFO(dev.str() << " " << tl::dtype_name(dt));
      int64_t lo = 0, hi = 255;
      if (dt == tl::kInt8) lo = -128, hi = 127;
      if (dt == tl::kInt16) lo = -32768, hi = 32767;
      if (dt == tl::kInt32)
        lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
      if (dt == tl::kInt64)
        lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      const tl::Tensor x =
          tl::from_vector<int64_t>({0, hi, lo, hi - 1, 0, lo + 1, 1, hi, lo, 0}).to(dt).to(dev);
      for (bool descending : {false, true}) {
        auto [v, i] = tl::sort(x, 0, descending, true);
        check_rows(x, 0, v, i, x.numel(), true,
                   [&](const std::vector<Key>& row) { return stable_order(row, descending); });
      }
    }
    // Rows past one block's sort (4096) and a long single row.
    for (const tl::Shape& s : {tl::Shape{3, 5000}, tl::Shape{70000}}) {
      for (tl::DType dt : {tl::kFloat32, tl::kInt64, tl::kFloat16}) {
        INFO(dev.str() << " " << s.str() << " " << tl::dtype_name(dt));
        tl::Tensor x = tied_values(s, dt).to(dev);
        for (bool descending : {false, true}) {
          auto [v, i] = tl::sort(x, -1, descending, true);
          check_rows(x, -1, v, i, s.back(), true,
                     [&](const std::vector<Key>& row) { return stable_order(row, descending); });
        }
      }
    }
  }
}

TEST_CASE("sort: long rows give the input's own elements, bit for bit, in every dtype") {
  // Rows past one block's sort (4096): one row (one device-wide radix sort), 128 rows (a segment
  // per row), both writing values decoded from their sorted keys; 3 rows (sorted at once, then
  // regrouped by row), gathering them. -0.0 and every NaN must come back as they went in.
  const std::vector<tl::Shape> shapes{{5000}, {128, 4097}, {3, 5000}};
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : all_dtypes()) {
      for (const tl::Shape& s : shapes) {
        const tl::Tensor x = with_specials(s, dt);
        const tl::Tensor xd = x.to(dev);
        const int64_t n = s.back();
        for (bool descending : {false, true}) {
          INFO(dev.str() << " " << tl::dtype_name(dt) << " " << s.str()
                         << (descending ? " descending" : ""));
          auto [v, i] = tl::sort(xd, -1, descending, true);
          check_rows(xd, -1, v, i, n, true,
                     [&](const std::vector<Key>& row) { return stable_order(row, descending); });
          check_bits_at_indices(x, v, i, n, n);
        }
        if (dt == tl::kBool) continue;  // torch has no topk for bool
        // topk of a large part of a long row sorts it and keeps the first k.
        const int64_t k = n - 500;
        for (bool largest : {true, false}) {
          INFO(dev.str() << " " << tl::dtype_name(dt) << " " << s.str() << " topk " << k
                         << (largest ? " largest" : " smallest"));
          auto [v, i] = tl::topk(xd, k, -1, largest);
          check_bits_at_indices(x, v, i, n, k);
          auto sorted = tl::sort(xd, -1, largest, true);
          CHECK(bits_of(v) == bits_of(sorted.values.narrow(-1, 0, k)));
        }
      }
    }
  }
}

TEST_CASE("topk: k from 0 to n, largest and smallest, sorted or not, dims, dtypes, layouts") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : all_dtypes()) {
      for (const ShapeDims& sd : kShapes) {
        for (const Layout& l : layouts_of(tied_values(sd.shape, dt))) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          if (dt == tl::kBool) {  // as torch: topk is not built for bool
            check_throws<tl::DTypeError>([&] { tl::topk(x, 1, 0); }, "[tl::topk]");
            continue;
          }
          for (int64_t d : sd.dims) {
            const int64_t n = x.shape()[d < 0 ? d + x.dim() : d];
            for (int64_t k : {int64_t{0}, int64_t{1}, std::min<int64_t>(3, n), n}) {
              for (bool largest : {true, false}) {
                for (bool sorted : {true, false}) {
                  INFO(dev.str() << " " << tl::dtype_name(dt) << " " << sd.shape.str() << " "
                                 << l.name << " dim " << d << " k " << k
                                 << (largest ? " largest" : " smallest")
                                 << (sorted ? " sorted" : ""));
                  auto [v, i] = tl::topk(x, k, d, largest, sorted);
                  tl::Shape want = x.shape();
                  want[d < 0 ? d + x.dim() : d] = k;
                  CHECK(v.shape() == want);
                  CHECK(i.shape() == want);
                  check_rows(
                      x, d, v, i, k, false,
                      [&](const std::vector<Key>& row) { return stable_order(row, largest); },
                      !sorted);
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("topk: NaN counts as the largest; long rows; methods") {
  for (tl::Device dev : test_devices()) {
    tl::Tensor x = tl::from_vector<double>({1, kNaN, 5, -kInf, 3}).to(dev);
    auto [v, i] = x.topk(2);
    check_values(v, {kNaN, 5}, 0, 0);
    CHECK(i.cpu().to_vector<int64_t>() == std::vector<int64_t>{1, 2});
    auto [vs, is] = x.topk(2, 0, false);
    check_values(vs, {-kInf, 1}, 0, 0);
    CHECK(is.cpu().to_vector<int64_t>() == std::vector<int64_t>{3, 0});
    // Rows long enough for the device's selection path (k a small part of n), ties included.
    for (const tl::Shape& s : {tl::Shape{4, 20000}, tl::Shape{2, 5, 9000}}) {
      for (tl::DType dt : {tl::kFloat32, tl::kInt32, tl::kBFloat16, tl::kFloat64}) {
        const tl::Tensor t = tied_values(s, dt).to(dev);
        for (int64_t k : {1, 100, 1000}) {
          for (bool largest : {true, false}) {
            for (bool sorted : {true, false}) {
              INFO(dev.str() << " " << s.str() << " " << tl::dtype_name(dt) << " k " << k
                             << (largest ? " largest" : " smallest") << (sorted ? " sorted" : ""));
              auto [tv, ti] = tl::topk(t, k, -1, largest, sorted);
              check_rows(
                  t, -1, tv, ti, k, false,
                  [&](const std::vector<Key>& row) { return stable_order(row, largest); }, !sorted);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("kthvalue: every k of short rows, keepdim, dims, dtypes, layouts") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType dt : all_dtypes()) {
      for (const ShapeDims& sd : kShapes) {
        for (const Layout& l : layouts_of(tied_values(sd.shape, dt))) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          if (dt == tl::kBool) {  // as torch: kthvalue is not built for bool
            check_throws<tl::DTypeError>([&] { tl::kthvalue(x, 1, 0); }, "[tl::kthvalue]");
            continue;
          }
          for (int64_t d : sd.dims) {
            const int64_t dd = d < 0 ? d + x.dim() : d;
            const int64_t n = x.shape()[dd];
            for (int64_t k : {int64_t{1}, (n + 1) / 2, n}) {
              for (bool keepdim : {false, true}) {
                INFO(dev.str() << " " << tl::dtype_name(dt) << " " << sd.shape.str() << " "
                               << l.name << " dim " << d << " k " << k
                               << (keepdim ? " keepdim" : ""));
                auto [v, i] = tl::kthvalue(x, k, d, keepdim);
                tl::Shape kept = x.shape(), dropped = x.shape();
                kept[dd] = 1;
                dropped.erase(dd);
                CHECK(v.shape() == (keepdim ? kept : dropped));
                CHECK(i.shape() == v.shape());
                // As a topk of one element at rank k - 1, along the kept dim.
                const tl::Tensor kv = keepdim ? v : v.unsqueeze(dd);
                const tl::Tensor ki = keepdim ? i : i.unsqueeze(dd);
                check_rows(x, dd, kv, ki, 1, false, [&](const std::vector<Key>& row) {
                  std::vector<int64_t> order = stable_order(row, false);
                  return std::vector<int64_t>{order[k - 1]};
                });
              }
            }
          }
        }
      }
    }
    tl::Tensor x = tl::from_vector<double>({4, kNaN, 2, 2, 7}).to(tl::kFloat32).to(dev);
    auto [v, i] = x.kthvalue(5);
    CHECK(std::isnan(v.item<float>()));
    CHECK(i.item<int64_t>() == 1);
    CHECK(x.kthvalue(2).values.item<float>() == 2);
    CHECK(x.kthvalue(4, 0, true).values.shape() == tl::Shape{1});
  }
}

TEST_CASE("sort, topk, kthvalue: 0-dim and zero-size inputs") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    const tl::Tensor s = tl::scalar_tensor(2.5).to(dev);
    for (int64_t d : {0, -1}) {
      auto [v, i] = tl::sort(s, d, true);
      CHECK(v.dim() == 0);
      CHECK(i.dim() == 0);
      CHECK(v.item<double>() == 2.5);
      CHECK(i.item<int64_t>() == 0);
      CHECK(tl::argsort(s, d).dim() == 0);
    }
    for (int64_t k : {0, 1}) {
      auto [v, i] = tl::topk(s, k);
      CHECK(v.dim() == 0);
      CHECK(v.item<double>() == 2.5);
      CHECK(i.item<int64_t>() == 0);
    }
    auto [kv, ki] = tl::kthvalue(s, 1, 0, true);
    CHECK(kv.dim() == 0);
    CHECK(kv.item<double>() == 2.5);
    CHECK(ki.item<int64_t>() == 0);

    const tl::Tensor e = tl::zeros({0, 3}, tl::TensorOptions(tl::kFloat32).device(dev));
    for (int64_t d : {0, 1}) {
      auto [v, i] = tl::sort(e, d);
      CHECK(v.shape() == e.shape());
      CHECK(i.shape() == e.shape());
      CHECK(i.dtype() == tl::kInt64);
      CHECK(v.device() == dev);
    }
    CHECK(tl::topk(e, 0, 0).values.shape() == tl::Shape{0, 3});
    CHECK(tl::topk(e, 2, 1).values.shape() == tl::Shape{0, 2});
    CHECK(tl::topk(e, 0, 1).indices.shape() == tl::Shape{0, 0});
    CHECK(tl::kthvalue(e, 2, 1).values.shape() == tl::Shape{0});
    CHECK(tl::kthvalue(e, 2, 1, true).indices.shape() == tl::Shape{0, 1});
    const tl::Tensor x = tl::rand({2, 5}).to(dev);
    CHECK(tl::topk(x, 0).values.shape() == tl::Shape{2, 0});
    CHECK(tl::topk(x, 0, 0).values.shape() == tl::Shape{0, 5});
    check_throws<tl::IndexError>([&] { tl::kthvalue(e, 1, 0); }, "[tl::kthvalue]");
    check_throws<tl::IndexError>([&] { tl::topk(x, 6); }, "selected index k out of range");
    check_throws<tl::IndexError>([&] { tl::topk(s, 2); }, "[tl::topk]");
    check_throws<tl::IndexError>([&] { tl::sort(x, 2); }, "[tl::sort]");
  }
}

// Advanced indexing (index, index_put_, index_put, take, put_) against hand-written expectations:
// torch's placement of the advanced dims, ellipsis, None, bool items, masks, int32 indices,
// negative indices, 0-size results; every expected value computed by a naive loop over x.
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "test_util.h"

using namespace tl_test;
using tl::Ellipsis;
using tl::None;
using tl::Slice;
using tl::Tensor;

namespace {

tl::Tensor i64(const std::vector<int64_t>& v, const tl::Shape& s = {}) {
  return tl::from_vector<int64_t>(v, s.size() ? s : tl::Shape{static_cast<int64_t>(v.size())});
}

// x's element at a multi-index, read from its row-major values.
struct Host {
  explicit Host(const Tensor& x) : shape(x.shape()), v(values_of(x)) {}
  double at(const std::vector<int64_t>& idx) const {
    int64_t linear = 0;
    for (int64_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + idx[d];
    return v[static_cast<size_t>(linear)];
  }
  tl::Shape shape;
  std::vector<double> v;
};

// Checks got's shape, then every element against expect(multi-index of got).
void expect_each(const Tensor& got, const tl::Shape& shape,
                 const std::function<double(const std::vector<int64_t>&)>& expect,
                 double rtol = 0) {
  REQUIRE(got.shape() == shape);
  std::vector<double> want;
  for (int64_t i = 0; i < shape.numel(); ++i) want.push_back(expect(unravel(i, shape)));
  check_values(got, want, rtol, 0);
}

int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

}  // namespace

TEST_CASE("advanced index: basic items give views") {
  const Tensor x = random_tensor({4, 5, 6});
  const Host h(x);
  const Tensor r = x.index({1, Slice(1, None, 2), None, Ellipsis});
  CHECK(r.storage() == x.storage());
  expect_each(r, {2, 1, 6}, [&](auto i) { return h.at({1, 1 + 2 * i[0], i[2]}); });
  // The string "..." is Ellipsis; a negative integer counts from the end; Slice(-2) the last two.
  expect_each(x.index({"...", -1}), {4, 5}, [&](auto i) { return h.at({i[0], i[1], 5}); });
  expect_each(x.index({Slice(-2), 0}), {2, 6}, [&](auto i) { return h.at({2 + i[0], 0, i[1]}); });
  expect_each(x.index({None, Ellipsis, None}), {1, 4, 5, 6, 1}, [&](auto i) {
    return h.at({i[1], i[2], i[3]});
  });
  // A 0-dim integer tensor selects as an integer.
  expect_each(x.index({Slice(), tl::scalar_tensor(3, tl::kInt64)}), {4, 6}, [&](auto i) {
    return h.at({i[0], 3, i[1]});
  });
  // x.index({}) and x.index({Ellipsis}) are x itself (views).
  CHECK(x.index({Ellipsis}).shape() == x.shape());
  CHECK(x.index(std::vector<tl::TensorIndex>{}).storage() == x.storage());
}

TEST_CASE("advanced index: adjacent advanced indices stay in place") {
  const Tensor x = random_tensor({4, 5, 6});
  const Host h(x);
  const std::vector<int64_t> a{0, 4, 2}, b{5, 0, 3};
  expect_each(x.index({Slice(), i64(a), i64(b)}), {4, 3}, [&](auto i) {
    return h.at({i[0], a[i[1]], b[i[1]]});
  });
  // Broadcast index shapes: [3, 1] with [2] gives [3, 2] in place of dims 1 and 2.
  const std::vector<int64_t> c{1, 3};
  expect_each(x.index({Slice(), i64(a, {3, 1}), i64(c)}), {4, 3, 2}, [&](auto i) {
    return h.at({i[0], a[i[1]], c[i[2]]});
  });
  // One index tensor in the middle, 2-D: its dims replace dim 1.
  const std::vector<int64_t> m{0, 1, 2, 3, 4, 0};
  expect_each(x.index({Slice(), i64(m, {2, 3})}), {4, 2, 3, 6}, [&](auto i) {
    return h.at({i[0], m[i[1] * 3 + i[2]], i[3]});
  });
}

TEST_CASE("advanced index: separated advanced indices go first") {
  const Tensor x = random_tensor({4, 5, 6});
  const Host h(x);
  const std::vector<int64_t> a{3, 0, 1}, b{2, 5, 0};
  expect_each(x.index({i64(a), Slice(), i64(b)}), {3, 5}, [&](auto i) {
    return h.at({a[i[0]], i[1], b[i[0]]});
  });
  // An integer is a select (a view step), not an advanced index, as in torch: x[0, :, b] keeps
  // the slice's dim first.
  expect_each(x.index({0, Slice(), i64(b)}), {5, 3}, [&](auto i) {
    return h.at({0, i[0], b[i[1]]});
  });
  // A None between them separates them too.
  // A None between them separates them too; b2 then indexes x's dim 1 (the None came before it).
  const std::vector<int64_t> b2{2, 4, 0};
  expect_each(x.index({i64(a), None, i64(b2)}), {3, 1, 6}, [&](auto i) {
    return h.at({a[i[0]], b2[i[0]], i[2]});
  });
}

TEST_CASE("advanced index: ellipsis in the middle, and at the front") {
  const Tensor x = random_tensor({3, 4, 5, 6});
  const Host h(x);
  const std::vector<int64_t> a{2, 0}, b{-1, 4};
  expect_each(x.index({i64(a), Ellipsis, i64(b)}), {2, 4, 5}, [&](auto i) {
    return h.at({a[i[0]], i[1], i[2], wrap(b[i[0]], 6)});
  });
  expect_each(x.index({Ellipsis, i64(a), i64(b)}), {3, 4, 2}, [&](auto i) {
    return h.at({i[0], i[1], a[i[2]], wrap(b[i[2]], 6)});
  });
  expect_each(x.index({Slice(), i64(a), Ellipsis, 1}), {3, 2, 5}, [&](auto i) {
    return h.at({i[0], a[i[1]], i[2], 1});
  });
}

TEST_CASE("advanced index: bool items") {
  const Tensor x = random_tensor({4, 5});
  const Host h(x);
  expect_each(x.index({true}), {1, 4, 5}, [&](auto i) { return h.at({i[1], i[2]}); });
  CHECK(x.index({false}).shape() == tl::Shape{0, 4, 5});
  expect_each(x.index({Slice(), true}), {4, 1, 5}, [&](auto i) { return h.at({i[0], i[2]}); });
  // A bool after an index tensor is an advanced index [0] of a new axis: adjacent, broadcast.
  const std::vector<int64_t> a{3, 1, 2};
  expect_each(x.index({i64(a), true}), {3, 5}, [&](auto i) { return h.at({a[i[0]], i[1]}); });
  // A 0-dim bool tensor is a bool item.
  CHECK(x.index({tl::scalar_tensor(false, tl::kBool)}).shape() == tl::Shape{0, 4, 5});
}

TEST_CASE("advanced index: masks, alone and mixed with integers") {
  const Tensor x = random_tensor({4, 5, 6});
  const Host h(x);
  // A 2-D mask over dims 0-1: its true positions in row-major order.
  std::vector<bool> mv;
  std::vector<std::pair<int64_t, int64_t>> trues;
  for (int64_t i = 0; i < 20; ++i) {
    mv.push_back((i * 7) % 3 != 0);
    if (mv.back()) trues.push_back({i / 5, i % 5});
  }
  const Tensor m = tl::from_vector<bool>(mv, {4, 5});
  const int64_t n = static_cast<int64_t>(trues.size());
  expect_each(x.index({m}), {n, 6}, [&](auto i) {
    return h.at({trues[i[0]].first, trues[i[0]].second, i[1]});
  });
  // uint8 masks are accepted (deprecated in torch) and mean the same.
  expect_each(x.index({m.to(tl::kUInt8), 2}), {n}, [&](auto i) {
    return h.at({trues[i[0]].first, trues[i[0]].second, 2});
  });
  // A mask then a slice: the slice indexes the dim after the mask's dims.
  expect_each(x.index({m, Slice(1, 3)}), {n, 2}, [&](auto i) {
    return h.at({trues[i[0]].first, trues[i[0]].second, 1 + i[1]});
  });
  // A 1-D mask on dim 0 with an integer index on dim 2: separated, broadcast together.
  const Tensor rows = tl::from_vector<bool>({true, false, true, true});
  const std::vector<int64_t> rv{0, 2, 3}, c{5, -6, 1};
  expect_each(x.index({rows, Slice(), i64(c)}), {3, 5}, [&](auto i) {
    return h.at({rv[i[0]], i[1], wrap(c[i[0]], 6)});
  });
  // All false: an empty result.
  CHECK(x.index({tl::zeros({4, 5}, tl::kBool)}).shape() == tl::Shape{0, 6});
}

TEST_CASE("advanced index: int32 indices, negative indices, 0-size") {
  const Tensor x = random_tensor({4, 5}, tl::kInt64);
  const Host h(x);
  const std::vector<int64_t> a{-1, 0, -4, 2};
  const Tensor a32 = i64(a).to(tl::kInt32);
  expect_each(x.index({a32}), {4, 5}, [&](auto i) { return h.at({wrap(a[i[0]], 4), i[1]}); });
  expect_each(x.index({Slice(), a32}), {4, 4}, [&](auto i) {
    return h.at({i[0], wrap(a[i[1]], 5)});
  });
  CHECK(x.index({Slice(), tl::zeros({0}, tl::kInt64)}).shape() == tl::Shape{4, 0});
  CHECK(x.index({tl::zeros({2, 0}, tl::kInt32), Slice()}).shape() == tl::Shape{2, 0, 5});
  // A zero-size tensor indexed on a non-empty dim.
  const Tensor e = tl::zeros({0, 3});
  CHECK(e.index({Slice(), i64({2, -3})}).shape() == tl::Shape{0, 2});
  // A transposed, sliced self.
  const Tensor y = random_tensor({6, 8}).t().slice(1, 1, None, 2);  // [8, 3]
  const Host hy(y.contiguous());
  const std::vector<int64_t> r{7, 0, -2};
  expect_each(y.index({i64(r), i64({2, 1, 0})}), {3}, [&](auto i) {
    return hy.at({wrap(r[i[0]], 8), 2 - i[0]});
  });
  expect_each(tl::index(y, {i64(r)}), {3, 3}, [&](auto i) {
    return hy.at({wrap(r[i[0]], 8), i[1]});
  });
}

TEST_CASE("advanced index: index_put_ and index_put") {
  const Tensor x0 = random_tensor({4, 5, 6});
  const Host h(x0);
  const std::vector<int64_t> a{3, 0, -1}, b{2, 5, 0};
  // Separated indices: values of the result's shape [3, 5].
  {
    Tensor x = x0.clone();
    const Tensor v = random_tensor({3, 5});
    const Host hv(v);
    x.index_put_({i64(a), Slice(), i64(b)}, v);
    std::map<std::vector<int64_t>, double> written;
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 5; ++k) written[{wrap(a[j], 4), k, b[j]}] = hv.at({j, k});
    expect_each(x, {4, 5, 6}, [&](auto i) {
      auto it = written.find(i);
      return it != written.end() ? it->second : h.at(i);
    });
  }
  // Accumulate: duplicate positions add every value; values broadcast (leading 1s dropped).
  {
    Tensor x = x0.clone();
    const std::vector<int64_t> d{1, 3, 1, 1};
    const Tensor v = random_tensor({1, 1, 6});
    const Host hv(v);
    x.index_put_({Slice(), i64(d), 2}, v.index({Slice(), Slice(), Slice(0, 4)}), true);
    expect_each(
        x, {4, 5, 6},
        [&](auto i) {
          double e = h.at(i);
          if (i[2] == 2)
            for (int64_t j = 0; j < 4; ++j)
              if (d[j] == i[1]) e += hv.at({0, 0, j});
          return e;
        },
        1e-6);
  }
  // A scalar value through a mask; index_put leaves its input alone.
  {
    const Tensor m = x0 > 0.5;
    const Tensor y = tl::index_put(x0, {m}, -7.0);
    expect_each(y, {4, 5, 6}, [&](auto i) { return h.at(i) > 0.5 ? -7.0 : h.at(i); });
    expect_each(x0, {4, 5, 6}, [&](auto i) { return h.at(i); });
  }
  // Basic items only: writes through the view, converting as copy_ does.
  {
    Tensor x = x0.clone();
    x.index_put_({1, Slice(None, None, 2)}, tl::ones({6}, tl::kInt32));
    expect_each(x, {4, 5, 6}, [&](auto i) { return i[0] == 1 && i[1] % 2 == 0 ? 1.0 : h.at(i); });
    x.index_put_({Ellipsis, 0}, 2.5, true);
    expect_each(
        x, {4, 5, 6},
        [&](auto i) {
          const double base = i[0] == 1 && i[1] % 2 == 0 ? 1.0 : h.at(i);
          return i[2] == 0 ? base + 2.5 : base;
        },
        1e-6);
  }
  // Integer accumulate wraps; bool accumulate is "or".
  {
    Tensor x = tl::full({3}, INT32_MAX, tl::kInt32);
    x.index_put_({i64({0, 0, 2})}, tl::ones({3}, tl::kInt32), true);
    CHECK(x.to_vector<int32_t>() == std::vector<int32_t>{INT32_MIN + 1, INT32_MAX, INT32_MIN});
    Tensor bits = tl::zeros({3}, tl::kBool);
    bits.index_put_({i64({1, 1})}, tl::from_vector<bool>({true, false}), true);
    CHECK(bits.to_vector<bool>() == std::vector<bool>{false, true, false});
  }
}

TEST_CASE("advanced index: take and put_") {
  const Tensor x = random_tensor({5, 7}).t();  // [7, 5], transposed
  const Host h(x.contiguous());
  const std::vector<int64_t> idx{0, 33, -1, -34, 12, 12};
  const Tensor t = tl::take(x, i64(idx, {2, 3}));
  expect_each(t, {2, 3}, [&](auto i) {
    const int64_t f = wrap(idx[i[0] * 3 + i[1]], 35);
    return h.at({f / 5, f % 5});
  });
  CHECK(x.take(tl::zeros({0}, tl::kInt64)).shape() == tl::Shape{0});
  // put_ on the transposed tensor: positions are row-major over its own shape.
  Tensor y = random_tensor({5, 7}).t();
  const Host hy(y.contiguous());
  const Tensor src = random_tensor({2, 3});
  const Host hs(src);
  Tensor acc = y.clone();
  y.put_(i64(idx, {3, 2}), src);
  acc.put_(i64(idx, {6}), src.flatten(), true);
  std::map<int64_t, double> last;
  std::map<int64_t, double> sums;
  for (int64_t j = 0; j < 6; ++j) {
    const int64_t f = wrap(idx[j], 35);
    last[f] = hs.v[j];
    sums[f] += hs.v[j];
  }
  expect_each(acc, {7, 5}, [&](auto i) {
    const int64_t f = i[0] * 5 + i[1];
    return hy.at(i) + (sums.count(f) ? sums[f] : 0.0);
  });
  // Position 12 is written twice without accumulate: either value may win.
  const Host got(y.contiguous());
  for (int64_t f = 0; f < 35; ++f) {
    const double g = got.at({f / 5, f % 5});
    if (f == 12)
      CHECK((g == hs.v[4] || g == hs.v[5]));
    else
      CHECK(g == (last.count(f) ? last[f] : hy.at({f / 5, f % 5})));
  }
  // tl::put leaves its input alone.
  const Tensor z = tl::put(x, i64({0}), tl::full({1}, 9.0));
  CHECK(z.take(i64({0})).item<float>() == 9.0f);
  CHECK(x.take(i64({0})).item<float>() == static_cast<float>(h.at({0, 0})));
}

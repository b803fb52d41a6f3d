// Semantics of the scatter family (scatter, scatter_add, scatter_reduce, index_add, index_copy,
// index_fill, masked_scatter) against a naive host reference written here: random values, every
// dtype, several dims and shapes, in-place forms on views, torch's include_self and mean rules,
// NaN in amax/amin, integer wrap-around. Runs on every test device.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

std::mt19937_64& rng() {
  static std::mt19937_64 g(1414);
  return g;
}

int64_t ravel(const std::vector<int64_t>& p, const Shape& s) {
  int64_t r = 0;
  for (int64_t d = 0; d < s.size(); ++d) r = r * s[d] + p[d];
  return r;
}

// An index of shape `is` with values in [0, n); with `unique`, no two positions that differ only
// along dim share a value (each such row a prefix of a random permutation; needs is[dim] <= n).
Tensor make_index(const Shape& is, int64_t n, int64_t dim, bool unique) {
  std::vector<int64_t> v(is.numel());
  if (!unique) {
    for (int64_t& x : v) x = static_cast<int64_t>(rng()() % static_cast<uint64_t>(n));
    return tl::from_vector(v, is);
  }
  for (int64_t i = 0; i < is.numel(); ++i) {
    std::vector<int64_t> p = unravel(i, is);
    if (p[dim] != 0) continue;
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng());
    for (int64_t j = 0; j < is[dim]; ++j) {
      p[dim] = j;
      v[ravel(p, is)] = perm[j];
    }
  }
  return tl::from_vector(v, is);
}

enum class Op { Assign, Add, Mul, Max, Min };

// Values of a tensor as int64 (integers, bool) or double (floats), row-major.
struct Vals {
  bool integral = false;
  std::vector<int64_t> i;
  std::vector<double> f;
};
Vals read(const Tensor& t) {
  Vals v;
  v.integral = !tl::is_floating_point(t.dtype());
  if (v.integral)
    v.i = t.cpu().to(tl::kInt64).contiguous().to_vector<int64_t>();
  else
    v.f = t.cpu().to(tl::kFloat64).contiguous().to_vector<double>();
  return v;
}
Tensor write(const Vals& v, const Shape& s, DType d) {
  return v.integral ? tl::from_vector(v.i, s).to(d) : tl::from_vector(v.f, s).to(d);
}

// The reference fold: integers wrap through uint64 (the final cast truncates, as a wrap at the
// dtype's width would), bools as 0/1 (add/max = or, mul/min = and after the cast), NaN wins
// max/min.
int64_t fold(Op op, int64_t a, int64_t v) {
  switch (op) {
    case Op::Assign:
      return v;
    case Op::Add:
      return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(v));
    case Op::Mul:
      return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(v));
    case Op::Max:
      return std::max(a, v);
    case Op::Min:
      return std::min(a, v);
  }
  return 0;
}
double fold(Op op, double a, double v) {
  switch (op) {
    case Op::Assign:
      return v;
    case Op::Add:
      return a + v;
    case Op::Mul:
      return a * v;
    case Op::Max:
      return (a < v || std::isnan(v)) ? v : a;
    case Op::Min:
      return (v < a || std::isnan(v)) ? v : a;
  }
  return 0;
}

// out = self; for each position p of index: out[p with dim = index[p]] op= src[p] (src read at
// p in its own, larger shape), or `value` when src is undefined. include_self = false: the first
// value an element receives replaces it. mean: divided by the count (+1 with self), floor for
// integers.
Tensor reference(Op op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 double value, bool include_self = true, bool mean = false) {
  Vals out = read(self);
  const Vals s = src.defined() ? read(src) : Vals{};
  const std::vector<int64_t> idx = index.cpu().to(tl::kInt64).contiguous().to_vector<int64_t>();
  const Shape shape = self.dim() == 0 ? Shape{1} : self.shape();
  const Shape is = index.dim() == 0 ? Shape{1} : index.shape();
  const Shape ss = !src.defined() ? is : src.dim() == 0 ? Shape{1} : src.shape();
  std::vector<int64_t> count(shape.numel(), 0);
  for (int64_t k = 0; k < is.numel(); ++k) {
    std::vector<int64_t> p = unravel(k, is);
    const int64_t sp = ravel(p, ss);
    p[dim] = idx[k];
    const int64_t t = ravel(p, shape);
    const bool first = !include_self && count[t] == 0;
    if (out.integral) {
      const int64_t v = src.defined() ? s.i[sp] : static_cast<int64_t>(value);
      out.i[t] = first ? v : fold(op, out.i[t], v);
    } else {
      const double v = src.defined() ? s.f[sp] : value;
      out.f[t] = first ? v : fold(op, out.f[t], v);
    }
    ++count[t];
  }
  if (mean) {
    out = read(write(out, self.shape(), self.dtype()));  // the sum wraps before it is divided
    for (int64_t t = 0; t < shape.numel(); ++t) {
      const int64_t n = std::max<int64_t>(1, count[t] + (include_self ? 1 : 0));
      if (out.integral) {
        const int64_t q = out.i[t] / n;
        out.i[t] = (out.i[t] % n != 0 && (out.i[t] < 0)) ? q - 1 : q;
      } else {
        out.f[t] /= static_cast<double>(n);
      }
    }
  }
  return write(out, self.shape(), self.dtype());
}

// Random values: small integers in every dtype (sums exact in float16 too), or random floats.
Tensor values(const Shape& s, DType d, tl::Device dev, bool integral = true) {
  if (d == tl::kBool) return tl::randint(0, 2, s, tl::kBool).to(dev);
  if (!integral && tl::is_floating_point(d)) return (tl::rand(s, d) * 4.0 - 2.0).to(dev);
  Tensor t = tl::randint(-4, 5, s, tl::kInt64);
  t = tl::where(t == 0, tl::full({}, int64_t{3}, tl::kInt64), t);  // never zero
  return t.to(d).to(dev);
}

void check_equal(const Tensor& got, const Tensor& expected, const std::string& what,
                 double rtol = 0) {
  INFO(what);
  REQUIRE(got.shape() == expected.shape());
  REQUIRE(got.dtype() == expected.dtype());
  const Tensor g = got.cpu().to(tl::kFloat64), e = expected.to(tl::kFloat64);
  if (rtol == 0 || !tl::is_floating_point(got.dtype())) {
    const std::vector<double> gv = values_of(g), ev = values_of(e);
    for (size_t k = 0; k < gv.size(); ++k) {
      INFO("element " << k << ": got " << gv[k] << ", expected " << ev[k]);
      CHECK((gv[k] == ev[k] || (std::isnan(gv[k]) && std::isnan(ev[k]))));
    }
    return;
  }
  check_values(g, values_of(e), rtol, 8 * rtol);  // cancellation: ulps of the terms
}

double rtol_of(DType d) {
  if (d == tl::kFloat16) return 2e-3;
  if (d == tl::kBFloat16) return 1.6e-2;
  return d == tl::kFloat32 ? 1e-5 : 1e-12;
}

struct Geometry {
  Shape self, index, src;
  int64_t dim;
};
const std::vector<Geometry> kGeometries{
    {{7}, {5}, {6}, 0},
    {{5, 6}, {3, 6}, {4, 7}, 0},
    {{5, 6}, {5, 4}, {5, 4}, 1},
    {{4, 5, 6}, {3, 2, 6}, {3, 3, 6}, 2},
    {{4, 5, 6}, {4, 3, 2}, {4, 5, 6}, 1},
    {{3, 33, 2}, {2, 30, 2}, {2, 31, 2}, 1},
};

}  // namespace

TEST_CASE("scatter family: scatter and scatter_add against a host reference") {
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64, tl::kInt8, tl::kUInt8,
                    tl::kInt16, tl::kBool, tl::kFloat16, tl::kBFloat16}) {
      for (const Geometry& g : kGeometries) {
        const std::string what = dev.str() + " " + tl::dtype_name(d) + " self " + g.self.str() +
                                 " index " + g.index.str() + " dim " + std::to_string(g.dim);
        const Tensor self = values(g.self, d, dev), src = values(g.src, d, dev);
        const int64_t n = g.self[g.dim];
        const Tensor unique = make_index(g.index, n, g.dim, true).to(dev);
        const Tensor any = make_index(g.index, n, g.dim, false).to(dev);
        check_equal(tl::scatter(self, g.dim, unique, src),
                    reference(Op::Assign, self, g.dim, unique, src, 0), "scatter " + what);
        check_equal(
            self.scatter(g.dim - static_cast<int64_t>(g.self.size()), unique.to(tl::kInt32), src),
            reference(Op::Assign, self, g.dim, unique, src, 0), "scatter int32 " + what);
        check_equal(tl::scatter(self, g.dim, any, tl::Scalar(int64_t{1})),
                    reference(Op::Assign, self, g.dim, any, Tensor(), 1), "scatter value " + what);
        check_equal(tl::scatter_add(self, g.dim, any, src),
                    reference(Op::Add, self, g.dim, any, src, 0), "scatter_add " + what);
        Tensor inplace = self.clone();
        inplace.scatter_add_(g.dim, any, src);
        check_equal(inplace, reference(Op::Add, self, g.dim, any, src, 0), "scatter_add_ " + what);
      }
    }
  }
}

TEST_CASE("scatter family: scatter_reduce, every reduce and include_self") {
  const std::vector<std::pair<std::string, Op>> reduces{
      {"sum", Op::Add}, {"prod", Op::Mul}, {"mean", Op::Add}, {"amax", Op::Max}, {"amin", Op::Min}};
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64, tl::kInt8, tl::kUInt8,
                    tl::kBool, tl::kFloat16, tl::kBFloat16}) {
      for (const Geometry& g : kGeometries) {
        // Random floats, but small integers in float16/bfloat16: their sums then round the
        // same in any order, where random values would drift by ulps of the running sum.
        const Tensor self = values(g.self, d, dev);
        const Tensor src = values(g.src, d, dev, tl::is_reduced_float(d));
        const Tensor index = make_index(g.index, g.self[g.dim], g.dim, false).to(dev);
        for (const auto& [name, op] : reduces) {
          if (name == "mean" && d == tl::kBool) continue;
          for (bool include_self : {true, false}) {
            const std::string what = dev.str() + " " + name + " " + tl::dtype_name(d) + " self " +
                                     g.self.str() + " dim " + std::to_string(g.dim) +
                                     (include_self ? "" : " exclude self");
            const Tensor expected =
                reference(op, self, g.dim, index, src, 0, include_self, name == "mean");
            // A float16/bfloat16 product folds each value in the dtype, rounding each time: with
            // up to index.size(dim) + 1 values per element, (1 + u)^that - 1 of itself, where
            // the reference rounds once (u).
            double rtol = rtol_of(d);
            if (name == "prod" && tl::is_reduced_float(d)) {
              const double u = tl_test::unit_roundoff(d);
              rtol =
                  std::max(rtol, std::pow(1 + u, static_cast<double>(g.index[g.dim] + 1)) - 1 + u);
            }
            check_equal(tl::scatter_reduce(self, g.dim, index, src, name, include_self), expected,
                        what, rtol);
            Tensor inplace = self.clone();
            inplace.scatter_reduce_(g.dim, index, src, name, include_self);
            check_equal(inplace, expected, what + " in place", rtol);
          }
        }
      }
    }
  }
}

TEST_CASE("scatter family: scatter_reduce NaN, wrap-around, floor mean, identities") {
  for (tl::Device dev : test_devices()) {
    const auto on = [&](const Tensor& t) { return t.to(dev); };
    const Tensor idx = on(tl::from_vector<int64_t>({0, 0, 1, 1, 2}, {5}));
    // NaN wins amax and amin from either side, as torch.
    const Tensor self = on(tl::from_vector<float>({NAN, 1, 1}, {3}));
    const Tensor src = on(tl::from_vector<float>({5, -1, NAN, 7, 2}, {5}));
    check_values(tl::scatter_reduce(self, 0, idx, src, "amax"), {NAN, NAN, 2}, 0, 0);
    check_values(tl::scatter_reduce(self, 0, idx, src, "amin"), {NAN, NAN, 1}, 0, 0);
    check_values(tl::scatter_reduce(self, 0, idx, src, "amax", false), {5, NAN, 2}, 0, 0);
    // int8 sums and products wrap.
    const Tensor i8 = on(tl::from_vector<int8_t>({100, 1, 1}, {3}));
    const Tensor s8 = on(tl::from_vector<int8_t>({100, 60, 16, 16, 1}, {5}));
    check_values(tl::scatter_add(i8, 0, idx, s8), {4, 33, 2}, 0, 0);
    check_values(tl::scatter_reduce(i8, 0, idx, s8, "prod"), {-64, 0, 1}, 0, 0);
    // Integer mean is floor division; an element no value reaches keeps its value.
    const Tensor i32 = on(tl::from_vector<int32_t>({-7, 5, 9, 11}, {4}));
    const Tensor s32 = on(tl::from_vector<int32_t>({0, 0, 4, 1, 2}, {5}));
    check_values(tl::scatter_reduce(i32, 0, idx, s32, "mean"), {-3, 3, 5, 11}, 0, 0);
    check_values(tl::scatter_reduce(i32, 0, idx, s32, "mean", false), {0, 2, 2, 11}, 0, 0);
    check_values(tl::scatter_reduce(i32, 0, idx, s32, "amax", false), {0, 4, 2, 11}, 0, 0);
    // float16 mean counts in float16, as torch.
    const Tensor h = on(tl::from_vector<float>({1, 2, 3}, {3}).to(tl::kFloat16));
    const Tensor hs = on(tl::from_vector<float>({2, 4, 6, 8, 10}, {5}).to(tl::kFloat16));
    check_values(tl::scatter_reduce(h, 0, idx, hs, "mean"), {7.0 / 3, 16.0 / 3, 6.5}, 1e-3, 0);
    // An empty index leaves self as it was; the result is a copy.
    const Tensor none = on(tl::zeros({0}, tl::kInt64));
    Tensor copy = tl::scatter(self, 0, none, src);
    check_values(copy, {NAN, 1, 1}, 0, 0);
    CHECK(copy.data_ptr() != self.data_ptr());
    // 0-dim self, index and src.
    const Tensor s0 = on(tl::scalar_tensor(2.0));
    const Tensor i0 = on(tl::scalar_tensor(int64_t{0}, tl::kInt64));
    check_values(tl::scatter_add(s0, 0, i0, on(tl::scalar_tensor(3.0))), {5}, 0, 0);
    CHECK(tl::scatter_add(s0, -1, i0, on(tl::scalar_tensor(3.0))).dim() == 0);
  }
}

TEST_CASE("scatter family: index_add, index_copy, index_fill against a host reference") {
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64, tl::kInt16, tl::kUInt8,
                    tl::kBool, tl::kFloat16, tl::kBFloat16}) {
      const std::vector<std::pair<Shape, int64_t>> cases{
          {{9}, 0}, {{6, 5}, 0}, {{6, 5}, 1}, {{3, 7, 4}, 1}, {{3, 7, 4}, -1}, {{2, 40, 3}, 1}};
      for (const auto& [shape, dim0] : cases) {
        const int64_t dim = dim0 < 0 ? dim0 + shape.size() : dim0;
        const int64_t n = shape[dim], m = std::max<int64_t>(1, n - 2);
        Shape src_shape = shape;
        src_shape[dim] = m;
        const std::string what = dev.str() + " " + tl::dtype_name(d) + " " + shape.str() + " dim " +
                                 std::to_string(dim0);
        const Tensor self = values(shape, d, dev), source = values(src_shape, d, dev);
        const Tensor any = make_index({m}, n, 0, false), unique = make_index({m}, n, 0, true);
        // The 1-D index seen with source's shape: index_* as scatter with that index.
        Shape view = Shape::filled(shape.size(), 1);
        view[dim] = m;
        const auto over = [&](const Tensor& i, const Shape& s) {
          return i.view(view).expand(s).contiguous();
        };
        const tl::Scalar alpha = tl::is_floating_point(d) ? tl::Scalar(0.5)
                                 : d == tl::kBool         ? tl::Scalar(true)
                                                          : tl::Scalar(int64_t{3});
        const Tensor scaled = d == tl::kBool ? source : source * alpha;
        check_equal(tl::index_add(self, dim0, any.to(dev), source),
                    reference(Op::Add, self, dim, over(any, src_shape), source, 0),
                    "index_add " + what);
        check_equal(self.index_add(dim0, any.to(tl::kInt32).to(dev), source, alpha),
                    reference(Op::Add, self, dim, over(any, src_shape), scaled.to(d), 0),
                    "index_add alpha " + what, rtol_of(d));
        check_equal(tl::index_copy(self, dim0, unique.to(dev), source),
                    reference(Op::Assign, self, dim, over(unique, src_shape), source, 0),
                    "index_copy " + what);
        // index_fill counts negative indices from the end.
        const Tensor fill_idx = tl::where(tl::rand({m}) < 0.5, any - n, any);
        Shape fill_shape = shape;
        fill_shape[dim] = m;
        check_equal(tl::index_fill(self, dim0, fill_idx.to(dev), 1),
                    reference(Op::Assign, self, dim, over(any, fill_shape), Tensor(), 1),
                    "index_fill " + what);
        Tensor inplace = self.clone();
        inplace.index_fill_(dim0, fill_idx.to(dev), 1).index_add_(dim0, any.to(dev), source);
        check_equal(
            inplace,
            reference(Op::Add, reference(Op::Assign, self, dim, over(any, fill_shape), Tensor(), 1),
                      dim, over(any, src_shape), source, 0),
            "index_fill_ then index_add_ " + what);
      }
    }
    // 0-dim self and source.
    const Tensor s0 = tl::scalar_tensor(2.0).to(dev);
    const Tensor i0 = tl::scalar_tensor(int64_t{0}, tl::kInt64).to(dev);
    check_values(tl::index_add(s0, 0, i0, tl::scalar_tensor(3.0).to(dev), 2), {8}, 0, 0);
    check_values(tl::index_copy(s0, 0, i0, tl::scalar_tensor(3.0).to(dev)), {3}, 0, 0);
    check_values(tl::index_fill(s0, -1, i0, 7), {7}, 0, 0);
    check_values(tl::index_copy(tl::zeros({3}).to(dev), 0, tl::from_vector<int64_t>({2}).to(dev),
                                tl::scalar_tensor(4.0).to(dev)),
                 {0, 0, 4}, 0, 0);
  }
}

TEST_CASE("scatter family: masked_scatter against a host reference") {
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kInt64, tl::kBool, tl::kFloat16, tl::kInt8}) {
      const std::vector<std::pair<Shape, Shape>> cases{
          {{10}, {10}},     {{4, 9}, {4, 9}}, {{4, 9}, {9}}, {{1, 9}, {5, 9}},
          {{3, 1}, {3, 7}}, {{}, {}},         {{0, 3}, {3}}};
      for (const auto& [self_shape, mask_shape] : cases) {
        const std::string what =
            dev.str() + " " + tl::dtype_name(d) + " " + self_shape.str() + " " + mask_shape.str();
        const Tensor self = values(self_shape, d, dev);
        const Tensor mask = (tl::rand(mask_shape) < 0.6).to(dev);
        const Shape shape = (tl::zeros(self_shape) + tl::zeros(mask_shape)).shape();
        const Tensor source = values({shape.numel() + 3}, d, dev);
        // Reference: the broadcast self, with true elements taking source's values in order.
        const std::vector<double> sv = values_of(self.expand(shape)),
                                  mv = values_of(mask.expand(shape)), src = values_of(source);
        std::vector<double> expected = sv;
        for (size_t k = 0, next = 0; k < expected.size(); ++k)
          if (mv[k] != 0) expected[k] = src[next++];
        const Tensor got = tl::masked_scatter(self, mask, source);
        INFO(what);
        CHECK(got.shape() == shape);
        CHECK(got.dtype() == d);
        check_values(got, expected, 0, 0);
        if (shape == self_shape) {
          Tensor inplace = self.clone();
          inplace.masked_scatter_(mask, source.view({1, -1}));
          check_values(inplace, expected, 0, 0);
        }
      }
    }
  }
}

TEST_CASE("scatter family: in-place forms write only the view's elements") {
  for (tl::Device dev : test_devices()) {
    // A transposed column slice of a larger tensor: the rest must keep its values.
    Tensor base = tl::arange(60, tl::TensorOptions(tl::kFloat32)).view({6, 10}).to(dev);
    Tensor view = base.slice(1, 2, 8, 2).t();  // [3, 6], strides (2, 10)
    const Tensor before = base.clone();
    const Tensor index = make_index({3, 6}, 3, 0, true).to(dev);
    const Tensor src = values({3, 6}, tl::kFloat32, dev);
    const Tensor expected_view = reference(Op::Assign, view.contiguous(), 0, index, src, 0);
    view.scatter_(0, index, src);
    check_equal(view.contiguous(), expected_view, "scatter_ into a strided view");
    Tensor rest = base.clone();
    rest.slice(1, 2, 8, 2).fill_(0);
    Tensor rest_before = before.clone();
    rest_before.slice(1, 2, 8, 2).fill_(0);
    check_equal(rest, rest_before, "elements outside the view");
    // Self as its own source: the values read are those before the op.
    Tensor x = tl::arange(5, tl::TensorOptions(tl::kInt64)).to(dev);
    const Tensor rev = tl::from_vector<int64_t>({4, 3, 2, 1, 0}).to(dev);
    x.scatter_(0, rev, x);
    check_values(x, {4, 3, 2, 1, 0}, 0, 0);
    Tensor y = tl::arange(5, tl::TensorOptions(tl::kInt64)).to(dev);
    y.index_add_(0, y, y);  // index and source alias self
    check_values(y, {0, 2, 4, 6, 8}, 0, 0);
  }
}

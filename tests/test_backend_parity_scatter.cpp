// Backend parity of the scatter family (scatter, scatter_add, scatter_reduce, index_add,
// index_copy, index_fill, masked_scatter): every dtype, self in every layout, expanded (stride 0)
// and int32 indices, zero-size and odd shapes, NaN, in-place forms into poisoned views, and a
// large case where many device threads hit each element. Values are small integers where the
// device's order of atomic updates differs from the CPU's, so sums match exactly; unique indices
// where one value must win.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

// An index of shape `is` with values in [0, n); unique: no two positions differing only along dim
// share a value (each row a prefix of a random permutation, is[dim] <= n).
Tensor index_for(const Shape& is, int64_t n, int64_t dim, bool unique) {
  if (!unique) return tl::randint(0, n, is);
  Shape wide = is;
  wide[dim] = n;
  return tl::argsort(tl::rand(wide), dim).slice(dim, 0, is[dim]).contiguous();
}

// Sums of these small integers are exact in every floating dtype; a mean divides once. A product
// folds each value in the dtype, rounding each time in float16/bfloat16, in any order on a device,
// so with at most `folds` values per element it errs by up to (1 + u)^folds - 1 of itself, on
// each side (the float32 reference rounds once): past one ulp once a few values meet.
Tol reduce_tol(const std::string& reduce, DType d, int64_t folds) {
  if (!tl::is_floating_point(d) || reduce == "sum" || reduce == "amax" || reduce == "amin")
    return kExact;
  if (reduce == "prod" && is_half(d)) {
    const double f = std::pow(1 + unit_roundoff(d), static_cast<double>(folds)) - 1;
    return widen_for(Tol{2 * f, 1e-6}, d);
  }
  return widen_for(Tol{1e-6, 1e-6}, d);
}

struct Geometry {
  Shape self, index, src;
  int64_t dim;
};
const std::vector<Geometry> kGeometries{
    {{7}, {5}, {6}, 0},
    {{37}, {37}, {40}, -1},
    {{5, 6}, {3, 6}, {4, 7}, 0},
    {{5, 6}, {5, 4}, {5, 4}, 1},
    {{5, 7, 3}, {4, 7, 2}, {5, 7, 3}, 1},
    {{4, 5, 6}, {3, 2, 6}, {3, 3, 6}, -1},
    {{0, 3}, {0, 3}, {0, 3}, 0},
    {{4, 0}, {4, 0}, {4, 0}, 1},
    {{4, 3}, {0, 3}, {2, 3}, 0},
    {{}, {}, {}, 0},
};

const std::vector<std::string> kReduces{"sum", "prod", "mean", "amax", "amin"};

}  // namespace

TL_PARITY_CASE("backend parity: scatter, scatter_add and scatter_reduce") {
  for (DType d : all_dtypes()) {
    for (const Geometry& g : kGeometries) {
      const int64_t dim = g.self.size() == 0 ? 0 : (g.dim + g.self.size()) % g.self.size();
      const Shape is = g.index.size() == 0 ? Shape{1} : g.index;
      const int64_t n = g.self.size() == 0 ? 1 : g.self[dim];
      if (n == 0 && is.numel() > 0) continue;
      Tensor unique = index_for(is, std::max<int64_t>(n, 1), dim, true).view(g.index);
      Tensor any = index_for(is, std::max<int64_t>(n, 1), dim, false).view(g.index);
      const Tensor src = make_values(g.src, d, Fill::Integral);
      for (const Variant& v : variants(g.self, d, Fill::Integral)) {
        const std::string where = describe("", d, g.self, v.name) + " dim " + std::to_string(g.dim);
        check_op(dev, "tl::scatter" + where, {v.t, unique, src},
                 [&](std::vector<Tensor>& in) { return tl::scatter(in[0], g.dim, in[1], in[2]); });
        check_op(dev, "tl::scatter int32 index" + where, {v.t, unique.to(tl::kInt32), src},
                 [&](std::vector<Tensor>& in) { return in[0].scatter(g.dim, in[1], in[2]); });
        check_op(dev, "tl::scatter value" + where, {v.t, any}, [&](std::vector<Tensor>& in) {
          return tl::scatter(in[0], g.dim, in[1], tl::Scalar(int64_t{1}));
        });
        check_op(dev, "tl::scatter_add" + where, {v.t, any, src}, [&](std::vector<Tensor>& in) {
          return tl::scatter_add(in[0], g.dim, in[1], in[2]);
        });
        for (const std::string& reduce : kReduces) {
          for (bool include_self : {true, false}) {
            check_op(
                dev, "tl::scatter_reduce " + reduce + (include_self ? "" : " exclude self") + where,
                {v.t, any, src},
                [&](std::vector<Tensor>& in) {
                  return tl::scatter_reduce(in[0], g.dim, in[1], in[2], reduce, include_self);
                },
                reduce_tol(reduce, d, is[dim] + 1));
          }
        }
      }
      // Source and index in other layouts: a transposed src, an index broadcast along dim 0.
      if (g.self.size() == 2 && g.index[0] > 0 && dim == 1) {
        const Tensor src_t = make_values({g.src[1], g.src[0]}, d, Fill::Integral).t();
        const Tensor row = index_for({1, g.index[1]}, n, 1, true).expand(g.index);
        const Tensor self = make_values(g.self, d, Fill::Integral);
        const std::string where = describe(" expanded index, transposed src", d, g.self, "");
        check_op(dev, "tl::scatter" + where, {self, row, src_t},
                 [&](std::vector<Tensor>& in) { return tl::scatter(in[0], 1, in[1], in[2]); });
        check_op(dev, "tl::scatter_add" + where, {self, row, src_t},
                 [&](std::vector<Tensor>& in) { return tl::scatter_add(in[0], 1, in[1], in[2]); });
      }
    }
  }
}

TL_PARITY_CASE("backend parity: scatter_reduce with NaN, infinities and integer extremes") {
  for (DType d : all_dtypes()) {
    if (d == tl::kBool) continue;
    const Tensor specials = tl::is_floating_point(d) ? float_specials(d) : int_specials(d);
    const int64_t m = specials.numel();
    const Tensor index = tl::randint(0, 5, {m});
    const Tensor self = make_values({5}, d, Fill::Integral);
    for (const std::string& reduce : kReduces) {
      // Float sums and products of overflow edges depend on the order (max + max - max): only
      // the extrema are order-free there. Integer folds wrap, in any order alike.
      if (tl::is_floating_point(d) && reduce != "amax" && reduce != "amin") continue;
      for (bool include_self : {true, false}) {
        check_op(
            dev, describe("tl::scatter_reduce specials " + reduce, d, {m}, ""),
            {self, index, specials},
            [&](std::vector<Tensor>& in) {
              return tl::scatter_reduce(in[0], 0, in[1], in[2], reduce, include_self);
            },
            widen_for(Tol{1e-6, 1e-6}, d));
      }
    }
  }
}

TL_PARITY_CASE("backend parity: index_add, index_copy and index_fill") {
  const std::vector<std::pair<Shape, int64_t>> cases{
      {{9}, 0}, {{6, 5}, 0}, {{6, 5}, 1}, {{3, 7, 4}, 1}, {{3, 7, 4}, -1}, {{4, 0}, 0}, {{}, 0}};
  for (DType d : all_dtypes()) {
    for (const auto& [shape, dim0] : cases) {
      const int64_t dim = shape.size() == 0 ? 0 : (dim0 + shape.size()) % shape.size();
      const int64_t n = shape.size() == 0 ? 1 : shape[dim];
      const int64_t m = std::max<int64_t>(1, n - 2);
      Shape src_shape = shape;
      if (shape.size() > 0) src_shape[dim] = m;
      const Shape is = shape.size() == 0 ? Shape{} : Shape{m};
      const Tensor source = make_values(src_shape, d, Fill::Integral);
      const Tensor any = index_for({m}, n, 0, false).view(is);
      const Tensor unique = index_for({m}, n, 0, true).view(is);
      const Tensor negative = any - n;
      const tl::Scalar alpha = tl::is_floating_point(d) ? tl::Scalar(0.5)
                               : d == tl::kBool         ? tl::Scalar(true)
                                                        : tl::Scalar(int64_t{3});
      for (const Variant& v : variants(shape, d, Fill::Integral)) {
        const std::string where = describe("", d, shape, v.name) + " dim " + std::to_string(dim0);
        check_op(dev, "tl::index_add" + where, {v.t, any, source},
                 [&](std::vector<Tensor>& in) { return tl::index_add(in[0], dim0, in[1], in[2]); });
        check_op(
            dev, "tl::index_add alpha int32 index" + where, {v.t, any.to(tl::kInt32), source},
            [&](std::vector<Tensor>& in) { return in[0].index_add(dim0, in[1], in[2], alpha); },
            widen_for(Tol{1e-6, 1e-6}, d));
        check_op(
            dev, "tl::index_copy" + where, {v.t, unique, source},
            [&](std::vector<Tensor>& in) { return tl::index_copy(in[0], dim0, in[1], in[2]); });
        check_op(dev, "tl::index_fill negative" + where, {v.t, negative},
                 [&](std::vector<Tensor>& in) { return tl::index_fill(in[0], dim0, in[1], 1); });
      }
    }
  }
}

TL_PARITY_CASE("backend parity: masked_scatter") {
  const std::vector<std::pair<Shape, Shape>> cases{
      {{33}, {33}},      {{4, 9}, {4, 9}}, {{4, 9}, {9}}, {{1, 9}, {5, 9}},
      {{3, 1}, {3, 70}}, {{}, {}},         {{0, 3}, {3}}, {{5, 7, 3}, {7, 1}}};
  for (DType d : all_dtypes()) {
    for (const auto& [self_shape, mask_shape] : cases) {
      const Tensor mask = make_values(mask_shape, tl::kBool);
      const Tensor source = make_values({2 * (Shape(self_shape).numel() + 1) * 70}, d);
      for (const Variant& v : variants(self_shape, d)) {
        check_op(dev,
                 describe("tl::masked_scatter", d, self_shape, v.name) + " mask " + str(mask_shape),
                 {v.t, mask, source},
                 [&](std::vector<Tensor>& in) { return tl::masked_scatter(in[0], in[1], in[2]); });
      }
    }
    // Too few source elements: the same error on every device.
    check_op(dev, describe("tl::masked_scatter short source", d, {9}, ""),
             {make_values({9}, d), tl::ones({9}, tl::kBool), make_values({8}, d)},
             [&](std::vector<Tensor>& in) { return tl::masked_scatter(in[0], in[1], in[2]); });
  }
}

TL_PARITY_CASE("backend parity: in-place scatter family into poisoned views") {
  const Shape shape{7, 12};
  for (DType d : all_dtypes()) {
    for (const std::string& layout : kViewLayouts) {
      Tensor target = poisoned_view(shape, d, layout);
      target.copy_(make_values(shape, d, Fill::Integral));
      const Tensor index = index_for({5, 12}, 7, 0, false);
      const Tensor unique = index_for({5, 12}, 7, 0, true);
      const Tensor src = make_values({6, 12}, d, Fill::Integral);
      const Tensor rows = index_for({5}, 7, 0, false);
      const Tensor mask = make_values({12}, tl::kBool);
      const std::string where = describe("", d, shape, layout);
      using InPlace = std::function<void(std::vector<Tensor>&)>;
      const std::vector<std::pair<std::string, InPlace>> ops{
          {"scatter_", [&](std::vector<Tensor>& in) { in[0].scatter_(0, in[2], in[3]); }},
          {"scatter_ value", [&](std::vector<Tensor>& in) { in[0].scatter_(0, in[2], 1); }},
          {"scatter_add_", [&](std::vector<Tensor>& in) { in[0].scatter_add_(0, in[1], in[3]); }},
          {"scatter_reduce_ amax",
           [&](std::vector<Tensor>& in) { in[0].scatter_reduce_(0, in[1], in[3], "amax", false); }},
          {"index_add_",
           [&](std::vector<Tensor>& in) { in[0].index_add_(0, in[4], in[3].slice(0, 0, 5)); }},
          {"index_copy_",
           [&](std::vector<Tensor>& in) {
             in[0].index_copy_(1, in[6], in[3].slice(0, 0, 1).expand({7, 12}));
           }},
          {"index_fill_", [&](std::vector<Tensor>& in) { in[0].index_fill_(1, in[4], 1); }},
          {"masked_scatter_",
           [&](std::vector<Tensor>& in) { in[0].masked_scatter_(in[5], in[3]); }},
      };
      const Tensor columns = index_for({12}, 12, 0, true);
      for (const auto& [name, fn] : ops) {
        check_op(dev, name + where, {target, index, unique, src, rows, mask, columns},
                 [fn = fn](std::vector<Tensor>& in) {
                   fn(in);
                   return whole_storage(in[0]);
                 });
      }
    }
  }
}

TL_PARITY_CASE("backend parity: scatter_add and index_add of 16M values into 1M bins (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  const int64_t n = int64_t{1} << 24, bins = int64_t{1} << 20;
  const Tensor index = tl::randint(0, bins, {n});
  for (DType d : {tl::kFloat32, tl::kInt64, tl::kFloat16}) {
    const Tensor src = make_values({n}, d, Fill::Integral);
    const Tensor self = make_values({bins}, d, Fill::Integral);
    const Tol tol = d == tl::kFloat16 ? Tol{1e-2, 1} : kExact;
    check_op(
        dev, describe("tl::scatter_add", d, {n}, "1M bins"), {self, index, src},
        [](std::vector<Tensor>& in) { return tl::scatter_add(in[0], 0, in[1], in[2]); }, tol);
    check_op(
        dev, describe("tl::index_add", d, {n}, "1M bins"), {self, index, src},
        [](std::vector<Tensor>& in) { return tl::index_add(in[0], 0, in[1], in[2]); }, tol);
    check_op(
        dev, describe("tl::scatter_reduce amax", d, {n}, "1M bins"), {self, index, src},
        [](std::vector<Tensor>& in) { return tl::scatter_reduce(in[0], 0, in[1], in[2], "amax"); });
  }
  // Everything into a few bins: the compare-and-swap loops under heavy contention (sums of
  // integers exact in float64, extrema exact in any type).
  const Tensor few = tl::randint(0, 3, {n / 16});
  const std::vector<std::pair<DType, std::vector<std::string>>> contended{
      {tl::kInt8, {"sum", "prod", "amin"}},
      {tl::kFloat64, {"sum", "amin"}},
      {tl::kBFloat16, {"amax", "amin"}},
      {tl::kInt16, {"amax", "mean"}}};
  for (const auto& [d, reduces] : contended) {
    const Tensor src = make_values({n / 16}, d, Fill::Integral);
    for (const std::string& reduce : reduces) {
      check_op(dev, describe("tl::scatter_reduce contended " + reduce, d, {n / 16}, ""),
               {make_values({3}, d, Fill::Integral), few, src}, [&](std::vector<Tensor>& in) {
                 return tl::scatter_reduce(in[0], 0, in[1], in[2], reduce);
               });
    }
  }
}

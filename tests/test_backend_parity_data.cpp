// Backend parity of the data ops: copies and casts of every dtype pair, fill, factories, where,
// clamp, indexing, joining and whole-tensor comparisons, each on the CPU and each device under
// test.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

}  // namespace

// ---- copies and casts ----

TL_PARITY_CASE("backend parity: to(dtype), clone and contiguous for every dtype pair and layout") {
  const std::vector<Shape> shapes{{}, {1}, {7}, {1025}, {7, 33}, {0, 3}, {3, 4, 5}};
  for (DType from : all_dtypes()) {
    for (const Shape& shape : shapes) {
      for (const Variant& v : variants(shape, from)) {
        const std::string what = describe("", from, shape, v.name);
        for (DType to : all_dtypes())
          check_op(dev, what + " to " + tl::dtype_name(to), {v.t},
                   [to](std::vector<Tensor>& in) { return in[0].to(to); });
        check_op(dev, what + " clone", {v.t},
                 [](std::vector<Tensor>& in) { return in[0].clone(); });
        check_op(dev, what + " contiguous", {v.t},
                 [](std::vector<Tensor>& in) { return in[0].contiguous(); });
      }
    }
  }
}

TL_PARITY_CASE(
    "backend parity: copy_ into poisoned strided views converts and writes only the view") {
  const std::vector<Shape> shapes{{}, {1}, {7}, {1025}, {7, 33}, {0, 3}};
  for (DType from : all_dtypes()) {
    for (DType to : all_dtypes()) {
      for (const Shape& shape : shapes) {
        std::vector<Variant> sources = variants(shape, from);
        for (size_t k = 0; k < kViewLayouts.size(); ++k) {
          const Variant& src = sources[k % sources.size()];
          Tensor dst = poisoned_view(shape, to, kViewLayouts[k]);
          check_op(dev,
                   describe("copy_", from, shape, src.name) + " into " + tl::dtype_name(to) + " " +
                       kViewLayouts[k],
                   {dst, src.t}, [](std::vector<Tensor>& in) {
                     in[0].copy_(in[1]);
                     return whole_storage(in[0]);
                   });
        }
      }
      // A broadcast source: one row copied into every row of a view.
      Tensor dst = poisoned_view({4, 33}, to, "sliced");
      check_op(dev,
               std::string("copy_ broadcast row ") + tl::dtype_name(from) + " into " +
                   tl::dtype_name(to),
               {dst, make_values({33}, from)}, [](std::vector<Tensor>& in) {
                 in[0].copy_(in[1]);
                 return whole_storage(in[0]);
               });
    }
  }
}

TL_PARITY_CASE("backend parity: large copies and casts (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  const std::vector<std::pair<DType, DType>> pairs{
      {tl::kFloat32, tl::kFloat32},  {tl::kFloat32, tl::kFloat64}, {tl::kFloat64, tl::kFloat32},
      {tl::kInt32, tl::kFloat32},    {tl::kFloat32, tl::kInt64},   {tl::kBool, tl::kFloat32},
      {tl::kInt64, tl::kBool},       {tl::kFloat16, tl::kFloat32}, {tl::kFloat32, tl::kBFloat16},
      {tl::kBFloat16, tl::kFloat16}, {tl::kUInt8, tl::kFloat16},   {tl::kInt8, tl::kInt64},
      {tl::kFloat32, tl::kInt16},    {tl::kFloat16, tl::kUInt8}};
  for (auto [from, to] : pairs) {
    for (const Variant& v : variants({kBig}, from)) {
      check_op(dev, describe("to", from, {kBig}, v.name) + " -> " + tl::dtype_name(to), {v.t},
               [to = to](std::vector<Tensor>& in) { return in[0].to(to).contiguous(); });
    }
    Tensor dst = poisoned_view({kBig}, to, "offset");
    check_op(dev, describe("copy_ into offset view", from, {kBig}, "contiguous"),
             {dst, make_values({kBig}, from)}, [](std::vector<Tensor>& in) {
               in[0].copy_(in[1]);
               return whole_storage(in[0]);
             });
  }
  // A big transposed (column-major) matrix made contiguous.
  for (const Variant& v : variants({1000, 1049}, tl::kFloat32))
    check_op(dev, describe("contiguous", tl::kFloat32, {1000, 1049}, v.name), {v.t},
             [](std::vector<Tensor>& in) { return in[0].contiguous(); });
}

// ---- fill and factories ----

TL_PARITY_CASE("backend parity: fill_ of every dtype into every view layout") {
  const std::vector<Shape> shapes{{}, {1}, {7}, {1025}, {7, 33}, {0, 3}, {kBig}};
  for (DType d : all_dtypes()) {
    std::vector<Scalar> values{Scalar(true), Scalar(false)};
    if (d != tl::kBool) values = {Scalar(0), Scalar(-3), Scalar(7)};
    if (tl::is_floating_point(d)) values = {Scalar(2.5), Scalar(-0.0), Scalar(1e30), Scalar(-4)};
    for (const Shape& shape : shapes) {
      for (const std::string& layout : kViewLayouts) {
        if (shape.numel() == kBig && (layout == "transposed" || dev.is_cpu())) continue;
        for (Scalar value : values) {
          check_op(dev, describe("fill_", d, shape, layout), {poisoned_view(shape, d, layout)},
                   [value](std::vector<Tensor>& in) {
                     in[0].fill_(value);
                     return whole_storage(in[0]);
                   });
        }
      }
    }
  }
}

TL_PARITY_CASE("backend parity: factories on the device give the CPU's values") {
  for (DType d : all_dtypes()) {
    const std::string name = tl::dtype_name(d);
    auto opts = [d](tl::Device device) { return tl::TensorOptions(d).device(device); };
    check_made(dev, "zeros " + name, [&](tl::Device x) { return tl::zeros({7, 33}, opts(x)); });
    check_made(dev, "ones " + name, [&](tl::Device x) { return tl::ones({1025}, opts(x)); });
    check_made(dev, "full " + name, [&](tl::Device x) { return tl::full({3, 5}, 1, opts(x)); });
    check_made(dev, "scalar_tensor " + name,
               [&](tl::Device x) { return tl::scalar_tensor(true, opts(x)); });
    check_made(dev, "eye " + name, [&](tl::Device x) { return tl::eye(5, 7, opts(x)); });
    check_made(dev, "zeros 0-size " + name, [&](tl::Device x) {
      return tl::zeros({0, 4}, opts(x));
    });
    if (d != tl::kBool) {
      check_made(dev, "arange " + name,
                 [&](tl::Device x) { return tl::arange(-5, 1020, 1, opts(x)); });
      check_made(
          dev, "linspace " + name, [&](tl::Device x) { return tl::linspace(-3, 40, 33, opts(x)); },
          is_half(d) ? math_tol(d) : kExact);  // a half rounds a float step
    }
    Tensor like = make_values({4, 6}, d);
    check_op(dev, "ones_like " + name, {like.t()},
             [](std::vector<Tensor>& in) { return tl::ones_like(in[0]); });
    check_op(dev, "full_like " + name, {like},
             [](std::vector<Tensor>& in) { return tl::full_like(in[0], 1); });
    check_op(dev, "empty_like shape " + name, {like.t()},
             [](std::vector<Tensor>& in) { return tl::zeros_like(tl::empty_like(in[0])); });
  }
  check_made(dev, "arange float", [](tl::Device x) { return tl::arange(0.5, 7.25, 0.25, x); });
  check_made(dev, "full float64 large", [](tl::Device x) {
    return tl::full({kBig}, 0.1, tl::TensorOptions(tl::kFloat64).device(x));
  });
}

// ---- where and clamp ----

TL_PARITY_CASE("backend parity: where on every dtype, layout, broadcast and scalar form") {
  struct Shapes {
    Shape c, a, b;
  };
  const std::vector<Shapes> cases{{{5, 7}, {5, 7}, {5, 7}}, {{5, 1}, {1, 7}, {}},
                                  {{0, 3}, {3}, {1}},       {{}, {}, {}},
                                  {{1025}, {1025}, {1025}}, {{3, 1, 5}, {4, 1}, {5}}};
  auto where3 = [](std::vector<Tensor>& in) { return tl::where(in[0], in[1], in[2]); };
  for (DType d : all_dtypes()) {
    for (const Shapes& s : cases) {
      std::vector<Variant> vc = variants(s.c, tl::kBool), va = variants(s.a, d),
                           vb = variants(s.b, d);
      const std::string what =
          std::string("where ") + tl::dtype_name(d) + " " + str(s.c) + str(s.a) + str(s.b);
      for (const Variant& c : vc)
        check_op(dev, what + " cond " + c.name, {c.t, va[0].t, vb[0].t}, where3);
      for (size_t k = 1; k < va.size(); ++k)
        check_op(dev, what + " a " + va[k].name, {vc[0].t, va[k].t, vb[0].t}, where3);
      for (size_t k = 1; k < vb.size(); ++k)
        check_op(dev, what + " b " + vb[k].name, {vc[0].t, va[0].t, vb[k].t}, where3);
    }
    Tensor c = make_values({7, 33}, tl::kBool), a = variants({7, 33}, d)[2].t;
    const std::string name = tl::dtype_name(d);
    check_op(dev, "where scalar b " + name, {c, a},
             [](std::vector<Tensor>& in) { return tl::where(in[0], in[1], 2.5); });
    check_op(dev, "where scalar a " + name, {c, a},
             [](std::vector<Tensor>& in) { return tl::where(in[0], 7, in[1]); });
    check_op(dev, "where mixed " + name, {c, a, make_values({33}, tl::kInt32)}, where3);
  }
  Tensor c = make_values({7, 33}, tl::kBool);
  check_op(dev, "where two scalars", {c},
           [](std::vector<Tensor>& in) { return tl::where(in[0], 1, 0); });
  check_op(dev, "where two float scalars", {c},
           [](std::vector<Tensor>& in) { return tl::where(in[0], 1.5, -2); });
  check_op(dev, "where large",
           {make_values({kBig}, tl::kBool), make_values({kBig}, tl::kFloat32),
            make_values({kBig}, tl::kFloat32)},
           where3);
  check_op(dev, "where non-bool cond",
           {make_values({5}, tl::kInt32), make_values({5}, tl::kFloat32),
            make_values({5}, tl::kFloat32)},
           where3);
}

TL_PARITY_CASE("backend parity: clamp with scalar and tensor bounds") {
  for (DType d : all_dtypes()) {
    for (const Variant& v : variants({7, 33}, d)) {
      const std::string what = describe("clamp", d, {7, 33}, v.name);
      check_op(dev, what + " [-1, 1]", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], -1, 1); });
      check_op(dev, what + " [0.5, 1.5]", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], 0.5, 1.5); });
      check_op(dev, what + " min only", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], 0, std::nullopt); });
      check_op(dev, what + " min > max", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], 3, 1); });
      check_op(dev, what + " tensor bounds", {v.t, make_values({33}, d), make_values({7, 1}, d)},
               [](std::vector<Tensor>& in) {
                 return tl::clamp(in[0], std::optional<Tensor>(in[1]),
                                  std::optional<Tensor>(in[2]));
               });
    }
  }
  for (DType d : dtypes_of(tl::kFloatingDTypes))
    check_op(dev, std::string("clamp specials ") + tl::dtype_name(d), {float_specials(d)},
             [](std::vector<Tensor>& in) { return tl::clamp(in[0], -1.0, 2.0); });
}

// ---- indexing ----

TL_PARITY_CASE("backend parity: nonzero and nonzero_tuple of every dtype and layout") {
  const std::vector<Shape> shapes{{3, 4, 5}, {1025}, {}, {0, 3}, {7, 1, 13}, {1, 1}};
  auto nz = [](std::vector<Tensor>& in) { return tl::nonzero(in[0]); };
  for (DType d : all_dtypes()) {
    for (const Shape& shape : shapes) {
      for (const Variant& v : variants(shape, d, Fill::Sparse)) {
        check_op(dev, describe("nonzero", d, shape, v.name), {v.t}, nz);
        if (shape.size() > 0)
          check_op(dev, describe("nonzero_tuple", d, shape, v.name), {v.t},
                   [](std::vector<Tensor>& in) { return tl::stack(tl::nonzero_tuple(in[0]), 0); });
      }
    }
    check_op(dev, std::string("nonzero all zero ") + tl::dtype_name(d), {tl::zeros({5, 7}, d)}, nz);
    check_op(dev, std::string("nonzero none zero ") + tl::dtype_name(d), {tl::ones({5, 7}, d)}, nz);
  }
}

TL_PARITY_CASE("backend parity: masked_select with broadcast masks and inputs") {
  const std::vector<std::pair<Shape, Shape>> cases{
      {{3, 4, 5}, {3, 4, 5}}, {{3, 1, 5}, {4, 1}}, {{5}, {3, 4, 5}}, {{3, 4, 5}, {}},
      {{}, {2, 3}},           {{0, 3}, {3}},       {{1025}, {1025}}};
  auto ms = [](std::vector<Tensor>& in) { return tl::masked_select(in[0], in[1]); };
  for (DType d : all_dtypes()) {
    for (const auto& [sa, sm] : cases) {
      std::vector<Variant> va = variants(sa, d), vm = variants(sm, tl::kBool);
      for (const Variant& a : va)
        check_op(dev, describe("masked_select", d, sa, a.name) + " mask " + str(sm), {a.t, vm[0].t},
                 ms);
      for (size_t k = 1; k < vm.size(); ++k)
        check_op(
            dev,
            describe("masked_select", d, sa, "contiguous") + " mask " + str(sm) + " " + vm[k].name,
            {va[0].t, vm[k].t}, ms);
    }
  }
}

TL_PARITY_CASE(
    "backend parity: index_select on every dim with int32, int64, strided and empty indices") {
  auto is = [](int64_t dim) {
    return [dim](std::vector<Tensor>& in) { return tl::index_select(in[0], dim, in[1]); };
  };
  for (DType d : all_dtypes()) {
    for (const Variant& v : variants({5, 6, 7}, d)) {
      for (int64_t dim : {0, 1, 2, -1}) {
        const int64_t size = v.t.shape()[dim < 0 ? dim + 3 : dim];
        Tensor idx = tl::randint(0, size, {9});
        std::vector<std::pair<std::string, Tensor>> indices{
            {"int64", idx},
            {"int32", idx.to(tl::kInt32)},
            {"strided", tl::randint(0, size, {18}).slice(0, 0, std::nullopt, 2)},
            {"empty", tl::empty({0}, tl::kInt64)},
            {"0-dim", tl::scalar_tensor(size - 1, tl::kInt64)}};
        for (const auto& [name, index] : indices)
          check_op(dev,
                   describe("index_select", d, {5, 6, 7}, v.name) + " dim " + std::to_string(dim) +
                       " index " + name,
                   {v.t, index}, is(dim));
      }
    }
    check_op(dev, std::string("index_select 0-dim input ") + tl::dtype_name(d),
             {make_values({}, d), tl::zeros({1}, tl::kInt64)}, is(0));
  }
}

TL_PARITY_CASE("backend parity: gather on every dim with strided and smaller indices") {
  const Shape in_shape{4, 5, 6};
  for (DType d : all_dtypes()) {
    for (const Variant& v : variants(in_shape, d)) {
      for (int64_t dim : {0, 1, 2, -1}) {
        const int64_t k = dim < 0 ? dim + 3 : dim;
        for (Shape ishape : {Shape{4, 5, 6}, Shape{3, 2, 9}, Shape{1, 5, 1}, Shape{2, 0, 3}}) {
          for (int64_t j = 0; j < 3; ++j)
            if (j != k) ishape[j] = std::min(ishape[j], in_shape[j]);
          // In-range positions along dim, in each index layout.
          for (const Layout& index : layouts_of(tl::randint(0, in_shape[k], ishape))) {
            check_op(dev,
                     describe("gather", d, in_shape, v.name) + " dim " + std::to_string(dim) +
                         " index " + str(ishape) + " " + index.name,
                     {v.t, index.tensor},
                     [dim](std::vector<Tensor>& in) { return tl::gather(in[0], dim, in[1]); });
          }
        }
      }
    }
    check_op(dev, std::string("gather 0-dim ") + tl::dtype_name(d),
             {make_values({}, d), tl::zeros({}, tl::kInt64)},
             [](std::vector<Tensor>& in) { return tl::gather(in[0], 0, in[1]); });
  }
}

TL_PARITY_CASE("backend parity: indexing of large inputs (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  for (DType d : {tl::kFloat32, tl::kBool, tl::kBFloat16, tl::kUInt8}) {
    Tensor sparse = make_values({1000, 1001}, d, Fill::Sparse);
    check_op(dev, std::string("nonzero large ") + tl::dtype_name(d), {sparse},
             [](std::vector<Tensor>& in) { return tl::nonzero(in[0]); });
    check_op(dev, std::string("nonzero large transposed ") + tl::dtype_name(d), {sparse.t()},
             [](std::vector<Tensor>& in) { return tl::nonzero(in[0]); });
    check_op(dev, std::string("masked_select large ") + tl::dtype_name(d),
             {make_values({kBig}, d), make_values({kBig}, tl::kBool)},
             [](std::vector<Tensor>& in) { return tl::masked_select(in[0], in[1]); });
  }
  // The classic: a comparison's mask, then its nonzero.
  check_op(dev, "nonzero of (x > 0.5)", {tl::rand({100, 100, 100})},
           [](std::vector<Tensor>& in) { return tl::nonzero(in[0] > 0.5); });
  Tensor big = make_values({1000, 203}, tl::kFloat32);
  check_op(dev, "index_select rows", {big, tl::randint(0, 1000, {301})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 0, in[1]); });
  check_op(dev, "index_select columns of a transposed input",
           {big.t(), tl::randint(0, 1000, {450})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 1, in[1]); });
  // More indices than a grid's y or z dimension holds.
  check_op(dev, "index_select 200000 indices",
           {make_values({5000}, tl::kInt32), tl::randint(0, 5000, {200000})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 0, in[1]); });
  check_op(dev, "index_select 70001 rows of 3",
           {make_values({70001, 3}, tl::kInt64), tl::randint(0, 70001, {70001})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 0, in[1]); });
  check_op(dev, "gather large",
           {make_values({400, 301}, tl::kFloat64), tl::randint(0, 301, {400, 500})},
           [](std::vector<Tensor>& in) { return tl::gather(in[0], 1, in[1]); });
}

// ---- joining ----

namespace {

// n inputs of `shape` with the size along dim varying (0 included), in mixed layouts.
std::vector<Tensor> join_inputs(int n, const Shape& shape, int64_t dim, DType d) {
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    Shape s = shape;
    if (dim >= 0) s[dim] = i % 4;  // 0, 1, 2, 3, ...
    std::vector<Variant> vs = variants(s, d);
    out.push_back(vs[static_cast<size_t>(i) % vs.size()].t);
  }
  return out;
}

Fn cat_along(int64_t dim) {
  return [dim](std::vector<Tensor>& in) { return tl::cat(in, dim); };
}

}  // namespace

TL_PARITY_CASE("backend parity: cat of many strided and empty inputs along every dim") {
  for (DType d : all_dtypes()) {
    for (int64_t dim : {0, 1, 2, -1}) {
      const int64_t k = dim < 0 ? dim + 3 : dim;
      for (int n : {1, 2, 7, 100}) {
        check_op(dev,
                 std::string("cat ") + std::to_string(n) + " inputs " + tl::dtype_name(d) +
                     " dim " + std::to_string(dim),
                 join_inputs(n, {3, 5, 4}, k, d), cat_along(dim));
      }
    }
    // Legacy: 1-D [0] inputs are skipped whatever the others' ndim.
    check_op(
        dev, std::string("cat with [0] inputs ") + tl::dtype_name(d),
        {tl::empty({0}, d), make_values({2, 3}, d), tl::empty({0}, d), variants({4, 3}, d)[3].t},
        cat_along(0));
    check_op(dev, std::string("cat all empty ") + tl::dtype_name(d),
             {tl::empty({0, 3}, d), tl::empty({0, 3}, d)}, cat_along(1));
  }
  // Mixed dtypes promote.
  check_op(dev, "cat mixed dtypes",
           {make_values({2, 3}, tl::kInt32), make_values({1, 3}, tl::kFloat64).t().t(),
            make_values({3, 2}, tl::kBool).t(), make_values({4, 3}, tl::kInt64)},
           cat_along(0));
  check_op(dev, "cat bool and int",
           {make_values({2, 3}, tl::kBool), make_values({2, 3}, tl::kInt32)}, cat_along(1));
}

TL_PARITY_CASE("backend parity: stack, vstack, hstack and dstack of many inputs") {
  for (DType d : all_dtypes()) {
    const std::string name = tl::dtype_name(d);
    std::vector<Tensor> mats = join_inputs(100, {5, 7}, -1, d);
    for (int64_t dim : {0, 1, 2, -1})
      check_op(dev, "stack 100 " + name + " dim " + std::to_string(dim), mats,
               [dim](std::vector<Tensor>& in) { return tl::stack(in, dim); });
    check_op(dev, "dstack 100 " + name, mats,
             [](std::vector<Tensor>& in) { return tl::dstack(in); });
    check_op(dev, "vstack 100 " + name, mats,
             [](std::vector<Tensor>& in) { return tl::vstack(in); });
    check_op(dev, "hstack 100 " + name, mats,
             [](std::vector<Tensor>& in) { return tl::hstack(in); });
    std::vector<Tensor> vecs = join_inputs(50, {9}, -1, d);
    check_op(dev, "hstack 1-D " + name, vecs,
             [](std::vector<Tensor>& in) { return tl::hstack(in); });
    check_op(dev, "vstack 1-D " + name, vecs,
             [](std::vector<Tensor>& in) { return tl::vstack(in); });
    check_op(dev, "dstack 1-D " + name, vecs,
             [](std::vector<Tensor>& in) { return tl::dstack(in); });
    check_op(dev, "stack 0-dim " + name, join_inputs(33, {}, -1, d),
             [](std::vector<Tensor>& in) { return tl::stack(in); });
    check_op(dev, "stack 0-size " + name, {tl::empty({0, 3}, d), tl::empty({0, 3}, d)},
             [](std::vector<Tensor>& in) { return tl::stack(in, 1); });
  }
}

TL_PARITY_CASE("backend parity: joining large inputs (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  check_op(dev, "cat large along 0",
           {make_values({300, 1049}, tl::kFloat32), variants({500, 1049}, tl::kFloat32)[2].t,
            variants({211, 1049}, tl::kFloat32)[3].t},
           cat_along(0));
  check_op(dev, "cat large along 1",
           {make_values({1000, 257}, tl::kFloat64), variants({1000, 3}, tl::kFloat64)[3].t,
            variants({1000, 300}, tl::kFloat64)[1].t},
           cat_along(1));
  // More rows than a grid's y or z dimension holds.
  check_op(dev, "cat 70001 rows along 1",
           {make_values({70001, 1}, tl::kInt32), make_values({70001, 2}, tl::kInt32)},
           cat_along(1));
  check_op(dev, "stack 3000 small", join_inputs(3000, {3}, -1, tl::kFloat32),
           [](std::vector<Tensor>& in) { return tl::stack(in); });
}

// ---- past 32-bit indexing ----

TL_PARITY_CASE("backend parity: more than 2^31 elements are indexed with 64 bits (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  // Bool tensors of 2 GiB each: the CPU answers are known without computing them there.
  const int64_t n = (int64_t{1} << 31) + 7;
  const tl::TensorOptions bools = tl::TensorOptions(tl::kBool).device(dev);
  Tensor x = tl::zeros({n}, bools);
  x.slice(0, n - 3, n - 2).fill_(true);
  // argmax/argmin refuse bool (as torch): take them over an int32 copy (8 GiB, still past 2^31).
  CHECK(tl::argmax(x.to(tl::kInt32)).item<int64_t>() == n - 3);
  CHECK(tl::sum(x).item<int64_t>() == 1);
  CHECK(tl::any(x).item<bool>());
  CHECK(values_of(tl::nonzero(x)) == std::vector<double>{static_cast<double>(n - 3)});
  CHECK(tl::masked_select(tl::ones({n}, tl::TensorOptions(tl::kBool).device(dev)), x).numel() == 1);
  Tensor y = tl::logical_not(x);
  CHECK(y[n - 3].item<bool>() == false);
  CHECK(y[n - 1].item<bool>() == true);
  CHECK(tl::argmin(y.to(tl::kInt32)).item<int64_t>() == n - 3);
  CHECK(tl::all(tl::logical_or(x, y)).item<bool>());
  x.fill_(true);
  CHECK(tl::sum(x).item<int64_t>() == n);
  CHECK(tl::all(x).item<bool>());
  Tensor tail = x.slice(0, n - 5).to(tl::kInt32);
  CHECK(values_of(tail) == std::vector<double>(5, 1));
}

// ---- whole-tensor comparisons (answered on the device for CUDA tensors) ----

TL_PARITY_CASE("backend parity: equal and allclose give the CPU's answers") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor base = random_tensor({7, 33}, tl::kFloat64);
  Tensor near = base + 1e-9, far = base + 1e-3;
  Tensor specials = tl::from_vector<double>({nan, inf, -inf, 0.0, -0.0, 1.0});
  Tensor specials_other = tl::from_vector<double>({nan, inf, -inf, -0.0, 0.0, 1.0 + 1e-12});
  struct Pair {
    const char* what;
    Tensor a, b;
  };
  const std::vector<Pair> pairs{
      {"same", base, base.clone()},
      {"near", base, near},
      {"far", base, far},
      {"float32 vs float64", base.to(tl::kFloat32), base.to(tl::kFloat32).to(tl::kFloat64)},
      {"int vs float", random_tensor({5, 4}, tl::kInt64), tl::zeros({5, 4})},
      {"int32 vs int64", tl::arange(0, 20, 1, tl::kInt32), tl::arange(0, 20, 1, tl::kInt64)},
      {"bool", random_tensor({9}, tl::kBool), random_tensor({9}, tl::kBool)},
      {"specials", specials, specials_other},
      {"transposed", base.t(), base.t().contiguous()},
      {"broadcast", base, base.slice(0, 0, 1)},
      {"shapes differ", base, base.reshape({33, 7})},
      {"empty", tl::zeros({0, 3}), tl::zeros({0, 3})},
      {"float16 near", base.to(tl::kFloat16), near.to(tl::kFloat16)},
      {"float16 far", base.to(tl::kFloat16), (base + 0.01).to(tl::kFloat16)},
      {"bfloat16", base.to(tl::kBFloat16), far.to(tl::kBFloat16)},
      {"bfloat16 specials", specials.to(tl::kBFloat16), specials_other.to(tl::kBFloat16)},
      {"uint8", random_tensor({5, 4}, tl::kInt64).to(tl::kUInt8), tl::ones({5, 4}, tl::kUInt8)},
      {"int8 vs int16", random_tensor({9}, tl::kInt8), random_tensor({9}, tl::kInt16)},
  };
  for (const Pair& p : pairs) {
    INFO(p.what);
    Tensor da = same_layout_on(p.a, dev), db = same_layout_on(p.b, dev);
    CHECK(tl::equal(da, db) == tl::equal(p.a, p.b));
    if (std::string(p.what) == "shapes differ") {  // not broadcastable either
      CHECK_THROWS_AS(tl::allclose(da, db), tl::ShapeError);
      continue;
    }
    if (p.a.dtype() != p.b.dtype()) {  // as torch: allclose refuses mixed dtypes on both devices
      CHECK_THROWS_AS(tl::allclose(da, db), tl::DTypeError);
      CHECK_THROWS_AS(tl::allclose(p.a, p.b), tl::DTypeError);
      continue;
    }
    for (bool equal_nan : {false, true})
      for (double rtol : {0.0, 1e-5})
        for (double atol : {0.0, 1e-8, 1e-2})
          CHECK(tl::allclose(da, db, rtol, atol, equal_nan) ==
                tl::allclose(p.a, p.b, rtol, atol, equal_nan));
  }
}

TL_PARITY_CASE(
    "backend parity: special floats convert to integers and bool bytes other than 0/1 read as on "
    "the "
    "CPU") {
  const int64_t n = 1024;
  std::vector<float> f(n);
  const float specials[] = {NAN, INFINITY, -INFINITY, 3e9f, -3e9f, 1e20f, 2147483647.5f, -0.0f};
  for (int64_t i = 0; i < n; ++i)
    f[i] = i % 3 == 0 ? specials[(i / 3) % 8] : (i % 3 == 1 ? i * 0.7f : -i * 1.3f);
  const Tensor x = tl::from_vector<float>(f);
  const Tensor xd = x.to(dev);
  auto layouts = [](const Tensor& t) {
    return std::vector<Tensor>{t,
                               t.slice(0, 1, t.numel(), 3),
                               t.view({32, 32}).t(),
                               t.to(tl::kFloat64),
                               t.to(tl::kFloat16),
                               t.to(tl::kBFloat16)};
  };
  const std::vector<Tensor> on_cpu = layouts(x), on_dev = layouts(xd);
  for (size_t k = 0; k < on_cpu.size(); ++k) {
    CAPTURE(k);
    CHECK(on_dev[k].to(tl::kInt32).to_vector<int32_t>() ==
          on_cpu[k].to(tl::kInt32).to_vector<int32_t>());
    CHECK(on_dev[k].to(tl::kInt64).to_vector<int64_t>() ==
          on_cpu[k].to(tl::kInt64).to_vector<int64_t>());
    CHECK(on_dev[k].to(tl::kBool).to_vector<bool>() == on_cpu[k].to(tl::kBool).to_vector<bool>());
    for (DType narrow : {tl::kInt16, tl::kInt8, tl::kUInt8}) {
      CAPTURE(tl::dtype_name(narrow));
      CHECK(on_dev[k].to(narrow).to(tl::kInt64).to_vector<int64_t>() ==
            on_cpu[k].to(narrow).to(tl::kInt64).to_vector<int64_t>());
    }
  }
  CHECK(xd.to(tl::kInt32)[0].item<int32_t>() == std::numeric_limits<int32_t>::min());

  // Bytes 0..255 in a bool tensor, copied to the device as they are.
  Tensor m = tl::empty({n}, tl::kBool);
  auto* raw = static_cast<unsigned char*>(m.data_ptr());
  for (int64_t i = 0; i < n; ++i) raw[i] = static_cast<unsigned char>((i * 37) % 256);
  const Tensor md = m.to(dev);
  for (const auto& [mc, mg] :
       {std::pair{m, md}, std::pair{m.slice(0, 0, n, 2), md.slice(0, 0, n, 2)},
        std::pair{m.view({32, 32}).t(), md.view({32, 32}).t()}}) {
    CHECK(tl::logical_not(mg).to_vector<bool>() == tl::logical_not(mc).to_vector<bool>());
    CHECK(tl::logical_and(mg, mg).to_vector<bool>() == tl::logical_and(mc, mc).to_vector<bool>());
    const Tensor yes_c = tl::ones(mc.shape(), tl::kBool), yes_g = yes_c.to(dev);
    CHECK((mg == yes_g).to_vector<bool>() == (mc == yes_c).to_vector<bool>());
    CHECK(mg.to(tl::kInt32).to_vector<int32_t>() == mc.to(tl::kInt32).to_vector<int32_t>());
    CHECK(tl::sum(mg).item<int64_t>() == tl::sum(mc).item<int64_t>());
    CHECK(tl::all(mg).item<bool>() == tl::all(mc).item<bool>());
    CHECK(tl::min(mg).item<bool>() == tl::min(mc).item<bool>());
    CHECK(tl::nonzero(mg).to_vector<int64_t>() == tl::nonzero(mc).to_vector<int64_t>());
    const Tensor values = tl::arange(mc.numel(), tl::kInt64).view(mc.shape());
    CHECK(tl::masked_select(values.to(dev), mg).to_vector<int64_t>() ==
          tl::masked_select(values, mc).to_vector<int64_t>());
    CHECK(tl::where(mg, values.to(dev), -1).to_vector<int64_t>() ==
          tl::where(mc, values, -1).to_vector<int64_t>());
  }
}

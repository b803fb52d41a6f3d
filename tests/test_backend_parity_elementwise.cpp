// Backend parity of every row of the unary and binary op lists x every dtype (of its row or not:
// errors must agree too), layouts, broadcasts, promotions, specials and in-place forms.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"
#include "tensorlet/backends/math/binary_ops.h"
#include "tensorlet/backends/math/unary_ops.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

// ---- op tables, generated from the library's op lists ----

// Every row of TL_UNARY_OPS: a new op is covered here without an edit, on the dtypes its row names.
struct UnaryOpCase {
  const char* name;
  tl::DTypeSet dtypes;
  Tensor (*fn)(const Tensor&);
};
#define TL_PARITY_UNARY(e, name, rule, dtypes, Fn)                          \
  {tl::unary_op_name(tl::UnaryOp::e), tl::supported_dtypes(tl::UnaryOp::e), \
   [](const Tensor& a) { return tl::name(a); }},
const std::vector<UnaryOpCase> kUnaryOps{TL_UNARY_OPS(TL_PARITY_UNARY)};
#undef TL_PARITY_UNARY

// Every row of TL_BINARY_OPS, in its tensor-tensor, tensor-scalar and scalar-tensor forms.
struct BinaryOpCase {
  const char* name;
  tl::DTypeSet dtypes;
  Tensor (*tt)(const Tensor&, const Tensor&);
  Tensor (*ts)(const Tensor&, Scalar);
  Tensor (*st)(Scalar, const Tensor&);
};
// An integer divisor of fmod / remainder / floor_divide with its zeros made ones, so that the ops
// compute (a zero raises ZeroDivisionError on every device: test_elementwise_semantics.cpp).
Tensor divisor(tl::BinaryOp op, const Tensor& b) {
  const bool division =
      op == tl::BinaryOp::Fmod || op == tl::BinaryOp::Remainder || op == tl::BinaryOp::FloorDivide;
  if (!division || tl::is_floating_point(b.dtype())) return b;
  if (b.dtype() == tl::kBool) return tl::logical_or(b, true);
  return tl::where(b == 0, Scalar(1), b).to(b.dtype());
}
#define TL_PARITY_BINARY(e, name, rule, dtypes, Fn)                                           \
  {tl::binary_op_name(tl::BinaryOp::e), tl::supported_dtypes(tl::BinaryOp::e),                \
   [](const Tensor& a, const Tensor& b) { return tl::name(a, divisor(tl::BinaryOp::e, b)); }, \
   [](const Tensor& a, Scalar b) { return tl::name(a, b); },                                  \
   [](Scalar a, const Tensor& b) { return tl::name(a, divisor(tl::BinaryOp::e, b)); }},
const std::vector<BinaryOpCase> kBinaryOps{TL_BINARY_OPS(TL_PARITY_BINARY)};
#undef TL_PARITY_BINARY

const BinaryOpCase& binary_op(const std::string& name) {
  for (const BinaryOpCase& c : kBinaryOps)
    if (name == c.name) return c;
  FAIL("no binary op " << name);
  return kBinaryOps[0];
}

// Math results get a float tolerance; arithmetic that is exact in IEEE (+, -, *, /, max, min,
// comparisons) still gets it, since an int -> float promotion may round in another place.
Tol binary_tol(const BinaryOpCase&, DType d) {
  return tl::is_floating_point(d) ? math_tol(d) : math_tol(tl::kFloat32);
}

// An op on a dtype of its row gives a result on both sides; on any other dtype both throw.
void check_supported(bool ran, tl::DTypeSet dtypes, DType d) {
  CHECK_MESSAGE(ran == dtypes.contains(d),
                (ran ? "ran on a dtype outside its row" : "failed on a dtype of its row"));
}

}  // namespace

// ---- unary ----

TL_PARITY_CASE("backend parity: every unary op on every dtype, layout and odd size") {
  const std::vector<Shape> shapes{{}, {1}, {7}, {33}, {1025}, {5, 7}, {0, 4}, {3, 4, 5}};
  for (DType d : all_dtypes()) {
    for (const Shape& shape : shapes) {
      for (const Variant& v : variants(shape, d)) {
        for (const UnaryOpCase& op : kUnaryOps) {
          const bool ran = check_op(
              dev, describe(op.name, d, shape, v.name), {v.t},
              [&op](std::vector<Tensor>& in) { return op.fn(in[0]); },
              math_tol(tl::is_floating_point(d) ? d : tl::kFloat32));
          check_supported(ran, op.dtypes, d);
        }
      }
    }
  }
}

TL_PARITY_CASE(
    "backend parity: unary ops on NaN, infinities, zeros, denormals and integer extremes") {
  for (DType d : dtypes_of(tl::kFloatingDTypes))
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          dev, std::string(op.name) + " specials " + tl::dtype_name(d), {float_specials(d)},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(d));
  for (DType d : dtypes_of(tl::kIntegralDTypes))
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          dev, std::string(op.name) + " extremes " + tl::dtype_name(d), {int_specials(d)},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(tl::kFloat32));
}

TL_PARITY_CASE("backend parity: unary ops on large inputs (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  for (const Variant& v : variants({kBig}, tl::kFloat32))
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          dev, describe(op.name, tl::kFloat32, {kBig}, v.name), {v.t},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(tl::kFloat32));
  Tensor d = make_values({kBig}, tl::kFloat64);
  check_op(
      dev, "cos float64 large", {d}, [](std::vector<Tensor>& in) { return tl::cos(in[0]); },
      math_tol(tl::kFloat64));
  check_op(dev, "neg int64 large", {make_values({kBig}, tl::kInt64)},
           [](std::vector<Tensor>& in) { return tl::neg(in[0]); });
  check_op(dev, "logical_not bool large", {make_values({kBig}, tl::kBool)},
           [](std::vector<Tensor>& in) { return tl::logical_not(in[0]); });
  for (DType h : {tl::kFloat16, tl::kBFloat16})
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          dev, describe(op.name, h, {kBig}, "contiguous"), {make_values({kBig}, h)},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(h));
  check_op(dev, "abs int8 large", {make_values({kBig}, tl::kInt8)},
           [](std::vector<Tensor>& in) { return tl::abs(in[0]); });
}

// ---- binary ----

namespace {

// Runs op on each layout of a with b contiguous, and on a contiguous with each layout of b.
bool check_binary_layouts(tl::Device dev, const BinaryOpCase& op, DType d, const Shape& sa,
                          const Shape& sb, Fill fill = Fill::Random) {
  bool ran = true;
  std::vector<Variant> va = variants(sa, d, fill), vb = variants(sb, d, fill);
  const Tol tol = binary_tol(op, d);
  auto fn = [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); };
  for (const Variant& a : va)
    ran = check_op(dev, describe(op.name, d, sa, a.name) + " with " + str(sb) + " contiguous",
                   {a.t, vb[0].t}, fn, tol) &&
          ran;
  for (size_t k = 1; k < vb.size(); ++k)
    ran = check_op(dev,
                   describe(op.name, d, sa, "contiguous") + " with " + str(sb) + " " + vb[k].name,
                   {va[0].t, vb[k].t}, fn, tol) &&
          ran;
  return ran;
}

}  // namespace

TL_PARITY_CASE("backend parity: every binary op on every dtype, layout and broadcast") {
  const std::vector<std::pair<Shape, Shape>> pairs{
      {{1025}, {1025}}, {{7, 33}, {33}}, {{5, 1}, {1, 6}}, {{}, {9}},          {{9}, {}},
      {{}, {}},         {{0, 3}, {3}},   {{1}, {7}},       {{3, 4, 5}, {4, 1}}};
  for (const BinaryOpCase& op : kBinaryOps)
    for (DType d : all_dtypes())
      for (const auto& [sa, sb] : pairs)
        check_supported(check_binary_layouts(dev, op, d, sa, sb), op.dtypes, d);
}

TL_PARITY_CASE("backend parity: binary ops promote mixed dtypes and scalars as on the CPU") {
  const std::vector<std::pair<DType, DType>> mixed{
      {tl::kInt32, tl::kFloat64},   {tl::kBool, tl::kInt64},       {tl::kInt64, tl::kFloat32},
      {tl::kFloat32, tl::kFloat64}, {tl::kBool, tl::kFloat32},     {tl::kInt32, tl::kInt64},
      {tl::kUInt8, tl::kInt8},      {tl::kInt8, tl::kFloat16},     {tl::kFloat16, tl::kBFloat16},
      {tl::kBFloat16, tl::kInt64},  {tl::kUInt8, tl::kBool},       {tl::kInt16, tl::kFloat16},
      {tl::kFloat16, tl::kFloat32}, {tl::kBFloat16, tl::kFloat64}, {tl::kUInt8, tl::kInt16}};
  const std::vector<Scalar> scalars{Scalar(2), Scalar(-3), Scalar(2.5), Scalar(-0.5), Scalar(true)};
  for (const BinaryOpCase& op : kBinaryOps) {
    for (auto [da, db] : mixed) {
      Tensor a = variants({7, 33}, da)[2].t, b = make_values({33}, db);
      check_op(
          dev, std::string(op.name) + " " + tl::dtype_name(da) + " with " + tl::dtype_name(db),
          {a, b}, [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); },
          math_tol(tl::kFloat32));
      // A 0-dim tensor of another dtype ranks below a dimensioned one.
      check_op(
          dev,
          std::string(op.name) + " " + tl::dtype_name(da) + " with 0-dim " + tl::dtype_name(db),
          {a, make_values({}, db)}, [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); },
          math_tol(tl::kFloat32));
    }
    for (DType d : all_dtypes()) {
      for (const Shape& shape : {Shape{7, 33}, Shape{}}) {
        Tensor a = variants(shape, d).back().t;
        for (Scalar s : scalars) {
          const std::string what = describe(op.name, d, shape, "scalar");
          check_op(
              dev, what + " right", {a},
              [&op, s](std::vector<Tensor>& in) { return op.ts(in[0], s); },
              math_tol(tl::kFloat32));
          check_op(
              dev, what + " left", {a},
              [&op, s](std::vector<Tensor>& in) { return op.st(s, in[0]); },
              math_tol(tl::kFloat32));
        }
      }
    }
  }
}

TL_PARITY_CASE("backend parity: binary ops on NaN, infinities, zeros and integer extremes") {
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    Tensor a = float_specials(d);
    // Every special against several others: b is a rotated, a reversed copy.
    for (int64_t shift : {1, 3, 7}) {
      Tensor b = tl::cat({a.slice(0, shift), a.slice(0, 0, shift)});
      for (const BinaryOpCase& op : kBinaryOps)
        check_op(
            dev,
            std::string(op.name) + " specials shift " + std::to_string(shift) + " " +
                tl::dtype_name(d),
            {a, b}, [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); }, math_tol(d));
    }
  }
  for (DType d : dtypes_of(tl::kIntegralDTypes)) {
    Tensor a = int_specials(d);
    Tensor b = tl::cat({a.slice(0, 2), a.slice(0, 0, 2)});
    for (const BinaryOpCase& op : kBinaryOps) {
      if (std::string(op.name) == "tl::pow") continue;  // extremes to extreme powers: UB on CPU
      check_op(
          dev, std::string(op.name) + " extremes " + tl::dtype_name(d), {a, b},
          [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); }, math_tol(tl::kFloat32));
    }
    // Integer powers, negative exponents included (PyTorch's rules: 1, -1, else 0).
    Tensor base = tl::randint(-4, 5, {200}).to(d), e = tl::randint(-3, 12, {200}).to(d);
    check_op(dev, std::string("tl::pow ints ") + tl::dtype_name(d), {base, e},
             [](std::vector<Tensor>& in) { return tl::pow(in[0], in[1]); });
  }
}

TL_PARITY_CASE("backend parity: in-place ops write into views, broadcast the other and cast back") {
  using InPlace = Tensor& (*)(Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, InPlace>> ops{
      {"add_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.add_(o); }},
      {"sub_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.sub_(o); }},
      {"mul_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.mul_(o); }},
      {"div_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.div_(o); }},
  };
  const std::vector<Shape> others{{7, 33}, {33}, {7, 1}, {}};
  for (auto [name, fn] : ops) {
    for (DType self : all_dtypes()) {
      for (DType other : {self, tl::kInt64, tl::kFloat64}) {
        for (const std::string& layout : kViewLayouts) {
          Tensor target = poisoned_view({7, 33}, self, layout);
          // Random values in the view (the sentinel stays around it).
          target.copy_(make_values({7, 33}, self));
          for (const Shape& so : others) {
            check_op(
                dev,
                describe(name, self, {7, 33}, layout) + " other " + tl::dtype_name(other) + " " +
                    str(so),
                {target, make_values(so, other)},
                [fn = fn](std::vector<Tensor>& in) {
                  fn(in[0], in[1]);
                  return whole_storage(in[0]);
                },
                math_tol(tl::kFloat32));
          }
          check_op(
              dev, describe(name, self, {7, 33}, layout) + " scalar 3", {target},
              [fn = fn](std::vector<Tensor>& in) {
                fn(in[0],
                   tl::scalar_tensor(3, tl::TensorOptions(tl::kInt64).device(in[0].device())));
                return whole_storage(in[0]);
              },
              math_tol(tl::kFloat32));
        }
      }
    }
  }
  // Self overlapping the other: rows 1.. += rows ..-1 (reads must see the old values), x += x.t().
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    check_op(dev, std::string("overlapping add_ ") + tl::dtype_name(d), {make_values({9, 33}, d)},
             [](std::vector<Tensor>& in) {
               Tensor x = in[0];
               x.slice(0, 1).add_(x.slice(0, 0, 8));
               return whole_storage(x);
             });
    check_op(dev, std::string("add_ own transpose ") + tl::dtype_name(d),
             {make_values({17, 17}, d)}, [](std::vector<Tensor>& in) {
               Tensor x = in[0];
               x.add_(x.t());
               return whole_storage(x);
             });
    check_op(dev, std::string("mul_ by own row ") + tl::dtype_name(d), {make_values({5, 33}, d)},
             [](std::vector<Tensor>& in) {
               Tensor x = in[0];
               x.mul_(x[0]);
               return whole_storage(x);
             });
  }
}

TL_PARITY_CASE("backend parity: binary ops on large inputs (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  for (const char* name : {"tl::add", "tl::mul", "tl::gt", "tl::maximum", "tl::div"}) {
    const BinaryOpCase* op = &binary_op(name);
    check_binary_layouts(dev, *op, tl::kFloat32, {kBig}, {kBig});
    check_binary_layouts(dev, *op, tl::kFloat32, {1000, 1049}, {1049});
    check_binary_layouts(dev, *op, tl::kFloat32, {kBig}, {});
  }
  check_binary_layouts(dev, binary_op("tl::add"), tl::kInt64, {kBig}, {kBig});
  check_binary_layouts(dev, binary_op("tl::mul"), tl::kFloat64, {kBig}, {kBig});
  check_binary_layouts(dev, binary_op("tl::logical_and"), tl::kBool, {kBig}, {kBig});
  // The half types at full size, against the CPU and the float32 reference.
  check_binary_layouts(dev, binary_op("tl::mul"), tl::kFloat16, {kBig}, {kBig});
  check_binary_layouts(dev, binary_op("tl::div"), tl::kBFloat16, {kBig}, {kBig});
  check_binary_layouts(dev, binary_op("tl::add"), tl::kUInt8, {kBig}, {kBig});
  // More rows than a grid's y or z dimension can hold.
  check_binary_layouts(dev, binary_op("tl::add"), tl::kFloat32, {70001, 3}, {70001, 1});
}

TL_PARITY_CASE("backend parity: add and sub with alpha on every dtype, layout and broadcast") {
  for (DType d : all_dtypes()) {
    const Scalar alpha = d == tl::kBool             ? Scalar(true)
                         : tl::is_floating_point(d) ? Scalar(-0.37)
                                                    : Scalar(3);
    for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
             {{1025}, {1025}}, {{7, 33}, {33}}, {{5, 1}, {1, 6}}, {{0, 3}, {3}}}) {
      for (const Variant& a : variants(sa, d)) {
        Tensor b = make_values(sb, d);
        check_op(
            dev, describe("add alpha", d, sa, a.name) + " with " + str(sb), {a.t, b},
            [alpha](std::vector<Tensor>& in) { return tl::add(in[0], in[1], alpha); },
            math_tol(tl::is_floating_point(d) ? d : tl::kFloat32));
        if (d == tl::kBool) continue;
        check_op(
            dev, describe("sub_ alpha", d, sa, a.name) + " with " + str(sb), {a.t.clone(), b},
            [alpha](std::vector<Tensor>& in) { return in[0].sub_(in[1], alpha); },
            math_tol(tl::is_floating_point(d) ? d : tl::kFloat32));
      }
    }
  }
}

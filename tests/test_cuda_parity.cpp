// Backend parity: every op family runs on the CPU and on cuda:0 from the same inputs (the same
// values in the same memory layout) and the results must agree: exactly for integers, bools,
// copies, selections and integer-valued floats; within a float tolerance where the math library
// or the order of a sum may differ. Errors must agree too (same type on both). Skipped without a
// CUDA device.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

const tl::Device kCuda = tl::Device::cuda(0);
const std::vector<DType> kAllDtypes{tl::kBool, tl::kInt32, tl::kInt64, tl::kFloat32, tl::kFloat64};
const std::vector<DType> kNumeric{tl::kInt32, tl::kInt64, tl::kFloat32, tl::kFloat64};
const std::vector<DType> kFloats{tl::kFloat32, tl::kFloat64};
constexpr int64_t kBig = (int64_t{1} << 20) + 3;  // not a multiple of any vector width

// ---- comparing ----

// |got - expected| <= atol + rtol |expected|, applied to floating results only; integer and bool
// results are always compared exactly.
struct Tol {
  double rtol = 0, atol = 0;
};
constexpr Tol kExact{0, 0};

// CUDA's float math functions are within 1-4 ulp, glibc's within 1: a few ulp of either dtype.
Tol math_tol(DType d) { return d == tl::kFloat32 ? Tol{1e-5, 1e-6} : Tol{1e-12, 1e-12}; }

// Sums of n float values in another order: rounding grows with n (float32 may accumulate in
// float32 on the device while the CPU accumulates in double).
Tol sum_tol(DType d, int64_t n) {
  const double k = static_cast<double>(n);
  return d == tl::kFloat32 ? Tol{1e-5, 1e-5 + 2e-7 * k} : Tol{1e-12, 1e-12 * (1 + k)};
}

std::string str(const Shape& s) { return s.str(); }

// Checks a device result against the CPU's: device, dtype, shape and every value (NaN equal to
// NaN, int64 compared as int64 so values beyond 2^53 stay exact). Reports the first mismatch.
void check_same(const Tensor& expected, const Tensor& got, Tol tol) {
  REQUIRE(got.defined());
  CHECK(got.device() == kCuda);
  CHECK(got.dtype() == expected.dtype());
  CHECK(got.shape() == expected.shape());
  if (got.shape() != expected.shape() || got.dtype() != expected.dtype()) return;
  if (!tl::is_floating_point(expected.dtype())) tol = kExact;
  const int64_t n = expected.numel();
  int64_t bad = 0, first = -1;
  double first_got = 0, first_expected = 0;
  if (expected.dtype() == tl::kInt64) {
    std::vector<int64_t> e = expected.to_vector<int64_t>(), g = got.to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (e[i] == g[i]) continue;
      if (bad++ == 0) first = i, first_got = double(g[i]), first_expected = double(e[i]);
    }
  } else {
    std::vector<double> e = values_of(expected), g = values_of(got);
    for (int64_t i = 0; i < n; ++i) {
      const bool ok = (std::isnan(e[i]) && std::isnan(g[i])) || e[i] == g[i] ||
                      std::abs(g[i] - e[i]) <= tol.atol + tol.rtol * std::abs(e[i]);
      if (ok) continue;
      if (bad++ == 0) first = i, first_got = g[i], first_expected = e[i];
    }
  }
  if (bad > 0) {
    std::vector<int64_t> at = unravel(first, expected.shape());
    FAIL_CHECK(bad << " of " << n << " elements differ (rtol " << tol.rtol << ", atol " << tol.atol
                   << "); first at " << Shape(at) << ": cuda " << first_got << ", cpu "
                   << first_expected);
  }
}

using Fn = std::function<Tensor(std::vector<Tensor>&)>;

struct Outcome {
  Tensor result;
  std::optional<std::type_index> error;
  std::string message;
};

Outcome run(const Fn& fn, std::vector<Tensor>& inputs) {
  Outcome o;
  try {
    o.result = fn(inputs);
  } catch (const tl::Error& e) {
    o.error = std::type_index(typeid(e));
    o.message = e.what();
  }
  return o;
}

// Runs fn on the CPU inputs and on their same-layout cuda:0 twins and compares the results, or
// checks that both threw the same error type. An in-place fn returns whole_storage of what it
// wrote, so writes outside the view and unwritten elements both show.
void check_op(const std::string& what, const std::vector<Tensor>& inputs, const Fn& fn,
              Tol tol = kExact) {
  INFO(what);
  std::vector<Tensor> host = inputs, device;
  for (const Tensor& t : inputs) device.push_back(t.defined() ? same_layout_on(t, kCuda) : t);
  Outcome cpu = run(fn, host);
  Outcome cuda = run(fn, device);
  if (cpu.error || cuda.error) {
    INFO("cpu: " << (cpu.error ? cpu.message : "no error"));
    INFO("cuda: " << (cuda.error ? cuda.message : "no error"));
    CHECK((cpu.error && cuda.error && *cpu.error == *cuda.error));
    return;
  }
  check_same(cpu.result, cuda.result, tol);
}

// Runs a factory-like fn for each device and compares.
void check_made(const std::string& what, const std::function<Tensor(tl::Device)>& fn,
                Tol tol = kExact) {
  INFO(what);
  Tensor expected = fn(tl::Device::cpu());
  Tensor got = fn(kCuda);
  check_same(expected, got, tol);
}

// ---- inputs ----

// Random values (floats in [-2, 2), ints in [-9, 10), bools), integer values in [-9, 10) in any
// dtype (their sums and products are exact in any order), or random values with about a third
// of them zero (for nonzero and masks).
enum class Fill { Random, Integral, Sparse };

Tensor make_values(const Shape& s, DType d, Fill f = Fill::Random) {
  switch (f) {
    case Fill::Random:
      return random_tensor(s, d);
    case Fill::Integral:
      return d == tl::kBool ? random_tensor(s, d) : tl::randint(-9, 10, s).to(d);
    case Fill::Sparse: {
      Tensor keep = tl::randint(0, 3, s) != 0;
      return tl::where(keep, random_tensor(s, d), tl::zeros({}, d));
    }
  }
  return {};
}

// One shape in the memory layouts kernels must handle: contiguous; offset (contiguous, one
// element past an aligned address); sliced (every other element of the last dim, from 1);
// transposed (last two dims swapped in memory); expanded (dim 0 broadcast, stride 0); permuted
// (all dims reversed in memory). The values differ per layout; the CPU twin has the same ones.
struct Variant {
  std::string name;
  Tensor t;
};

std::vector<Variant> variants(const Shape& s, DType d, Fill f = Fill::Random) {
  std::vector<Variant> out;
  const int64_t n = s.size();
  out.push_back({"contiguous", make_values(s, d, f)});
  out.push_back({"offset", make_values({s.numel() + 1}, d, f).slice(0, 1).view(s)});
  if (n >= 1) {
    Shape wide = s;
    wide[n - 1] = 2 * s[n - 1] + 1;
    out.push_back({"sliced", make_values(wide, d, f).slice(-1, 1, std::nullopt, 2)});
  }
  if (n >= 2) {
    Shape swapped = s;
    std::swap(swapped[n - 1], swapped[n - 2]);
    out.push_back({"transposed", make_values(swapped, d, f).transpose(-1, -2)});
  }
  if (n >= 1 && s[0] > 1) {
    Shape one = s;
    one[0] = 1;
    out.push_back({"expanded", make_values(one, d, f).expand(s)});
  }
  if (n >= 3) {
    Shape reversed, perm;
    for (int64_t i = n - 1; i >= 0; --i) reversed.push_back(s[i]), perm.push_back(i);
    out.push_back({"permuted", make_values(reversed, d, f).permute(perm)});
  }
  return out;
}

Tensor contiguous_values(const Shape& s, DType d, Fill f = Fill::Random) {
  return make_values(s, d, f);
}

// A view of `s` into a larger tensor of dtype d filled with a sentinel, written through by
// copy_/fill_/in-place ops: "sliced" (every other element of the last dim), "transposed",
// "offset" (contiguous, misaligned) or "contiguous" (the whole holder).
Tensor poisoned_view(const Shape& s, DType d, const std::string& layout) {
  const Scalar sentinel = d == tl::kBool ? Scalar(true) : Scalar(77);
  const int64_t n = s.size();
  if (layout == "sliced" && n >= 1) {
    Shape wide = s;
    wide[n - 1] = 2 * s[n - 1] + 1;
    return tl::full(wide, sentinel, d).slice(-1, 1, std::nullopt, 2);
  }
  if (layout == "transposed" && n >= 2) {
    Shape swapped = s;
    std::swap(swapped[n - 1], swapped[n - 2]);
    return tl::full(swapped, sentinel, d).transpose(-1, -2);
  }
  if (layout == "offset") return tl::full({s.numel() + 2}, sentinel, d).slice(0, 1, -1).view(s);
  return tl::full(s, sentinel, d);
}

const std::vector<std::string> kViewLayouts{"contiguous", "offset", "sliced", "transposed"};

std::string describe(const char* op, DType d, const Shape& s, const std::string& layout) {
  return std::string(op) + " " + tl::dtype_name(d) + " " + str(s) + " " + layout;
}

// Float specials: NaN, infinities, signed zeros, denormals, huge and tiny values, overflow edges.
Tensor float_specials(DType d) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  std::vector<double> v{nan, inf, -inf, -0.0, 0.0, 1e-30, -1e30, 88.5, -88.5, 710, -710,
                        1,   -1,  0.5,  -2.5, 3,   1e-45, 2,     -3,   1e-8,  nan, 0.75};
  return tl::from_vector(v).to(d);
}

Tensor int_specials(DType d) {
  const int64_t lo =
      d == tl::kInt32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  const int64_t hi =
      d == tl::kInt32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  return tl::from_vector(std::vector<int64_t>{lo, hi, -1, 0, 1, 7, -7, lo + 1, hi - 1, 2}).to(d);
}

// ---- op tables ----

struct UnaryOpCase {
  const char* name;
  Tensor (*fn)(const Tensor&);
};
#define TL_UNARY(op)                                      \
  {                                                       \
    "tl::" #op, [](const Tensor& a) { return tl::op(a); } \
  }
const std::vector<UnaryOpCase> kUnaryOps{
    TL_UNARY(neg),     TL_UNARY(abs),  TL_UNARY(exp),         TL_UNARY(log),
    TL_UNARY(sqrt),    TL_UNARY(sin),  TL_UNARY(cos),         TL_UNARY(tanh),
    TL_UNARY(sigmoid), TL_UNARY(relu), TL_UNARY(logical_not),
};
#undef TL_UNARY

struct BinaryOpCase {
  const char* name;
  Tensor (*tt)(const Tensor&, const Tensor&);
  Tensor (*ts)(const Tensor&, Scalar);
  Tensor (*st)(Scalar, const Tensor&);
};
#define TL_BINARY(op)                                                          \
  {                                                                            \
    "tl::" #op, [](const Tensor& a, const Tensor& b) { return tl::op(a, b); }, \
        [](const Tensor& a, Scalar b) { return tl::op(a, b); },                \
        [](Scalar a, const Tensor& b) { return tl::op(a, b); }                 \
  }
const std::vector<BinaryOpCase> kBinaryOps{
    TL_BINARY(add), TL_BINARY(sub),         TL_BINARY(mul),        TL_BINARY(div),
    TL_BINARY(pow), TL_BINARY(maximum),     TL_BINARY(minimum),    TL_BINARY(gt),
    TL_BINARY(lt),  TL_BINARY(ge),          TL_BINARY(le),         TL_BINARY(eq),
    TL_BINARY(ne),  TL_BINARY(logical_and), TL_BINARY(logical_or),
};
#undef TL_BINARY

// Math results get a float tolerance; arithmetic that is exact in IEEE (+, -, *, /, max, min,
// comparisons) still gets it, since an int -> float promotion may round in another place.
Tol binary_tol(const BinaryOpCase&, DType d) {
  return tl::is_floating_point(d) ? math_tol(d) : math_tol(tl::kFloat32);
}

}  // namespace

// ---- copies and casts ----

TEST_CASE("cuda parity: to(dtype), clone and contiguous for every dtype pair and layout") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<Shape> shapes{{}, {1}, {7}, {1025}, {7, 33}, {0, 3}, {3, 4, 5}};
  for (DType from : kAllDtypes) {
    for (const Shape& shape : shapes) {
      for (const Variant& v : variants(shape, from)) {
        const std::string what = describe("", from, shape, v.name);
        for (DType to : kAllDtypes)
          check_op(what + " to " + tl::dtype_name(to), {v.t},
                   [to](std::vector<Tensor>& in) { return in[0].to(to); });
        check_op(what + " clone", {v.t}, [](std::vector<Tensor>& in) { return in[0].clone(); });
        check_op(what + " contiguous", {v.t},
                 [](std::vector<Tensor>& in) { return in[0].contiguous(); });
      }
    }
  }
}

TEST_CASE("cuda parity: copy_ into poisoned strided views converts and writes only the view") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<Shape> shapes{{}, {1}, {7}, {1025}, {7, 33}, {0, 3}};
  for (DType from : kAllDtypes) {
    for (DType to : kAllDtypes) {
      for (const Shape& shape : shapes) {
        std::vector<Variant> sources = variants(shape, from);
        for (size_t k = 0; k < kViewLayouts.size(); ++k) {
          const Variant& src = sources[k % sources.size()];
          Tensor dst = poisoned_view(shape, to, kViewLayouts[k]);
          check_op(describe("copy_", from, shape, src.name) + " into " + tl::dtype_name(to) + " " +
                       kViewLayouts[k],
                   {dst, src.t}, [](std::vector<Tensor>& in) {
                     in[0].copy_(in[1]);
                     return whole_storage(in[0]);
                   });
        }
      }
      // A broadcast source: one row copied into every row of a view.
      Tensor dst = poisoned_view({4, 33}, to, "sliced");
      check_op(std::string("copy_ broadcast row ") + tl::dtype_name(from) + " into " +
                   tl::dtype_name(to),
               {dst, contiguous_values({33}, from)}, [](std::vector<Tensor>& in) {
                 in[0].copy_(in[1]);
                 return whole_storage(in[0]);
               });
    }
  }
}

TEST_CASE("cuda parity: large copies and casts (large)") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<DType, DType>> pairs{
      {tl::kFloat32, tl::kFloat32}, {tl::kFloat32, tl::kFloat64}, {tl::kFloat64, tl::kFloat32},
      {tl::kInt32, tl::kFloat32},   {tl::kFloat32, tl::kInt64},   {tl::kBool, tl::kFloat32},
      {tl::kInt64, tl::kBool}};
  for (auto [from, to] : pairs) {
    for (const Variant& v : variants({kBig}, from)) {
      check_op(describe("to", from, {kBig}, v.name) + " -> " + tl::dtype_name(to), {v.t},
               [to = to](std::vector<Tensor>& in) { return in[0].to(to).contiguous(); });
    }
    Tensor dst = poisoned_view({kBig}, to, "offset");
    check_op(describe("copy_ into offset view", from, {kBig}, "contiguous"),
             {dst, contiguous_values({kBig}, from)}, [](std::vector<Tensor>& in) {
               in[0].copy_(in[1]);
               return whole_storage(in[0]);
             });
  }
  // A big transposed (column-major) matrix made contiguous.
  for (const Variant& v : variants({1000, 1049}, tl::kFloat32))
    check_op(describe("contiguous", tl::kFloat32, {1000, 1049}, v.name), {v.t},
             [](std::vector<Tensor>& in) { return in[0].contiguous(); });
}

// ---- fill and factories ----

TEST_CASE("cuda parity: fill_ of every dtype into every view layout") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<Shape> shapes{{}, {1}, {7}, {1025}, {7, 33}, {0, 3}, {kBig}};
  for (DType d : kAllDtypes) {
    std::vector<Scalar> values{Scalar(true), Scalar(false)};
    if (d != tl::kBool) values = {Scalar(0), Scalar(-3), Scalar(7)};
    if (tl::is_floating_point(d)) values = {Scalar(2.5), Scalar(-0.0), Scalar(1e30), Scalar(-4)};
    for (const Shape& shape : shapes) {
      for (const std::string& layout : kViewLayouts) {
        if (shape.numel() == kBig && layout == "transposed") continue;
        for (Scalar value : values) {
          check_op(describe("fill_", d, shape, layout), {poisoned_view(shape, d, layout)},
                   [value](std::vector<Tensor>& in) {
                     in[0].fill_(value);
                     return whole_storage(in[0]);
                   });
        }
      }
    }
  }
}

TEST_CASE("cuda parity: factories on cuda:0 give the CPU's values") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : kAllDtypes) {
    const std::string name = tl::dtype_name(d);
    auto opts = [d](tl::Device device) { return tl::TensorOptions(d).device(device); };
    check_made("zeros " + name, [&](tl::Device x) { return tl::zeros({7, 33}, opts(x)); });
    check_made("ones " + name, [&](tl::Device x) { return tl::ones({1025}, opts(x)); });
    check_made("full " + name, [&](tl::Device x) { return tl::full({3, 5}, 1, opts(x)); });
    check_made("scalar_tensor " + name,
               [&](tl::Device x) { return tl::scalar_tensor(true, opts(x)); });
    check_made("eye " + name, [&](tl::Device x) { return tl::eye(5, 7, opts(x)); });
    check_made("zeros 0-size " + name, [&](tl::Device x) { return tl::zeros({0, 4}, opts(x)); });
    if (d != tl::kBool) {
      check_made("arange " + name, [&](tl::Device x) { return tl::arange(-5, 1020, 1, opts(x)); });
      check_made("linspace " + name,
                 [&](tl::Device x) { return tl::linspace(-3, 40, 33, opts(x)); });
    }
    Tensor like = contiguous_values({4, 6}, d);
    check_op("ones_like " + name, {like.t()},
             [](std::vector<Tensor>& in) { return tl::ones_like(in[0]); });
    check_op("full_like " + name, {like},
             [](std::vector<Tensor>& in) { return tl::full_like(in[0], 1); });
    check_op("empty_like shape " + name, {like.t()},
             [](std::vector<Tensor>& in) { return tl::zeros_like(tl::empty_like(in[0])); });
  }
  check_made("arange float", [](tl::Device x) { return tl::arange(0.5, 7.25, 0.25, x); });
  check_made("full float64 large", [](tl::Device x) {
    return tl::full({kBig}, 0.1, tl::TensorOptions(tl::kFloat64).device(x));
  });
}

// ---- unary ----

TEST_CASE("cuda parity: every unary op on every dtype, layout and odd size") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<Shape> shapes{{}, {1}, {7}, {33}, {1025}, {5, 7}, {0, 4}, {3, 4, 5}};
  for (DType d : kAllDtypes) {
    for (const Shape& shape : shapes) {
      for (const Variant& v : variants(shape, d)) {
        for (const UnaryOpCase& op : kUnaryOps) {
          check_op(
              describe(op.name, d, shape, v.name), {v.t},
              [&op](std::vector<Tensor>& in) { return op.fn(in[0]); },
              math_tol(tl::is_floating_point(d) ? d : tl::kFloat32));
        }
      }
    }
  }
}

TEST_CASE("cuda parity: unary ops on NaN, infinities, zeros, denormals and integer extremes") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : kFloats)
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          std::string(op.name) + " specials " + tl::dtype_name(d), {float_specials(d)},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(d));
  for (DType d : {tl::kInt32, tl::kInt64})
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          std::string(op.name) + " extremes " + tl::dtype_name(d), {int_specials(d)},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(tl::kFloat32));
}

TEST_CASE("cuda parity: unary ops on large inputs (large)") {
  TL_TEST_REQUIRE_CUDA();
  for (const Variant& v : variants({kBig}, tl::kFloat32))
    for (const UnaryOpCase& op : kUnaryOps)
      check_op(
          describe(op.name, tl::kFloat32, {kBig}, v.name), {v.t},
          [&op](std::vector<Tensor>& in) { return op.fn(in[0]); }, math_tol(tl::kFloat32));
  Tensor d = contiguous_values({kBig}, tl::kFloat64);
  check_op(
      "cos float64 large", {d}, [](std::vector<Tensor>& in) { return tl::cos(in[0]); },
      math_tol(tl::kFloat64));
  check_op("neg int64 large", {contiguous_values({kBig}, tl::kInt64)},
           [](std::vector<Tensor>& in) { return tl::neg(in[0]); });
  check_op("logical_not bool large", {contiguous_values({kBig}, tl::kBool)},
           [](std::vector<Tensor>& in) { return tl::logical_not(in[0]); });
}

// ---- binary ----

namespace {

// Runs op on each layout of a with b contiguous, and on a contiguous with each layout of b.
void check_binary_layouts(const BinaryOpCase& op, DType d, const Shape& sa, const Shape& sb,
                          Fill fill = Fill::Random) {
  std::vector<Variant> va = variants(sa, d, fill), vb = variants(sb, d, fill);
  const Tol tol = binary_tol(op, d);
  auto fn = [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); };
  for (const Variant& a : va)
    check_op(describe(op.name, d, sa, a.name) + " with " + str(sb) + " contiguous", {a.t, vb[0].t},
             fn, tol);
  for (size_t k = 1; k < vb.size(); ++k)
    check_op(describe(op.name, d, sa, "contiguous") + " with " + str(sb) + " " + vb[k].name,
             {va[0].t, vb[k].t}, fn, tol);
}

}  // namespace

TEST_CASE("cuda parity: every binary op on every dtype, layout and broadcast") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, Shape>> pairs{
      {{1025}, {1025}}, {{7, 33}, {33}}, {{5, 1}, {1, 6}}, {{}, {9}},          {{9}, {}},
      {{}, {}},         {{0, 3}, {3}},   {{1}, {7}},       {{3, 4, 5}, {4, 1}}};
  for (const BinaryOpCase& op : kBinaryOps)
    for (DType d : kAllDtypes)
      for (const auto& [sa, sb] : pairs) check_binary_layouts(op, d, sa, sb);
}

TEST_CASE("cuda parity: binary ops promote mixed dtypes and scalars as on the CPU") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<DType, DType>> mixed{
      {tl::kInt32, tl::kFloat64},   {tl::kBool, tl::kInt64},   {tl::kInt64, tl::kFloat32},
      {tl::kFloat32, tl::kFloat64}, {tl::kBool, tl::kFloat32}, {tl::kInt32, tl::kInt64}};
  const std::vector<Scalar> scalars{Scalar(2), Scalar(-3), Scalar(2.5), Scalar(-0.5), Scalar(true)};
  for (const BinaryOpCase& op : kBinaryOps) {
    for (auto [da, db] : mixed) {
      Tensor a = variants({7, 33}, da)[2].t, b = contiguous_values({33}, db);
      check_op(
          std::string(op.name) + " " + tl::dtype_name(da) + " with " + tl::dtype_name(db), {a, b},
          [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); }, math_tol(tl::kFloat32));
      // A 0-dim tensor of another dtype ranks below a dimensioned one.
      check_op(
          std::string(op.name) + " " + tl::dtype_name(da) + " with 0-dim " + tl::dtype_name(db),
          {a, contiguous_values({}, db)},
          [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); }, math_tol(tl::kFloat32));
    }
    for (DType d : kAllDtypes) {
      for (const Shape& shape : {Shape{7, 33}, Shape{}}) {
        Tensor a = variants(shape, d).back().t;
        for (Scalar s : scalars) {
          const std::string what = describe(op.name, d, shape, "scalar");
          check_op(
              what + " right", {a}, [&op, s](std::vector<Tensor>& in) { return op.ts(in[0], s); },
              math_tol(tl::kFloat32));
          check_op(
              what + " left", {a}, [&op, s](std::vector<Tensor>& in) { return op.st(s, in[0]); },
              math_tol(tl::kFloat32));
        }
      }
    }
  }
}

TEST_CASE("cuda parity: binary ops on NaN, infinities, zeros and integer extremes") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : kFloats) {
    Tensor a = float_specials(d);
    // Every special against several others: b is a rotated, a reversed copy.
    for (int64_t shift : {1, 3, 7}) {
      Tensor b = tl::cat({a.slice(0, shift), a.slice(0, 0, shift)});
      for (const BinaryOpCase& op : kBinaryOps)
        check_op(
            std::string(op.name) + " specials shift " + std::to_string(shift) + " " +
                tl::dtype_name(d),
            {a, b}, [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); }, math_tol(d));
    }
  }
  for (DType d : {tl::kInt32, tl::kInt64}) {
    Tensor a = int_specials(d);
    Tensor b = tl::cat({a.slice(0, 2), a.slice(0, 0, 2)});
    for (const BinaryOpCase& op : kBinaryOps) {
      if (std::string(op.name) == "tl::pow") continue;  // extremes to extreme powers: UB on CPU
      check_op(
          std::string(op.name) + " extremes " + tl::dtype_name(d), {a, b},
          [&op](std::vector<Tensor>& in) { return op.tt(in[0], in[1]); }, math_tol(tl::kFloat32));
    }
    // Integer powers, negative exponents included (PyTorch's rules: 1, -1, else 0).
    Tensor base = tl::randint(-4, 5, {200}).to(d), e = tl::randint(-3, 12, {200}).to(d);
    check_op(std::string("tl::pow ints ") + tl::dtype_name(d), {base, e},
             [](std::vector<Tensor>& in) { return tl::pow(in[0], in[1]); });
  }
}

TEST_CASE("cuda parity: in-place ops write into views, broadcast the other and cast back") {
  TL_TEST_REQUIRE_CUDA();
  using InPlace = Tensor& (*)(Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, InPlace>> ops{
      {"add_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.add_(o); }},
      {"sub_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.sub_(o); }},
      {"mul_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.mul_(o); }},
      {"div_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.div_(o); }},
  };
  const std::vector<Shape> others{{7, 33}, {33}, {7, 1}, {}};
  for (auto [name, fn] : ops) {
    for (DType self : kAllDtypes) {
      for (DType other : {self, tl::kInt64, tl::kFloat64}) {
        for (const std::string& layout : kViewLayouts) {
          Tensor target = poisoned_view({7, 33}, self, layout);
          // Random values in the view (the sentinel stays around it).
          target.copy_(contiguous_values({7, 33}, self));
          for (const Shape& so : others) {
            check_op(
                describe(name, self, {7, 33}, layout) + " other " + tl::dtype_name(other) + " " +
                    str(so),
                {target, contiguous_values(so, other)},
                [fn = fn](std::vector<Tensor>& in) {
                  fn(in[0], in[1]);
                  return whole_storage(in[0]);
                },
                math_tol(tl::kFloat32));
          }
          check_op(
              describe(name, self, {7, 33}, layout) + " scalar 3", {target},
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
  for (DType d : kNumeric) {
    check_op(std::string("overlapping add_ ") + tl::dtype_name(d), {contiguous_values({9, 33}, d)},
             [](std::vector<Tensor>& in) {
               Tensor x = in[0];
               x.slice(0, 1).add_(x.slice(0, 0, 8));
               return whole_storage(x);
             });
    check_op(std::string("add_ own transpose ") + tl::dtype_name(d),
             {contiguous_values({17, 17}, d)}, [](std::vector<Tensor>& in) {
               Tensor x = in[0];
               x.add_(x.t());
               return whole_storage(x);
             });
    check_op(std::string("mul_ by own row ") + tl::dtype_name(d), {contiguous_values({5, 33}, d)},
             [](std::vector<Tensor>& in) {
               Tensor x = in[0];
               x.mul_(x[0]);
               return whole_storage(x);
             });
  }
}

TEST_CASE("cuda parity: binary ops on large inputs (large)") {
  TL_TEST_REQUIRE_CUDA();
  for (const char* name : {"tl::add", "tl::mul", "tl::gt", "tl::maximum", "tl::div"}) {
    const BinaryOpCase* op = nullptr;
    for (const BinaryOpCase& c : kBinaryOps)
      if (std::string(c.name) == name) op = &c;
    REQUIRE(op != nullptr);
    check_binary_layouts(*op, tl::kFloat32, {kBig}, {kBig});
    check_binary_layouts(*op, tl::kFloat32, {1000, 1049}, {1049});
    check_binary_layouts(*op, tl::kFloat32, {kBig}, {});
  }
  check_binary_layouts(kBinaryOps[0], tl::kInt64, {kBig}, {kBig});
  check_binary_layouts(kBinaryOps[2], tl::kFloat64, {kBig}, {kBig});
  check_binary_layouts(kBinaryOps[13], tl::kBool, {kBig}, {kBig});
  // More rows than a grid's y or z dimension can hold.
  check_binary_layouts(kBinaryOps[0], tl::kFloat32, {70001, 3}, {70001, 1});
}

// ---- where and clamp ----

TEST_CASE("cuda parity: where on every dtype, layout, broadcast and scalar form") {
  TL_TEST_REQUIRE_CUDA();
  struct Shapes {
    Shape c, a, b;
  };
  const std::vector<Shapes> cases{{{5, 7}, {5, 7}, {5, 7}}, {{5, 1}, {1, 7}, {}},
                                  {{0, 3}, {3}, {1}},       {{}, {}, {}},
                                  {{1025}, {1025}, {1025}}, {{3, 1, 5}, {4, 1}, {5}}};
  auto where3 = [](std::vector<Tensor>& in) { return tl::where(in[0], in[1], in[2]); };
  for (DType d : kAllDtypes) {
    for (const Shapes& s : cases) {
      std::vector<Variant> vc = variants(s.c, tl::kBool), va = variants(s.a, d),
                           vb = variants(s.b, d);
      const std::string what =
          std::string("where ") + tl::dtype_name(d) + " " + str(s.c) + str(s.a) + str(s.b);
      for (const Variant& c : vc)
        check_op(what + " cond " + c.name, {c.t, va[0].t, vb[0].t}, where3);
      for (size_t k = 1; k < va.size(); ++k)
        check_op(what + " a " + va[k].name, {vc[0].t, va[k].t, vb[0].t}, where3);
      for (size_t k = 1; k < vb.size(); ++k)
        check_op(what + " b " + vb[k].name, {vc[0].t, va[0].t, vb[k].t}, where3);
    }
    Tensor c = contiguous_values({7, 33}, tl::kBool), a = variants({7, 33}, d)[2].t;
    const std::string name = tl::dtype_name(d);
    check_op("where scalar b " + name, {c, a},
             [](std::vector<Tensor>& in) { return tl::where(in[0], in[1], 2.5); });
    check_op("where scalar a " + name, {c, a},
             [](std::vector<Tensor>& in) { return tl::where(in[0], 7, in[1]); });
    check_op("where mixed " + name, {c, a, contiguous_values({33}, tl::kInt32)}, where3);
  }
  Tensor c = contiguous_values({7, 33}, tl::kBool);
  check_op("where two scalars", {c},
           [](std::vector<Tensor>& in) { return tl::where(in[0], 1, 0); });
  check_op("where two float scalars", {c},
           [](std::vector<Tensor>& in) { return tl::where(in[0], 1.5, -2); });
  check_op("where large",
           {contiguous_values({kBig}, tl::kBool), contiguous_values({kBig}, tl::kFloat32),
            contiguous_values({kBig}, tl::kFloat32)},
           where3);
  check_op("where non-bool cond",
           {contiguous_values({5}, tl::kInt32), contiguous_values({5}, tl::kFloat32),
            contiguous_values({5}, tl::kFloat32)},
           where3);
}

TEST_CASE("cuda parity: clamp with scalar and tensor bounds") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : kAllDtypes) {
    for (const Variant& v : variants({7, 33}, d)) {
      const std::string what = describe("clamp", d, {7, 33}, v.name);
      check_op(what + " [-1, 1]", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], -1, 1); });
      check_op(what + " [0.5, 1.5]", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], 0.5, 1.5); });
      check_op(what + " min only", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], 0, std::nullopt); });
      check_op(what + " min > max", {v.t},
               [](std::vector<Tensor>& in) { return tl::clamp(in[0], 3, 1); });
      check_op(
          what + " tensor bounds", {v.t, contiguous_values({33}, d), contiguous_values({7, 1}, d)},
          [](std::vector<Tensor>& in) {
            return tl::clamp(in[0], std::optional<Tensor>(in[1]), std::optional<Tensor>(in[2]));
          });
    }
  }
  for (DType d : kFloats)
    check_op(std::string("clamp specials ") + tl::dtype_name(d), {float_specials(d)},
             [](std::vector<Tensor>& in) { return tl::clamp(in[0], -1.0, 2.0); });
}

// ---- reductions ----

namespace {

struct ReduceOpCase {
  const char* name;
  Tensor (*fn)(const Tensor&, const std::vector<int64_t>&, bool);
  bool exact;  // max/min/all/any pick an element: exact whatever the order
};
const std::vector<ReduceOpCase> kReduceOps{
    {"tl::sum", tl::sum, false},  {"tl::prod", tl::prod, false}, {"tl::mean", tl::mean, false},
    {"tl::max", tl::max, true},   {"tl::min", tl::min, true},    {"tl::amax", tl::amax, true},
    {"tl::amin", tl::amin, true}, {"tl::all", tl::all, true},    {"tl::any", tl::any, true},
};

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& dims) {
  if (dims.empty()) return shape.numel();
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.size() == 0 ? 1 : shape[d < 0 ? d + shape.size() : d];
  return n;
}

void check_reduce(const ReduceOpCase& op, const Variant& v, const std::vector<int64_t>& dims,
                  bool keepdim, Tol tol) {
  check_op(
      describe(op.name, v.t.dtype(), v.t.shape(), v.name) + " dims " + str(Shape(dims)) +
          (keepdim ? " keepdim" : ""),
      {v.t}, [&](std::vector<Tensor>& in) { return op.fn(in[0], dims, keepdim); },
      op.exact ? kExact : tol);
}

void check_arg(const Variant& v, std::optional<int64_t> dim, bool keepdim) {
  const std::string what = describe("", v.t.dtype(), v.t.shape(), v.name) + " dim " +
                           (dim ? std::to_string(*dim) : "none") + (keepdim ? " keepdim" : "");
  check_op("argmax" + what, {v.t},
           [&](std::vector<Tensor>& in) { return tl::argmax(in[0], dim, keepdim); });
  check_op("argmin" + what, {v.t},
           [&](std::vector<Tensor>& in) { return tl::argmin(in[0], dim, keepdim); });
}

}  // namespace

TEST_CASE("cuda parity: every reduction over several dim sets, layouts and keepdim") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, std::vector<std::vector<int64_t>>>> cases{
      {{3, 4, 5}, {{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}}},
      {{7, 33}, {{}, {0}, {1}}},
      {{1025}, {{}, {0}}},
      {{}, {{}, {0}, {-1}}},
      {{0, 3}, {{}, {0}, {1}}},
      {{2, 3, 4, 6}, {{1, 3}, {0, 2}}},
      {{1, 1}, {{}, {0}}},
  };
  for (const ReduceOpCase& op : kReduceOps) {
    for (DType d : kAllDtypes) {
      for (const auto& [shape, dim_sets] : cases) {
        std::vector<Variant> vs = variants(shape, d);
        for (const auto& dims : dim_sets) {
          const Tol tol =
              sum_tol(tl::is_floating_point(d) ? d : tl::kFloat32, reduced_count(shape, dims));
          for (size_t k = 0; k < vs.size(); ++k) {
            check_reduce(op, vs[k], dims, false, tol);
            if (k == 0 || k == 2) check_reduce(op, vs[k], dims, true, tol);
          }
        }
      }
    }
  }
}

TEST_CASE("cuda parity: argmax and argmin over every dim, layout and dtype, ties included") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, std::vector<std::optional<int64_t>>>> cases{
      {{3, 4, 5}, {std::nullopt, 0, 1, 2, -1}},
      {{7, 33}, {std::nullopt, 0, 1}},
      {{1025}, {std::nullopt, 0}},
      {{}, {std::nullopt, 0}},
      {{0, 3}, {std::nullopt, 0, 1}},
  };
  for (DType d : kAllDtypes) {
    for (const auto& [shape, dims] : cases) {
      for (const Variant& v : variants(shape, d)) {
        for (std::optional<int64_t> dim : dims) {
          check_arg(v, dim, false);
          if (v.name == "contiguous") check_arg(v, dim, true);
        }
      }
    }
  }
  // NaN wins (the first one), infinities are ordinary values.
  for (DType d : kFloats) {
    Variant specials{"specials", float_specials(d)};
    check_arg(specials, std::nullopt, false);
    Variant grid{"specials 2-D", float_specials(d).view({2, 11})};
    check_arg(grid, 0, false);
    check_arg(grid, 1, true);
    for (const ReduceOpCase& op : kReduceOps) check_reduce(op, grid, {1}, false, sum_tol(d, 11));
  }
}

TEST_CASE("cuda parity: reductions of large inputs are exact on integer values (large)") {
  TL_TEST_REQUIRE_CUDA();
  // Integer-valued floats: every summation order gives the same, exact result (all partial sums
  // stay below 2^24), so the device's float32 accumulation is compared exactly.
  for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32}) {
    for (const Variant& v : variants({1000, 1000}, d, Fill::Integral)) {
      if (v.name == "expanded" && d != tl::kFloat32) continue;
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
        for (const ReduceOpCase& op : kReduceOps) {
          if (std::string(op.name) == "tl::prod") continue;
          const bool mean = std::string(op.name) == "tl::mean";
          check_reduce(op, v, dims, false, mean ? Tol{1e-6, 0} : kExact);
        }
      }
      // Many ties: the first index of the max/min must win.
      check_arg(v, std::nullopt, false);
      check_arg(v, 0, false);
      check_arg(v, 1, false);
    }
    Variant flat{"flat", make_values({kBig}, d, Fill::Integral)};
    check_reduce(kReduceOps[0], flat, {}, false, kExact);
    check_reduce(kReduceOps[3], flat, {}, false, kExact);
    check_arg(flat, std::nullopt, false);
  }
  // Products of +-1 are exact too.
  Variant signs{"signs", tl::randint(0, 2, {1000, 1000}).to(tl::kFloat32) * 2 - 1};
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}})
    check_reduce(kReduceOps[1], signs, dims, false, kExact);
  // Integer sums and products wrap in int64 identically in any order.
  Tensor ints_with_zeros = contiguous_values({300, 700}, tl::kInt64);
  Variant ints{"int64",
               tl::where(ints_with_zeros == 0, tl::scalar_tensor(3, tl::kInt64), ints_with_zeros)};
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
    check_reduce(kReduceOps[0], ints, dims, false, kExact);
    check_reduce(kReduceOps[1], ints, dims, false, kExact);
  }
  // all/any decided by a single element at the very end.
  Tensor ones = tl::ones({kBig}, tl::kBool);
  ones.slice(0, kBig - 1).fill_(false);
  check_op("all with last false", {ones}, [](std::vector<Tensor>& in) { return tl::all(in[0]); });
  check_op("any with last true", {tl::logical_not(ones)},
           [](std::vector<Tensor>& in) { return tl::any(in[0]); });
  check_op("argmax at the end", {tl::logical_not(ones)},
           [](std::vector<Tensor>& in) { return tl::argmax(in[0]); });
}

TEST_CASE("cuda parity: reductions of large random inputs within float tolerance (large)") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : kFloats) {
    for (const Variant& v : variants({1000, 1000}, d)) {
      if (v.name != "contiguous" && v.name != "transposed" && v.name != "sliced") continue;
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
        const Tol tol = sum_tol(d, reduced_count({1000, 1000}, dims));
        for (const ReduceOpCase& op : kReduceOps)
          if (std::string(op.name) != "tl::prod") check_reduce(op, v, dims, false, tol);
      }
    }
    Variant flat{"flat", contiguous_values({kBig}, d)};
    check_reduce(kReduceOps[0], flat, {}, false, sum_tol(d, kBig));
    check_reduce(kReduceOps[2], flat, {}, false, sum_tol(d, kBig));
    check_arg(flat, std::nullopt, false);
  }
  // More outputs than a grid's y or z dimension holds, and a long reduction into few outputs.
  for (DType d : {tl::kFloat32, tl::kInt32}) {
    Variant tall{"tall", make_values({70001, 3}, d, Fill::Integral)};
    for (int64_t dim : {0, 1}) {
      for (const ReduceOpCase& op : kReduceOps)
        if (std::string(op.name) != "tl::prod") check_reduce(op, tall, {dim}, false, {1e-6, 0});
      check_arg(tall, dim, false);
    }
    Variant wide{"wide", make_values({3, 70001}, d, Fill::Integral)};
    check_reduce(kReduceOps[0], wide, {1}, true, kExact);
    check_arg(wide, 1, true);
  }
}

// ---- matmul ----

namespace {

// The layouts of an [r, c] operand a matmul must read: contiguous, offset, sliced (a column
// step of 2), transposed (column-major).
std::vector<Variant> matrix_variants(int64_t r, int64_t c, DType d, Fill f) {
  std::vector<Variant> out;
  for (Variant& v : variants({r, c}, d, f))
    if (v.name != "expanded") out.push_back(std::move(v));
  return out;
}

Tol matmul_tol(DType d, int64_t k, Fill f) {
  if (f == Fill::Integral) return kExact;
  const double kk = static_cast<double>(k);
  return d == tl::kFloat32 ? Tol{1e-4, 1e-5 * (1 + kk)} : Tol{1e-10, 1e-12 * (1 + kk)};
}

}  // namespace

TEST_CASE("cuda parity: matmul and mm of every layout pair, small and odd sizes, K = 0") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::array<int64_t, 3>> sizes{
      {3, 3, 3},    {10, 10, 10},    {33, 17, 65}, {1, 1, 1}, {1, 7, 1}, {7, 1, 4},  {32, 32, 32},
      {33, 33, 33}, {100, 100, 100}, {4, 0, 5},    {0, 3, 4}, {3, 4, 0}, {2, 300, 3}};
  auto mm = [](std::vector<Tensor>& in) { return tl::matmul(in[0], in[1]); };
  for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64, tl::kBool}) {
    for (auto [m, k, n] : sizes) {
      for (Fill f : {Fill::Integral, Fill::Random}) {
        if (f == Fill::Random && !tl::is_floating_point(d)) continue;
        std::vector<Variant> va = matrix_variants(m, k, d, f), vb = matrix_variants(k, n, d, f);
        const Tol tol = matmul_tol(d, k, f);
        for (const Variant& a : va) {
          for (const Variant& b : vb) {
            const std::string what = describe("matmul", d, {m, k, n}, a.name + " @ " + b.name) +
                                     (f == Fill::Integral ? " integral" : " random");
            check_op(what, {a.t, b.t}, mm, tol);
          }
        }
        check_op(
            describe("mm", d, {m, k, n}, "contiguous"), {va[0].t, vb[0].t},
            [](std::vector<Tensor>& in) { return tl::mm(in[0], in[1]); }, tol);
      }
    }
  }
}

TEST_CASE("cuda parity: batched matmul, bmm, broadcast batches, 1-D operands, linear and dot") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, Shape>> cases{{{4, 3, 5}, {4, 5, 2}},
                                                   {{2, 1, 3, 4}, {5, 4, 6}},
                                                   {{3, 4}, {2, 4, 5}},
                                                   {{2, 3, 4}, {4, 5}},
                                                   {{1, 3, 4}, {6, 4, 2}},
                                                   {{300, 10, 10}, {300, 10, 10}},
                                                   {{3, 40, 33}, {3, 33, 70}},
                                                   {{5}, {2, 5, 3}},
                                                   {{3, 2, 4, 5}, {5}},
                                                   {{7}, {7}},
                                                   {{7}, {7, 3}},
                                                   {{4, 7}, {7}},
                                                   {{2, 0, 3}, {3, 4}},
                                                   {{3, 3, 0}, {3, 0, 4}}};
  auto mm = [](std::vector<Tensor>& in) { return tl::matmul(in[0], in[1]); };
  for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64}) {
    for (const auto& [sa, sb] : cases) {
      for (Fill f : {Fill::Integral, Fill::Random}) {
        if (f == Fill::Random && !tl::is_floating_point(d)) continue;
        std::vector<Variant> va = variants(sa, d, f), vb = variants(sb, d, f);
        const Tol tol = matmul_tol(d, sa.back(), f);
        for (const Variant& a : va)
          check_op(describe("matmul", d, sa, a.name) + " @ " + str(sb), {a.t, vb[0].t}, mm, tol);
        for (size_t k = 1; k < vb.size(); ++k)
          check_op(describe("matmul", d, sa, "contiguous") + " @ " + str(sb) + " " + vb[k].name,
                   {va[0].t, vb[k].t}, mm, tol);
      }
    }
    // bmm with a transposed batch operand and with an expanded (stride-0) batch.
    Tensor a = contiguous_values({6, 3, 4}, d, Fill::Integral);
    Tensor bt = contiguous_values({6, 5, 4}, d, Fill::Integral).transpose(1, 2);
    Tensor one = contiguous_values({1, 3, 4}, d, Fill::Integral).expand({6, 3, 4});
    auto bmm = [](std::vector<Tensor>& in) { return tl::bmm(in[0], in[1]); };
    check_op(std::string("bmm transposed b ") + tl::dtype_name(d), {a, bt}, bmm);
    check_op(std::string("bmm expanded a ") + tl::dtype_name(d), {one, bt}, bmm);
    check_op(std::string("bmm transposed a ") + tl::dtype_name(d),
             {contiguous_values({6, 4, 3}, d, Fill::Integral).transpose(1, 2),
              contiguous_values({6, 4, 5}, d, Fill::Integral)},
             bmm);
    // A batch larger than a grid's y or z dimension holds, small matrices.
    check_op(std::string("bmm 70000 batches ") + tl::dtype_name(d),
             {contiguous_values({70000, 2, 3}, d, Fill::Integral),
              contiguous_values({70000, 3, 2}, d, Fill::Integral)},
             bmm);
    check_op(std::string("dot sliced ") + tl::dtype_name(d),
             {contiguous_values({9}, d, Fill::Integral), variants({9}, d, Fill::Integral)[2].t},
             [](std::vector<Tensor>& in) { return tl::dot(in[0], in[1]); });
  }
  for (DType d : kFloats) {
    for (Fill f : {Fill::Integral, Fill::Random}) {
      const Tol tol = matmul_tol(d, 3, f);
      Tensor x = contiguous_values({2, 4, 3}, d, f), w = contiguous_values({5, 3}, d, f),
             b = contiguous_values({5}, d, f);
      auto linear = [](std::vector<Tensor>& in) { return tl::linear(in[0], in[1], in[2]); };
      check_op(std::string("linear ") + tl::dtype_name(d), {x, w, b}, linear, tol);
      check_op(
          std::string("linear no bias ") + tl::dtype_name(d), {x, w},
          [](std::vector<Tensor>& in) { return tl::linear(in[0], in[1]); }, tol);
      check_op(std::string("linear transposed w ") + tl::dtype_name(d),
               {x, contiguous_values({3, 5}, d, f).t(), b}, linear, tol);
      check_op(std::string("linear 1-D x ") + tl::dtype_name(d),
               {contiguous_values({3}, d, f), w, b}, linear, tol);
      check_op(std::string("linear 64x300 ") + tl::dtype_name(d),
               {contiguous_values({64, 300}, d, f), contiguous_values({70, 300}, d, f),
                contiguous_values({70}, d, f)},
               linear, matmul_tol(d, 300, f));
    }
  }
}

// ---- indexing ----

TEST_CASE("cuda parity: nonzero and nonzero_tuple of every dtype and layout") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<Shape> shapes{{3, 4, 5}, {1025}, {}, {0, 3}, {7, 1, 13}, {1, 1}};
  auto nz = [](std::vector<Tensor>& in) { return tl::nonzero(in[0]); };
  for (DType d : kAllDtypes) {
    for (const Shape& shape : shapes) {
      for (const Variant& v : variants(shape, d, Fill::Sparse)) {
        check_op(describe("nonzero", d, shape, v.name), {v.t}, nz);
        if (shape.size() > 0)
          check_op(describe("nonzero_tuple", d, shape, v.name), {v.t},
                   [](std::vector<Tensor>& in) { return tl::stack(tl::nonzero_tuple(in[0]), 0); });
      }
    }
    check_op(std::string("nonzero all zero ") + tl::dtype_name(d), {tl::zeros({5, 7}, d)}, nz);
    check_op(std::string("nonzero none zero ") + tl::dtype_name(d), {tl::ones({5, 7}, d)}, nz);
  }
}

TEST_CASE("cuda parity: masked_select with broadcast masks and inputs") {
  TL_TEST_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, Shape>> cases{
      {{3, 4, 5}, {3, 4, 5}}, {{3, 1, 5}, {4, 1}}, {{5}, {3, 4, 5}}, {{3, 4, 5}, {}},
      {{}, {2, 3}},           {{0, 3}, {3}},       {{1025}, {1025}}};
  auto ms = [](std::vector<Tensor>& in) { return tl::masked_select(in[0], in[1]); };
  for (DType d : kAllDtypes) {
    for (const auto& [sa, sm] : cases) {
      std::vector<Variant> va = variants(sa, d), vm = variants(sm, tl::kBool);
      for (const Variant& a : va)
        check_op(describe("masked_select", d, sa, a.name) + " mask " + str(sm), {a.t, vm[0].t}, ms);
      for (size_t k = 1; k < vm.size(); ++k)
        check_op(
            describe("masked_select", d, sa, "contiguous") + " mask " + str(sm) + " " + vm[k].name,
            {va[0].t, vm[k].t}, ms);
    }
  }
}

TEST_CASE("cuda parity: index_select on every dim with int32, int64, strided and empty indices") {
  TL_TEST_REQUIRE_CUDA();
  auto is = [](int64_t dim) {
    return [dim](std::vector<Tensor>& in) { return tl::index_select(in[0], dim, in[1]); };
  };
  for (DType d : kAllDtypes) {
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
          check_op(describe("index_select", d, {5, 6, 7}, v.name) + " dim " + std::to_string(dim) +
                       " index " + name,
                   {v.t, index}, is(dim));
      }
    }
    check_op(std::string("index_select 0-dim input ") + tl::dtype_name(d),
             {contiguous_values({}, d), tl::zeros({1}, tl::kInt64)}, is(0));
  }
}

TEST_CASE("cuda parity: gather on every dim with strided and smaller indices") {
  TL_TEST_REQUIRE_CUDA();
  const Shape in_shape{4, 5, 6};
  for (DType d : kAllDtypes) {
    for (const Variant& v : variants(in_shape, d)) {
      for (int64_t dim : {0, 1, 2, -1}) {
        const int64_t k = dim < 0 ? dim + 3 : dim;
        for (Shape ishape : {Shape{4, 5, 6}, Shape{3, 2, 9}, Shape{1, 5, 1}, Shape{2, 0, 3}}) {
          for (int64_t j = 0; j < 3; ++j)
            if (j != k) ishape[j] = std::min(ishape[j], in_shape[j]);
          // In-range positions along dim, in each index layout.
          for (const Layout& index : layouts_of(tl::randint(0, in_shape[k], ishape))) {
            check_op(describe("gather", d, in_shape, v.name) + " dim " + std::to_string(dim) +
                         " index " + str(ishape) + " " + index.name,
                     {v.t, index.tensor},
                     [dim](std::vector<Tensor>& in) { return tl::gather(in[0], dim, in[1]); });
          }
        }
      }
    }
    check_op(std::string("gather 0-dim ") + tl::dtype_name(d),
             {contiguous_values({}, d), tl::zeros({}, tl::kInt64)},
             [](std::vector<Tensor>& in) { return tl::gather(in[0], 0, in[1]); });
  }
}

TEST_CASE("cuda parity: indexing of large inputs (large)") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : {tl::kFloat32, tl::kBool}) {
    Tensor sparse = make_values({1000, 1001}, d, Fill::Sparse);
    check_op(std::string("nonzero large ") + tl::dtype_name(d), {sparse},
             [](std::vector<Tensor>& in) { return tl::nonzero(in[0]); });
    check_op(std::string("nonzero large transposed ") + tl::dtype_name(d), {sparse.t()},
             [](std::vector<Tensor>& in) { return tl::nonzero(in[0]); });
    check_op(std::string("masked_select large ") + tl::dtype_name(d),
             {make_values({kBig}, d), make_values({kBig}, tl::kBool)},
             [](std::vector<Tensor>& in) { return tl::masked_select(in[0], in[1]); });
  }
  // The classic: a comparison's mask, then its nonzero.
  check_op("nonzero of (x > 0.5)", {tl::rand({100, 100, 100})},
           [](std::vector<Tensor>& in) { return tl::nonzero(in[0] > 0.5); });
  Tensor big = contiguous_values({1000, 203}, tl::kFloat32);
  check_op("index_select rows", {big, tl::randint(0, 1000, {301})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 0, in[1]); });
  check_op("index_select columns of a transposed input", {big.t(), tl::randint(0, 1000, {450})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 1, in[1]); });
  // More indices than a grid's y or z dimension holds.
  check_op("index_select 200000 indices",
           {contiguous_values({5000}, tl::kInt32), tl::randint(0, 5000, {200000})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 0, in[1]); });
  check_op("index_select 70001 rows of 3",
           {contiguous_values({70001, 3}, tl::kInt64), tl::randint(0, 70001, {70001})},
           [](std::vector<Tensor>& in) { return tl::index_select(in[0], 0, in[1]); });
  check_op("gather large",
           {contiguous_values({400, 301}, tl::kFloat64), tl::randint(0, 301, {400, 500})},
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

TEST_CASE("cuda parity: cat of many strided and empty inputs along every dim") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : kAllDtypes) {
    for (int64_t dim : {0, 1, 2, -1}) {
      const int64_t k = dim < 0 ? dim + 3 : dim;
      for (int n : {1, 2, 7, 100}) {
        check_op(std::string("cat ") + std::to_string(n) + " inputs " + tl::dtype_name(d) +
                     " dim " + std::to_string(dim),
                 join_inputs(n, {3, 5, 4}, k, d), cat_along(dim));
      }
    }
    // Legacy: 1-D [0] inputs are skipped whatever the others' ndim.
    check_op(std::string("cat with [0] inputs ") + tl::dtype_name(d),
             {tl::empty({0}, d), contiguous_values({2, 3}, d), tl::empty({0}, d),
              variants({4, 3}, d)[3].t},
             cat_along(0));
    check_op(std::string("cat all empty ") + tl::dtype_name(d),
             {tl::empty({0, 3}, d), tl::empty({0, 3}, d)}, cat_along(1));
  }
  // Mixed dtypes promote.
  check_op("cat mixed dtypes",
           {contiguous_values({2, 3}, tl::kInt32), contiguous_values({1, 3}, tl::kFloat64).t().t(),
            contiguous_values({3, 2}, tl::kBool).t(), contiguous_values({4, 3}, tl::kInt64)},
           cat_along(0));
  check_op("cat bool and int",
           {contiguous_values({2, 3}, tl::kBool), contiguous_values({2, 3}, tl::kInt32)},
           cat_along(1));
}

TEST_CASE("cuda parity: stack, vstack, hstack and dstack of many inputs") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : {tl::kFloat32, tl::kInt64, tl::kBool, tl::kFloat64, tl::kInt32}) {
    const std::string name = tl::dtype_name(d);
    std::vector<Tensor> mats = join_inputs(100, {5, 7}, -1, d);
    for (int64_t dim : {0, 1, 2, -1})
      check_op("stack 100 " + name + " dim " + std::to_string(dim), mats,
               [dim](std::vector<Tensor>& in) { return tl::stack(in, dim); });
    check_op("dstack 100 " + name, mats, [](std::vector<Tensor>& in) { return tl::dstack(in); });
    check_op("vstack 100 " + name, mats, [](std::vector<Tensor>& in) { return tl::vstack(in); });
    check_op("hstack 100 " + name, mats, [](std::vector<Tensor>& in) { return tl::hstack(in); });
    std::vector<Tensor> vecs = join_inputs(50, {9}, -1, d);
    check_op("hstack 1-D " + name, vecs, [](std::vector<Tensor>& in) { return tl::hstack(in); });
    check_op("vstack 1-D " + name, vecs, [](std::vector<Tensor>& in) { return tl::vstack(in); });
    check_op("dstack 1-D " + name, vecs, [](std::vector<Tensor>& in) { return tl::dstack(in); });
    check_op("stack 0-dim " + name, join_inputs(33, {}, -1, d),
             [](std::vector<Tensor>& in) { return tl::stack(in); });
    check_op("stack 0-size " + name, {tl::empty({0, 3}, d), tl::empty({0, 3}, d)},
             [](std::vector<Tensor>& in) { return tl::stack(in, 1); });
  }
}

TEST_CASE("cuda parity: joining large inputs (large)") {
  TL_TEST_REQUIRE_CUDA();
  check_op("cat large along 0",
           {contiguous_values({300, 1049}, tl::kFloat32), variants({500, 1049}, tl::kFloat32)[2].t,
            variants({211, 1049}, tl::kFloat32)[3].t},
           cat_along(0));
  check_op("cat large along 1",
           {contiguous_values({1000, 257}, tl::kFloat64), variants({1000, 3}, tl::kFloat64)[3].t,
            variants({1000, 300}, tl::kFloat64)[1].t},
           cat_along(1));
  // More rows than a grid's y or z dimension holds.
  check_op("cat 70001 rows along 1",
           {contiguous_values({70001, 1}, tl::kInt32), contiguous_values({70001, 2}, tl::kInt32)},
           cat_along(1));
  check_op("stack 3000 small", join_inputs(3000, {3}, -1, tl::kFloat32),
           [](std::vector<Tensor>& in) { return tl::stack(in); });
}

// ---- past 32-bit indexing ----

TEST_CASE("cuda parity: more than 2^31 elements are indexed with 64 bits (large)") {
  TL_TEST_REQUIRE_CUDA();
  // Bool tensors of 2 GiB each: the CPU answers are known without computing them there.
  const int64_t n = (int64_t{1} << 31) + 7;
  const tl::TensorOptions bools = tl::TensorOptions(tl::kBool).device(kCuda);
  Tensor x = tl::zeros({n}, bools);
  x.slice(0, n - 3, n - 2).fill_(true);
  // argmax/argmin refuse bool (as torch): take them over an int32 copy (8 GiB, still past 2^31).
  CHECK(tl::argmax(x.to(tl::kInt32)).item<int64_t>() == n - 3);
  CHECK(tl::sum(x).item<int64_t>() == 1);
  CHECK(tl::any(x).item<bool>());
  CHECK(values_of(tl::nonzero(x)) == std::vector<double>{static_cast<double>(n - 3)});
  CHECK(tl::masked_select(tl::ones({n}, tl::TensorOptions(tl::kBool).device(kCuda)), x).numel() ==
        1);
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

TEST_CASE("cuda parity: equal and allclose give the CPU's answers") {
  TL_TEST_REQUIRE_CUDA();
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
  };
  for (const Pair& p : pairs) {
    INFO(p.what);
    Tensor da = same_layout_on(p.a, kCuda), db = same_layout_on(p.b, kCuda);
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

TEST_CASE(
    "cuda parity: special floats convert to integers and bool bytes other than 0/1 read as on the "
    "CPU") {
  TL_TEST_REQUIRE_CUDA();
  const int64_t n = 1024;
  std::vector<float> f(n);
  const float specials[] = {NAN, INFINITY, -INFINITY, 3e9f, -3e9f, 1e20f, 2147483647.5f, -0.0f};
  for (int64_t i = 0; i < n; ++i)
    f[i] = i % 3 == 0 ? specials[(i / 3) % 8] : (i % 3 == 1 ? i * 0.7f : -i * 1.3f);
  const Tensor x = tl::from_vector<float>(f);
  const Tensor xd = x.cuda();
  auto layouts = [](const Tensor& t) {
    return std::vector<Tensor>{t, t.slice(0, 1, t.numel(), 3), t.view({32, 32}).t(),
                               t.to(tl::kFloat64)};
  };
  const std::vector<Tensor> on_cpu = layouts(x), on_cuda = layouts(xd);
  for (size_t k = 0; k < on_cpu.size(); ++k) {
    CAPTURE(k);
    CHECK(on_cuda[k].to(tl::kInt32).to_vector<int32_t>() ==
          on_cpu[k].to(tl::kInt32).to_vector<int32_t>());
    CHECK(on_cuda[k].to(tl::kInt64).to_vector<int64_t>() ==
          on_cpu[k].to(tl::kInt64).to_vector<int64_t>());
    CHECK(on_cuda[k].to(tl::kBool).to_vector<bool>() == on_cpu[k].to(tl::kBool).to_vector<bool>());
  }
  CHECK(xd.to(tl::kInt32)[0].item<int32_t>() == std::numeric_limits<int32_t>::min());

  // Bytes 0..255 in a bool tensor, copied to the device as they are.
  Tensor m = tl::empty({n}, tl::kBool);
  auto* raw = static_cast<unsigned char*>(m.data_ptr());
  for (int64_t i = 0; i < n; ++i) raw[i] = static_cast<unsigned char>((i * 37) % 256);
  const Tensor md = m.cuda();
  for (const auto& [mc, mg] :
       {std::pair{m, md}, std::pair{m.slice(0, 0, n, 2), md.slice(0, 0, n, 2)},
        std::pair{m.view({32, 32}).t(), md.view({32, 32}).t()}}) {
    CHECK(tl::logical_not(mg).to_vector<bool>() == tl::logical_not(mc).to_vector<bool>());
    CHECK(tl::logical_and(mg, mg).to_vector<bool>() == tl::logical_and(mc, mc).to_vector<bool>());
    const Tensor yes_c = tl::ones(mc.shape(), tl::kBool), yes_g = yes_c.cuda();
    CHECK((mg == yes_g).to_vector<bool>() == (mc == yes_c).to_vector<bool>());
    CHECK(mg.to(tl::kInt32).to_vector<int32_t>() == mc.to(tl::kInt32).to_vector<int32_t>());
    CHECK(tl::sum(mg).item<int64_t>() == tl::sum(mc).item<int64_t>());
    CHECK(tl::all(mg).item<bool>() == tl::all(mc).item<bool>());
    CHECK(tl::min(mg).item<bool>() == tl::min(mc).item<bool>());
    CHECK(tl::nonzero(mg).to_vector<int64_t>() == tl::nonzero(mc).to_vector<int64_t>());
    const Tensor values = tl::arange(mc.numel(), tl::kInt64).view(mc.shape());
    CHECK(tl::masked_select(values.cuda(), mg).to_vector<int64_t>() ==
          tl::masked_select(values, mc).to_vector<int64_t>());
    CHECK(tl::where(mg, values.cuda(), -1).to_vector<int64_t>() ==
          tl::where(mc, values, -1).to_vector<int64_t>());
  }
}

// Elementwise op tests: every op against a naive reference on random inputs in several layouts,
// broadcast, zero-size, odd and large (multi-threaded) shapes; in-place ops on views; errors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

const std::vector<DType> kAllDtypes{tl::kBool, tl::kInt32, tl::kInt64, tl::kFloat32, tl::kFloat64};
const std::vector<DType> kNumeric{tl::kInt32, tl::kInt64, tl::kFloat32, tl::kFloat64};
const std::vector<DType> kFloats{tl::kFloat32, tl::kFloat64};

// NumPy broadcasting, written independently of the library's.
Shape broadcast_shape(const Shape& a, const Shape& b) {
  int64_t n = std::max(a.size(), b.size());
  Shape out = Shape::filled(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = i - (n - a.size()), ib = i - (n - b.size());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Row-major values of shape `from`, read at every index of the broadcast shape `to`.
std::vector<double> broadcast_values(const std::vector<double>& v, const Shape& from,
                                     const Shape& to) {
  std::vector<double> out(to.numel());
  for (int64_t i = 0; i < to.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, to);
    int64_t src = 0;
    for (int64_t d = 0; d < from.size(); ++d)
      src = src * from[d] + (from[d] == 1 ? 0 : idx[d + to.size() - from.size()]);
    out[i] = v[src];
  }
  return out;
}

// Integer power with PyTorch's rules for negative exponents.
double int_pow(double base, double e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? (std::fmod(-e, 2) == 1 ? -1 : 1) : 0;
  double r = 1;
  for (int i = 0; i < e; ++i) r *= base;
  return r;
}

// Expected values as the result dtype stores them.
std::vector<double> stored_as(std::vector<double> v, DType dtype) {
  if (dtype == tl::kBool)
    for (double& x : v) x = x != 0;
  return v;
}

enum class OutKind { Same, Float, Bool };
DType out_dtype(OutKind kind, DType in) {
  switch (kind) {
    case OutKind::Same:
      return in;
    case OutKind::Float:
      return tl::is_floating_point(in) ? in : tl::kFloat32;
    case OutKind::Bool:
      return tl::kBool;
  }
  return in;
}

using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;
using BinaryRef = std::function<double(double, double, DType)>;

struct BinaryCase {
  const char* name;
  BinaryFn fn;
  BinaryRef ref;  // on the input values, given the input dtype
  std::vector<DType> dtypes;
  OutKind out;
};

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](auto& a, auto& b) { return tl::add(a, b); },
       [](double a, double b, DType) { return a + b; }, kAllDtypes, OutKind::Same},
      {"sub", [](auto& a, auto& b) { return tl::sub(a, b); },
       [](double a, double b, DType) { return a - b; }, kNumeric, OutKind::Same},
      {"mul", [](auto& a, auto& b) { return tl::mul(a, b); },
       [](double a, double b, DType) { return a * b; }, kAllDtypes, OutKind::Same},
      {"div", [](auto& a, auto& b) { return tl::div(a, b); },
       [](double a, double b, DType) { return a / b; }, kAllDtypes, OutKind::Float},
      {"pow", [](auto& a, auto& b) { return tl::pow(a, b); },
       [](double a, double b, DType d) {
         return tl::is_floating_point(d) ? std::pow(a, b) : int_pow(a, b);
       },
       kNumeric, OutKind::Same},
      {"maximum", [](auto& a, auto& b) { return tl::maximum(a, b); },
       [](double a, double b, DType) { return nan_max(a, b); }, kAllDtypes, OutKind::Same},
      {"minimum", [](auto& a, auto& b) { return tl::minimum(a, b); },
       [](double a, double b, DType) { return nan_min(a, b); }, kAllDtypes, OutKind::Same},
      {"gt", [](auto& a, auto& b) { return tl::gt(a, b); },
       [](double a, double b, DType) { return double(a > b); }, kAllDtypes, OutKind::Bool},
      {"lt", [](auto& a, auto& b) { return tl::lt(a, b); },
       [](double a, double b, DType) { return double(a < b); }, kAllDtypes, OutKind::Bool},
      {"ge", [](auto& a, auto& b) { return tl::ge(a, b); },
       [](double a, double b, DType) { return double(a >= b); }, kAllDtypes, OutKind::Bool},
      {"le", [](auto& a, auto& b) { return tl::le(a, b); },
       [](double a, double b, DType) { return double(a <= b); }, kAllDtypes, OutKind::Bool},
      {"eq", [](auto& a, auto& b) { return tl::eq(a, b); },
       [](double a, double b, DType) { return double(a == b); }, kAllDtypes, OutKind::Bool},
      {"ne", [](auto& a, auto& b) { return tl::ne(a, b); },
       [](double a, double b, DType) { return double(a != b); }, kAllDtypes, OutKind::Bool},
      {"logical_and", [](auto& a, auto& b) { return tl::logical_and(a, b); },
       [](double a, double b, DType) { return double(a != 0 && b != 0); }, kAllDtypes,
       OutKind::Bool},
      {"logical_or", [](auto& a, auto& b) { return tl::logical_or(a, b); },
       [](double a, double b, DType) { return double(a != 0 || b != 0); }, kAllDtypes,
       OutKind::Bool},
  };
}

// Random inputs of shapes sa and sb in every layout, with their values broadcast to the
// result shape; made once and shared by all ops.
struct BinaryInputs {
  DType dtype;
  Shape sa, sb, so;
  std::vector<double> va, vb;  // broadcast to so
  std::vector<Layout> la, lb;
};

BinaryInputs binary_inputs(DType dtype, const Shape& sa, const Shape& sb, tl::Device device) {
  Tensor a = random_tensor(sa, dtype, device), b = random_tensor(sb, dtype, device);
  Shape so = broadcast_shape(sa, sb);
  return {dtype,
          sa,
          sb,
          so,
          broadcast_values(values_of(a), sa, so),
          broadcast_values(values_of(b), sb, so),
          layouts_of(a),
          layouts_of(b)};
}

// Whether a pair of layouts is worth running: every pair of the strided layouts, and the
// misaligned "offset" layout (last) against the contiguous and the offset one, which is what
// decides a device's vectorized or unaligned path.
bool layout_pair_wanted(size_t i, size_t j, size_t n_a, size_t n_b) {
  const bool ia = i + 1 == n_a, jb = j + 1 == n_b;  // offset layouts
  if (!ia && !jb) return true;
  return (ia || i == 0) && (jb || j == 0);
}

// Runs `c` on the wanted pairs of layouts (just the matching pairs when `all_pairs` is false)
// and compares with the reference on the broadcast values.
void check_binary(const BinaryCase& c, const BinaryInputs& in, bool all_pairs = true) {
  DType od = out_dtype(c.out, in.dtype);
  std::vector<double> expected(in.va.size());
  for (size_t i = 0; i < in.va.size(); ++i) expected[i] = c.ref(in.va[i], in.vb[i], in.dtype);
  expected = stored_as(expected, od);
  for (size_t i = 0; i < in.la.size(); ++i) {
    for (size_t j = 0; j < in.lb.size(); ++j) {
      if (!all_pairs && j != i % in.lb.size()) continue;
      if (all_pairs && !layout_pair_wanted(i, j, in.la.size(), in.lb.size())) continue;
      const Tensor &a = in.la[i].tensor, &b = in.lb[j].tensor;
      INFO(c.name << " " << in.dtype << " " << in.sa << " op " << in.sb << " on " << a.device()
                  << ", layouts " << in.la[i].name << " / " << in.lb[j].name);
      Tensor out = c.fn(a, b);
      CHECK(out.shape() == in.so);
      CHECK(out.dtype() == od);
      CHECK(out.device() == a.device());
      check_values(out, expected);
    }
  }
}

bool supports(const std::vector<DType>& dtypes, DType d) {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

// Odd sizes (1, 7, 33, 37, 1001, 1025: not multiples of a 4- or 8-wide vector) leave tails for
// vectorized paths; size-1 and 0-dim operands broadcast with stride 0.
const std::vector<std::pair<Shape, Shape>> kShapePairs{
    {{3, 4}, {3, 4}},  {{3, 1}, {1, 4}},    {{5}, {2, 3, 5}},       {{}, {4}},    {{4}, {}},
    {{}, {}},          {{0, 3}, {0, 3}},    {{0, 3}, {3}},          {{37}, {37}}, {{1001}, {1001}},
    {{7, 143}, {143}}, {{2, 3, 4}, {3, 1}}, {{2, 1, 4}, {1, 3, 1}}, {{1}, {1}},   {{7}, {7}},
    {{33}, {1}},       {{1025}, {1025}},    {{1025}, {}},
};

TEST_CASE("elementwise binary ops match a reference on every dtype, layout and broadcast") {
  for (tl::Device device : test_devices()) {
    for (DType dtype : kAllDtypes) {
      for (const auto& [sa, sb] : kShapePairs) {
        BinaryInputs in = binary_inputs(dtype, sa, sb, device);
        for (const BinaryCase& c : binary_cases())
          if (supports(c.dtypes, dtype)) check_binary(c, in);
      }
    }
  }
}

TEST_CASE("elementwise binary ops on large inputs take the multi-threaded path") {
  const std::vector<std::pair<Shape, Shape>> shapes{{{300, 200}, {300, 200}}, {{300, 200}, {200}}};
  for (tl::Device device : test_devices()) {
    for (DType dtype : {tl::kFloat32, tl::kInt64}) {
      for (const auto& [sa, sb] : shapes) {
        BinaryInputs in = binary_inputs(dtype, sa, sb, device);
        for (const BinaryCase& c : binary_cases())
          if (supports(c.dtypes, dtype)) check_binary(c, in, false);
      }
    }
  }
}

// ---- unary ----

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  std::function<double(double)> ref;
  std::vector<DType> dtypes;
  OutKind out;
};

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }

std::vector<UnaryCase> unary_cases() {
  return {
      {"neg", [](auto& a) { return tl::neg(a); }, [](double x) { return -x; }, kNumeric,
       OutKind::Same},
      {"abs", [](auto& a) { return tl::abs(a); }, [](double x) { return std::abs(x); }, kNumeric,
       OutKind::Same},
      {"exp", [](auto& a) { return tl::exp(a); }, [](double x) { return std::exp(x); }, kAllDtypes,
       OutKind::Float},
      {"log", [](auto& a) { return tl::log(a); }, [](double x) { return std::log(x); }, kAllDtypes,
       OutKind::Float},
      {"sqrt", [](auto& a) { return tl::sqrt(a); }, [](double x) { return std::sqrt(x); },
       kAllDtypes, OutKind::Float},
      {"sin", [](auto& a) { return tl::sin(a); }, [](double x) { return std::sin(x); }, kAllDtypes,
       OutKind::Float},
      {"cos", [](auto& a) { return tl::cos(a); }, [](double x) { return std::cos(x); }, kAllDtypes,
       OutKind::Float},
      {"tanh", [](auto& a) { return tl::tanh(a); }, [](double x) { return std::tanh(x); },
       kAllDtypes, OutKind::Float},
      {"sigmoid", [](auto& a) { return tl::sigmoid(a); }, sigmoid_ref, kAllDtypes, OutKind::Float},
      {"relu", [](auto& a) { return tl::relu(a); }, [](double x) { return std::max(x, 0.0); },
       kNumeric, OutKind::Same},
      {"logical_not", [](auto& a) { return tl::logical_not(a); },
       [](double x) { return double(x == 0); }, kAllDtypes, OutKind::Bool},
  };
}

void check_unary(const UnaryCase& c, DType dtype, const Shape& shape, tl::Device device) {
  Tensor a = random_tensor(shape, dtype, device);
  std::vector<double> va = values_of(a), expected(va.size());
  DType od = out_dtype(c.out, dtype);
  for (size_t i = 0; i < va.size(); ++i) expected[i] = c.ref(va[i]);
  expected = stored_as(expected, od);
  for (const Layout& l : layouts_of(a)) {
    INFO(c.name << " " << dtype << " " << shape << " on " << device << ", layout " << l.name);
    Tensor out = c.fn(l.tensor);
    CHECK(out.shape() == shape);
    CHECK(out.dtype() == od);
    check_values(out, expected);
  }
}

TEST_CASE("elementwise unary ops match a reference on every dtype and layout") {
  const std::vector<Shape> shapes{{},     {1},    {7},       {33},   {37},
                                  {3, 4}, {0, 3}, {2, 3, 4}, {1001}, {1025}};
  for (tl::Device device : test_devices())
    for (const UnaryCase& c : unary_cases())
      for (DType dtype : c.dtypes)
        for (const Shape& shape : shapes) check_unary(c, dtype, shape, device);
}

TEST_CASE("elementwise unary ops on large inputs take the multi-threaded path") {
  for (tl::Device device : test_devices())
    for (const UnaryCase& c : unary_cases())
      for (DType dtype : {tl::kFloat32, tl::kInt64})
        if (supports(c.dtypes, dtype)) check_unary(c, dtype, {300, 200}, device);
}

TEST_CASE("elementwise unary ops read broadcast (stride 0) and permuted inputs") {
  for (tl::Device device : test_devices()) {
    for (DType dtype : {tl::kFloat32, tl::kInt32, tl::kBool}) {
      // A [1, 7] row expanded to [5, 7], and a [3, 1, 6] tensor expanded in its middle dim.
      Tensor row = random_tensor({1, 7}, dtype, device);
      Tensor mid = random_tensor({3, 1, 6}, dtype, device);
      Tensor perm = random_tensor({4, 3, 5}, dtype, device).permute({2, 0, 1});
      for (const Tensor& in : {row.expand({5, 7}), mid.expand({3, 4, 6}), perm}) {
        std::vector<double> v = values_of(in);
        for (const UnaryCase& c : unary_cases()) {
          if (!supports(c.dtypes, dtype)) continue;
          INFO(c.name << " " << dtype << " " << in.shape() << " strides " << in.strides() << " on "
                      << device);
          std::vector<double> expected(v.size());
          for (size_t i = 0; i < v.size(); ++i) expected[i] = c.ref(v[i]);
          Tensor out = c.fn(in);
          CHECK(out.shape() == in.shape());
          check_values(out, stored_as(expected, out_dtype(c.out, dtype)));
        }
      }
    }
  }
}

TEST_CASE("elementwise method forms and operators agree with the functions") {
  for (tl::Device device : test_devices()) {
    Tensor x = random_tensor({4, 5}, tl::kFloat32, device),
           y = random_tensor({4, 5}, tl::kFloat32, device);
    Tensor m = random_tensor({4, 5}, tl::kBool, device),
           n = random_tensor({4, 5}, tl::kBool, device);
    CHECK(tl::equal(x + y, tl::add(x, y)));
    CHECK(tl::equal(x - y, tl::sub(x, y)));
    CHECK(tl::equal(x * y, tl::mul(x, y)));
    CHECK(tl::equal(x / y, tl::div(x, y)));
    CHECK(tl::equal(-x, tl::neg(x)));
    CHECK(tl::equal(x + 1.5, tl::add(x, 1.5)));
    CHECK(tl::equal(1.5 + x, tl::add(1.5, x)));
    CHECK(tl::equal(x - 1, tl::sub(x, 1)));
    CHECK(tl::equal(1 - x, tl::sub(1, x)));
    CHECK(tl::equal(2 * x, tl::mul(2, x)));
    CHECK(tl::equal(x * 2, tl::mul(x, 2)));
    CHECK(tl::equal(x / 2, tl::div(x, 2)));
    CHECK(tl::equal(2 / x, tl::div(2, x)));
    CHECK(tl::equal(x > y, tl::gt(x, y)));
    CHECK(tl::equal(x < y, tl::lt(x, y)));
    CHECK(tl::equal(x >= y, tl::ge(x, y)));
    CHECK(tl::equal(x <= y, tl::le(x, y)));
    CHECK(tl::equal(x == y, tl::eq(x, y)));
    CHECK(tl::equal(x != y, tl::ne(x, y)));
    CHECK(tl::equal(x > 0.5, tl::gt(x, 0.5)));
    CHECK(tl::equal(x < 0.5, tl::lt(x, 0.5)));
    CHECK(tl::equal(x >= 0.5, tl::ge(x, 0.5)));
    CHECK(tl::equal(x <= 0.5, tl::le(x, 0.5)));
    CHECK(tl::equal(x == 0.5, tl::eq(x, 0.5)));
    CHECK(tl::equal(x != 0.5, tl::ne(x, 0.5)));
    CHECK(tl::equal(m & n, tl::logical_and(m, n)));
    CHECK(tl::equal(m | n, tl::logical_or(m, n)));
    CHECK(tl::equal(!m, tl::logical_not(m)));
    CHECK(tl::equal(~m, tl::logical_not(m)));
    CHECK(tl::equal(x.abs(), tl::abs(x)));
    CHECK(tl::equal(x.exp(), tl::exp(x)));
    CHECK(tl::allclose(x.log(), tl::log(x), 0, 0, true));
    CHECK(tl::allclose(x.sqrt(), tl::sqrt(x), 0, 0, true));
    CHECK(tl::equal(x.sin(), tl::sin(x)));
    CHECK(tl::equal(x.cos(), tl::cos(x)));
    CHECK(tl::equal(x.pow(2), x * x));
    CHECK(tl::allclose(x.pow(y), tl::pow(x, y), 0, 0, true));
  }
}

// ---- scalar forms ----

TEST_CASE("elementwise ops with scalars broadcast the scalar and promote like PyTorch") {
  for (tl::Device device : test_devices()) {
    Tensor f = random_tensor({3, 5}, tl::kFloat32, device);
    Tensor d = random_tensor({3, 5}, tl::kFloat64, device);
    Tensor i = random_tensor({3, 5}, tl::kInt32, device);
    Tensor l = random_tensor({3, 5}, tl::kInt64, device);
    Tensor b = random_tensor({3, 5}, tl::kBool, device);
    std::vector<double> vf = values_of(f), vd = values_of(d), vi = values_of(i), vl = values_of(l),
                        vb = values_of(b);
    auto map = [](const std::vector<double>& v, const std::function<double(double)>& g) {
      std::vector<double> out(v.size());
      std::transform(v.begin(), v.end(), out.begin(), g);
      return out;
    };
    struct Case {
      std::string what;
      Tensor got;
      DType dtype;
      std::vector<double> expected;
    };
    std::vector<Case> cases{
        {"f + 2.5", f + 2.5, tl::kFloat32, map(vf, [](double x) { return x + 2.5; })},
        {"2.5 + f", 2.5 + f, tl::kFloat32, map(vf, [](double x) { return 2.5 + x; })},
        {"i + 2.5", i + 2.5, tl::kFloat32, map(vi, [](double x) { return x + 2.5; })},
        {"i + 3", i + 3, tl::kInt32, map(vi, [](double x) { return x + 3; })},
        {"3 - l", 3 - l, tl::kInt64, map(vl, [](double x) { return 3 - x; })},
        {"d * 2", d * 2, tl::kFloat64, map(vd, [](double x) { return x * 2; })},
        {"i / 2", i / 2, tl::kFloat32, map(vi, [](double x) { return x / 2; })},
        {"1.0 / f", 1.0 / f, tl::kFloat32, map(vf, [](double x) { return 1.0 / x; })},
        {"b + 1", b + 1, tl::kInt64, map(vb, [](double x) { return x + 1; })},
        {"b + true", b + true, tl::kBool, map(vb, [](double) { return 1.0; })},
        {"b * 2.5", b * 2.5, tl::kFloat32, map(vb, [](double x) { return x * 2.5; })},
        {"pow(f, 2)", tl::pow(f, 2), tl::kFloat32, map(vf, [](double x) { return x * x; })},
        {"pow(f, 3)", tl::pow(f, 3), tl::kFloat32, map(vf, [](double x) { return x * x * x; })},
        {"pow(f, 0.5)", tl::pow(f, 0.5), tl::kFloat32,
         map(vf, [](double x) { return std::pow(x, 0.5); })},
        {"pow(i, 3)", tl::pow(i, 3), tl::kInt32, map(vi, [](double x) { return x * x * x; })},
        {"pow(i, 0)", tl::pow(i, 0), tl::kInt32, map(vi, [](double) { return 1.0; })},
        {"pow(l, -1.5)", tl::pow(l, -1.5), tl::kFloat32,
         map(vl, [](double x) { return std::pow(x, -1.5); })},
        {"pow(2, i)", tl::pow(2, i), tl::kInt32, map(vi, [](double x) { return int_pow(2, x); })},
        {"pow(2.0, f)", tl::pow(2.0, f), tl::kFloat32,
         map(vf, [](double x) { return std::pow(2.0, x); })},
        {"maximum(f, 0.0)", tl::maximum(f, 0.0), tl::kFloat32,
         map(vf, [](double x) { return std::max(x, 0.0); })},
        {"minimum(1, i)", tl::minimum(1, i), tl::kInt32,
         map(vi, [](double x) { return std::min(1.0, x); })},
        {"i > 2.5", i > 2.5, tl::kBool, map(vi, [](double x) { return double(x > 2.5); })},
        {"gt(2.5, i)", tl::gt(2.5, i), tl::kBool,
         map(vi, [](double x) { return double(2.5 > x); })},
        {"l == 3", l == 3, tl::kBool, map(vl, [](double x) { return double(x == 3); })},
        {"ne(0, i)", tl::ne(0, i), tl::kBool, map(vi, [](double x) { return double(0 != x); })},
        {"le(f, 0)", tl::le(f, 0), tl::kBool, map(vf, [](double x) { return double(x <= 0); })},
        {"logical_and(f, 1)", tl::logical_and(f, 1), tl::kBool,
         map(vf, [](double x) { return double(x != 0); })},
        {"logical_or(0, b)", tl::logical_or(0, b), tl::kBool, vb},
    };
    for (const Case& c : cases) {
      INFO(c.what << " on " << device);
      CHECK(c.got.dtype() == c.dtype);
      CHECK(c.got.shape() == Shape{3, 5});
      check_values(c.got, c.expected);
    }
    // A scalar on a 0-dim tensor keeps it 0-dim.
    Tensor s = tl::scalar_tensor(3, tl::TensorOptions(tl::kInt32).device(device));
    Tensor r = s * 2;
    CHECK(r.dim() == 0);
    CHECK(r.dtype() == tl::kInt32);
    CHECK(r.item<int32_t>() == 6);
  }
}

// ---- NaN, int pow, wraparound ----

TEST_CASE("elementwise maximum, minimum and clamp propagate NaN") {
  for (tl::Device device : test_devices()) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor a = tl::from_vector<float>({1, nan, 3, nan}, {4}, device);
    Tensor b = tl::from_vector<float>({nan, 2, 1, nan}, {4}, device);
    check_values(tl::maximum(a, b), {NAN, NAN, 3, NAN});
    check_values(tl::minimum(a, b), {NAN, NAN, 1, NAN});
    check_values(tl::clamp(a, -1.0, 2.0), {1, NAN, 2, NAN});
    check_values(tl::relu(a * -1), {0, NAN, 0, NAN});
    check_values(a > 0, {1, 0, 1, 0});
    check_values(a != a, {0, 1, 0, 1});
  }
}

TEST_CASE("elementwise integer pow is exact and follows PyTorch for negative exponents") {
  for (tl::Device device : test_devices()) {
    Tensor base = tl::from_vector<int64_t>({2, 3, -3, 1, -1, -1, 0, 5, 7, 2}, {10}, device);
    Tensor e = tl::from_vector<int64_t>({10, 5, 3, -4, -3, -2, 0, -1, 20, 62}, {10}, device);
    std::vector<int64_t> got = tl::pow(base, e).to_vector<int64_t>();
    std::vector<int64_t> want{
        1024, 243, -27, 1, -1, 1, 1, 0, 79792266297612001LL, int64_t{1} << 62};
    CHECK(got == want);
    Tensor b32 = tl::from_vector<int32_t>({3, -2, 10}, {3}, device);
    CHECK(tl::pow(b32, 19).to_vector<int32_t>() ==
          std::vector<int32_t>{1162261467, -524288, -1981284352});
  }
}

TEST_CASE("elementwise integer arithmetic wraps around like PyTorch") {
  for (tl::Device device : test_devices()) {
    const int32_t big = std::numeric_limits<int32_t>::max(),
                  small = std::numeric_limits<int32_t>::min();
    Tensor a = tl::from_vector<int32_t>({big, small, small}, {3}, device);
    CHECK((a + 1).to_vector<int32_t>() == std::vector<int32_t>{small, small + 1, small + 1});
    CHECK((a - 1).to_vector<int32_t>() == std::vector<int32_t>{big - 1, big, big});
    CHECK(tl::neg(a).to_vector<int32_t>() == std::vector<int32_t>{-big, small, small});
    CHECK(tl::abs(a).to_vector<int32_t>() == std::vector<int32_t>{big, small, small});
  }
}

// ---- where ----

TEST_CASE("elementwise where selects, promotes and broadcasts all three inputs") {
  struct Shapes {
    Shape c, a, b;
  };
  const std::vector<Shapes> shapes{{{3, 4}, {3, 4}, {3, 4}}, {{3, 1}, {1, 4}, {3, 4}},
                                   {{4}, {2, 1, 4}, {}},     {{}, {5}, {5}},
                                   {{0, 3}, {3}, {0, 3}},    {{300, 200}, {200}, {300, 1}}};
  for (tl::Device device : test_devices()) {
    for (DType dtype : kAllDtypes) {
      for (const Shapes& s : shapes) {
        Tensor c = random_tensor(s.c, tl::kBool, device), a = random_tensor(s.a, dtype, device),
               b = random_tensor(s.b, dtype, device);
        Shape so = broadcast_shape(s.c, broadcast_shape(s.a, s.b));
        std::vector<double> vc = broadcast_values(values_of(c), s.c, so),
                            va = broadcast_values(values_of(a), s.a, so),
                            vb = broadcast_values(values_of(b), s.b, so), expected(vc.size());
        for (size_t i = 0; i < vc.size(); ++i) expected[i] = vc[i] != 0 ? va[i] : vb[i];
        std::vector<Layout> lc = layouts_of(c), la = layouts_of(a), lb = layouts_of(b);
        for (size_t k = 0; k < lc.size(); ++k) {
          const Tensor& ta = la[k % la.size()].tensor;
          const Tensor& tb = lb[(k + 1) % lb.size()].tensor;
          INFO(dtype << " " << s.c << " " << s.a << " " << s.b << " cond layout " << lc[k].name);
          Tensor out = tl::where(lc[k].tensor, ta, tb);
          CHECK(out.shape() == so);
          CHECK(out.dtype() == dtype);
          check_values(out, expected);
        }
      }
    }
    // Scalars and mixed dtypes promote as torch.where.
    Tensor c = random_tensor({6}, tl::kBool, device);
    Tensor i = random_tensor({6}, tl::kInt32, device), f = random_tensor({6}, tl::kFloat64, device);
    std::vector<double> vc = values_of(c), vi = values_of(i), vf = values_of(f);
    auto pick = [&](const std::function<double(size_t)>& x,
                    const std::function<double(size_t)>& y) {
      std::vector<double> out(vc.size());
      for (size_t k = 0; k < vc.size(); ++k) out[k] = vc[k] != 0 ? x(k) : y(k);
      return out;
    };
    Tensor r = tl::where(c, i, f);
    CHECK(r.dtype() == tl::kFloat64);
    check_values(r, pick([&](size_t k) { return vi[k]; }, [&](size_t k) { return vf[k]; }));
    r = tl::where(c, i, 2.5);
    CHECK(r.dtype() == tl::kFloat32);
    check_values(r, pick([&](size_t k) { return vi[k]; }, [](size_t) { return 2.5; }));
    r = tl::where(c, 7, i);
    CHECK(r.dtype() == tl::kInt32);
    check_values(r, pick([](size_t) { return 7.0; }, [&](size_t k) { return vi[k]; }));
    r = tl::where(c, 1, 0);
    CHECK(r.dtype() == tl::kInt64);
    check_values(r, pick([](size_t) { return 1.0; }, [](size_t) { return 0.0; }));
    r = tl::where(c, 1.0, 0);
    CHECK(r.dtype() == tl::kFloat32);
    check_values(r, pick([](size_t) { return 1.0; }, [](size_t) { return 0.0; }));
  }
}

// ---- clamp ----

TEST_CASE("elementwise clamp with scalar and tensor bounds") {
  for (tl::Device device : test_devices()) {
    for (DType dtype : kNumeric) {
      Tensor x = random_tensor({7, 9}, dtype, device);
      std::vector<double> vx = values_of(x);
      auto clamped = [&](std::optional<double> lo, std::optional<double> hi) {
        std::vector<double> out(vx);
        for (double& v : out) {
          if (lo) v = std::max(v, *lo);
          if (hi) v = std::min(v, *hi);
        }
        return out;
      };
      for (const Layout& l : layouts_of(x)) {
        INFO(dtype << " layout " << l.name);
        Tensor r = tl::clamp(l.tensor, -3, 4);
        CHECK(r.dtype() == dtype);
        check_values(r, clamped(-3, 4));
        check_values(tl::clamp(l.tensor, -1, std::nullopt), clamped(-1, std::nullopt));
        check_values(tl::clamp(l.tensor, std::nullopt, 2), clamped(std::nullopt, 2));
        // min > max gives max everywhere.
        check_values(tl::clamp(l.tensor, 5, 1), std::vector<double>(vx.size(), 1));
      }
      Tensor r = tl::clamp(x, 0.5, 1.5);
      CHECK(r.dtype() == (tl::is_floating_point(dtype) ? dtype : tl::kFloat32));
      check_values(r, clamped(0.5, 1.5));
    }
    // Tensor bounds broadcast with the input.
    Tensor x = random_tensor({3, 4}, tl::kFloat32, device);
    Tensor lo = random_tensor({4}, tl::kFloat32, device) - 1.0,
           hi = random_tensor({2, 3, 1}, tl::kFloat32, device) + 1.0;
    Shape so{2, 3, 4};
    std::vector<double> vx = broadcast_values(values_of(x), x.shape(), so),
                        vlo = broadcast_values(values_of(lo), lo.shape(), so),
                        vhi = broadcast_values(values_of(hi), hi.shape(), so), both(vx.size()),
                        only_lo(vx.size());
    for (size_t k = 0; k < vx.size(); ++k) {
      both[k] = std::min(std::max(vx[k], vlo[k]), vhi[k]);
      only_lo[k] = std::max(vx[k], vlo[k]);
    }
    Tensor r = tl::clamp(x, std::optional<Tensor>(lo), std::optional<Tensor>(hi));
    CHECK(r.shape() == so);
    check_values(r, both);
    Tensor r2 = tl::clamp(x, std::optional<Tensor>(lo), std::nullopt);
    CHECK(r2.shape() == Shape{3, 4});
    check_values(r2, std::vector<double>(only_lo.begin(), only_lo.begin() + 12));
    // Zero-size input.
    CHECK(tl::clamp(tl::zeros({0, 3}, tl::TensorOptions().device(device)), 0, 1).shape() ==
          Shape{0, 3});
  }
}

// ---- in place ----

TEST_CASE("elementwise in-place ops write into views and leave the rest untouched") {
  for (tl::Device device : test_devices()) {
    for (DType dtype : kNumeric) {
      Tensor x = random_tensor({4, 6}, dtype, device);
      std::vector<double> before = values_of(x);
      Tensor y = random_tensor({4, 3}, dtype, device);
      std::vector<double> vy = values_of(y);
      Tensor view = x.slice(1, 1, std::nullopt, 2);  // columns 1, 3, 5
      Tensor& ret = view.add_(y);
      CHECK(&ret == &view);
      std::vector<double> expected = before;
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t k = 0; k < 3; ++k) expected[r * 6 + 1 + 2 * k] += vy[r * 3 + k];
      INFO(dtype);
      check_values(x, expected);

      // Broadcast other into a transposed view, with sub_, mul_ and scalars.
      Tensor row = random_tensor({4}, dtype, device);
      std::vector<double> vr = values_of(row);
      Tensor xt = x.t();  // [6, 4]
      xt.sub_(row);
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t c = 0; c < 6; ++c) expected[r * 6 + c] -= vr[r];
      check_values(x, expected);
      x.mul_(2);
      for (double& v : expected) v *= 2;
      check_values(x, expected);
      x[1].add_(3);
      for (int64_t c = 0; c < 6; ++c) expected[6 + c] += 3;
      check_values(x, expected);
      x += x;  // reads and writes the same elements
      for (double& v : expected) v *= 2;
      check_values(x, expected);
    }
    // div_ on floats, with a 0-dim tensor and a scalar.
    Tensor f = random_tensor({5, 5}, tl::kFloat64, device);
    std::vector<double> vf = values_of(f);
    f.div_(tl::scalar_tensor(4.0, tl::TensorOptions(tl::kFloat64).device(device)));
    f /= 0.5;
    for (double& v : vf) v = v / 4.0 / 0.5;
    check_values(f, vf);
    // Operators on a view.
    Tensor g = random_tensor({3, 3}, tl::kFloat32, device);
    std::vector<double> vg = values_of(g);
    Tensor col = g.select(1, 2);
    col *= 10;
    col -= 1;
    for (int64_t r = 0; r < 3; ++r) vg[r * 3 + 2] = vg[r * 3 + 2] * 10 - 1;
    check_values(g, vg, 1e-5, 1e-5);
  }
}

TEST_CASE("elementwise in-place ops promote and cast back where PyTorch allows it") {
  for (tl::Device device : test_devices()) {
    // int32 += int64 tensor computes in int64 and stores int32.
    Tensor i = random_tensor({3, 4}, tl::kInt32, device);
    Tensor l = random_tensor({3, 4}, tl::kInt64, device);
    std::vector<double> vi = values_of(i), vl = values_of(l);
    i.add_(l);
    CHECK(i.dtype() == tl::kInt32);
    for (size_t k = 0; k < vi.size(); ++k) vi[k] += vl[k];
    check_values(i, vi);
    // float32 *= float64 tensor.
    Tensor f = random_tensor({3, 4}, tl::kFloat32, device);
    Tensor d = random_tensor({4}, tl::kFloat64, device);
    std::vector<double> vf = values_of(f), vd = values_of(d);
    f.mul_(d);
    CHECK(f.dtype() == tl::kFloat32);
    for (size_t k = 0; k < vf.size(); ++k) vf[k] *= vd[k % 4];
    check_values(f, vf);
    // float += int tensor; bool |= bool via add_.
    Tensor g = random_tensor({5}, tl::kFloat32, device);
    Tensor n = random_tensor({5}, tl::kInt64, device);
    std::vector<double> vg = values_of(g), vn = values_of(n);
    g.add_(n);
    for (size_t k = 0; k < vg.size(); ++k) vg[k] += vn[k];
    check_values(g, vg);
    Tensor m = random_tensor({8}, tl::kBool, device), o = random_tensor({8}, tl::kBool, device);
    std::vector<double> vm = values_of(m), vo = values_of(o);
    m.add_(o);
    CHECK(m.dtype() == tl::kBool);
    for (size_t k = 0; k < vm.size(); ++k) vm[k] = vm[k] != 0 || vo[k] != 0;
    check_values(m, vm);
    // Zero-size in-place is a no-op.
    Tensor z = tl::zeros({0, 3}, tl::TensorOptions().device(device));
    z.add_(tl::ones({3}, tl::TensorOptions().device(device)));
    CHECK(z.shape() == Shape{0, 3});
  }
}

TEST_CASE("elementwise in-place ops read an overlapping other as it was before the op") {
  for (tl::Device device : test_devices()) {
    Tensor x = random_tensor({5, 4}, tl::kFloat32, device);
    std::vector<double> v = values_of(x), expected = v;
    // Rows 1..4 += rows 0..3: row r must use the old row r - 1, not the one just written.
    x.slice(0, 1).add_(x.slice(0, 0, 4));
    for (int64_t r = 1; r < 5; ++r)
      for (int64_t c = 0; c < 4; ++c) expected[r * 4 + c] = v[r * 4 + c] + v[(r - 1) * 4 + c];
    check_values(x, expected);

    Tensor s = random_tensor({4, 4}, tl::kFloat64, device);
    std::vector<double> vs = values_of(s), want(16);
    s.add_(s.t());
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 4; ++c) want[r * 4 + c] = vs[r * 4 + c] + vs[c * 4 + r];
    check_values(s, want);

    // A row of self broadcast over self.
    Tensor q = random_tensor({3, 4}, tl::kInt64, device);
    std::vector<double> vq = values_of(q), wq(12);
    q.mul_(q[0]);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) wq[r * 4 + c] = vq[r * 4 + c] * vq[c];
    check_values(q, wq);
  }
}

// ---- errors ----

TEST_CASE("elementwise errors name the op and leave tensors untouched") {
  for (tl::Device device : test_devices()) {
    auto opts = [&](DType d) { return tl::TensorOptions(d).device(device); };
    Tensor a = random_tensor({2, 3}, tl::kFloat32, device),
           b = random_tensor({4}, tl::kFloat32, device);
    Tensor i = random_tensor({2, 3}, tl::kInt64, device),
           m = random_tensor({2, 3}, tl::kBool, device);

    // Shapes.
    check_throws<tl::ShapeError>([&] { tl::add(a, b); }, "[tl::add] shapes [2, 3] and [4]");
    check_throws<tl::ShapeError>([&] { (void)(a * b); }, "tl::mul");
    check_throws<tl::ShapeError>([&] { (void)(a > b); }, "tl::gt");
    check_throws<tl::ShapeError>([&] { tl::where(m, a, b); }, "tl::where");
    check_throws<tl::ShapeError>([&] { tl::where(tl::ones({5}, opts(tl::kBool)), a, a); },
                                 "tl::where");
    check_throws<tl::ShapeError>([&] { tl::clamp(a, std::optional<Tensor>(b), std::nullopt); },
                                 "tl::clamp");

    // Dtypes.
    check_throws<tl::DTypeError>([&] { tl::neg(m); }, "tl::neg");
    check_throws<tl::DTypeError>([&] { (void)(-m); }, "tl::neg");
    check_throws<tl::DTypeError>([&] { tl::sub(m, m); }, "tl::sub");
    check_throws<tl::DTypeError>([&] { tl::sub(m, 1); }, "tl::sub");
    check_throws<tl::DTypeError>([&] { tl::sub(1, m); }, "tl::sub");
    check_throws<tl::DTypeError>([&] { tl::sub(a, m); }, "tl::sub");
    check_throws<tl::DTypeError>([&] { tl::relu(m); }, "tl::relu");
    check_throws<tl::DTypeError>([&] { tl::pow(m, m); }, "tl::pow");
    check_throws<tl::DTypeError>([&] { tl::pow(i, -2); },
                                 "Integers to negative integer powers are not allowed");
    check_throws<tl::DTypeError>([&] { tl::where(i, a, a); }, "tl::where");
    check_throws<tl::DTypeError>([&] { (void)(a & a); }, "tl::bitwise_and");
    check_throws<tl::DTypeError>([&] { (void)(a | i); }, "tl::bitwise_or");
    check_throws<tl::DTypeError>([&] { (void)(~a); }, "tl::bitwise_not");
    check_throws<tl::Error>([&] { tl::clamp(a, std::optional<tl::Scalar>(), std::nullopt); },
                            "tl::clamp");
    check_throws<tl::Error>([&] { tl::clamp(a, std::optional<Tensor>(), std::optional<Tensor>()); },
                            "tl::clamp");
    // Negative float exponents and integer tensors of exponents are fine.
    CHECK_NOTHROW(tl::pow(i, -2.0));
    CHECK_NOTHROW(tl::pow(i, i));

    // Undefined tensors.
    Tensor u;
    check_throws<tl::Error>([&] { tl::add(u, a); }, "tl::add");
    check_throws<tl::Error>([&] { tl::mul(a, u); }, "tl::mul");
    check_throws<tl::Error>([&] { tl::add(u, 1); }, "tl::add");
    check_throws<tl::Error>([&] { tl::exp(u); }, "tl::exp");
    check_throws<tl::Error>([&] { tl::where(u, a, a); }, "tl::where");
    check_throws<tl::Error>([&] { tl::where(m, u, 1); }, "tl::where");
    check_throws<tl::Error>([&] { tl::clamp(u, 0, 1); }, "tl::clamp");
    check_throws<tl::Error>([&] { u.add_(a); }, "tl::add_");
    check_throws<tl::Error>(
        [&] {
          Tensor c = a.clone();
          c.mul_(u);
        },
        "tl::mul_");
    check_throws<tl::Error>([&] { tl::result_type(u, a); }, "tl::result_type");

    // In place: failures leave self as it was.
    Tensor self = random_tensor({2, 3}, tl::kInt64, device);
    std::vector<double> before = values_of(self);
    check_throws<tl::DTypeError>(
        [&] { self.add_(a); },
        "result type float32 can't be cast to the desired output type int64");
    check_throws<tl::DTypeError>([&] { self.add_(2.5); }, "tl::add_");
    check_throws<tl::DTypeError>([&] { self.div_(self); }, "tl::div_");
    check_throws<tl::DTypeError>([&] { self /= 2; }, "tl::div_");
    check_throws<tl::ShapeError>(
        [&] {
          self.add_(random_tensor({3, 2, 3}, tl::kInt64, device));
        },
        "[tl::add_] output with shape [2, 3] doesn't match the broadcast shape [3, 2, 3]");
    check_throws<tl::ShapeError>([&] { self.sub_(random_tensor({4}, tl::kInt64, device)); },
                                 "tl::sub_");
    CHECK(values_of(self) == before);
    Tensor mask = random_tensor({4}, tl::kBool, device);
    std::vector<double> mask_before = values_of(mask);
    check_throws<tl::DTypeError>([&] { mask.add_(1); }, "tl::add_");
    check_throws<tl::DTypeError>([&] { mask.sub_(mask); }, "tl::sub_");
    check_throws<tl::DTypeError>([&] { mask.mul_(a[0][0]); }, "tl::mul_");
    CHECK(values_of(mask) == mask_before);
    Tensor small = random_tensor({3}, tl::kFloat32, device);
    check_throws<tl::ShapeError>([&] { small.expand({2, 3}).add_(1); }, "tl::add_");
    check_throws<tl::ShapeError>(
        [&] {
          Tensor s0 = tl::scalar_tensor(1.0, opts(tl::kFloat32));
          s0.add_(small);
        },
        "tl::add_");
  }
}

TEST_CASE("elementwise ops reject tensors on different devices") {
  std::vector<tl::Device> devices = test_devices();
  if (devices.size() < 2) return;  // needs a second device (CUDA)
  Tensor a = random_tensor({3}, tl::kFloat32, devices[0]),
         b = random_tensor({3}, tl::kFloat32, devices[1]);
  check_throws<tl::DeviceError>([&] { tl::add(a, b); }, "tl::add");
  check_throws<tl::DeviceError>([&] { tl::where(a > 0, a, b); }, "tl::where");
  check_throws<tl::DeviceError>([&] { tl::clamp(a, std::optional<Tensor>(b), std::nullopt); },
                                "tl::clamp");
  check_throws<tl::DeviceError>([&] { a.add_(b); }, "tl::add_");
}

TEST_CASE("elementwise: bool inputs follow torch for pow, clamp, abs") {
  for (tl::Device device : test_devices()) {
    CAPTURE(device);
    Tensor b = tl::from_vector(std::vector<int64_t>{1, 0}, {2}, device).to(tl::kBool);
    Tensor i = tl::from_vector(std::vector<int64_t>{2, 3}, {2}, device);
    // pow: a bool tensor promotes with the other operand, as torch.pow.
    Tensor p = tl::pow(b, 2);
    CHECK(p.dtype() == tl::kInt64);
    CHECK(p.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
    CHECK(tl::pow(b, i).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
    CHECK(tl::pow(i, b).to_vector<int64_t>() == std::vector<int64_t>{2, 1});
    CHECK(tl::pow(2, b).to_vector<int64_t>() == std::vector<int64_t>{2, 1});
    CHECK(tl::pow(b, i.to(tl::kInt32)).dtype() == tl::kInt32);
    CHECK(tl::pow(b, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 1});
    Tensor pf = tl::pow(b, 2.5);
    CHECK(pf.dtype() == tl::kFloat32);
    CHECK(pf.to_vector<float>() == std::vector<float>{1.0f, 0.0f});
    // pow computing in bool is refused (torch refuses pow(bool, bool) too).
    check_throws<tl::DTypeError>([&] { tl::pow(b, b); }, "[tl::pow] ");
    check_throws<tl::DTypeError>([&] { tl::pow(b, -1); }, "[tl::pow] ");
    // clamp: number bounds promote a bool input; all-bool is refused.
    Tensor c = tl::clamp(b, 0, 1);
    CHECK(c.dtype() == tl::kInt64);
    CHECK(c.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
    Tensor cf = tl::clamp(b, 0.5, 1);
    CHECK(cf.dtype() == tl::kFloat32);
    CHECK(cf.to_vector<float>() == std::vector<float>{1.0f, 0.5f});
    CHECK(tl::clamp(i, b, std::nullopt).to_vector<int64_t>() == std::vector<int64_t>{2, 3});
    check_throws<tl::DTypeError>([&] { tl::clamp(b, false, true); }, "[tl::clamp] ");
    check_throws<tl::DTypeError>([&] { tl::abs(b); }, "[tl::abs] ");
  }
}

TEST_CASE("elementwise: integer x ** 2 wraps like x * x") {
  for (tl::Device device : test_devices()) {
    CAPTURE(device);
    Tensor x = tl::from_vector(std::vector<int32_t>{70000, -70000, 46341, 3}, {4}, device);
    const std::vector<int32_t> expected = (x * x).to_vector<int32_t>();
    CHECK(expected[0] == 605032704);  // 70000^2 mod 2^32
    CHECK(tl::pow(x, 2).to_vector<int32_t>() == expected);
    Tensor y = tl::from_vector(std::vector<int64_t>{int64_t{1} << 33, 3037000500}, {2}, device);
    CHECK(tl::pow(y, 2).to_vector<int64_t>() == (y * y).to_vector<int64_t>());
  }
}

TEST_CASE("elementwise: unary ops and clamp in place") {
  for (tl::Device device : test_devices()) {
    const tl::Tensor x = tl::abs(random_tensor({5, 7}, tl::kFloat32, device)) + 0.25;  // log, sqrt
    const std::vector<std::pair<tl::Tensor (*)(const tl::Tensor&), tl::Tensor& (tl::Tensor::*)()>>
        ops = {{tl::neg, &tl::Tensor::neg_},         {tl::abs, &tl::Tensor::abs_},
               {tl::exp, &tl::Tensor::exp_},         {tl::log, &tl::Tensor::log_},
               {tl::sqrt, &tl::Tensor::sqrt_},       {tl::sin, &tl::Tensor::sin_},
               {tl::cos, &tl::Tensor::cos_},         {tl::tanh, &tl::Tensor::tanh_},
               {tl::sigmoid, &tl::Tensor::sigmoid_}, {tl::relu, &tl::Tensor::relu_},
               {tl::floor, &tl::Tensor::floor_},     {tl::ceil, &tl::Tensor::ceil_},
               {tl::trunc, &tl::Tensor::trunc_},     {tl::round, &tl::Tensor::round_}};
    for (const auto& [fn, inplace] : ops) {
      tl::Tensor y = x.clone();
      tl::Tensor& same = (y.*inplace)();
      CHECK(&same == &y);
      CHECK(tl::equal(y, fn(x)));
      // Through a transposed view: the base tensor's elements change where the view points.
      tl::Tensor base = x.clone();
      tl::Tensor view = base.t();
      (view.*inplace)();
      CHECK(tl::equal(base, fn(x)));
    }
    // logical_not_ keeps the dtype (0 and 1 as floats), as torch.
    tl::Tensor z = (x > 0.75).to(tl::kFloat32);
    z.logical_not_();
    CHECK(z.dtype() == tl::kFloat32);
    CHECK(tl::equal(z, (x <= 0.75).to(tl::kFloat32)));
    // Integer tensors: abs_ and neg_ stay integer; exp_ would need a float result.
    tl::Tensor i = tl::arange(-3, 3, 1, tl::TensorOptions(tl::kInt64).device(device));
    i.abs_();
    CHECK(values_of(i) == std::vector<double>{3, 2, 1, 0, 1, 2});
    CHECK_THROWS_WITH_AS(i.exp_(), doctest::Contains("tl::exp_"), tl::DTypeError);
    // clamp_ as clamp, NaN kept; either bound alone.
    tl::Tensor c = x.clone();
    c.clamp_(0.4, 0.9);
    CHECK(tl::equal(c, tl::clamp(x, 0.4, 0.9)));
    tl::Tensor lo = x.clone();
    lo.clamp_(0.5);
    CHECK(tl::equal(lo, tl::clamp(x, 0.5)));
    tl::Tensor hi = x.clone();
    hi.clamp_(std::nullopt, 0.5);
    CHECK(tl::equal(hi, tl::clamp(x, std::nullopt, 0.5)));
    tl::Tensor n = tl::full({3}, NAN, tl::TensorOptions().device(device));
    n.clamp_(0, 1);
    CHECK(std::isnan(n.to_vector<float>()[1]));
    // clamp's bound rules: a bound past the dtype's range is no bound.
    tl::Tensor i8 = tl::arange(-3, 3, 1, tl::TensorOptions(tl::kInt8).device(device));
    tl::Tensor i8c = i8.clone();
    i8c.clamp_(-1000, 1);
    CHECK(tl::equal(i8c, tl::clamp(i8, -1000, 1)));
    // Zero-size: nothing to do.
    tl::Tensor e = tl::empty({0, 3}, tl::TensorOptions().device(device));
    CHECK(e.exp_().numel() == 0);
  }
}

TEST_CASE("elementwise: round takes halves to even; floor, ceil, trunc; integers unchanged") {
  for (tl::Device device : test_devices()) {
    for (tl::DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
      const tl::Tensor x =
          tl::from_vector(std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -1.75f, 3.25f})
              .to(d)
              .to(device);
      CHECK(values_of(tl::round(x)) == std::vector<double>{0, 2, 2, -0.0, -2, -2, 3});
      CHECK(values_of(tl::floor(x)) == std::vector<double>{0, 1, 2, -1, -3, -2, 3});
      CHECK(values_of(tl::ceil(x)) == std::vector<double>{1, 2, 3, -0.0, -2, -1, 4});
      CHECK(values_of(tl::trunc(x)) == std::vector<double>{0, 1, 2, -0.0, -2, -1, 3});
      CHECK(tl::round(x).dtype() == d);
    }
    const tl::Tensor i = tl::arange(-3, 4, 1, tl::TensorOptions(tl::kInt32).device(device));
    CHECK(tl::equal(tl::round(i), i));
    CHECK(tl::ceil(i).dtype() == tl::kInt32);
    CHECK_THROWS_AS(tl::round(tl::ones({2}, tl::kBool)), tl::DTypeError);
  }
}

TEST_CASE("elementwise: a scalar on either side of a comparison") {
  for (tl::Device device : test_devices()) {
    const tl::Tensor x = random_tensor({4, 5}, tl::kFloat32, device);
    CHECK(tl::equal(0.5 < x, x > 0.5));
    CHECK(tl::equal(0.5 > x, x < 0.5));
    CHECK(tl::equal(0.5 <= x, x >= 0.5));
    CHECK(tl::equal(0.5 >= x, x <= 0.5));
    const tl::Tensor i = tl::arange(6, tl::TensorOptions(tl::kInt64).device(device));
    CHECK(tl::equal(3 == i, i == 3));
    CHECK(tl::equal(3 != i, i != 3));
    CHECK((3 == i).dtype() == tl::kBool);
    CHECK(values_of(2.5 < i) == std::vector<double>{0, 0, 0, 1, 1, 1});
  }
}

TEST_CASE("elementwise: equal compares in the promoted dtype; allclose wants one dtype") {
  for (tl::Device device : test_devices()) {
    CAPTURE(device);
    Tensor big = tl::from_vector(std::vector<int64_t>{16777217}, {1}, device);
    Tensor f = tl::from_vector(std::vector<float>{16777216.0f}, {1}, device);
    CHECK(tl::equal(big, f));  // as torch: 16777217 rounds to 16777216 in float32
    CHECK(tl::equal(big, big.to(tl::kInt32)));
    CHECK(tl::equal(big.to(tl::kBool), tl::ones({1}, device)));
    CHECK_FALSE(tl::equal(big, big.to(tl::kFloat64) + 1));
    check_throws<tl::DTypeError>([&] { tl::allclose(big, f); }, "[tl::allclose] ");
    CHECK(tl::allclose(f, f));
  }
}

}  // namespace

namespace {

using namespace tl_test;

// A bool tensor on `device` holding these bytes as they are: an uninitialised tl::empty(..., kBool)
// may hold any byte, and every op must read a non-zero one as true.
tl::Tensor bool_bytes(const std::vector<uint8_t>& bytes, tl::Device device) {
  tl::Tensor t = tl::empty({static_cast<int64_t>(bytes.size())}, tl::kBool);
  auto* raw = static_cast<unsigned char*>(t.data_ptr());
  for (size_t i = 0; i < bytes.size(); ++i) raw[i] = bytes[i];
  return t.to(device);
}

template <typename T>
std::vector<T> host_values(const tl::Tensor& t) {
  return t.to_vector<T>();
}

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t k40 = int64_t(1) << 40;

TEST_CASE("elementwise: a bool byte other than 0/1 is true in ops, reductions and conversions") {
  const std::vector<uint8_t> bytes{0, 190, 1, 255, 2, 0};
  const std::vector<bool> truth{false, true, true, true, true, false};
  for (tl::Device d : test_devices()) {
    CAPTURE(d);
    const tl::Tensor m = bool_bytes(bytes, d);
    const tl::Tensor yes = tl::full({6}, true, tl::TensorOptions(tl::kBool).device(d));
    CHECK(host_values<bool>(m) == truth);
    CHECK(host_values<bool>(tl::logical_not(m)) ==
          std::vector<bool>{true, false, false, false, false, true});
    CHECK(host_values<bool>(tl::logical_and(m, yes)) == truth);
    CHECK(host_values<bool>(tl::logical_or(m, m)) == truth);
    CHECK(host_values<bool>(m == yes) == truth);
    CHECK(host_values<bool>(m != yes) == std::vector<bool>{true, false, false, false, false, true});
    CHECK(host_values<bool>(m + m) == truth);
    CHECK(host_values<bool>(m * yes) == truth);
    CHECK(host_values<bool>(tl::maximum(m, m)) == truth);
    CHECK(host_values<int32_t>(m.to(tl::kInt32)) == std::vector<int32_t>{0, 1, 1, 1, 1, 0});
    CHECK(host_values<double>(m.to(tl::kFloat64)) == std::vector<double>{0, 1, 1, 1, 1, 0});
    CHECK(host_values<int64_t>(m + 0) == std::vector<int64_t>{0, 1, 1, 1, 1, 0});
    CHECK(m[1].item<bool>());
    CHECK(m[3].item<int64_t>() == 1);
    CHECK(tl::sum(m).item<int64_t>() == 4);
    CHECK(host_values<int64_t>(tl::sum(m.view({2, 3}), {1})) == std::vector<int64_t>{2, 2});
    CHECK(tl::prod(m.slice(0, 1, 5)).item<int64_t>() == 1);
    CHECK(tl::any(m).item<bool>());
    CHECK_FALSE(tl::all(m).item<bool>());
    CHECK(tl::all(m.slice(0, 1, 5)).item<bool>());
    CHECK(tl::max(m).item<bool>());
    CHECK_FALSE(tl::min(m).item<bool>());
    CHECK(tl::min(m.slice(0, 1, 5)).item<bool>());
    // Joining moves the bytes (bytes 0, 1, 2 in the strided one).
    const tl::Tensor joined = tl::cat({m, m.slice(0, 0, 6, 2)}, 0);
    CHECK(host_values<bool>(joined) ==
          std::vector<bool>{false, true, true, true, true, false, false, true, true});
    CHECK(tl::sum(tl::stack({m, m}, 1)).item<int64_t>() == 8);
    // Strided (bytes 190, 255, 0) and long enough for the vectorized and multi-lane paths.
    CHECK(host_values<bool>(tl::logical_not(m.slice(0, 1, 6, 2))) ==
          std::vector<bool>{false, false, true});
    const tl::Tensor many = bool_bytes(std::vector<uint8_t>(4099, 190), d);
    CHECK(tl::sum(many).item<int64_t>() == 4099);
    CHECK(tl::all(many).item<bool>());
    CHECK(tl::min(many).item<bool>());
    CHECK(tl::sum(many.to(tl::kInt32)).item<int64_t>() == 4099);
    CHECK(tl::all(tl::logical_and(many, many)).item<bool>());
  }
}

TEST_CASE(
    "elementwise: float -> int of NaN, infinities and out-of-range values is the type's minimum") {
  // As torch on x86 (cvttss2si / cvttsd2si), on every backend.
  const std::vector<float> f{NAN,   INFINITY,      -INFINITY, 3e9f,    -3e9f,
                             1e20f, 2147483647.5f, 300.7f,    -129.9f, -0.0f};
  const std::vector<double> g{NAN,
                              1e300,
                              -2147483648.9,
                              -2147483649.0,
                              9223372036854775808.0,
                              -9223372036854775808.0,
                              2147483647.9};
  for (tl::Device d : test_devices()) {
    CAPTURE(d);
    const tl::Tensor tf = tl::from_vector<float>(f).to(d);
    CHECK(host_values<int32_t>(tf.to(tl::kInt32)) == std::vector<int32_t>{kMin32, kMin32, kMin32,
                                                                          kMin32, kMin32, kMin32,
                                                                          kMin32, 300, -129, 0});
    CHECK(host_values<int64_t>(tf.to(tl::kInt64)) ==
          std::vector<int64_t>{kMin64, kMin64, kMin64, 3000000000, -3000000000, kMin64, 2147483648,
                               300, -129, 0});
    CHECK(host_values<bool>(tf.to(tl::kBool)) ==
          std::vector<bool>{true, true, true, true, true, true, true, true, true, false});
    CHECK(host_values<int32_t>(tf.slice(0, 0, 10, 3).to(tl::kInt32)) ==
          std::vector<int32_t>{kMin32, kMin32, kMin32, 0});
    tl::Tensor into = tl::zeros({10}, tl::TensorOptions(tl::kInt32).device(d));
    into.copy_(tf);
    CHECK(host_values<int32_t>(into)[1] == kMin32);
    const tl::Tensor tg = tl::from_vector<double>(g).to(d);
    CHECK(host_values<int32_t>(tg.to(tl::kInt32)) ==
          std::vector<int32_t>{kMin32, kMin32, kMin32, kMin32, kMin32, kMin32, 2147483647});
    CHECK(
        host_values<int64_t>(tg.to(tl::kInt64)) ==
        std::vector<int64_t>{kMin64, kMin64, -2147483648, -2147483649, kMin64, kMin64, 2147483647});
  }
}

TEST_CASE("elementwise: fill values truncate into integer dtypes; item<T>() converts in range") {
  for (tl::Device d : test_devices()) {
    CAPTURE(d);
    auto opts = [&](tl::DType dtype) { return tl::TensorOptions(dtype).device(d); };
    CHECK(host_values<int32_t>(tl::zeros({2}, opts(tl::kInt32)).fill_(1.5)) ==
          std::vector<int32_t>{1, 1});
    CHECK(host_values<int64_t>(tl::zeros({2}, opts(tl::kInt64)).fill_(-1.5)) ==
          std::vector<int64_t>{-1, -1});
    CHECK(host_values<int32_t>(tl::full({1}, 2147483647.5, opts(tl::kInt32)))[0] == INT32_MAX);
    CHECK(host_values<int32_t>(tl::full({1}, -2147483648.0, opts(tl::kInt32)))[0] == kMin32);
    CHECK(host_values<int64_t>(tl::full({1}, -9223372036854775808.0, opts(tl::kInt64)))[0] ==
          kMin64);
    CHECK(host_values<bool>(tl::zeros({1}, opts(tl::kBool)).fill_(0.5))[0]);
    CHECK(host_values<bool>(tl::zeros({1}, opts(tl::kBool)).fill_(NAN))[0]);
    CHECK(host_values<bool>(tl::full({1}, k40, opts(tl::kBool)))[0]);
    CHECK(std::isinf(host_values<float>(tl::full({1}, INFINITY, opts(tl::kFloat32)))[0]));
    CHECK(host_values<float>(tl::full({1}, 3.4e38, opts(tl::kFloat32)))[0] == 3.4e38f);
    CHECK(tl::full({}, 1.9, opts(tl::kFloat32)).item<int32_t>() == 1);
    CHECK(tl::full({}, -1.9, opts(tl::kFloat64)).item<int64_t>() == -1);
    CHECK(tl::full({}, NAN, opts(tl::kFloat32)).item<bool>());
    CHECK(tl::full({}, k40, opts(tl::kInt64)).item<double>() == static_cast<double>(k40));
  }
}

TEST_CASE("elementwise: an int32 tensor and a scalar beyond int32 (as torch)") {
  for (tl::Device d : test_devices()) {
    CAPTURE(d);
    const tl::Tensor a = tl::from_vector<int32_t>({1, 2}).to(d);
    // Arithmetic wraps the scalar into int32 as torch does: 2^40 is 0 there.
    CHECK(host_values<int32_t>(a + k40) == std::vector<int32_t>{1, 2});
    CHECK(host_values<int32_t>(a - k40) == std::vector<int32_t>{1, 2});
    CHECK(host_values<int32_t>(a * k40) == std::vector<int32_t>{0, 0});
    CHECK(host_values<int32_t>(a + (int64_t(1) << 31)) ==
          std::vector<int32_t>{-2147483647, -2147483646});
    tl::Tensor b = a.clone();
    b.add_(k40);
    CHECK(host_values<int32_t>(b) == std::vector<int32_t>{1, 2});
    CHECK(host_values<int32_t>(tl::pow(a, (int64_t(1) << 31) - 1)) == std::vector<int32_t>{1, 0});
    // A clamp bound beyond the range on the side where it clamps nothing is dropped.
    CHECK(host_values<int32_t>(tl::clamp(a, std::nullopt, tl::Scalar(k40))) ==
          std::vector<int32_t>{1, 2});
    CHECK(host_values<int32_t>(tl::clamp(a, tl::Scalar(-k40), std::nullopt)) ==
          std::vector<int32_t>{1, 2});
    CHECK(host_values<int32_t>(tl::clamp(a, tl::Scalar(-k40), tl::Scalar(k40))) ==
          std::vector<int32_t>{1, 2});
    CHECK(host_values<int32_t>(tl::clamp(a, tl::Scalar(-k40), tl::Scalar(1))) ==
          std::vector<int32_t>{1, 1});
    // A float scalar promotes where to float32, so 1e10 fits.
    const tl::Tensor w = tl::where(tl::from_vector<bool>({true, false}).to(d), a, 1e10);
    CHECK(w.dtype() == tl::kFloat32);
    CHECK(host_values<float>(w) == std::vector<float>{1, 1e10f});
  }
}

}  // namespace

// Every elementwise op x every dtype on the CPU against a reference written here: floating results
// from double math rounded to the output dtype (compared at that dtype's tolerance), integer and
// bool results exact with torch's wrap-around; contiguous, transposed, broadcast and 0-dim
// operands; result dtypes as torch's; unsupported dtypes throw DTypeError before any kernel.
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

const std::vector<DType> kEveryDtype{tl::kBool,    tl::kUInt8,  tl::kInt8,    tl::kInt16,
                                     tl::kInt32,   tl::kInt64,  tl::kFloat16, tl::kBFloat16,
                                     tl::kFloat32, tl::kFloat64};

// The result dtype, as torch gives it (written independently of the library's tables).
enum class Result { Same, Bool, Floating };

DType expected_dtype(Result r, DType in) {
  if (r == Result::Bool) return tl::kBool;
  if (r == Result::Floating && !tl::is_floating_point(in)) return tl::kFloat32;
  return in;
}

// Input values: Small ints in [-9, 9] / floats in [-3, 3]; Full: the whole range of an integer
// dtype (wrap-around cases); Positive: floats in [0.05, 4], ints in [1, 9]; Exponent: ints in
// [0, 6], floats in [-3, 3]; Unit: floats in [-1, 1], ints in [-1, 1] (asin, acos).
enum class Range { Small, Full, Positive, Exponent, Unit };

std::vector<double> random_values(DType d, Range range, int64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  for (double& x : v) {
    if (d == tl::kBool) {
      x = static_cast<double>(rng() % 2);
    } else if (tl::is_floating_point(d)) {
      std::uniform_real_distribution<double> u(range == Range::Positive ? 0.05
                                               : range == Range::Unit   ? -1.0
                                                                        : -3.0,
                                               range == Range::Positive ? 4.0
                                               : range == Range::Unit   ? 1.0
                                                                        : 3.0);
      x = u(rng);
    } else if (range == Range::Full) {
      // Kept below 2^53 for int64 so every value is exact in the double that carries it here.
      const double lo = d == tl::kUInt8   ? 0
                        : d == tl::kInt8  ? -128
                        : d == tl::kInt16 ? -32768
                        : d == tl::kInt32 ? -2147483648.0
                                          : -9.0e15;
      const double hi = d == tl::kUInt8   ? 255
                        : d == tl::kInt8  ? 127
                        : d == tl::kInt16 ? 32767
                        : d == tl::kInt32 ? 2147483647.0
                                          : 9.0e15;
      x = std::floor(std::uniform_real_distribution<double>(lo, hi + 1)(rng));
      x = std::min(x, hi);
    } else {
      const int64_t lo = range == Range::Positive   ? 1
                         : range == Range::Exponent ? 0
                         : range == Range::Unit     ? -1
                                                    : -9;
      const int64_t hi = range == Range::Exponent ? 6 : range == Range::Unit ? 1 : 9;
      x = static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
      if (d == tl::kUInt8 && x < 0) x = -x;
    }
  }
  return v;
}

Tensor make(const std::vector<double>& v, const Shape& shape, DType d) {
  return tl::from_vector<double>(v, shape).to(d);
}
// A 0-dim tensor of dtype d.
Tensor make0(double v, DType d) { return tl::scalar_tensor(v, tl::kFloat64).to(d); }

std::vector<double> as_doubles(const Tensor& t) {
  return t.contiguous().to(tl::kFloat64).to_vector<double>();
}
std::vector<int64_t> as_ints(const Tensor& t) {
  return t.contiguous().to(tl::kInt64).to_vector<int64_t>();
}

// A 64-bit two's-complement result as a value of integer dtype d (torch's wrap-around).
int64_t wrap_to(DType d, uint64_t v) {
  switch (d) {
    case tl::kUInt8:
      return static_cast<uint8_t>(v);
    case tl::kInt8:
      return static_cast<int8_t>(v);
    case tl::kInt16:
      return static_cast<int16_t>(v);
    case tl::kInt32:
      return static_cast<int32_t>(v);
    case tl::kBool:
      return v != 0;
    default:
      return static_cast<int64_t>(v);
  }
}

// Relative tolerance of a floating dtype: about one unit in the last place (the op computes in
// float for the half types and rounds once; the reference in double and rounds once).
double rtol_of(DType d) {
  switch (d) {
    case tl::kFloat16:
      return 1e-3;
    case tl::kBFloat16:
      return 8e-3;
    case tl::kFloat32:
      return 1e-5;
    default:
      return 1e-12;
  }
}

void check_floating(const std::string& what, DType out, const std::vector<double>& got,
                    std::vector<double> ref) {
  // The reference rounded to the output dtype, as the kernel stores it.
  ref = as_doubles(tl::from_vector<double>(ref).to(out));
  REQUIRE(got.size() == ref.size());
  const double rtol = rtol_of(out), atol = rtol * 1e-2;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref[i];
    const bool ok = (std::isnan(g) && std::isnan(r)) || g == r ||
                    (std::isfinite(r) && std::abs(g - r) <= atol + rtol * std::abs(r));
    if (!ok) {
      FAIL_CHECK(what << " element " << i << ": got " << g << ", expected " << r);
      return;
    }
  }
}

void check_exact(const std::string& what, const std::vector<int64_t>& got,
                 const std::vector<int64_t>& ref) {
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != ref[i]) {
      FAIL_CHECK(what << " element " << i << ": got " << got[i] << ", expected " << ref[i]);
      return;
    }
}

// ---- unary ops ----

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  Result result;
  bool bool_ok;                // torch accepts bool tensors
  Range range;                 // input values
  double (*ref)(double);       // on the values as doubles (floating and bool results)
  uint64_t (*iref)(uint64_t);  // two's-complement math for Same results on integers
  bool integers_only = false;  // bitwise ops: floating dtypes are refused
};

uint64_t ineg(uint64_t a) { return uint64_t{0} - a; }
int64_t s(uint64_t v) { return static_cast<int64_t>(v); }

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases{
      {"neg", [](const Tensor& a) { return tl::neg(a); }, Result::Same, false, Range::Full,
       [](double a) { return -a; }, ineg},
      {"abs", [](const Tensor& a) { return tl::abs(a); }, Result::Same, false, Range::Full,
       [](double a) { return std::abs(a); },
       [](uint64_t a) { return static_cast<int64_t>(a) < 0 ? ineg(a) : a; }},
      {"exp", [](const Tensor& a) { return tl::exp(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::exp(a); }, nullptr},
      {"log", [](const Tensor& a) { return tl::log(a); }, Result::Floating, true, Range::Positive,
       [](double a) { return std::log(a); }, nullptr},
      {"sqrt", [](const Tensor& a) { return tl::sqrt(a); }, Result::Floating, true, Range::Positive,
       [](double a) { return std::sqrt(a); }, nullptr},
      {"sin", [](const Tensor& a) { return tl::sin(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::sin(a); }, nullptr},
      {"cos", [](const Tensor& a) { return tl::cos(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::cos(a); }, nullptr},
      {"tanh", [](const Tensor& a) { return tl::tanh(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::tanh(a); }, nullptr},
      {"sigmoid", [](const Tensor& a) { return tl::sigmoid(a); }, Result::Floating, true,
       Range::Small, [](double a) { return 1 / (1 + std::exp(-a)); }, nullptr},
      {"relu", [](const Tensor& a) { return tl::relu(a); }, Result::Same, false, Range::Full,
       [](double a) { return a < 0 ? 0.0 : a; },
       [](uint64_t a) { return static_cast<int64_t>(a) < 0 ? uint64_t{0} : a; }},
      {"logical_not", [](const Tensor& a) { return tl::logical_not(a); }, Result::Bool, true,
       Range::Small, [](double a) { return a == 0 ? 1.0 : 0.0; }, nullptr},
      {"floor", [](const Tensor& a) { return tl::floor(a); }, Result::Same, false, Range::Full,
       [](double a) { return std::floor(a); }, [](uint64_t a) { return a; }},
      {"ceil", [](const Tensor& a) { return tl::ceil(a); }, Result::Same, false, Range::Full,
       [](double a) { return std::ceil(a); }, [](uint64_t a) { return a; }},
      {"trunc", [](const Tensor& a) { return tl::trunc(a); }, Result::Same, false, Range::Full,
       [](double a) { return std::trunc(a); }, [](uint64_t a) { return a; }},
      {"round", [](const Tensor& a) { return tl::round(a); }, Result::Same, false, Range::Full,
       [](double a) { return std::nearbyint(a); }, [](uint64_t a) { return a; }},
      {"sign", [](const Tensor& a) { return tl::sign(a); }, Result::Same, true, Range::Full,
       [](double a) { return double((0 < a) - (a < 0)); },
       [](uint64_t a) { return uint64_t(int64_t((0 < s(a)) - (s(a) < 0))); }},
      {"square", [](const Tensor& a) { return tl::square(a); }, Result::Same, false, Range::Full,
       [](double a) { return a * a; }, [](uint64_t a) { return a * a; }},
      {"reciprocal", [](const Tensor& a) { return tl::reciprocal(a); }, Result::Floating, true,
       Range::Positive, [](double a) { return 1 / a; }, nullptr},
      {"rsqrt", [](const Tensor& a) { return tl::rsqrt(a); }, Result::Floating, true,
       Range::Positive, [](double a) { return 1 / std::sqrt(a); }, nullptr},
      {"log1p", [](const Tensor& a) { return tl::log1p(a); }, Result::Floating, true,
       Range::Positive, [](double a) { return std::log1p(a); }, nullptr},
      {"expm1", [](const Tensor& a) { return tl::expm1(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::expm1(a); }, nullptr},
      {"log2", [](const Tensor& a) { return tl::log2(a); }, Result::Floating, true, Range::Positive,
       [](double a) { return std::log2(a); }, nullptr},
      {"log10", [](const Tensor& a) { return tl::log10(a); }, Result::Floating, true,
       Range::Positive, [](double a) { return std::log10(a); }, nullptr},
      {"exp2", [](const Tensor& a) { return tl::exp2(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::exp2(a); }, nullptr},
      {"erf", [](const Tensor& a) { return tl::erf(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::erf(a); }, nullptr},
      {"erfc", [](const Tensor& a) { return tl::erfc(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::erfc(a); }, nullptr},
      {"tan", [](const Tensor& a) { return tl::tan(a); }, Result::Floating, true, Range::Unit,
       [](double a) { return std::tan(a); }, nullptr},
      {"sinh", [](const Tensor& a) { return tl::sinh(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::sinh(a); }, nullptr},
      {"cosh", [](const Tensor& a) { return tl::cosh(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::cosh(a); }, nullptr},
      {"asin", [](const Tensor& a) { return tl::asin(a); }, Result::Floating, true, Range::Unit,
       [](double a) { return std::asin(a); }, nullptr},
      {"acos", [](const Tensor& a) { return tl::acos(a); }, Result::Floating, true, Range::Unit,
       [](double a) { return std::acos(a); }, nullptr},
      {"atan", [](const Tensor& a) { return tl::atan(a); }, Result::Floating, true, Range::Small,
       [](double a) { return std::atan(a); }, nullptr},
      // bool is logical not there (checked in test_elementwise.cpp): ~1 is not 0 in int64 math.
      {"bitwise_not", [](const Tensor& a) { return tl::bitwise_not(a); }, Result::Same, false,
       Range::Full, nullptr, [](uint64_t a) { return ~a; }, true},
      {"isnan", [](const Tensor& a) { return tl::isnan(a); }, Result::Bool, true, Range::Small,
       [](double a) { return double(std::isnan(a)); }, nullptr},
      {"isinf", [](const Tensor& a) { return tl::isinf(a); }, Result::Bool, true, Range::Small,
       [](double a) { return double(std::isinf(a)); }, nullptr},
      {"isfinite", [](const Tensor& a) { return tl::isfinite(a); }, Result::Bool, true,
       Range::Small, [](double a) { return double(std::isfinite(a)); }, nullptr},
  };
  return cases;
}

void check_unary(const UnaryCase& c, DType d, const Tensor& a, const std::string& layout) {
  const std::string what = std::string("tl::") + c.name + " " + tl::dtype_name(d) + " " + layout;
  Tensor out = c.op(a);
  const DType out_dtype = expected_dtype(c.result, d);
  CHECK_MESSAGE(out.dtype() == out_dtype, what);
  CHECK_MESSAGE(out.shape() == a.shape(), what);
  if (tl::is_integral(out_dtype, true) && c.iref) {
    std::vector<int64_t> in = as_ints(a), ref(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      ref[i] = wrap_to(out_dtype, c.iref(static_cast<uint64_t>(in[i])));
    check_exact(what, as_ints(out), ref);
  } else if (out_dtype == tl::kBool) {
    std::vector<double> in = as_doubles(a);
    std::vector<int64_t> ref(in.size());
    for (size_t i = 0; i < in.size(); ++i) ref[i] = c.ref(in[i]) != 0;
    check_exact(what, as_ints(out), ref);
  } else {
    std::vector<double> in = as_doubles(a), ref(in.size());
    for (size_t i = 0; i < in.size(); ++i) ref[i] = c.ref(in[i]);
    check_floating(what, out_dtype, as_doubles(out), ref);
  }
}

TEST_CASE("elementwise dtypes: every unary op x every dtype against a double reference") {
  uint32_t seed = 1;
  for (const UnaryCase& c : unary_cases()) {
    for (DType d : kEveryDtype) {
      if (d == tl::kBool && !c.bool_ok) continue;
      if (c.integers_only && tl::is_floating_point(d)) continue;
      std::vector<double> v = random_values(d, c.range, 6 * 7, seed++);
      if (tl::is_floating_point(d)) v[3] = NAN;  // NaN goes through every op
      check_unary(c, d, make(v, {6, 7}, d), "contiguous");
      check_unary(c, d, make(v, {7, 6}, d).t(), "transposed");
      check_unary(c, d, make0(v[5], d), "0-dim");
    }
  }
}

// ---- binary ops ----

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  Result result;
  bool bool_ok;
  Range range_a, range_b;
  double (*ref)(double, double);         // floating results, and bool results
  uint64_t (*iref)(uint64_t, uint64_t);  // integer (and bool) Same results, two's complement
  bool integers_only = false;            // bitwise ops: floating dtypes are refused
};

uint64_t ipow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  for (uint64_t i = 0; i < e; ++i) r *= base;
  return r;
}

const std::vector<BinaryCase>& binary_cases() {
  using T = const Tensor&;
  static const std::vector<BinaryCase> cases{
      {"add", [](T a, T b) { return tl::add(a, b); }, Result::Same, true, Range::Full, Range::Full,
       [](double a, double b) { return a + b; }, [](uint64_t a, uint64_t b) { return a + b; }},
      {"sub", [](T a, T b) { return tl::sub(a, b); }, Result::Same, false, Range::Full, Range::Full,
       [](double a, double b) { return a - b; }, [](uint64_t a, uint64_t b) { return a - b; }},
      {"mul", [](T a, T b) { return tl::mul(a, b); }, Result::Same, true, Range::Full, Range::Full,
       [](double a, double b) { return a * b; }, [](uint64_t a, uint64_t b) { return a * b; }},
      {"div", [](T a, T b) { return tl::div(a, b); }, Result::Floating, true, Range::Small,
       Range::Positive, [](double a, double b) { return a / b; }, nullptr},
      {"pow", [](T a, T b) { return tl::pow(a, b); }, Result::Same, false, Range::Full,
       Range::Exponent, [](double a, double b) { return std::pow(a, b); }, ipow},
      {"maximum", [](T a, T b) { return tl::maximum(a, b); }, Result::Same, true, Range::Full,
       Range::Full,
       [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); },
       [](uint64_t a, uint64_t b) { return s(a) > s(b) ? a : b; }},
      {"minimum", [](T a, T b) { return tl::minimum(a, b); }, Result::Same, true, Range::Full,
       Range::Full,
       [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); },
       [](uint64_t a, uint64_t b) { return s(a) < s(b) ? a : b; }},
      {"gt", [](T a, T b) { return tl::gt(a, b); }, Result::Bool, true, Range::Full, Range::Full,
       [](double a, double b) { return double(a > b); }, nullptr},
      {"lt", [](T a, T b) { return tl::lt(a, b); }, Result::Bool, true, Range::Full, Range::Full,
       [](double a, double b) { return double(a < b); }, nullptr},
      {"ge", [](T a, T b) { return tl::ge(a, b); }, Result::Bool, true, Range::Full, Range::Full,
       [](double a, double b) { return double(a >= b); }, nullptr},
      {"le", [](T a, T b) { return tl::le(a, b); }, Result::Bool, true, Range::Full, Range::Full,
       [](double a, double b) { return double(a <= b); }, nullptr},
      {"eq", [](T a, T b) { return tl::eq(a, b); }, Result::Bool, true, Range::Full, Range::Full,
       [](double a, double b) { return double(a == b); }, nullptr},
      {"ne", [](T a, T b) { return tl::ne(a, b); }, Result::Bool, true, Range::Full, Range::Full,
       [](double a, double b) { return double(a != b); }, nullptr},
      {"logical_and", [](T a, T b) { return tl::logical_and(a, b); }, Result::Bool, true,
       Range::Small, Range::Small, [](double a, double b) { return double(a != 0 && b != 0); },
       nullptr},
      {"logical_or", [](T a, T b) { return tl::logical_or(a, b); }, Result::Bool, true,
       Range::Small, Range::Small, [](double a, double b) { return double(a != 0 || b != 0); },
       nullptr},
      {"logical_xor", [](T a, T b) { return tl::logical_xor(a, b); }, Result::Bool, true,
       Range::Small, Range::Small, [](double a, double b) { return double((a != 0) != (b != 0)); },
       nullptr},
      // Divisors in [1, 9] or [0.05, 4]: an integer zero raises (test_elementwise.cpp).
      {"fmod", [](T a, T b) { return tl::fmod(a, b); }, Result::Same, false, Range::Full,
       Range::Positive, [](double a, double b) { return std::fmod(a, b); },
       [](uint64_t a, uint64_t b) { return uint64_t(s(a) % s(b)); }},
      {"remainder", [](T a, T b) { return tl::remainder(a, b); }, Result::Same, false, Range::Full,
       Range::Positive, [](double a, double b) { return a - b * std::floor(a / b); },
       [](uint64_t a, uint64_t b) { return uint64_t(((s(a) % s(b)) + s(b)) % s(b)); }},
      {"floor_divide", [](T a, T b) { return tl::floor_divide(a, b); }, Result::Same, false,
       Range::Small, Range::Positive, [](double a, double b) { return std::floor(a / b); },
       [](uint64_t a, uint64_t b) {
         const int64_t q = s(a) / s(b);
         return uint64_t(q * s(b) != s(a) && (s(a) < 0) != (s(b) < 0) ? q - 1 : q);
       }},
      {"atan2", [](T a, T b) { return tl::atan2(a, b); }, Result::Floating, true, Range::Small,
       Range::Small, [](double a, double b) { return std::atan2(a, b); }, nullptr},
      {"bitwise_and", [](T a, T b) { return tl::bitwise_and(a, b); }, Result::Same, true,
       Range::Full, Range::Full, nullptr, [](uint64_t a, uint64_t b) { return a & b; }, true},
      {"bitwise_or", [](T a, T b) { return tl::bitwise_or(a, b); }, Result::Same, true, Range::Full,
       Range::Full, nullptr, [](uint64_t a, uint64_t b) { return a | b; }, true},
      {"bitwise_xor", [](T a, T b) { return tl::bitwise_xor(a, b); }, Result::Same, true,
       Range::Full, Range::Full, nullptr, [](uint64_t a, uint64_t b) { return a ^ b; }, true},
      {"bitwise_left_shift", [](T a, T b) { return tl::bitwise_left_shift(a, b); }, Result::Same,
       false, Range::Full, Range::Exponent, nullptr, [](uint64_t a, uint64_t b) { return a << b; },
       true},
      {"bitwise_right_shift", [](T a, T b) { return tl::bitwise_right_shift(a, b); }, Result::Same,
       false, Range::Full, Range::Exponent, nullptr,
       [](uint64_t a, uint64_t b) { return uint64_t(s(a) >> b); }, true},
  };
  return cases;
}

void check_binary(const BinaryCase& c, DType d, const Tensor& a, const Tensor& b,
                  const std::string& layout) {
  const std::string what = std::string("tl::") + c.name + " " + tl::dtype_name(d) + " " + layout;
  Tensor out = c.op(a, b);
  const DType out_dtype = expected_dtype(c.result, d);
  CHECK_MESSAGE(out.dtype() == out_dtype, what);
  const Shape shape = out.shape();
  const Tensor ea = a.expand(shape), eb = b.expand(shape);
  if (tl::is_integral(out_dtype, true) && c.iref) {
    std::vector<int64_t> x = as_ints(ea), y = as_ints(eb), ref(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      ref[i] = wrap_to(out_dtype, c.iref(static_cast<uint64_t>(x[i]), static_cast<uint64_t>(y[i])));
    check_exact(what, as_ints(out), ref);
  } else if (out_dtype == tl::kBool) {
    // Integers compare exactly as doubles: the inputs stay below 2^53.
    std::vector<double> x = as_doubles(ea), y = as_doubles(eb);
    std::vector<int64_t> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = c.ref(x[i], y[i]) != 0;
    check_exact(what, as_ints(out), ref);
  } else {
    std::vector<double> x = as_doubles(ea), y = as_doubles(eb), ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = c.ref(x[i], y[i]);
    check_floating(what, out_dtype, as_doubles(out), ref);
  }
}

TEST_CASE("elementwise dtypes: every binary op x every dtype against a double reference") {
  uint32_t seed = 100;
  for (const BinaryCase& c : binary_cases()) {
    for (DType d : kEveryDtype) {
      if (d == tl::kBool && !c.bool_ok) continue;
      if (c.integers_only && tl::is_floating_point(d)) continue;
      std::vector<double> x = random_values(d, c.range_a, 6 * 7, seed++);
      std::vector<double> y = random_values(d, c.range_b, 6 * 7, seed++);
      for (size_t i = 0; i < y.size(); i += 5)
        if (c.range_a == c.range_b) y[i] = x[i];  // ties for the comparisons and max/min
      if (tl::is_floating_point(d)) x[1] = y[2] = NAN;
      check_binary(c, d, make(x, {6, 7}, d), make(y, {6, 7}, d), "contiguous");
      check_binary(c, d, make(x, {7, 6}, d).t(), make(y, {7, 6}, d).t(), "transposed");
      check_binary(c, d, make(x, {7, 6}, d).t(), make(y, {6, 7}, d), "transposed-contiguous");
      check_binary(c, d, make({x.begin(), x.begin() + 6}, {6, 1}, d),
                   make({y.begin(), y.begin() + 7}, {1, 7}, d), "broadcast");
      check_binary(c, d, make(x, {6, 7}, d), make0(y[4], d), "0-dim b");
      check_binary(c, d, make0(x[4], d), make(y, {6, 7}, d), "0-dim a");
    }
  }
}

// ---- result dtypes and values of mixed dtypes, as torch ----

TEST_CASE("elementwise dtypes: torch's result dtypes for the new dtypes") {
  const Tensor u8 = tl::from_vector<double>({200, 0, 5}).to(tl::kUInt8);
  const Tensor i8 = tl::from_vector<double>({-100, 7, -7}).to(tl::kInt8);
  const Tensor i16 = tl::from_vector<double>({1, 2, 3}).to(tl::kInt16);
  const Tensor f16 = tl::from_vector<double>({1.5, 2, 3}).to(tl::kFloat16);
  const Tensor bf16 = tl::from_vector<double>({1.5, 2, 3}).to(tl::kBFloat16);

  Tensor r = u8 + i8;  // uint8 + int8 -> int16
  CHECK(r.dtype() == tl::kInt16);
  CHECK(as_ints(r) == std::vector<int64_t>{100, 7, -2});
  r = i8 / tl::from_vector<double>({2, 2, 2}).to(tl::kInt8);
  CHECK(r.dtype() == tl::kFloat32);
  CHECK(as_doubles(r) == std::vector<double>{-50, 3.5, -3.5});
  CHECK(tl::exp(i16).dtype() == tl::kFloat32);
  CHECK(tl::sqrt(u8).dtype() == tl::kFloat32);
  r = f16 + 2.5;  // a float scalar does not widen a float16 tensor
  CHECK(r.dtype() == tl::kFloat16);
  CHECK(as_doubles(r) == std::vector<double>{4, 4.5, 5.5});
  CHECK((f16 + tl::scalar_tensor(2.5)).dtype() == tl::kFloat16);  // nor a 0-dim float32
  CHECK((i8 + tl::scalar_tensor(2.5)).dtype() == tl::kFloat32);
  CHECK((f16 + bf16).dtype() == tl::kFloat32);
  CHECK((bf16 * tl::from_vector<int64_t>({3, 3, 3})).dtype() == tl::kBFloat16);
  CHECK((i8 > 0).dtype() == tl::kBool);
  CHECK(tl::logical_and(f16, i8).dtype() == tl::kBool);
  CHECK(tl::logical_not(bf16).dtype() == tl::kBool);
  // Wrap-around as torch: uint8 - 1, int8 * int8, int16 * int16, uint8 ** 6, int8 + 1000.
  CHECK(as_ints(u8 - 1) == std::vector<int64_t>{199, 255, 4});
  CHECK(as_ints(i8 * i8) == std::vector<int64_t>{16, 49, 49});
  Tensor big16 = tl::from_vector<double>({30000}).to(tl::kInt16);
  CHECK(as_ints(big16 * big16) == std::vector<int64_t>{-5888});
  CHECK(as_ints(tl::pow(tl::from_vector<double>({3}).to(tl::kUInt8), 6)) ==
        std::vector<int64_t>{217});
  CHECK(as_ints(tl::from_vector<double>({1, 100}).to(tl::kInt8) + 1000) ==
        std::vector<int64_t>{-23, 76});
  Tensor min8 = tl::from_vector<double>({-128}).to(tl::kInt8);
  CHECK(as_ints(tl::abs(min8)) == std::vector<int64_t>{-128});
  CHECK(as_ints(tl::neg(min8)) == std::vector<int64_t>{-128});
  CHECK(as_ints(tl::pow(i16, tl::from_vector<double>({-1, -1, -1}).to(tl::kInt16))) ==
        std::vector<int64_t>{1, 0, 0});
  // In place keeps self's dtype when the result casts to it.
  Tensor h = f16.clone();
  h.mul_(2);
  CHECK(h.dtype() == tl::kFloat16);
  CHECK(as_doubles(h) == std::vector<double>{3, 4, 6});
  Tensor q = i8.clone();
  q.add_(i8);
  CHECK(as_ints(q) == std::vector<int64_t>{56, 14, -14});
}

TEST_CASE("elementwise dtypes: where and clamp on every dtype") {
  const Tensor cond = tl::from_vector<double>({1, 0, 1, 0}).to(tl::kBool);
  for (DType d : kEveryDtype) {
    std::vector<double> x = random_values(d, Range::Small, 4, 7),
                        y = random_values(d, Range::Small, 4, 8);
    Tensor out = tl::where(cond, make(x, {4}, d), make(y, {4}, d));
    CHECK(out.dtype() == d);
    std::vector<double> ref{x[0], y[1], x[2], y[3]};
    CHECK_MESSAGE(as_doubles(out) == as_doubles(make(ref, {4}, d)), tl::dtype_name(d));
    // Broadcast: a 0-dim a against a transposed b.
    Tensor b2 = make({y[0], y[1], y[2], y[3]}, {2, 2}, d).t();
    out = tl::where(cond.view({2, 2}), make0(x[0], d), b2);
    const std::vector<double> bt = as_doubles(b2);
    const double x0 = as_doubles(make0(x[0], d))[0];
    const std::vector<double> ref2{x0, bt[1], x0, bt[3]};
    CHECK_MESSAGE(as_doubles(out) == ref2, tl::dtype_name(d));
    if (d == tl::kBool) continue;
    Tensor c = tl::clamp(make(x, {4}, d), Scalar(-1), Scalar(2));
    CHECK(c.dtype() == d);
    std::vector<double> xv = as_doubles(make(x, {4}, d));
    for (size_t i = 0; i < 4; ++i) CHECK(as_doubles(c)[i] == std::min(std::max(xv[i], -1.0), 2.0));
  }
}

TEST_CASE("elementwise dtypes: an op refuses the dtypes torch refuses, naming op and dtype") {
  const Tensor b = tl::from_vector<double>({1, 0}).to(tl::kBool);
  auto check = [](const std::function<void()>& f, const std::string& prefix,
                  const std::string& dtype) {
    try {
      f();
      FAIL_CHECK(prefix << "did not throw");
    } catch (const tl::DTypeError& e) {
      const std::string msg = e.what();
      CHECK_MESSAGE(msg.rfind(prefix, 0) == 0, msg);
      CHECK_MESSAGE(msg.find(dtype) != std::string::npos, msg);
    }
  };
  for (const UnaryCase& c : unary_cases())
    // ~mask is logical not; square of a mask is int64
    if (!c.bool_ok && std::string(c.name) != "bitwise_not" && std::string(c.name) != "square")
      check([&] { c.op(b); }, std::string("[tl::") + c.name + "] ", "bool");
  for (const BinaryCase& c : binary_cases())
    if (!c.bool_ok) check([&] { c.op(b, b); }, std::string("[tl::") + c.name + "] ", "bool");
}

}  // namespace

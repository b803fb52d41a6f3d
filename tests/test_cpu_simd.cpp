// The SIMD kernels of backends/cpu/simd on every target this CPU runs: each vectorized function
// against the C library (within 1 ulp of the correctly rounded value with SLEEF, the same bits
// without), the arithmetic bit for bit, the ops through them in every layout, and the choice of
// target (TL_CPU_CAPABILITY).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tensorlet/backends/cpu/simd/cpu_capability.h"
#include "test_util.h"

namespace {

namespace simd = tl::cpu::simd;
using simd::CpuCapability;
using tl::Tensor;

// The targets this CPU runs, lowest first.
std::vector<CpuCapability> supported_targets() {
  std::vector<CpuCapability> out;
  for (int i = 0; i < simd::kCpuCapabilityCount; ++i)
    if (simd::cpu_supports(static_cast<CpuCapability>(i)))
      out.push_back(static_cast<CpuCapability>(i));
  return out;
}

// Puts the target in use back at the end of a test that switches it.
struct TargetGuard {
  CpuCapability saved = simd::active_capability();
  ~TargetGuard() { simd::set_active_capability(saved); }
};

// Distance in units in the last place between two values of T (adjacent values are 1 apart,
// +0 and -0 are 0 apart); two NaNs are 0 apart, a NaN and a number infinitely far.
template <typename T>
int64_t ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int64_t>::max();
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits ia, ib;
  std::memcpy(&ia, &a, sizeof(T));
  std::memcpy(&ib, &b, sizeof(T));
  // Sign and magnitude: the distance is the difference of the magnitudes on one side of zero,
  // their sum across it.
  constexpr Bits sign = Bits(1) << (8 * sizeof(T) - 1);
  const uint64_t ma = ia & ~sign, mb = ib & ~sign;
  const uint64_t d = (ia & sign) == (ib & sign) ? (ma > mb ? ma - mb : mb - ma) : ma + mb;
  return d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(d);
}

// A value in hexadecimal floating point, every bit visible.
std::string hex(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

// One function of TL_SIMD_UNARY_OPS: its op, references and test range. `precise` is the
// function computed in a wider type (double for float32, long double for float64: the correctly
// rounded value but for rare double roundings; sigmoid's is the scalar formula around a precise
// exp); `scalar` is exactly what the scalar kernel computes.
struct MathCase {
  simd::SimdUnary slot;
  const char* name;
  Tensor (*op)(const Tensor&);
  float (*precise32)(float);
  double (*precise64)(double);
  float (*scalar32)(float);
  double (*scalar64)(double);
  // Ulps from the precise value allowed with SLEEF: 1 (SLEEF's u10 bound); 2 for sigmoid, whose
  // division doubles exp's 1 ulp where the result's mantissa is near 2 (the scalar functor's
  // own error too); 0 for the correctly rounded operations, the C library's bits everywhere.
  int tolerance;
  double lo32, hi32;  // uniform test ranges, float32 and float64
  double lo64, hi64;
};

#define TL_LIBM_CASE(fn, lo32, hi32, lo64, hi64)                                                   \
  {                                                                                                \
    simd::SimdUnary::fn, #fn, [](const Tensor& a) { return tl::fn(a); },                           \
        [](float x) { return static_cast<float>(std::fn(static_cast<double>(x))); },               \
        [](double x) { return static_cast<double>(std::fn(static_cast<long double>(x))); },        \
        [](float x) { return ::fn##f(x); }, [](double x) { return ::fn(x); }, 1, lo32, hi32, lo64, \
        hi64                                                                                       \
  }
const std::vector<MathCase> kMathCases{
    TL_LIBM_CASE(exp, -110, 95, -750, 712),
    TL_LIBM_CASE(log, 0, 1e4, 0, 1e6),
    TL_LIBM_CASE(tanh, -20, 20, -40, 40),
    {simd::SimdUnary::sigmoid, "sigmoid", [](const Tensor& a) { return tl::sigmoid(a); },
     [](float x) { return 1.0f / (1.0f + static_cast<float>(std::exp(-static_cast<double>(x)))); },
     [](double x) {
       return 1.0 / (1.0 + static_cast<double>(std::exp(-static_cast<long double>(x))));
     },
     [](float x) { return 1.0f / (1.0f + ::expf(-x)); },
     [](double x) { return 1.0 / (1.0 + ::exp(-x)); }, 2, -110, 110, -750, 750},
    TL_LIBM_CASE(sin, -1e4, 1e4, -1e6, 1e6),
    TL_LIBM_CASE(cos, -1e4, 1e4, -1e6, 1e6),
    TL_LIBM_CASE(erf, -6, 6, -7, 7),
    TL_LIBM_CASE(expm1, -100, 95, -750, 712),
    TL_LIBM_CASE(log1p, -1, 1e4, -1, 1e6),
    TL_LIBM_CASE(log2, 0, 1e4, 0, 1e6),
    TL_LIBM_CASE(log10, 0, 1e4, 0, 1e6),
    TL_LIBM_CASE(exp2, -160, 130, -1100, 1030),
    TL_LIBM_CASE(tan, -1e4, 1e4, -1e6, 1e6),
    TL_LIBM_CASE(sinh, -95, 95, -715, 715),
    TL_LIBM_CASE(cosh, -95, 95, -715, 715),
    TL_LIBM_CASE(asin, -1, 1, -1, 1),
    TL_LIBM_CASE(acos, -1, 1, -1, 1),
    TL_LIBM_CASE(atan, -1e3, 1e3, -1e6, 1e6),
    {simd::SimdUnary::sqrt, "sqrt", [](const Tensor& a) { return tl::sqrt(a); },
     [](float x) { return static_cast<float>(std::sqrt(static_cast<double>(x))); },
     [](double x) { return static_cast<double>(std::sqrt(static_cast<long double>(x))); },
     [](float x) { return ::sqrtf(x); }, [](double x) { return ::sqrt(x); }, 0, 0, 1e6, 0, 1e12},
    {simd::SimdUnary::rsqrt, "rsqrt", [](const Tensor& a) { return tl::rsqrt(a); },
     [](float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); },
     [](double x) { return static_cast<double>(1.0L / std::sqrt(static_cast<long double>(x))); },
     [](float x) { return 1.0f / ::sqrtf(x); }, [](double x) { return 1.0 / ::sqrt(x); }, 0, 0, 1e6,
     0, 1e12},
    {simd::SimdUnary::reciprocal, "reciprocal", [](const Tensor& a) { return tl::reciprocal(a); },
     [](float x) { return static_cast<float>(1.0 / static_cast<double>(x)); },
     [](double x) { return static_cast<double>(1.0L / static_cast<long double>(x)); },
     [](float x) { return 1.0f / x; }, [](double x) { return 1.0 / x; }, 0, -1e3, 1e3, -1e6, 1e6},
};
#undef TL_LIBM_CASE

TEST_CASE("cpu simd: the test covers every function of the SIMD list") {
  CHECK(kMathCases.size() == static_cast<size_t>(simd::kSimdUnaryCount));
  for (size_t i = 0; i < kMathCases.size(); ++i)
    CHECK(static_cast<int>(kMathCases[i].slot) == static_cast<int>(i));
}

// Random values: uniform over [lo, hi], magnitudes uniform in exponent over T's whole range
// (denormals to the largest finite, both signs: huge sin/cos arguments among them), and the edges:
// zeros, denormals, infinities, NaN, and the overflow and underflow thresholds of the functions.
template <typename T>
std::vector<T> test_inputs(double lo, double hi, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<T> v;
  std::uniform_real_distribution<double> uniform(lo, hi);
  for (int i = 0; i < 6000; ++i) v.push_back(static_cast<T>(uniform(gen)));
  using L = std::numeric_limits<T>;
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::uniform_int_distribution<int> exponent(L::min_exponent - L::digits, L::max_exponent - 1);
  for (int i = 0; i < 6000; ++i) {
    const T x = std::ldexp(static_cast<T>(mantissa(gen)), exponent(gen));
    v.push_back(i % 2 ? -x : x);
  }
  const T edges[] = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min() / 2, L::min(),
                     -L::min(), L::max(), -L::max(), L::infinity(), -L::infinity(), L::quiet_NaN(),
                     T(1), T(-1), T(0.5), T(-0.5), T(1e-30), T(2), T(-2),
                     // exp / expm1 / exp2 / sigmoid overflow and underflow (float32)
                     T(88.7228394), T(88.72284), T(-87.33654), T(-103.972084), T(-104), T(128),
                     T(-150), T(-149), T(89.41598), T(-89.41599), T(89.4), T(-89.4),
                     // ... and float64
                     T(709.782712893384), T(709.7827128933841), T(709.78), T(-708.3964185322641),
                     T(-745.1332191019411), T(-745.2), T(1024), T(-1075), T(710.4758600739439),
                     T(-710.475860073944),
                     // large arguments of sin, cos, tan; huge log1p arguments
                     T(1e6), T(-1e6), T(1e22), T(1e30), T(-1e30), T(3e38), T(1e300), T(1.7e308)};
  for (T x : edges) v.push_back(x);
  return v;
}

// The leaf of `c`'s table for T.
template <typename T>
auto unary_leaf(CpuCapability c, simd::SimdUnary slot) {
  const simd::SimdKernels& k = simd::kernels_for(c);
  if constexpr (sizeof(T) == 4)
    return k.unary_f32[static_cast<int>(slot)];
  else
    return k.unary_f64[static_cast<int>(slot)];
}

// Checks one function of one target in T; returns the largest distance in ulps from the
// precise value and from the scalar C function, for the report.
template <typename T>
std::pair<int64_t, int64_t> check_function(CpuCapability c, const MathCase& m) {
  const bool f32 = sizeof(T) == 4;
  const std::vector<T> in =
      test_inputs<T>(f32 ? m.lo32 : m.lo64, f32 ? m.hi32 : m.hi64, 17 + static_cast<int>(m.slot));
  std::vector<T> out(in.size());
  const auto leaf = unary_leaf<T>(c, m.slot);
  leaf(in.data(), out.data(), static_cast<int64_t>(in.size()));
  const bool vector_math = simd::kernels_for(c).vector_math && m.tolerance > 0;
  int64_t max_precise = 0, max_scalar = 0, failures = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const T x = in[i];
    const T scalar = f32 ? static_cast<T>(m.scalar32(static_cast<float>(x)))
                         : static_cast<T>(m.scalar64(static_cast<double>(x)));
    const T precise = f32 ? static_cast<T>(m.precise32(static_cast<float>(x)))
                          : static_cast<T>(m.precise64(static_cast<double>(x)));
    const int64_t dp = ulp_distance(out[i], precise), ds = ulp_distance(out[i], scalar);
    // SLEEF: within the tolerance of the precise value (or the C function's own value, which the
    // kernel takes where SLEEF's domain ends), NaN exactly where the C function gives NaN, and a
    // zero's sign kept. Without it (and for the exact operations): the C function's own bits.
    const bool same_zero_sign = precise != 0 || std::signbit(out[i]) == std::signbit(precise);
    const bool ok = vector_math ? (dp <= m.tolerance || ds == 0) &&
                                      std::isnan(out[i]) == std::isnan(scalar) && same_zero_sign
                                : ds == 0 && std::signbit(out[i]) == std::signbit(scalar);
    if (!ok && failures++ < 3) {
      INFO(std::string(simd::capability_name(c)), " ", std::string(m.name),
           (f32 ? " float32" : " float64"), " x = ", hex(x), " got ", hex(out[i]), ", C function ",
           hex(scalar), ", precise ", hex(precise));
      CHECK(ok);
    }
    if (!std::isnan(precise)) max_precise = std::max(max_precise, dp);
    if (!std::isnan(scalar)) max_scalar = std::max(max_scalar, ds);
  }
  CHECK_MESSAGE(failures == 0, std::string(simd::capability_name(c)), " ", std::string(m.name), " ",
                failures, " failures");
  // A tail (n not a multiple of the vector width) gets the bits of the body: every short run at
  // a few offsets equals the whole run.
  for (int64_t offset : {0, 1, 3})
    for (int64_t n = 1; n <= 40; ++n) {
      std::vector<T> part(static_cast<size_t>(n));
      leaf(in.data() + offset, part.data(), n);
      for (int64_t i = 0; i < n; ++i)
        if (ulp_distance(part[i], out[offset + i]) != 0 ||
            std::signbit(part[i]) != std::signbit(out[offset + i])) {
          INFO(std::string(simd::capability_name(c)), " ", std::string(m.name), " n = ", n,
               " offset ", offset, " i ", i);
          FAIL_CHECK("a tail element differs from the body's");
          return {max_precise, max_scalar};
        }
    }
  return {max_precise, max_scalar};
}

TEST_CASE("cpu simd: every function on every target within 1 ulp of the precise value") {
  for (CpuCapability c : supported_targets()) {
    std::string report = std::string(simd::capability_name(c)) +
                         (simd::kernels_for(c).vector_math ? " (SLEEF)" : " (C library)") +
                         ", max ulps from the precise value / from the C function:";
    for (const MathCase& m : kMathCases) {
      const auto [p32, s32] = check_function<float>(c, m);
      const auto [p64, s64] = check_function<double>(c, m);
      // Appended piece by piece: GCC 12 -O3 warns (-Wrestrict, a false positive) on a chain of
      // "literal" + std::string temporaries here.
      report.append(" ").append(m.name).append(" ");
      report.append(std::to_string(p32)).append("/").append(std::to_string(s32)).append(" f32, ");
      report.append(std::to_string(p64)).append("/").append(std::to_string(s64)).append(" f64;");
    }
    MESSAGE(report);
  }
}

// The arithmetic leaves against the plain scalar loop, bit for bit, in the three layouts.
template <typename T>
void check_binary(CpuCapability c) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  std::vector<T> a(1037), b(1037);
  for (auto& x : a) x = static_cast<T>(u(gen));
  for (auto& x : b) x = static_cast<T>(u(gen));
  // Specials among them: NaN, infinities, zeros of both signs, a denormal.
  using L = std::numeric_limits<T>;
  const T specials[] = {L::quiet_NaN(), L::infinity(),   -L::infinity(), T(0),
                        -T(0),          L::denorm_min(), L::max()};
  for (size_t i = 0; i < std::size(specials); ++i) {
    a[3 + 7 * i] = specials[i];
    b[5 + 11 * i] = specials[i];
    b[3 + 7 * i] = specials[(i + 3) % std::size(specials)];
  }
  const simd::SimdKernels& k = simd::kernels_for(c);
  const auto expect = [](int op, T x, T y) {
    switch (op) {
      case 0:
        return x + y;
      case 1:
        return x - y;
      case 2:
        return x * y;
      default:
        return x / y;
    }
  };
  for (int op = 0; op < simd::kSimdBinaryCount; ++op)
    for (int layout = 0; layout < simd::kSimdLayoutCount; ++layout) {
      const auto leaf = [&] {
        if constexpr (sizeof(T) == 4)
          return k.binary_f32[op][layout];
        else
          return k.binary_f64[op][layout];
      }();
      for (int64_t n : {1, 7, 64, 1000}) {
        std::vector<T> out(static_cast<size_t>(n));
        leaf(a.data(), b.data() + 1, out.data(), n);
        // In place: out is the first input.
        std::vector<T> in_place(a.begin(), a.begin() + n);
        leaf(in_place.data(), b.data() + 1, in_place.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const T x = layout == 2 ? a[0] : a[i], y = layout == 1 ? b[1] : b[1 + i];
          const T want = expect(op, x, y);
          if (std::memcmp(&out[i], &want, sizeof(T)) != 0 &&
              !(std::isnan(out[i]) && std::isnan(want))) {
            INFO(std::string(simd::capability_name(c)), " op ", op, " layout ", layout, " n ", n,
                 " i ", i);
            FAIL_CHECK("the SIMD arithmetic differs from the scalar loop");
            return;
          }
          const T got_in_place = layout == 2 ? in_place[i] : in_place[i];
          if (layout != 2 && std::memcmp(&got_in_place, &out[i], sizeof(T)) != 0 &&
              !std::isnan(out[i])) {
            INFO(std::string(simd::capability_name(c)), " op ", op, " layout ", layout, " n ", n,
                 " i ", i);
            FAIL_CHECK("in place differs");
            return;
          }
        }
      }
    }
}

TEST_CASE("cpu simd: add, sub, mul, div on every target are the scalar loop's bits") {
  for (CpuCapability c : supported_targets()) {
    check_binary<float>(c);
    check_binary<double>(c);
  }
}

// Bits of a tensor's values as float64 (exact for every floating dtype), NaN as one pattern.
std::vector<double> values(const Tensor& t) {
  std::vector<double> v = t.contiguous().to(tl::kFloat64).to_vector<double>();
  for (double& x : v)
    if (std::isnan(x)) x = std::numeric_limits<double>::quiet_NaN();
  return v;
}
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Values of `dtype` in the function's range, as a [rows, cols] tensor.
Tensor random_tensor(const MathCase& m, tl::DType dtype, int64_t rows, int64_t cols,
                     uint64_t seed) {
  std::mt19937_64 gen(seed);
  const bool narrow = dtype != tl::kFloat64;
  double lo = narrow ? m.lo32 : m.lo64, hi = narrow ? m.hi32 : m.hi64;
  if (dtype == tl::kFloat16) hi = std::min(hi, 11.0), lo = std::max(lo, -11.0);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (double& x : v) x = u(gen);
  return tl::from_vector(v, {rows, cols}).to(dtype);
}

// The sum leaves against a scalar model of the order simd_kernels.h fixes, bit for bit.
template <typename T>
double model_sum(double acc, const T* p, int64_t n) {
  int64_t i = 0;
  if (n >= 32) {
    double lane[16] = {};
    for (; i + 16 <= n; i += 16)
      for (int l = 0; l < 16; ++l) lane[l] += static_cast<double>(p[i + l]);
    for (int w = 8; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
    acc += lane[0];
  }
  for (; i < n; ++i) acc += static_cast<double>(p[i]);
  return acc;
}

template <typename T>
void check_sum_leaves(CpuCapability c) {
  // Magnitudes from 1e-6 to 1e6 of both signs: a different order of additions shows in the bits.
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> exponent(-6, 6), sign(-1, 1);
  std::vector<T> data(12000);
  for (auto& x : data) x = static_cast<T>((sign(gen) < 0 ? -1 : 1) * std::pow(10.0, exponent(gen)));
  const simd::SimdKernels& k = simd::kernels_for(c);
  const auto sum_rows = [&](double* acc, const T* p, int64_t stride, int64_t rows, int64_t n) {
    if constexpr (sizeof(T) == 4)
      k.sum_rows_f32(acc, p, stride, rows, n);
    else
      k.sum_rows_f64(acc, p, stride, rows, n);
  };
  const auto add_rows = [&](double* acc, const T* p, int64_t stride, int64_t rows, int64_t n) {
    if constexpr (sizeof(T) == 4)
      k.add_rows_f32(acc, p, stride, rows, n);
    else
      k.add_rows_f64(acc, p, stride, rows, n);
  };
  // Rows of every length class, 1 to 9 at a time (the leaf takes several rows per pass), at
  // unaligned starts and with gaps between rows.
  for (int64_t n : {0, 1, 15, 31, 32, 33, 47, 48, 63, 400, 1037})
    for (int64_t rows : {1, 2, 3, 4, 5, 9})
      for (int64_t offset : {0, 1, 3}) {
        const int64_t stride = n + offset + 2;
        std::vector<double> got(static_cast<size_t>(rows)), want(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) got[r] = want[r] = 0.25 * static_cast<double>(r + 1);
        sum_rows(got.data(), data.data() + offset, stride, rows, n);
        for (int64_t r = 0; r < rows; ++r)
          want[r] = model_sum(want[r], data.data() + offset + r * stride, n);
        INFO(std::string(simd::capability_name(c)), " n ", n, " rows ", rows, " offset ", offset);
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
      }
  for (int64_t rows : {1, 3, 4, 5, 9})
    for (int64_t n : {1, 7, 8, 9, 31, 100}) {
      const int64_t stride = n + 5;
      std::vector<double> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) got[j] = want[j] = static_cast<double>(data[j + 2000]);
      add_rows(got.data(), data.data() + 1, stride, rows, n);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < rows; ++r) want[j] += static_cast<double>(data[1 + r * stride + j]);
      INFO(std::string(simd::capability_name(c)), " rows ", rows, " n ", n);
      CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
    }
}

TEST_CASE("cpu simd: the sum leaves add in the fixed order on every target, bit for bit") {
  for (CpuCapability c : supported_targets()) {
    check_sum_leaves<float>(c);
    check_sum_leaves<double>(c);
  }
}

TEST_CASE("cpu simd: sums and means give the same bits on every target, in every layout") {
  TargetGuard guard;
  const Tensor inputs[] = {tl::randn({67, 1029}, tl::kFloat32) * 100.0,
                           tl::randn({67, 1029}, tl::kFloat64) * 100.0};
  std::vector<std::vector<uint64_t>> first;
  for (CpuCapability c : supported_targets()) {
    simd::set_active_capability(c);
    std::vector<std::vector<uint64_t>> results;
    for (const Tensor& m : inputs) {
      const tl::DType dtype = m.dtype();
      const Tensor mt = m.t().contiguous().t();
      for (const Tensor& x : {m, mt, m.slice(1, 3, 1029, 2)}) {
        results.push_back(tl_test::bits_of(tl::sum(x, {1})));
        results.push_back(tl_test::bits_of(tl::sum(x, {0})));
        results.push_back(tl_test::bits_of(tl::mean(x, {0, 1})));
        results.push_back(tl_test::bits_of(tl::sum(x)));
      }
      // The row sums against the model, element by element, on one thread: with many threads
      // and few rows the reduced dim is split into chunks, which changes the order of the adds.
      const int threads = tl::get_num_threads();
      tl::set_num_threads(1);
      const Tensor rows = tl::sum(m, {1});
      tl::set_num_threads(threads);
      const Tensor m64 = m.to(tl::kFloat64);
      for (int64_t r = 0; r < 67; r += 11) {
        const std::vector<double> row = m64[r].to_vector<double>();
        const double want = model_sum(0.0, row.data(), static_cast<int64_t>(row.size()));
        CHECK(rows[r].to(tl::kFloat64).item<double>() ==
              (dtype == tl::kFloat32 ? static_cast<double>(static_cast<float>(want)) : want));
      }
    }
    if (first.empty())
      first = results;
    else
      CHECK_MESSAGE(results == first, simd::capability_name(c), " sums differ from the baseline");
  }
}

TEST_CASE("cpu simd: the ops give the same bits in every layout and dtype, on every target") {
  TargetGuard guard;
  for (CpuCapability c : supported_targets()) {
    simd::set_active_capability(c);
    REQUIRE(tl::cpu_capability() == simd::capability_name(c));
    for (const MathCase& m : kMathCases)
      for (tl::DType dtype : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
        INFO(std::string(simd::capability_name(c)), " ", std::string(m.name), " ",
             std::string(tl::dtype_name(dtype)));
        // Sizes off the vector widths; 300 rows pass a strided run through more than one chunk.
        const Tensor x = random_tensor(m, dtype, 301, 37, 3);
        const std::vector<double> want = values(m.op(x));
        // The leaf itself on the values (float16/bfloat16 compute in float, rounded once).
        if (dtype == tl::kFloat64) {
          std::vector<double> in = x.to_vector<double>(), out(in.size());
          unary_leaf<double>(c, m.slot)(in.data(), out.data(), static_cast<int64_t>(in.size()));
          CHECK(same_bits(values(tl::from_vector(out)), want));
        } else {
          std::vector<float> in = x.to(tl::kFloat32).to_vector<float>(), out(in.size());
          unary_leaf<float>(c, m.slot)(in.data(), out.data(), static_cast<int64_t>(in.size()));
          CHECK(same_bits(values(tl::from_vector(out).to(dtype)), want));
        }
        // Transposed (a strided inner run), sliced with a step, and in place.
        const Tensor xt = x.t().contiguous().t();
        CHECK(!xt.is_contiguous());
        CHECK(same_bits(values(m.op(xt)), want));
        const Tensor wide = random_tensor(m, dtype, 301, 74, 4);
        const Tensor sliced = wide.slice(1, 0, 74, 2);
        CHECK(same_bits(values(m.op(sliced)), values(m.op(sliced.contiguous()))));
      }
  }
}

TEST_CASE("cpu simd: ops in place through the SIMD leaves") {
  TargetGuard guard;
  for (CpuCapability c : supported_targets()) {
    simd::set_active_capability(c);
    for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
      const Tensor x = random_tensor(kMathCases[0], dtype, 33, 35, 9);
      Tensor y = x.clone();
      tl::exp_out(y, y);
      CHECK(same_bits(values(y), values(tl::exp(x))));
      Tensor z = x.clone();
      z.t().sigmoid_();
      CHECK(same_bits(values(z), values(tl::sigmoid(x))));
      Tensor w = x.clone();
      w.add_(x);
      CHECK(same_bits(values(w), values(tl::add(x, x))));
    }
  }
}

TEST_CASE("cpu simd: add, sub, mul, div ops on every target and layout, bit for bit") {
  TargetGuard guard;
  for (CpuCapability c : supported_targets()) {
    simd::set_active_capability(c);
    for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
      INFO(std::string(simd::capability_name(c)), " ", std::string(tl::dtype_name(dtype)));
      std::mt19937_64 gen(11);
      std::uniform_real_distribution<double> u(-50, 50);
      std::vector<double> av(41 * 29), bv(41 * 29);
      for (double& x : av) x = u(gen);
      for (double& x : bv) x = u(gen);
      const Tensor a = tl::from_vector(av, {41, 29}).to(dtype);
      const Tensor b = tl::from_vector(bv, {41, 29}).to(dtype);
      const std::vector<double> ad = values(a), bd = values(b);
      // The reference: the operation in the dtype, one element at a time.
      const auto apply = [&](int op, double p, double q) -> double {
        if (dtype == tl::kFloat32) {
          const float x = static_cast<float>(p), y = static_cast<float>(q);
          return op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
        }
        return op == 0 ? p + q : op == 1 ? p - q : op == 2 ? p * q : p / q;
      };
      using Op = Tensor (*)(const Tensor&, const Tensor&);
      using OpScalar = Tensor (*)(const Tensor&, tl::Scalar);
      using ScalarOp = Tensor (*)(tl::Scalar, const Tensor&);
      const Op ops[] = {[](const Tensor& x, const Tensor& y) { return tl::add(x, y); },
                        [](const Tensor& x, const Tensor& y) { return tl::sub(x, y); },
                        [](const Tensor& x, const Tensor& y) { return tl::mul(x, y); },
                        [](const Tensor& x, const Tensor& y) { return tl::div(x, y); }};
      const OpScalar ops_s[] = {[](const Tensor& x, tl::Scalar y) { return tl::add(x, y); },
                                [](const Tensor& x, tl::Scalar y) { return tl::sub(x, y); },
                                [](const Tensor& x, tl::Scalar y) { return tl::mul(x, y); },
                                [](const Tensor& x, tl::Scalar y) { return tl::div(x, y); }};
      const ScalarOp s_ops[] = {[](tl::Scalar x, const Tensor& y) { return tl::add(x, y); },
                                [](tl::Scalar x, const Tensor& y) { return tl::sub(x, y); },
                                [](tl::Scalar x, const Tensor& y) { return tl::mul(x, y); },
                                [](tl::Scalar x, const Tensor& y) { return tl::div(x, y); }};
      // A number exact in float32, so both dtypes see the same operand.
      const double s = 1.375;
      const Tensor col = a.slice(1, 0, 1), row = b.slice(0, 0, 1);
      const std::vector<double> colv = values(col), rowv = values(row);
      for (int op = 0; op < 4; ++op) {
        INFO("op ", op);
        std::vector<double> tt, ts, st, outer;
        for (size_t i = 0; i < ad.size(); ++i) {
          tt.push_back(apply(op, ad[i], bd[i]));
          ts.push_back(apply(op, ad[i], s));
          st.push_back(apply(op, s, bd[i]));
        }
        for (double p : colv)
          for (double q : rowv) outer.push_back(apply(op, p, q));
        CHECK(same_bits(values(ops[op](a, b)), tt));
        CHECK(same_bits(values(ops[op](a.t(), b.t()).t()), tt));
        CHECK(same_bits(values(ops_s[op](a, s)), ts));
        CHECK(same_bits(values(s_ops[op](s, b)), st));
        // Broadcast: a column against a row (stride-0 inner runs of either operand).
        CHECK(same_bits(values(ops[op](col, row)), outer));
      }
    }
  }
}

TEST_CASE("cpu simd: the target in use is a supported one, and TL_CPU_CAPABILITY pins it") {
  const std::string name = tl::cpu_capability();
  bool known = false;
  for (CpuCapability c : supported_targets()) known |= name == simd::capability_name(c);
  CHECK_MESSAGE(known, "tl::cpu_capability() = ", name);
  MESSAGE("tl::cpu_capability() = ", name);
  // Pinned (scripts and the sanitizer runs set it): a supported target is the one in use.
  const char* env = std::getenv("TL_CPU_CAPABILITY");
  if (env != nullptr)
    for (CpuCapability c : supported_targets())
      if (std::string(env) == simd::capability_name(c)) CHECK(name == env);
  // Without a pin the best target is in use.
  if (env == nullptr || env[0] == '\0')
    CHECK(name == simd::capability_name(supported_targets().back()));
  // A target the CPU lacks is refused by the test setter with a typed error.
  for (int i = 0; i < simd::kCpuCapabilityCount; ++i) {
    const auto c = static_cast<CpuCapability>(i);
    if (!simd::cpu_supports(c)) CHECK_THROWS_AS(simd::set_active_capability(c), tl::Error);
  }
}

}  // namespace

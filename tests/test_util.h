// Shared test helpers: the devices every op test runs on, random inputs in several memory
// layouts, device mirrors of a layout, a host-side reference reader, closeness checks, bounds of
// rounding errors, and the TL_TEST_SEED seed of the random inputs.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

#include "rounding.h"

namespace tl_test {

namespace tl = tensorlet;

// The seed of the suite's random inputs from TL_TEST_SEED (a decimal number), or none when it is
// unset or empty: tests/main.cpp reseeds each case from it, test_fuzz.cpp runs its cases from it.
inline std::optional<uint64_t> test_seed() {
  const char* env = std::getenv("TL_TEST_SEED");
  if (env == nullptr || env[0] == '\0') return std::nullopt;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (*end != '\0' || env[0] == '-') {
    std::fprintf(stderr, "TL_TEST_SEED must be a decimal number, got '%s'\n", env);
    std::exit(2);
  }
  return static_cast<uint64_t>(v);
}

// The dtypes of a set, in TL_DTYPES order, at run time (a dtype added to the list is covered).
inline std::vector<tl::DType> dtypes_of(tl::DTypeSet set) {
  std::vector<tl::DType> out;
  for (int i = 0; i < tl::kNumDTypes; ++i)
    if (set.contains(static_cast<tl::DType>(i))) out.push_back(static_cast<tl::DType>(i));
  return out;
}
inline std::vector<tl::DType> all_dtypes() { return dtypes_of(tl::kAllDTypes); }

// Sample mean and (population) variance, for statistical checks of random ops.
inline double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
inline double var_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size());
}

// Every device the op suites run on and compare with a host reference: cpu, then cuda:0 when a
// CUDA device is usable (one GPU is enough for parity; multi-GPU cases live in the CUDA suites).
inline std::vector<tl::Device> test_devices() {
  std::vector<tl::Device> devices{tl::Device::cpu()};
  if (tl::cuda::is_available()) devices.push_back(tl::Device::cuda(0));
  return devices;
}

// Ends a CUDA-only test case on a machine without a usable CUDA device, reporting it as skipped
// (the suite must pass there).
// Ends a test of the caching allocator's behaviour when TL_CUDA_NO_CACHING=1 turned caching off
// (scripts/gpu-check does so for compute-sanitizer memcheck).
#define TL_TEST_REQUIRE_CUDA_CACHING()                          \
  do {                                                          \
    TL_TEST_REQUIRE_CUDA();                                     \
    const char* no_caching = std::getenv("TL_CUDA_NO_CACHING"); \
    if (no_caching != nullptr && no_caching[0] == '1') {        \
      MESSAGE("skipped: TL_CUDA_NO_CACHING=1");                 \
      return;                                                   \
    }                                                           \
  } while (0)

#define TL_TEST_REQUIRE_CUDA()                \
  do {                                        \
    if (!::tensorlet::cuda::is_available()) { \
      MESSAGE("skipped: no CUDA device");     \
      return;                                 \
    }                                         \
  } while (0)

// A copy of t with the same geometry (shape, strides, offset, and the unused storage around a
// view) on `device` (the same one included): the whole storage is copied and viewed the same way,
// so a device kernel sees exactly the transposed, sliced, broadcast or misaligned layout its CPU
// twin sees.
inline tl::Tensor same_layout_on(const tl::Tensor& t, tl::Device device) {
  const int64_t n = static_cast<int64_t>(t.storage()->nbytes() / t.element_size());
  tl::Tensor whole = t.as_strided({n}, {1}, 0);
  tl::Tensor copy = whole.device() == device ? whole.clone() : whole.to(device);
  return copy.as_strided(t.shape(), t.strides(), t.offset());
}

// A 1-D view of every element of t's storage, to compare what a write did around a view too.
inline tl::Tensor whole_storage(const tl::Tensor& t) {
  const int64_t n = static_cast<int64_t>(t.storage()->nbytes() / t.element_size());
  return t.as_strided({n}, {1}, 0);
}

// Random values of a dtype, never all zeros: floats uniform in [-2, 2), ints in [-9, 10), bools
// with p = 0.5.
inline tl::Tensor random_tensor(const tl::Shape& shape, tl::DType dtype = tl::kFloat32,
                                tl::Device device = tl::Device::cpu()) {
  tl::Tensor t;
  if (tl::is_floating_point(dtype))
    t = tl::rand(shape, tl::TensorOptions(dtype)) * 4.0 - 2.0;
  else if (dtype == tl::kBool)
    t = tl::randint(0, 2, shape, tl::kBool);
  else if (dtype == tl::kUInt8)
    t = tl::randint(0, 250, shape, tl::kUInt8);
  else
    t = tl::randint(-9, 10, shape, dtype);
  return t.to(device);
}

// The same values as `shape` in different memory layouts: contiguous, transposed (last two dims
// swapped in memory), sliced (every other element of a larger tensor), offset (contiguous but one
// element past an aligned address, so vectorized device paths must take their unaligned route),
// each holding the values of `values` (a contiguous tensor of `shape`). Unused elements around a
// view hold 123 so a kernel that reads them shows.
struct Layout {
  std::string name;
  tl::Tensor tensor;
};
inline std::vector<Layout> layouts_of(const tl::Tensor& values) {
  std::vector<Layout> out;
  out.push_back({"contiguous", values.clone()});
  const tl::Shape& s = values.shape();
  if (s.size() >= 2) {
    tl::Tensor tr = values.transpose(-1, -2).contiguous().transpose(-1, -2);
    out.push_back({"transposed", tr});
  }
  if (s.size() >= 1) {
    tl::Shape big = s;
    big[big.size() - 1] = s.back() * 2;
    tl::Tensor holder = tl::full(big, 123, values.options());
    tl::Tensor sliced = holder.slice(-1, 0, std::nullopt, 2);
    sliced.copy_(values);
    out.push_back({"sliced", sliced});
  }
  tl::Tensor padded = tl::full({values.numel() + 1}, 123, values.options());
  tl::Tensor offset = padded.slice(0, 1).view(s);
  offset.copy_(values);
  out.push_back({"offset", offset});
  return out;
}

// Reads element `index` (a row-major linear index into t's shape) of a CPU tensor as double.
inline double element_at(const tl::Tensor& t, int64_t linear) {
  // A device tensor's storage is not host memory: reading it would crash, not fail the check.
  if (!t.device().is_cpu())
    throw std::invalid_argument("tl_test::element_at reads CPU tensors only, got one on " +
                                t.device().str());
  int64_t offset = t.offset();
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    int64_t n = t.shape()[d];
    offset += (linear % n) * t.strides()[d];
    linear /= n;
  }
  const char* p = static_cast<const char*>(t.storage()->data()) +
                  offset * static_cast<int64_t>(t.element_size());
  return tl::dispatch_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      return *reinterpret_cast<const uint8_t*>(p) != 0 ? 1.0 : 0.0;
    else
      return static_cast<double>(*reinterpret_cast<const T*>(p));
  });
}

// All elements of any tensor (any device, any layout) as doubles, row-major. Device tensors come
// to the host first, so a check reads them with one copy and converts them on the CPU.
inline std::vector<double> values_of(const tl::Tensor& t) {
  return t.cpu().to(tl::kFloat64).to_vector<double>();
}

// The multi-index of a row-major linear index.
inline std::vector<int64_t> unravel(int64_t linear, const tl::Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

// Checks actual (any tensor) against expected values elementwise: |a - e| <= atol + rtol |e|,
// NaNs equal to NaNs.
inline void check_values(const tl::Tensor& actual, const std::vector<double>& expected,
                         double rtol = 1e-5, double atol = 1e-6) {
  std::vector<double> got = values_of(actual);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    bool both_nan = std::isnan(got[i]) && std::isnan(expected[i]);
    bool ok = both_nan || got[i] == expected[i] ||
              std::abs(got[i] - expected[i]) <= atol + rtol * std::abs(expected[i]);
    if (!ok) {
      INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
      CHECK(ok);
      return;
    }
  }
}

// Checks actual against expected elementwise within a per-element bound: |a - e| <= tol[i] (NaNs
// equal to NaNs), for results whose error is bounded element by element (rounded_sum_bound,
// chain_bound below).
inline void check_values_within(const tl::Tensor& actual, const std::vector<double>& expected,
                                const std::vector<double>& tol) {
  std::vector<double> got = values_of(actual);
  REQUIRE(got.size() == expected.size());
  REQUIRE(tol.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = (std::isnan(got[i]) && std::isnan(expected[i])) || got[i] == expected[i] ||
                    std::abs(got[i] - expected[i]) <= tol[i];
    if (!ok) {
      INFO("element " << i << ": got " << got[i] << ", expected " << expected[i] << ", bound "
                      << tol[i]);
      CHECK(ok);
      return;
    }
  }
}

// ---- rounding-error bounds (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 3) ----
//
// A tolerance fixed per dtype fails on some random inputs wherever a result cancels: its error
// scales with the terms it was summed from, not with itself. These bounds scale with the same
// computation done on the operands' absolute values (its "magnitude"), so they hold on any input.

// Half the spacing of d's subnormals: the absolute error of rounding a result below d's normal
// range, where u no longer bounds it relative to the result.
inline double subnormal_rounding(tl::DType d) {
  switch (d) {
    case tl::kFloat16:
      return 0x1.0p-25;
    case tl::kBFloat16:
      return 0x1.0p-134;
    case tl::kFloat32:
      return 0x1.0p-150;
    default:
      return std::numeric_limits<double>::denorm_min();
  }
}

// The unit roundoff of the accumulator the kernels sum a result of dtype d in: float for the half
// types and float32, double for float64. Doubled: tensor cores accumulate float16/bfloat16/TF32
// products with truncation, not round to nearest (Fasi et al., "Numerical behavior of NVIDIA
// tensor cores", 2021), and truncation errs by up to a whole ulp.
inline double accumulator_roundoff(tl::DType d) {
  return d == tl::kFloat64 ? 0x1.0p-52 : 0x1.0p-23;
}

// gamma_n = n u / (1 - n u): |fl(sum of n terms) - sum| <= gamma_n * sum of |terms|, in any order
// of summation, with or without FMA (a product of two half values is exact in float).
inline double gamma_n(double n, double u) { return n * u / (1 - n * u); }

// Roundings to a half type of a matmul's partial sums beyond the final one: cuBLAS under its
// default math mode may split K and reduce the parts in the output type (reduced-precision
// reduction, allowed as in PyTorch's default), so a CUDA float16/bfloat16 product may be rounded
// once more per part before their float sum. Our own kernels and the CPU round once.
inline int partial_roundings(tl::Device device, tl::DType d) {
  return device.is_cuda() && (d == tl::kFloat16 || d == tl::kBFloat16) ? 1 : 0;
}

// The factor f of |computed - exact| <= f * magnitude for a result computed by `steps` successive
// reductions (pairwise matmuls, sums), each accumulating at most `terms` terms in the accumulator
// and rounding its result to d (`extra` more roundings of partial sums per step, see
// partial_roundings). With F = (1 + u)^(1 + extra) (1 + gamma_terms), a step computing X Y from
// computed X', Y' with |X' - X| <= e_X |X|abs (|X|abs: X computed on absolute values) errs by at
// most (F (1 + e_X)(1 + e_Y) - 1) |X|abs |Y|abs; inputs are exact, so f = F^steps - 1.
inline double chain_bound(tl::DType d, int steps, double terms, int extra = 0) {
  const double u = unit_roundoff(d), g = gamma_n(terms, accumulator_roundoff(d));
  return std::pow(std::pow(1 + u, 1 + extra) * (1 + g), steps) - 1;
}

// What chain_bound leaves out: an intermediate below d's normal range rounds with an absolute
// error (subnormal_rounding, per partial sum too), which each later step carries on multiplied
// by at most `growth` (its operands' largest |value| times the terms it sums).
inline double chain_subnormal_floor(tl::DType d, int steps, double growth, int extra = 0) {
  double f = 0;
  for (int s = 0; s < steps; ++s)
    f = f * std::max(growth, 1.0) + (1 + extra) * subnormal_rounding(d);
  return f;
}

// The bound of one reduction of at most `terms` terms, rounded once to d: with s the accumulator's
// value, |rnd(s) - exact| <= u |exact| + (1 + u) |s - exact| (plus subnormal_rounding below the
// normal range), and |s - exact| <= ((1 + u)^extra (1 + gamma_terms) - 1) * magnitude. Tighter
// than chain_bound(d, 1, ...) by the rounding's being relative to the result, not the magnitude.
inline double rounded_sum_bound(tl::DType d, double exact, double magnitude, double terms,
                                int extra = 0) {
  const double u = unit_roundoff(d), g = gamma_n(terms, accumulator_roundoff(d));
  return u * std::abs(exact) + (1 + u) * (std::pow(1 + u, extra) * (1 + g) - 1) * magnitude +
         (1 + extra) * subnormal_rounding(d);
}

// The bound of one element of a float32 matmul of k terms on TF32 tensor cores (CUDA under
// "high"/"medium" precision): each operand cut to 11 significant bits, off by less than 2^-10
// of itself whether rounded or truncated, so a product errs by up to (1 + 2^-10)^2 - 1 of its
// size; then the float sum and the float32 result's rounding, as rounded_sum_bound.
inline double tf32_matmul_bound(double exact, double magnitude, double k) {
  const double u = 0x1.0p-10, u32 = unit_roundoff(tl::kFloat32);
  const double f = (1 + u) * (1 + u) * (1 + gamma_n(k, accumulator_roundoff(tl::kFloat32))) - 1;
  return u32 * std::abs(exact) + (1 + u32) * f * magnitude + subnormal_rounding(tl::kFloat32);
}

// Checks that fn throws exception type E whose message contains `needle` (e.g. the op name).
template <typename E>
void check_throws(const std::function<void()>& fn, const std::string& needle) {
  bool thrown = false;
  try {
    fn();
  } catch (const E& e) {
    thrown = true;
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
  CHECK_MESSAGE(thrown, "expected an exception mentioning " << needle);
}

// The bit patterns of every element of t (any device, any layout), row-major.
inline std::vector<uint64_t> bits_of(const tl::Tensor& t) {
  tl::Tensor h = t.cpu().contiguous();
  std::vector<uint64_t> out(static_cast<size_t>(h.numel()), 0);
  const char* p = static_cast<const char*>(h.data_ptr());
  for (size_t i = 0; i < out.size(); ++i)
    std::memcpy(&out[i], p + i * h.element_size(), h.element_size());
  return out;
}

// Whether bit pattern b is a NaN of float dtype d (false for other dtypes).
inline bool is_nan_bits(uint64_t b, tl::DType d) {
  switch (d) {
    case tl::kFloat16:
      return (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0;
    case tl::kBFloat16:
      return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0;
    case tl::kFloat32:
      return (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu) != 0;
    case tl::kFloat64:
      return (b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (b & 0xFFFFFFFFFFFFFull) != 0;
    default:
      return false;
  }
}

}  // namespace tl_test

// Shared test helpers: the devices every op test runs on, random inputs in several memory
// layouts, device mirrors of a layout, a host-side reference reader, closeness checks, and the
// TL_TEST_SEED seed of the random inputs.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tensorlet/tensorlet.h>

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

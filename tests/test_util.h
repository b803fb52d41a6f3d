// Shared test helpers: the devices every op test runs on, random inputs in several memory
// layouts, a host-side reference reader, and closeness checks.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <tensorlet.h>

namespace tl_test {

namespace tl = tensorlet;

// Every device the suite compares against the CPU: cpu, then each CUDA device when one exists.
inline std::vector<tl::Device> test_devices() {
  std::vector<tl::Device> devices{tl::Device::cpu()};
  // CUDA devices join here once the CUDA backend lands (issue 3).
  return devices;
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
  else
    t = tl::randint(-9, 10, shape, dtype);
  return t.to(device);
}

// The same values as `shape` in different memory layouts: contiguous, transposed (last two dims
// swapped in memory), sliced (every other element of a larger tensor), each holding the values
// of `values` (a contiguous tensor of `shape`).
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
  const char* base = static_cast<const char*>(t.storage()->data());
  switch (t.dtype()) {
    case tl::kBool:
      return reinterpret_cast<const bool*>(base)[offset];
    case tl::kInt32:
      return reinterpret_cast<const int32_t*>(base)[offset];
    case tl::kInt64:
      return static_cast<double>(reinterpret_cast<const int64_t*>(base)[offset]);
    case tl::kFloat32:
      return reinterpret_cast<const float*>(base)[offset];
    case tl::kFloat64:
      return reinterpret_cast<const double*>(base)[offset];
  }
  return 0;
}

// All elements of any tensor (any device, any layout) as doubles, row-major.
inline std::vector<double> values_of(const tl::Tensor& t) {
  return t.to(tl::kFloat64).to_vector<double>();
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

}  // namespace tl_test

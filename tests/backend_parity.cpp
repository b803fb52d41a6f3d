// The parity suite's shared part (backend_parity.h): devices, comparisons, inputs, check_op.
#include "backend_parity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <typeindex>
#include <typeinfo>

namespace tl_test {

using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

std::vector<tl::Device> parity_devices() {
  std::vector<tl::Device> out{tl::Device::cpu()};
  if (tl::cuda::is_available()) out.push_back(tl::Device::cuda(0));
  return out;
}

bool is_half(DType d) { return d == tl::kFloat16 || d == tl::kBFloat16; }

namespace {

// One ulp of the half types, relative: 2^-10 (float16), 2^-7 (bfloat16).
double half_rtol(DType d) { return d == tl::kFloat16 ? 1e-3 : 8e-3; }

}  // namespace

Tol math_tol(DType d) {
  if (is_half(d)) return {half_rtol(d), 1e-5};
  return d == tl::kFloat32 ? Tol{1e-5, 1e-6} : Tol{1e-12, 1e-12};
}

Tol sum_tol(DType d, int64_t n) {
  const double k = static_cast<double>(n);
  if (is_half(d)) return {half_rtol(d), 1e-5 + 2e-7 * k};  // float accumulation, one rounding
  return d == tl::kFloat32 ? Tol{1e-5, 1e-5 + 2e-7 * k} : Tol{1e-12, 1e-12 * (1 + k)};
}

Tol half_accumulation_tol(DType d, int64_t terms, int extra) {
  const double u = unit_roundoff(d), n = static_cast<double>(terms);
  const double g = gamma_n(n, accumulator_roundoff(d));
  // |e - x| <= u |x| + (1 + u) g M on the CPU, the device's with (1 + u)^extra (1 + g) - 1 for g;
  // rtol covers 2u |x| <= 2u/(1 - u) |e| + O(u g M), and (1 + 4u) the second-order terms. atol:
  // the absolute rounding of results (and partial sums) below the normal range.
  const double m = (1 + u) * (g + std::pow(1 + u, extra) * (1 + g) - 1) * (1 + 4 * u);
  return {half_rtol(d), (2 + extra) * subnormal_rounding(d), m};
}

Tol half_chain_tol(DType d, int steps, int64_t terms, int extra) {
  const double n = static_cast<double>(terms);
  // make_values' floats are below 2 in magnitude: a subnormal intermediate's error grows by at
  // most 2n a step.
  return {0,
          chain_subnormal_floor(d, steps, 2 * n, 0) + chain_subnormal_floor(d, steps, 2 * n, extra),
          chain_bound(d, steps, n, 0) + chain_bound(d, steps, n, extra)};
}

Tol widen_for(Tol tol, DType result) {
  if (tol.exact() || !is_half(result)) return tol;
  return {std::max(tol.rtol, half_rtol(result)), std::max(tol.atol, 1e-5), tol.mag};
}

void check_same(const Tensor& expected, const Tensor& got, Tol tol, tl::Device dev,
                const char* against, const std::vector<double>& magnitude) {
  REQUIRE(got.defined());
  CHECK(got.device() == dev);
  CHECK(got.dtype() == expected.dtype());
  CHECK(got.shape() == expected.shape());
  if (got.shape() != expected.shape() || got.dtype() != expected.dtype()) return;
  if (!tl::is_floating_point(expected.dtype())) tol = kExact;
  // A mag tolerance is complete by itself (half_accumulation_tol, half_chain_tol): not widened.
  if (tol.mag == 0) tol = widen_for(tol, expected.dtype());
  const int64_t n = expected.numel();
  REQUIRE((tol.mag == 0 || static_cast<int64_t>(magnitude.size()) == n));
  int64_t bad = 0, first = -1;
  double first_got = 0, first_expected = 0;
  if (expected.dtype() == tl::kInt64) {
    std::vector<int64_t> e = expected.cpu().to_vector<int64_t>(),
                         g = got.cpu().to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (e[i] == g[i]) continue;
      if (bad++ == 0) first = i, first_got = double(g[i]), first_expected = double(e[i]);
    }
  } else {
    std::vector<double> e = values_of(expected), g = values_of(got);
    for (int64_t i = 0; i < n; ++i) {
      const double bound =
          tol.atol + tol.rtol * std::abs(e[i]) + (tol.mag == 0 ? 0.0 : tol.mag * magnitude[i]);
      const bool ok =
          (std::isnan(e[i]) && std::isnan(g[i])) || e[i] == g[i] || std::abs(g[i] - e[i]) <= bound;
      if (ok) continue;
      if (bad++ == 0) first = i, first_got = g[i], first_expected = e[i];
    }
  }
  if (bad > 0) {
    std::vector<int64_t> at = unravel(first, expected.shape());
    FAIL_CHECK(bad << " of " << n << " elements differ (rtol " << tol.rtol << ", atol " << tol.atol
                   << ", mag " << tol.mag << "); first at " << Shape(at) << ": " << dev.str() << " "
                   << first_got << ", " << std::string(against) << " " << first_expected);
  }
}

namespace {

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

// A float32 twin of a half tensor with the same geometry (the whole storage converted), so an
// in-place fn's whole_storage reads the same positions.
Tensor same_layout_float32(const Tensor& t) {
  const int64_t n = static_cast<int64_t>(t.storage()->nbytes() / t.element_size());
  return t.as_strided({n}, {1}, 0).to(tl::kFloat32).as_strided(t.shape(), t.strides(), t.offset());
}

// A float64 copy of t with the same geometry and its floating values made absolute (other
// dtypes unchanged: indices, masks), for the magnitude of an accumulation.
Tensor same_layout_absolute(const Tensor& t) {
  if (!t.defined() || !tl::is_floating_point(t.dtype())) return t;
  const int64_t n = static_cast<int64_t>(t.storage()->nbytes() / t.element_size());
  return tl::abs(t.as_strided({n}, {1}, 0).to(tl::kFloat64))
      .as_strided(t.shape(), t.strides(), t.offset());
}

}  // namespace

bool check_op(tl::Device dev, const std::string& what, const std::vector<Tensor>& inputs,
              const Fn& fn, Tol tol, bool float32_reference, const Fn& magnitude) {
  INFO(what << " [device " << dev.str() << "]");
  std::vector<Tensor> host = inputs, device, reference;
  // The float32 reference is the op's math only when every floating input is of one half dtype
  // (a float32 or float64 operand, even 0-dim, is rounded to the half type by the op itself).
  std::optional<DType> half;
  bool other_float = false;
  for (const Tensor& t : inputs) {
    device.push_back(t.defined() ? same_layout_on(t, dev) : t);
    if (!t.defined() || !tl::is_floating_point(t.dtype())) {
      reference.push_back(t);
      continue;
    }
    if (is_half(t.dtype()) && (!half || *half == t.dtype())) {
      half = t.dtype();
      reference.push_back(same_layout_float32(t));
    } else {
      other_float = true;
      reference.push_back(t);
    }
  }
  // The magnitude first: an in-place fn writes into the CPU inputs' storage.
  std::vector<double> mag;
  if (tol.mag != 0) {
    std::vector<Tensor> absolute;
    for (const Tensor& t : inputs) absolute.push_back(same_layout_absolute(t));
    Outcome m = run(magnitude ? magnitude : fn, absolute);
    if (m.result.defined()) mag = values_of(m.result);
  }
  Outcome cpu = run(fn, host);
  Outcome got = run(fn, device);
  if (cpu.error || got.error) {
    INFO("cpu: " << (cpu.error ? cpu.message : "no error"));
    INFO(dev.str() << ": " << (got.error ? got.message : "no error"));
    CHECK((cpu.error && got.error && *cpu.error == *got.error));
    return false;
  }
  check_same(cpu.result, got.result, tol, dev, "cpu", mag);
  // The float32 reference: only for half or bool results (others do not depend on the inputs'
  // being half), and only when the reference's dtype maps onto the result's.
  const DType rd = got.result.dtype();
  if (!float32_reference || !half || other_float || !(is_half(rd) || rd == tl::kBool)) return true;
  Outcome ref = run(fn, reference);
  if (ref.error) return true;
  Tensor expected = ref.result;
  if (expected.dtype() == tl::kFloat32 && is_half(rd)) expected = expected.to(rd);
  if (expected.dtype() == rd) check_same(expected, got.result, tol, dev, "float32 reference", mag);
  return true;
}

void check_made(tl::Device dev, const std::string& what,
                const std::function<Tensor(tl::Device)>& fn, Tol tol) {
  INFO(what << " [device " << dev.str() << "]");
  Tensor expected = fn(tl::Device::cpu());
  Tensor got = fn(dev);
  check_same(expected, got, tol, dev);
}

Tensor make_values(const Shape& s, DType d, Fill f) {
  switch (f) {
    case Fill::Random:
      if (d == tl::kBool) return tl::randint(0, 2, s) != 0;
      if (tl::is_floating_point(d)) return (tl::rand(s) * 4.0 - 2.0).to(d);
      return tl::randint(-9, 10, s).to(d);  // unsigned types wrap: 247..255 and 0..9
    case Fill::Integral:
      return d == tl::kBool ? make_values(s, d) : tl::randint(-9, 10, s).to(d);
    case Fill::Sparse: {
      Tensor keep = tl::randint(0, 3, s) != 0;
      return tl::where(keep, make_values(s, d), tl::zeros({}, d));
    }
  }
  return {};
}

std::vector<Variant> variants(const Shape& s, DType d, Fill f) {
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

std::string describe(const std::string& op, DType d, const Shape& s, const std::string& layout) {
  return op + " " + tl::dtype_name(d) + " " + s.str() + " " + layout;
}

Tensor float_specials(DType d) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  std::vector<double> v{nan,  inf,  -inf, -0.0,   0.0,   1e-30,  -1e30, 88.5,   -88.5, 710,
                        -710, 1,    -1,   0.5,    -2.5,  3,      1e-45, 2,      -3,    1e-8,
                        nan,  0.75, 6e-8, -65504, 65520, 3.4e38, 1e-40, -6.1e-5};
  return tl::from_vector(v).to(d);
}

Tensor int_specials(DType d) {
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  if (d == tl::kInt32)
    lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  if (d == tl::kInt16)
    lo = std::numeric_limits<int16_t>::min(), hi = std::numeric_limits<int16_t>::max();
  if (d == tl::kInt8)
    lo = std::numeric_limits<int8_t>::min(), hi = std::numeric_limits<int8_t>::max();
  if (d == tl::kUInt8) lo = 0, hi = 255;
  return tl::from_vector(std::vector<int64_t>{lo, hi, lo < 0 ? -1 : 254, 0, 1, 7, lo < 0 ? -7 : 128,
                                              lo + 1, hi - 1, 2})
      .to(d);
}

}  // namespace tl_test

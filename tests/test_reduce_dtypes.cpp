// Reductions and arg reductions on every dtype each supports (torch's sets), against a double
// reference: result dtypes, full and per-dim, keepdim, layouts, odd sizes, float accumulation of
// float16/bfloat16, NaN propagation, and the DTypeError of unsupported dtypes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "tensorlet/backends/math/reduce_ops.h"
#include "test_util.h"

using namespace tl_test;

namespace {

const std::vector<tl::DType> kTen = {tl::kBool,    tl::kUInt8,  tl::kInt8,    tl::kInt16,
                                     tl::kInt32,   tl::kInt64,  tl::kFloat16, tl::kBFloat16,
                                     tl::kFloat32, tl::kFloat64};

enum class Op { Sum, Prod, Mean, Amax, Amin, All, Any };
struct OpCase {
  Op op;
  const char* name;
  tl::Tensor (*fn)(const tl::Tensor&, const tl::DimList&, bool);
};
const std::vector<OpCase> kOps = {
    {Op::Sum, "tl::sum", tl::sum},    {Op::Prod, "tl::prod", tl::prod},
    {Op::Mean, "tl::mean", tl::mean}, {Op::Amax, "tl::amax", tl::amax},
    {Op::Amin, "tl::amin", tl::amin}, {Op::All, "tl::all", tl::all},
    {Op::Any, "tl::any", tl::any},
};

// torch's support and result dtypes (checked with torch 2.x on CPU), written out rather than
// read from the library's list so the list itself is under test.
bool supported(Op op, tl::DType d) { return op != Op::Mean || tl::is_floating_point(d); }
tl::DType torch_result(Op op, tl::DType d) {
  switch (op) {
    case Op::Sum:
    case Op::Prod:
      return tl::is_floating_point(d) ? d : tl::kInt64;
    case Op::All:
    case Op::Any:
      return d == tl::kUInt8 ? tl::kUInt8 : tl::kBool;
    default:
      return d;
  }
}

// Tolerance of a result dtype: one rounding of the exact value (plus slack for accumulation).
double rtol_of(tl::DType d) {
  if (d == tl::kFloat16) return 2e-3;
  if (d == tl::kBFloat16) return 1.6e-2;
  if (d == tl::kFloat32) return 1e-6;
  return 1e-12;
}

// Random values exactly representable in dtype d (read back as doubles); prod gets magnitudes
// near 1 so that products stay exact or in range.
tl::Tensor random_of(const tl::Shape& shape, tl::DType d, bool for_prod) {
  tl::Tensor t;
  if (d == tl::kBool) {
    t = tl::randint(0, 2, shape, tl::kBool);
  } else if (tl::is_floating_point(d)) {
    tl::Tensor u = tl::rand(shape, tl::kFloat64);
    t = for_prod ? (u * 0.2 + 0.9) * (tl::randint(0, 2, shape, tl::kFloat64) * 2.0 - 1.0)
                 : u * 4.0 - 2.0;
  } else if (for_prod) {
    // Magnitudes 1, and 2 with p = 1/16: products of a few hundred stay below 2^63.
    tl::Tensor mag = (tl::randint(0, 16, shape, tl::kInt64) == 0).to(tl::kInt64) + 1;
    t = d == tl::kUInt8 ? mag : mag * (tl::randint(0, 2, shape, tl::kInt64) * 2 - 1);
  } else {
    t = d == tl::kUInt8 ? tl::randint(0, 256, shape, tl::kInt64)
                        : tl::randint(-9, 10, shape, tl::kInt64);
  }
  return t.to(d);
}

// The reduction of `vals` (row-major over shape) by mask, in double (int64 for integer sums and
// products), one value per keepdim output.
std::vector<double> reference(Op op, tl::DType in, const std::vector<double>& vals,
                              const tl::Shape& shape, const std::vector<bool>& mask) {
  tl::Shape keep = shape;
  for (int64_t d = 0; d < shape.size(); ++d)
    if (mask[d]) keep[d] = 1;
  const int64_t n_out = keep.numel(), n_red = n_out ? shape.numel() / n_out : 0;
  std::vector<double> out(n_out);
  std::vector<std::vector<double>> groups(n_out);
  for (int64_t i = 0; i < shape.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, shape);
    int64_t o = 0;
    for (int64_t d = 0; d < shape.size(); ++d) o = o * keep[d] + (mask[d] ? 0 : idx[d]);
    groups[o].push_back(vals[i]);
  }
  const bool integer = !tl::is_floating_point(in);
  for (int64_t o = 0; o < n_out; ++o) {
    const std::vector<double>& g = groups[o];
    double r = 0;
    switch (op) {
      case Op::Sum:
      case Op::Mean: {
        if (integer) {
          int64_t s = 0;
          for (double v : g) s += static_cast<int64_t>(v);
          r = static_cast<double>(s);
        } else {
          for (double v : g) r += v;
        }
        if (op == Op::Mean) r /= static_cast<double>(n_red);
        break;
      }
      case Op::Prod:
        r = 1;
        for (double v : g) r *= v;
        break;
      case Op::Amax:
      case Op::Amin: {
        r = g[0];
        for (double v : g) {
          if (std::isnan(r)) break;
          if (std::isnan(v) || (op == Op::Amax ? v > r : v < r)) r = v;
        }
        break;
      }
      case Op::All:
        r = 1;
        for (double v : g) r = (r != 0 && v != 0) ? 1 : 0;
        break;
      case Op::Any:
        r = 0;
        for (double v : g) r = (r != 0 || v != 0) ? 1 : 0;
        break;
    }
    out[o] = r;
  }
  return out;
}

// The first position of the max/min (first NaN wins) along dim, or over the flat tensor.
std::vector<double> arg_reference(bool is_max, const std::vector<double>& vals,
                                  const tl::Shape& shape, std::optional<int64_t> dim) {
  std::vector<bool> mask(shape.size(), !dim.has_value());
  if (dim) mask[*dim] = true;
  tl::Shape keep = shape;
  for (int64_t d = 0; d < shape.size(); ++d)
    if (mask[d]) keep[d] = 1;
  std::vector<double> best(keep.numel()), pos(keep.numel(), -1);
  for (int64_t i = 0; i < shape.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, shape);
    int64_t o = 0;
    for (int64_t d = 0; d < shape.size(); ++d) o = o * keep[d] + (mask[d] ? 0 : idx[d]);
    const double v = vals[i];
    const int64_t p = dim ? idx[*dim] : i;
    const bool better = pos[o] < 0 || (!std::isnan(best[o]) &&
                                       (std::isnan(v) || (is_max ? v > best[o] : v < best[o])));
    if (better) {
      best[o] = v;
      pos[o] = static_cast<double>(p);
    }
  }
  return pos;
}

tl::Tensor on(const tl::Tensor& t, tl::Device device) { return same_layout_on(t, device); }

struct DimCase {
  tl::Shape shape;
  std::vector<int64_t> dims;
};
const std::vector<DimCase> kDimCases = {
    {{37}, {}},       {{5, 7}, {}},   {{5, 7}, {0}},  {{5, 7}, {-1}}, {{3, 4, 5}, {0, 2}},
    {{3, 4, 5}, {1}}, {{67, 3}, {0}}, {{3, 67}, {1}}, {{2, 300}, {}}, {{301, 5}, {0}},
};

}  // namespace

TEST_CASE("reduce dtypes: every op on every supported dtype matches a double reference") {
  for (tl::Device device : test_devices())
    for (const OpCase& op : kOps)
      for (tl::DType dtype : kTen) {
        if (!supported(op.op, dtype)) continue;
        for (const DimCase& c : kDimCases) {
          tl::Tensor values = random_of(c.shape, dtype, op.op == Op::Prod);
          const std::vector<double> vals = values_of(values);
          std::vector<bool> mask(c.shape.size(), c.dims.empty());
          for (int64_t d : c.dims) mask[d < 0 ? d + c.shape.size() : d] = true;
          const std::vector<double> want = reference(op.op, dtype, vals, c.shape, mask);
          const tl::DType out_dtype = torch_result(op.op, dtype);
          // A floating sum or mean rounds its accumulation once; where the result cancels, the
          // accumulation's error scales with the sum of absolute values, not with the result:
          // bounded per element for float16/bfloat16 (float accumulators) and float64 (double;
          // its 1e-12 failed a result near 5e-4 of 600 values). float32 accumulates in double, far
          // below its 1e-6.
          const bool bounded_sum =
              (op.op == Op::Sum || op.op == Op::Mean) &&
              (dtype == tl::kFloat16 || dtype == tl::kBFloat16 || dtype == tl::kFloat64);
          std::vector<double> bound;
          if (bounded_sum) {
            std::vector<double> absolute = vals;
            for (double& v : absolute) v = std::abs(v);
            const std::vector<double> mag = reference(op.op, dtype, absolute, c.shape, mask);
            const double terms = static_cast<double>(c.shape.numel()) /
                                     static_cast<double>(std::max<size_t>(want.size(), 1)) +
                                 1;  // + the mean's division
            for (size_t o = 0; o < want.size(); ++o)
              bound.push_back(rounded_sum_bound(dtype, want[o], mag[o], terms));
          }
          for (const Layout& layout : layouts_of(values))
            for (bool keepdim : {false, true}) {
              INFO(op.name << " " << dtype << " on " << device << ", shape " << c.shape << " dims "
                           << tl::Shape(c.dims) << " " << layout.name << " keepdim " << keepdim);
              tl::Tensor got = op.fn(on(layout.tensor, device), c.dims, keepdim);
              CHECK(got.dtype() == out_dtype);
              tl::Shape want_shape;
              for (int64_t d = 0; d < c.shape.size(); ++d)
                if (!mask[d] || keepdim) want_shape.push_back(mask[d] ? 1 : c.shape[d]);
              CHECK(got.shape() == want_shape);
              if (bounded_sum)
                check_values_within(got, want, bound);
              else
                check_values(got, want, rtol_of(out_dtype), 1e-3 * rtol_of(out_dtype));
            }
        }
      }
}

TEST_CASE("reduce dtypes: argmax/argmin on every numeric dtype give the first extreme position") {
  for (tl::Device device : test_devices())
    for (tl::DType dtype : kTen) {
      if (dtype == tl::kBool) continue;
      for (const DimCase& c : kDimCases) {
        if (c.dims.size() > 1) continue;
        tl::Tensor values = random_of(c.shape, dtype, false);  // ints have ties: first wins
        const std::vector<double> vals = values_of(values);
        std::optional<int64_t> dim;
        if (!c.dims.empty()) dim = c.dims[0] < 0 ? c.dims[0] + c.shape.size() : c.dims[0];
        for (bool is_max : {true, false}) {
          const std::vector<double> want = arg_reference(is_max, vals, c.shape, dim);
          for (const Layout& layout : layouts_of(values)) {
            INFO((is_max ? "argmax " : "argmin ")
                 << dtype << " on " << device << ", shape " << c.shape << " " << layout.name);
            tl::Tensor x = on(layout.tensor, device);
            tl::Tensor got = is_max ? tl::argmax(x, dim, true) : tl::argmin(x, dim, true);
            CHECK(got.dtype() == tl::kInt64);
            check_values(got, want, 0, 0);
          }
        }
      }
    }
}

TEST_CASE("reduce dtypes: float16/bfloat16 sums accumulate in float32") {
  for (tl::Device device : test_devices()) {
    INFO("on " << device);
    // Naive float16 accumulation stops at 2048 (2048 + 1 rounds to 2048); bfloat16 at 256.
    tl::Tensor ones16 = tl::ones({30000}, tl::kFloat16).to(device);
    CHECK(tl::sum(ones16).item<double>() == 30000.0);
    CHECK(tl::sum(tl::ones({3000}, tl::kBFloat16).to(device)).item<double>() ==
          3008.0);  // 3000 in bfloat16
    // 100k values near 1: the mean is near 1, the sum of a quarter of them in range of float16.
    for (tl::DType d : {tl::kFloat16, tl::kBFloat16}) {
      tl::Tensor x = (tl::rand({100000}, tl::kFloat64) * 0.2 + 0.9).to(d);
      const std::vector<double> v = values_of(x);
      double total = 0;
      for (double e : v) total += e;
      check_values(tl::mean(x.to(device)), {total / 100000}, rtol_of(d), 0);
      tl::Tensor quarter = x.slice(0, 0, 25000).to(device);
      double qt = 0;
      for (int i = 0; i < 25000; ++i) qt += v[i];
      check_values(tl::sum(quarter), {qt}, rtol_of(d), 0);
      // Per-dim, both loop shapes: down a long leading dim and along a long last dim.
      tl::Tensor m = x.slice(0, 0, 60000).view({20000, 3});
      std::vector<double> col(3, 0), row(3, 0);
      for (int i = 0; i < 60000; ++i) col[i % 3] += v[i];
      check_values(tl::sum(m.to(device), {0}), col, rtol_of(d), 0);
      tl::Tensor t = m.transpose(0, 1).contiguous();  // [3, 20000]
      check_values(tl::sum(t.to(device), {1}), col, rtol_of(d), 0);
      check_values(tl::sum(on(m.transpose(0, 1), device), {1}), col, rtol_of(d), 0);
    }
  }
}

TEST_CASE("reduce dtypes: NaN propagates through float16/bfloat16 reductions") {
  for (tl::Device device : test_devices())
    for (tl::DType d : {tl::kFloat16, tl::kBFloat16, tl::kFloat32}) {
      for (int64_t n : {int64_t{5}, int64_t{100}, int64_t{5000}}) {
        INFO(d << " n=" << n << " on " << device);
        tl::Tensor x64 = tl::rand({n}, tl::kFloat64);
        x64.slice(0, n / 2, n / 2 + 1).fill_(std::numeric_limits<double>::quiet_NaN());
        x64.slice(0, n - 1, n).fill_(std::numeric_limits<double>::quiet_NaN());
        tl::Tensor x = x64.to(d).to(device);
        CHECK(std::isnan(tl::amax(x).item<double>()));
        CHECK(std::isnan(tl::amin(x).item<double>()));
        CHECK(std::isnan(tl::sum(x).item<double>()));
        CHECK(std::isnan(tl::mean(x).item<double>()));
        CHECK(tl::argmax(x).item<int64_t>() == n / 2);
        CHECK(tl::argmin(x).item<int64_t>() == n / 2);
        CHECK(tl::any(x).item<bool>());  // NaN is true
        // Per-dim: only the row holding the NaN is NaN.
        tl::Tensor m = tl::rand({4, n}, tl::kFloat64);
        m.slice(0, 2, 3).slice(1, n / 3, n / 3 + 1).fill_(std::numeric_limits<double>::quiet_NaN());
        tl::Tensor mx = tl::amax(m.to(d).to(device), {1});
        std::vector<double> got = values_of(mx);
        CHECK(!std::isnan(got[0]));
        CHECK(std::isnan(got[2]));
        CHECK(values_of(tl::argmin(m.to(d).to(device), 1))[2] == static_cast<double>(n / 3));
        CHECK(std::isnan(values_of(tl::amin(m.to(d).to(device).transpose(0, 1), {0}))[2]));
      }
    }
}

TEST_CASE("reduce dtypes: integer extremes, zeros and empty reductions") {
  for (tl::Device device : test_devices()) {
    INFO("on " << device);
    auto ints = [&](std::vector<int64_t> v, tl::DType d) {
      return tl::from_vector(v, {static_cast<int64_t>(v.size())}).to(d).to(device);
    };
    // Max/min identities are the dtype's extremes: a tensor of only extremes keeps them.
    CHECK(tl::amax(ints({-128, -128, -128}, tl::kInt8)).item<int64_t>() == -128);
    CHECK(tl::amin(ints({127, 127}, tl::kInt8)).item<int64_t>() == 127);
    CHECK(tl::amin(ints({255, 255, 255}, tl::kUInt8)).item<int64_t>() == 255);
    CHECK(tl::amax(ints({0, 0}, tl::kUInt8)).item<int64_t>() == 0);
    CHECK(tl::amax(ints({-32768, -32768}, tl::kInt16)).item<int64_t>() == -32768);
    CHECK(tl::amin(ints({32767}, tl::kInt16)).item<int64_t>() == 32767);
    CHECK(tl::argmin(ints({5, 255, 0, 0}, tl::kUInt8)).item<int64_t>() == 2);
    // Integer sums widen to int64: no wrap at the input's width.
    std::vector<int64_t> big(1000, 200);
    tl::Tensor s = tl::sum(ints(big, tl::kUInt8));
    CHECK(s.dtype() == tl::kInt64);
    CHECK(s.item<int64_t>() == 200000);
    CHECK(tl::sum(ints(std::vector<int64_t>(1000, -100), tl::kInt8)).item<int64_t>() == -100000);
    CHECK(tl::prod(ints({100, 100, 100}, tl::kInt8)).item<int64_t>() == 1000000);
    // all/any test non-zero: -0.0 is false, NaN true; uint8 results stay uint8.
    tl::Tensor z = tl::from_vector(std::vector<double>{-0.0, 0.0}, {2}).to(tl::kFloat16).to(device);
    CHECK(!tl::any(z).item<bool>());
    tl::Tensor au = tl::all(ints({3, 0, 7}, tl::kUInt8), {0}, true);
    CHECK(au.dtype() == tl::kUInt8);
    CHECK(au.item<int64_t>() == 0);
    CHECK(tl::any(ints({0, 0, 7}, tl::kUInt8)).item<int64_t>() == 1);
    CHECK(tl::all(ints({256 + 0, 1}, tl::kInt16)).item<bool>());  // bits, not the low byte
    // Empty reductions: torch's values in the result dtype.
    tl::Tensor e16 = tl::empty({0, 3}, tl::kFloat16).to(device);
    CHECK(tl::sum(e16).dtype() == tl::kFloat16);
    CHECK(tl::sum(e16).item<double>() == 0);
    CHECK(std::isnan(tl::mean(e16).item<double>()));
    check_values(tl::prod(e16, {0}), {1, 1, 1}, 0, 0);
    CHECK(tl::prod(tl::empty({0}, tl::kInt8).to(device)).item<int64_t>() == 1);
    tl::Tensor eu = tl::all(tl::empty({0}, tl::kUInt8).to(device));
    CHECK(eu.dtype() == tl::kUInt8);
    CHECK(eu.item<int64_t>() == 1);
    check_throws<tl::IndexError>([&] { tl::amax(tl::empty({0}, tl::kBFloat16).to(device)); },
                                 "[tl::amax] ");
  }
}

TEST_CASE("reduce dtypes: unsupported dtypes throw DTypeError before any kernel") {
  for (tl::DType d : kTen) {
    if (tl::is_floating_point(d)) continue;
    INFO(d);
    tl::Tensor x = tl::ones({3}, d);
    check_throws<tl::DTypeError>([&] { tl::mean(x); }, "[tl::mean] ");
    check_throws<tl::DTypeError>([&] { tl::mean(x); }, tl::dtype_name(d));
    // Even when the reduction is empty (no kernel would run).
    check_throws<tl::DTypeError>([&] { tl::mean(tl::empty({0}, d)); }, tl::dtype_name(d));
  }
  for (const char* op : {"[tl::argmax] ", "[tl::argmin] "}) {
    const bool is_max = std::string(op) == "[tl::argmax] ";
    tl::Tensor b = tl::ones({2, 3}, tl::kBool);
    check_throws<tl::DTypeError>([&] { is_max ? tl::argmax(b) : tl::argmin(b); }, op);
    check_throws<tl::DTypeError>([&] { is_max ? tl::argmax(b, 1) : tl::argmin(b, 1); }, "bool");
  }
}

TEST_CASE("reduce dtypes: the op list's names, sets and result rules") {
  CHECK(std::string(tl::reduce_op_name(tl::ReduceOp::Sum)) == "tl::sum");
  CHECK(std::string(tl::reduce_op_name(tl::ArgReduceOp::ArgMin)) == "tl::argmin");
  CHECK(tl::reduce_op_dtypes(tl::ReduceOp::Mean) == tl::kFloatingDTypes);
  CHECK(tl::reduce_op_dtypes(tl::ArgReduceOp::ArgMax) == tl::kNumericDTypes);
  for (tl::DType d : kTen)
    for (const OpCase& op : kOps) {
      const auto rop = static_cast<tl::ReduceOp>(static_cast<int>(op.op));
      CHECK(tl::reduce_op_dtypes(rop).contains(d) == supported(op.op, d));
      if (supported(op.op, d))
        CHECK(tl::reduce_out_dtype(tl::reduce_op_info(rop).rule, d) == torch_result(op.op, d));
    }
}

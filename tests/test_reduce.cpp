// Reductions (sum prod mean max min amax amin all any argmax argmin) against naive reference loops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "test_util.h"

using namespace tl_test;

namespace {

enum class Op { Sum, Prod, Mean, Max, Min, Amax, Amin, All, Any };

struct OpInfo {
  Op op;
  const char* name;
  tl::Tensor (*fn)(const tl::Tensor&, const tl::DimList&, bool);
};

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> ops = {
      {Op::Sum, "tl::sum", tl::sum},    {Op::Prod, "tl::prod", tl::prod},
      {Op::Mean, "tl::mean", tl::mean}, {Op::Amax, "tl::amax", tl::amax},
      {Op::Amin, "tl::amin", tl::amin}, {Op::All, "tl::all", tl::all},
      {Op::Any, "tl::any", tl::any},
  };
  return ops;
}

const std::vector<tl::DType> kAllDTypes = {tl::kBool, tl::kInt32, tl::kInt64, tl::kFloat32,
                                           tl::kFloat64};

bool valid_for(Op op, tl::DType dtype) { return op != Op::Mean || tl::is_floating_point(dtype); }

// The dtype torch gives the result.
tl::DType expected_dtype(Op op, tl::DType in) {
  switch (op) {
    case Op::Sum:
    case Op::Prod:
      return tl::is_floating_point(in) ? in : tl::kInt64;
    case Op::All:
    case Op::Any:
      return tl::kBool;
    default:
      return in;
  }
}

// The reduced-dim mask of a dims list, as the op should read it (negative dims wrap).
std::vector<bool> mask_of(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<bool> mask(ndim, dims.empty());
  for (int64_t d : dims) mask[d < 0 ? d + ndim : d] = true;
  return mask;
}

tl::Shape keepdim_shape(const tl::Shape& shape, const std::vector<bool>& mask, bool keepdim) {
  tl::Shape out;
  for (int64_t d = 0; d < shape.size(); ++d) {
    if (!mask[d])
      out.push_back(shape[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// Row-major index of input element `idx` in the keepdim-shaped output.
int64_t out_index(const std::vector<int64_t>& idx, const tl::Shape& shape,
                  const std::vector<bool>& mask) {
  int64_t o = 0;
  for (int64_t d = 0; d < shape.size(); ++d)
    if (!mask[d]) o = o * shape[d] + idx[d];
  return o;
}

// Calls f(linear, output index) for every element of `shape` in row-major order (an odometer,
// so large references stay cheap).
template <typename F>
void for_each_element(const tl::Shape& shape, const std::vector<bool>& mask, const F& f) {
  const int64_t n = shape.numel();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, out_index(idx, shape, mask));
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Naive reference, one pass over the input in row-major order. Integer sums/products wrap in int64
// as the kernels do; floating ones accumulate in double.
std::vector<double> reference(Op op, const tl::Tensor& input, const std::vector<bool>& mask) {
  const std::vector<double> v = values_of(input);
  const tl::Shape& shape = input.shape();
  tl::Shape keep = keepdim_shape(shape, mask, true);
  const int64_t n_out = keep.numel();
  const int64_t n_red = n_out ? static_cast<int64_t>(v.size()) / n_out : 0;
  const bool integral = !tl::is_floating_point(input.dtype());
  std::vector<double> acc(n_out);
  std::vector<uint64_t> iacc(n_out);
  for (int64_t o = 0; o < n_out; ++o) {
    switch (op) {
      case Op::Sum:
      case Op::Mean:
        acc[o] = 0, iacc[o] = 0;
        break;
      case Op::Prod:
        acc[o] = 1, iacc[o] = 1;
        break;
      case Op::Max:
      case Op::Amax:
        acc[o] = -INFINITY;
        break;
      case Op::Min:
      case Op::Amin:
        acc[o] = INFINITY;
        break;
      case Op::All:
        acc[o] = 1;
        break;
      case Op::Any:
        acc[o] = 0;
        break;
    }
  }
  for_each_element(shape, mask, [&](int64_t i, int64_t o) {
    const double x = v[i];
    double& a = acc[o];
    switch (op) {
      case Op::Sum:
      case Op::Mean:
        a += x;
        iacc[o] += static_cast<uint64_t>(static_cast<int64_t>(x));
        break;
      case Op::Prod:
        a *= x;
        iacc[o] *= static_cast<uint64_t>(static_cast<int64_t>(x));
        break;
      case Op::Max:
      case Op::Amax:
        a = (std::isnan(a) || std::isnan(x)) ? NAN : std::max(a, x);
        break;
      case Op::Min:
      case Op::Amin:
        a = (std::isnan(a) || std::isnan(x)) ? NAN : std::min(a, x);
        break;
      case Op::All:
        a = a && x != 0;
        break;
      case Op::Any:
        a = a || x != 0;
        break;
    }
  });
  for (int64_t o = 0; o < n_out; ++o) {
    if (integral && (op == Op::Sum || op == Op::Prod))
      acc[o] = static_cast<double>(static_cast<int64_t>(iacc[o]));
    if (op == Op::Mean) acc[o] = n_red ? acc[o] / static_cast<double>(n_red) : NAN;
  }
  return acc;
}

// Index of the first max/min (NaN counting as the max/min, first NaN wins) along dim, or over the
// flattened input when dim is empty.
std::vector<double> arg_reference(bool is_max, const tl::Tensor& input,
                                  std::optional<int64_t> dim) {
  const std::vector<double> v = values_of(input);
  const tl::Shape& shape = input.shape();
  std::vector<bool> mask(shape.size(), !dim.has_value());
  if (dim && shape.size() > 0) mask[*dim < 0 ? *dim + shape.size() : *dim] = true;
  const int64_t n_out = keepdim_shape(shape, mask, true).numel();
  std::vector<double> best(n_out, 0), index(n_out, -1);
  std::vector<int64_t> position(n_out, 0);
  for_each_element(shape, mask, [&](int64_t i, int64_t o) {
    const double x = v[i];
    const int64_t pos = position[o]++;
    bool better = index[o] < 0 ||
                  (!std::isnan(best[o]) && (std::isnan(x) || (is_max ? x > best[o] : x < best[o])));
    if (better) best[o] = x, index[o] = static_cast<double>(pos);
  });
  return index;
}

std::string describe(const tl::Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  std::string s =
      t.shape().str() + " " + tl::dtype_name(t.dtype()) + " dims " + tl::Shape(dims).str();
  return s + (keepdim ? " keepdim" : "");
}

// Float sums are reordered (lanes, threads), so allow rounding at the output's precision.
double rtol_for(tl::DType dtype) { return dtype == tl::kFloat32 ? 1e-5 : 1e-9; }

// The CPU accumulates float32 in double; a device may accumulate in float32 (as PyTorch's CUDA
// sums do), whose rounding error grows with the number of reduced elements (about 3e-8 n for
// inputs in [-2, 2) summed in order; 2e-7 n is five times that).
double atol_for(tl::Device device, tl::DType dtype, int64_t n_reduced) {
  if (device.is_cpu() || dtype != tl::kFloat32) return 1e-4;
  return 1e-4 + 2e-7 * static_cast<double>(n_reduced);
}

// Runs every reduction over `dims` on every layout of a random tensor of `shape` on every device.
void check_all_ops(const tl::Shape& shape, const std::vector<int64_t>& dims,
                   const std::vector<tl::DType>& dtypes, const std::vector<Op>& only = {}) {
  for (tl::Device device : test_devices()) {
    for (tl::DType dtype : dtypes) {
      tl::Tensor values = random_tensor(shape, dtype, device);
      std::vector<bool> mask = mask_of(dims, shape.size());
      for (const OpInfo& info : all_ops()) {
        if (!valid_for(info.op, dtype)) continue;
        if (!only.empty() && std::find(only.begin(), only.end(), info.op) == only.end()) continue;
        std::vector<double> expected = reference(info.op, values, mask);
        for (const Layout& layout : layouts_of(values)) {
          for (bool keepdim : {false, true}) {
            INFO(info.name << " " << layout.name << " " << describe(values, dims, keepdim) << " on "
                           << device);
            tl::Tensor got = info.fn(layout.tensor, dims, keepdim);
            CHECK(got.dtype() == expected_dtype(info.op, dtype));
            CHECK(got.device() == device);
            CHECK(got.shape() == keepdim_shape(shape, mask, keepdim));
            const int64_t n_out = keepdim_shape(shape, mask, true).numel();
            const int64_t n_reduced = n_out ? shape.numel() / n_out : 0;
            check_values(got, expected, rtol_for(dtype), atol_for(device, dtype, n_reduced));
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("reduce: every op, dtype, layout and dim set matches a reference loop") {
  const std::vector<std::vector<int64_t>> dim_sets = {{},     {0},    {-1},      {1},
                                                      {0, 2}, {2, 0}, {0, 1, 2}, {-1, 0, 1}};
  for (const auto& dims : dim_sets) check_all_ops({3, 4, 5}, dims, kAllDTypes);
}

TEST_CASE("reduce: odd sizes, size-1 dims and 1-D inputs") {
  for (const auto& dims : std::vector<std::vector<int64_t>>{{}, {0}, {1}, {2}, {0, 2}})
    check_all_ops({7, 1, 13}, dims, kAllDTypes);
  for (const auto& dims : std::vector<std::vector<int64_t>>{{}, {0}, {-1}})
    check_all_ops({37}, dims, kAllDTypes);
  for (const auto& dims : std::vector<std::vector<int64_t>>{{1, 3}, {0, 2}, {3}})
    check_all_ops({2, 3, 2, 5}, dims, {tl::kInt64, tl::kFloat32});
  // Narrow rows reduced over a long leading dim (row-accumulation paths), and short reductions.
  for (const tl::Shape& shape :
       {tl::Shape{257, 4}, tl::Shape{301, 3}, tl::Shape{129, 16}, tl::Shape{67, 40}})
    for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}})
      check_all_ops(shape, dims, kAllDTypes);
}

TEST_CASE("reduce: large inputs take the multi-threaded paths") {
  // Shapes chosen to hit each schedule: many outputs, few outputs (split reduced range), and
  // leading-dim reductions that accumulate whole rows.
  const std::vector<std::pair<tl::Shape, std::vector<int64_t>>> cases = {
      {{517, 263}, {}},    {{517, 263}, {0}}, {{517, 263}, {1}},       {{2, 70001}, {1}},
      {{70001, 3}, {0}},   {{40, 5003}, {0}}, {{203, 3, 301}, {0, 2}}, {{30001, 4}, {0}},
      {{6007, 2, 8}, {0}}, {{20011, 5}, {0}}, {{3, 40001}, {0}},
  };
  for (const auto& [shape, dims] : cases) {
    check_all_ops(shape, dims, {tl::kFloat32, tl::kInt32},
                  {Op::Sum, Op::Mean, Op::Amax, Op::Amin, Op::All, Op::Any});
  }
  for (tl::Device device : test_devices()) {
    // A full sum of 1M float32 is accurate because it accumulates in double.
    tl::Tensor ones = tl::ones({1 << 20}, tl::TensorOptions(tl::kFloat32).device(device));
    CHECK(tl::sum(ones).item<float>() == static_cast<float>(1 << 20));
    CHECK(tl::mean(ones).item<float>() == 1.0f);
    tl::Tensor big = random_tensor({300001}, tl::kInt64, device);
    std::vector<double> v = values_of(big);
    double total = 0;
    for (double x : v) total += x;
    CHECK(tl::sum(big).item<int64_t>() == static_cast<int64_t>(total));
  }
}

TEST_CASE("reduce: method forms and whole-tensor forms") {
  tl::Tensor x = tl::from_vector(std::vector<float>{1, -2, 3, 4, 5, -6}, {2, 3});
  CHECK(x.sum().item<float>() == 5);
  CHECK(values_of(x.sum({0})) == std::vector<double>{5, 3, -3});
  check_values(x.mean({1}, true), {2.0 / 3, 1});
  CHECK(x.mean({1}, true).shape() == tl::Shape{2, 1});
  CHECK(values_of(x.max(1).values) == std::vector<double>{3, 5});
  CHECK(values_of(x.min(0).values) == std::vector<double>{1, -2, -6});
  CHECK(x.argmax().item<int64_t>() == 4);
  CHECK(values_of(x.argmin(1)) == std::vector<double>{1, 2});
  CHECK(tl::prod(x).item<float>() == 720);
  CHECK(tl::all(x).item<bool>());
  CHECK(!tl::any(tl::zeros({3})).item<bool>());
  CHECK(tl::sum(tl::from_vector(std::vector<int32_t>{2000000000, 2000000000})).item<int64_t>() ==
        4000000000);
  CHECK(tl::sum(tl::from_vector(std::vector<int32_t>{1, 2})).dtype() == tl::kInt64);
}

TEST_CASE("reduce: dims as one int, a list or nothing, as torch takes them") {
  const tl::Tensor x = tl::rand({2, 3, 4});
  // One int, a negative one, a braced one and a list give the same reductions.
  CHECK(tl::equal(x.sum(1), x.sum({1})));
  CHECK(tl::equal(x.sum(1), tl::sum(x, std::vector<int64_t>{1})));
  CHECK(tl::equal(tl::mean(x, -1), tl::mean(x, {2})));
  CHECK(tl::mean(x, -1, true).shape() == tl::Shape{2, 3, 1});
  CHECK(x.amax({0, 2}).shape() == tl::Shape{3});
  CHECK(tl::equal(x.amax({0, 2}), tl::amax(tl::amax(x, 2), 0)));
  CHECK(tl::equal(x.amin(0), tl::amin(x, {0})));
  CHECK(tl::equal(x.prod(2), tl::prod(x, {2})));
  // Nothing and {} reduce every dim.
  CHECK(x.sum().dim() == 0);
  CHECK(tl::sum(x, {}).dim() == 0);
  CHECK(tl::equal(x.sum({}), x.sum()));
  const tl::Tensor b = x > 0.5;
  CHECK(tl::equal(b.all(1), tl::all(b, {1})));
  CHECK(tl::equal(b.any(-1, true), tl::any(b, {2}, true)));
  // An out-of-range single dim is the same IndexError, naming the function.
  CHECK_THROWS_AS(x.sum(3), tl::IndexError);
  CHECK_THROWS_WITH_AS(tl::mean(x, -4), doctest::Contains("tl::mean"), tl::IndexError);
}

TEST_CASE("reduce: max/min over one dim give values and indices, as torch.max(x, dim)") {
  for (tl::Device device : test_devices()) {
    const tl::Tensor x = random_tensor({3, 5, 4}, tl::kFloat32, device);
    auto [values, indices] = tl::max(x, 1);
    CHECK(values.shape() == tl::Shape{3, 4});
    CHECK(indices.dtype() == tl::kInt64);
    CHECK(tl::equal(values, tl::amax(x, 1)));
    CHECK(tl::equal(indices, tl::argmax(x, 1)));
    // The values are where the indices point.
    CHECK(tl::equal(tl::gather(x, 1, indices.unsqueeze(1)).squeeze(1), values));
    const auto [lo, where] = x.min(-1, /*keepdim=*/true);
    CHECK(lo.shape() == tl::Shape{3, 5, 1});
    CHECK(tl::equal(where, tl::argmin(x, -1, true)));
    CHECK(tl::equal(x.max(), tl::amax(x)));
    CHECK(x.min().dim() == 0);
    // bool: false < true, as torch (argmax alone refuses bool).
    const tl::Tensor b =
        tl::from_vector(std::vector<uint8_t>{0, 1, 1, 0, 0, 0}, {2, 3}).to(tl::kBool).to(device);
    const auto [bv, bi] = tl::max(b, 1);
    CHECK(bv.dtype() == tl::kBool);
    CHECK(values_of(bv) == std::vector<double>{1, 0});
    CHECK(values_of(bi) == std::vector<double>{1, 0});
    // A 0-dim tensor takes dim 0 and -1.
    const auto [sv, si] = tl::max(tl::scalar_tensor(2.5, tl::TensorOptions().device(device)), -1);
    CHECK(sv.item<float>() == 2.5f);
    CHECK(si.item<int64_t>() == 0);
  }
  const tl::Tensor x = tl::rand({2, 3});
  check_throws<tl::IndexError>([&] { tl::max(x, 2); }, "tl::max");
  check_throws<tl::IndexError>([&] { tl::min(x, -3); }, "tl::min");
  check_throws<tl::IndexError>([&] { tl::max(tl::empty({2, 0}), 1); }, "tl::max");
  check_throws<tl::Error>([&] { tl::min(tl::Tensor(), 0); }, "tl::min");
}

TEST_CASE("reduce: 0-dim inputs accept dim 0 and -1") {
  for (tl::Device device : test_devices()) {
    tl::Tensor s = tl::scalar_tensor(2.5, tl::TensorOptions(tl::kFloat64).device(device));
    for (const auto& dims : std::vector<std::vector<int64_t>>{{}, {0}, {-1}}) {
      for (bool keepdim : {false, true}) {
        for (const OpInfo& info : all_ops()) {
          INFO(info.name << " dims " << tl::Shape(dims) << " keepdim " << keepdim);
          tl::Tensor r = info.fn(s, dims, keepdim);
          CHECK(r.dim() == 0);
          check_values(r, {(info.op == Op::All || info.op == Op::Any) ? 1.0 : 2.5});
        }
      }
    }
    for (std::optional<int64_t> dim :
         {std::optional<int64_t>{}, std::optional<int64_t>{0}, std::optional<int64_t>{-1}}) {
      for (bool keepdim : {false, true}) {
        CHECK(tl::argmax(s, dim, keepdim).dim() == 0);
        CHECK(tl::argmin(s, dim, keepdim).item<int64_t>() == 0);
      }
    }
    tl::Tensor i = tl::scalar_tensor(7, tl::TensorOptions(tl::kInt32).device(device));
    CHECK(tl::sum(i).dtype() == tl::kInt64);
    CHECK(tl::sum(i).item<int64_t>() == 7);
  }
}

TEST_CASE("reduce: zero-size inputs give identities or empty results") {
  for (tl::Device device : test_devices()) {
    tl::TensorOptions f32 = tl::TensorOptions(tl::kFloat32).device(device);
    tl::Tensor e = tl::empty({0, 3}, f32);
    CHECK(tl::sum(e).item<float>() == 0);
    CHECK(tl::prod(e).item<float>() == 1);
    CHECK(std::isnan(tl::mean(e).item<float>()));
    CHECK(tl::all(e).item<bool>());
    CHECK(!tl::any(e).item<bool>());
    CHECK(values_of(tl::sum(e, {0})) == std::vector<double>{0, 0, 0});
    CHECK(values_of(tl::prod(e, {0}, true)) == std::vector<double>{1, 1, 1});
    CHECK(tl::prod(e, {0}, true).shape() == tl::Shape{1, 3});
    check_values(tl::mean(e, {0}), {NAN, NAN, NAN});
    CHECK(tl::sum(tl::empty({0}, tl::TensorOptions(tl::kInt32).device(device))).dtype() ==
          tl::kInt64);
    // Reducing only non-empty dims of an empty tensor gives an empty result, even for max/min.
    for (const OpInfo& info : all_ops()) {
      INFO(info.name);
      tl::Tensor r = info.fn(e, {1}, false);
      CHECK(r.shape() == tl::Shape{0});
      CHECK(info.fn(e, {1}, true).shape() == tl::Shape{0, 1});
      CHECK(info.fn(tl::empty({3, 0, 2}, f32), {0, 2}, false).shape() == tl::Shape{0});
    }
    CHECK(tl::argmax(e, 1).shape() == tl::Shape{0});
    CHECK(tl::argmin(e, 1, true).shape() == tl::Shape{0, 1});
    CHECK(values_of(tl::sum(tl::empty({2, 0, 3}, f32), {1})) == std::vector<double>(6, 0));
  }
}

TEST_CASE("reduce: max and min propagate NaN; argmax/argmin pick the first NaN or the first tie") {
  for (tl::Device device : test_devices()) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    tl::Tensor x =
        tl::from_vector(std::vector<float>{1, nan, 3, 4, 7, 7, 2, 6, 5, nan, 0, nan}, {3, 4})
            .to(device);
    check_values(tl::max(x, 1).values, {NAN, 7, NAN});
    check_values(tl::min(x, 1).values, {NAN, 2, NAN});
    check_values(tl::max(x, 0).values, {7, NAN, 3, NAN});
    // The indices are argmax's: the first NaN, else the first of equal values.
    CHECK(values_of(tl::max(x, 1).indices) == std::vector<double>{1, 0, 1});
    CHECK(values_of(tl::min(x, 1).indices) == std::vector<double>{1, 2, 1});
    CHECK(values_of(tl::max(x, 0).indices) == std::vector<double>{1, 0, 0, 2});
    check_values(tl::amax(x, {1}), {NAN, 7, NAN});
    check_values(tl::amin(x, {0}), {1, NAN, 0, NAN});
    CHECK(std::isnan(tl::max(x).item<float>()));
    CHECK(tl::argmax(x).item<int64_t>() == 1);
    CHECK(tl::argmin(x).item<int64_t>() == 1);
    CHECK(values_of(tl::argmax(x, 1)) == std::vector<double>{1, 0, 1});
    CHECK(values_of(tl::argmin(x, 1)) == std::vector<double>{1, 2, 1});
    CHECK(values_of(tl::argmax(x, 0)) == std::vector<double>{1, 0, 0, 2});
    CHECK(values_of(tl::argmin(x, 0)) == std::vector<double>{0, 0, 2, 2});
    // Ties: the first occurrence, also along a leading dim and across threads.
    tl::Tensor t = tl::from_vector(std::vector<int32_t>{5, 1, 5, 1, 2, 5, 1, 2}, {2, 4}).to(device);
    CHECK(tl::argmax(t).item<int64_t>() == 0);
    CHECK(tl::argmin(t).item<int64_t>() == 1);
    CHECK(values_of(tl::argmax(t, 1)) == std::vector<double>{0, 1});
    CHECK(values_of(tl::argmin(t, 0)) == std::vector<double>{1, 0, 1, 0});
    tl::Tensor flat = tl::full({200000}, 3, tl::TensorOptions(tl::kInt64).device(device));
    CHECK(tl::argmax(flat).item<int64_t>() == 0);
    CHECK(tl::argmin(flat).item<int64_t>() == 0);
    tl::Tensor nan_late = tl::zeros({200000}, tl::TensorOptions(tl::kFloat64).device(device));
    nan_late.slice(0, 150000, 150001).fill_(std::numeric_limits<double>::quiet_NaN());
    nan_late.slice(0, 190000, 190001).fill_(std::numeric_limits<double>::quiet_NaN());
    CHECK(tl::argmax(nan_late).item<int64_t>() == 150000);
    CHECK(tl::argmin(nan_late).item<int64_t>() == 150000);
    CHECK(std::isnan(tl::sum(nan_late).item<double>()));
    CHECK(std::isnan(tl::min(nan_late).item<double>()));
    // Infinities are ordinary values.
    tl::Tensor inf = tl::from_vector(std::vector<double>{-INFINITY, -INFINITY, 1}).to(device);
    CHECK(tl::min(inf).item<double>() == -INFINITY);
    CHECK(tl::argmin(inf).item<int64_t>() == 0);
    CHECK(tl::argmax(tl::from_vector(std::vector<double>{-INFINITY, -INFINITY})).item<int64_t>() ==
          0);
    CHECK(tl::max(tl::from_vector(std::vector<int64_t>{INT64_MIN, INT64_MIN})).item<int64_t>() ==
          INT64_MIN);
    CHECK(tl::argmax(tl::from_vector(std::vector<int64_t>{INT64_MIN, INT64_MIN})).item<int64_t>() ==
          0);
  }
}

TEST_CASE("reduce: argmax and argmin refuse bool tensors, as torch") {
  for (tl::Device device : test_devices()) {
    tl::Tensor b = tl::ones({2, 3}, tl::TensorOptions(tl::kBool).device(device));
    check_throws<tl::DTypeError>([&] { tl::argmax(b); }, "[tl::argmax] ");
    check_throws<tl::DTypeError>([&] { tl::argmin(b, 1); }, "[tl::argmin] ");
    // max/min of bool stay allowed (torch.amax accepts bool).
    CHECK(tl::max(b).item<bool>());
  }
}

TEST_CASE("reduce: argmax and argmin match a reference on every dtype, layout and dim") {
  struct Case {
    tl::Shape shape;
    std::vector<std::optional<int64_t>> dims;
  };
  const std::vector<Case> cases = {
      {{3, 4, 5}, {std::nullopt, 0, 1, 2, -1}}, {{7, 1, 13}, {std::nullopt, 0, 1, -1}},
      {{517, 263}, {std::nullopt, 0, 1}},       {{2, 70001}, {1}},
      {{70001, 3}, {0, std::nullopt}},
  };
  for (tl::Device device : test_devices()) {
    for (const Case& c : cases) {
      const bool large = c.shape.numel() > 100000;
      for (tl::DType dtype : kAllDTypes) {
        if (large && dtype != tl::kInt32 && dtype != tl::kFloat32) continue;
        if (dtype == tl::kBool) continue;  // refused, as torch (see the bad-input suite)
        tl::Tensor values = random_tensor(c.shape, dtype, device);
        for (std::optional<int64_t> dim : c.dims) {
          const std::vector<double> emax = arg_reference(true, values, dim);
          const std::vector<double> emin = arg_reference(false, values, dim);
          for (const Layout& layout : layouts_of(values)) {
            for (bool keepdim : {false, true}) {
              INFO(layout.name << " " << c.shape << " " << tl::dtype_name(dtype) << " dim "
                               << (dim ? std::to_string(*dim) : "none") << " keepdim " << keepdim);
              tl::Tensor amax = tl::argmax(layout.tensor, dim, keepdim);
              tl::Tensor amin = tl::argmin(layout.tensor, dim, keepdim);
              CHECK(amax.dtype() == tl::kInt64);
              tl::Shape shape;
              if (dim) {
                const int64_t d = *dim < 0 ? *dim + c.shape.size() : *dim;
                for (int64_t i = 0; i < c.shape.size(); ++i)
                  if (i != d || keepdim) shape.push_back(i == d ? 1 : c.shape[i]);
              } else if (keepdim) {
                shape = tl::Shape::filled(c.shape.size(), 1);
              }
              CHECK(amax.shape() == shape);
              CHECK(amin.shape() == shape);
              check_values(amax, emax, 0, 0);
              check_values(amin, emin, 0, 0);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: expanded (stride 0) and permuted inputs") {
  for (tl::Device device : test_devices()) {
    tl::Tensor base = random_tensor({4, 1, 6}, tl::kFloat64, device);
    tl::Tensor x = base.expand({4, 5, 6});
    tl::Tensor p = random_tensor({3, 4, 5}, tl::kInt64, device).permute({2, 0, 1});
    for (const auto& dims : std::vector<std::vector<int64_t>>{{}, {1}, {0, 1}, {2}}) {
      for (const OpInfo& info : all_ops()) {
        INFO(info.name << " dims " << tl::Shape(dims));
        check_values(info.fn(x, dims, false), reference(info.op, x.contiguous(), mask_of(dims, 3)),
                     1e-9, 1e-9);
        if (info.op != Op::Mean)
          check_values(info.fn(p, dims, true), reference(info.op, p.contiguous(), mask_of(dims, 3)),
                       0, 0);
      }
    }
    CHECK(values_of(tl::argmax(x, 1)) == std::vector<double>(24, 0));
  }
}

TEST_CASE("reduce: errors name the op") {
  tl::Tensor x = tl::ones({2, 3, 4});
  for (const OpInfo& info : all_ops()) {
    auto fn = info.fn;
    check_throws<tl::IndexError>([&] { fn(x, {3}, false); }, info.name);
    check_throws<tl::IndexError>([&] { fn(x, {-4}, false); }, info.name);
    check_throws<tl::IndexError>([&] { fn(x, {0, -3}, false); }, info.name);
    check_throws<tl::IndexError>([&] { fn(x, {1, 1}, true); }, "appears multiple times");
    check_throws<tl::IndexError>([&] { fn(tl::scalar_tensor(1.0), {0, -1}, false); }, info.name);
    check_throws<tl::IndexError>([&] { fn(tl::scalar_tensor(1.0), {1}, false); }, info.name);
    check_throws<tl::Error>([&] { fn(tl::Tensor(), {}, false); }, info.name);
  }
  check_throws<tl::DTypeError>([] { tl::mean(tl::ones({2}, tl::kInt64)); }, "tl::mean");
  check_throws<tl::DTypeError>([] { tl::mean(tl::ones({2}, tl::kBool), {0}); }, "tl::mean");
  check_throws<tl::DTypeError>([] { tl::mean(tl::ones({2}, tl::kInt32), {0}); }, "got int32");
  tl::Tensor e = tl::empty({0, 3});
  check_throws<tl::IndexError>([&] { tl::max(e); }, "tl::max");
  check_throws<tl::IndexError>([&] { tl::min(e, 0); }, "tl::min");
  check_throws<tl::IndexError>([&] { tl::amax(e, {0, 1}, true); }, "tl::amax");
  check_throws<tl::IndexError>([&] { tl::amin(tl::empty({0})); }, "tl::amin");
  check_throws<tl::IndexError>([&] { tl::argmax(e); }, "tl::argmax");
  check_throws<tl::IndexError>([&] { tl::argmin(e, 0); }, "tl::argmin");
  check_throws<tl::IndexError>([&] { tl::argmax(x, 3); }, "tl::argmax");
  check_throws<tl::IndexError>([&] { tl::argmin(x, -4); }, "tl::argmin");
  check_throws<tl::IndexError>([&] { tl::argmax(tl::scalar_tensor(1.0), 1); }, "tl::argmax");
  check_throws<tl::Error>([&] { tl::argmax(tl::Tensor()); }, "tl::argmax");
}

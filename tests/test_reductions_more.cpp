// norm, count_nonzero, nansum, nanmean and median against double references computed here, on
// every device: p values, dims, keepdim, layouts, NaN, empty inputs, ties and dtype rules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "numeric_refs.h"
#include "test_util.h"

using namespace tl_test;

namespace {

// Integers in [lo, hi) in any dtype (wrapped into uint8), never all zero.
tl::Tensor ints_in(int64_t lo, int64_t hi, const tl::Shape& s, tl::DType d) {
  return tl::randint(lo, hi, s, tl::kInt64).to(d);
}

const double kNaN = std::nan("");
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<tl::DType> kFloatDTypes = {tl::kFloat32, tl::kFloat64, tl::kFloat16,
                                             tl::kBFloat16};

Tols tols_for(tl::DType d) { return float_result_tols(d); }

std::vector<bool> mask_of(const std::vector<int64_t>& dims, int64_t nd) {
  std::vector<bool> mask(nd, dims.empty());
  for (int64_t d : dims)
    if (nd > 0) mask[d < 0 ? d + nd : d] = true;
  return mask;
}

// The elements of each output (row-major keepdim order) of a reduction over `mask`.
std::vector<std::vector<double>> groups(const std::vector<double>& x, const tl::Shape& s,
                                        const std::vector<bool>& mask) {
  int64_t n_out = 1;
  for (int64_t d = 0; d < s.size(); ++d)
    if (!mask[d]) n_out *= s[d];
  std::vector<std::vector<double>> g(n_out);
  for (int64_t i = 0; i < s.numel(); ++i) {
    const std::vector<int64_t> idx = unravel(i, s);
    int64_t o = 0;
    for (int64_t d = 0; d < s.size(); ++d)
      if (!mask[d]) o = o * s[d] + idx[d];
    g[o].push_back(x[i]);
  }
  return g;
}

tl::Shape reduced_shape(const tl::Shape& s, const std::vector<bool>& mask, bool keepdim) {
  tl::Shape out;
  for (int64_t d = 0; d < s.size(); ++d) {
    if (!mask[d])
      out.push_back(s[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

double norm_ref(const std::vector<double>& v, double p) {
  if (p == kInf || p == -kInf) {
    double m = p > 0 ? 0 : kInf;
    for (double x : v) {
      if (std::isnan(x)) return kNaN;
      m = p > 0 ? std::max(m, std::fabs(x)) : std::min(m, std::fabs(x));
    }
    return m;
  }
  double s = 0;
  for (double x : v) s += p == 0 ? (x != 0) : std::pow(std::fabs(x), p);
  return p == 0 ? s : std::pow(s, 1 / p);
}

}  // namespace

TEST_CASE("norm: p values, dims, keepdim, layouts and dtypes against a double reference") {
  const std::vector<double> ps = {2, 1, kInf, -kInf, 0, 3, 0.5, -1};
  const std::vector<std::pair<tl::Shape, std::vector<std::vector<int64_t>>>> cases{
      {{3, 4}, {{}, {0}, {1}, {0, 1}}}, {{2, 3, 4}, {{-1}, {0, 2}}}, {{5}, {{}}}, {{}, {{}}}};
  for (tl::Device dev : test_devices()) {
    for (tl::DType d : kFloatDTypes) {
      const Tols t = tols_for(d);
      for (const auto& [shape, dim_sets] : cases) {
        const tl::Tensor values = random_tensor(shape, d);
        for (const Layout& l : layouts_of(values)) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          const std::vector<double> in = values_of(x);
          for (const auto& dims : dim_sets) {
            const std::vector<bool> mask = mask_of(dims, shape.size());
            for (double p : ps) {
              for (bool keepdim : {false, true}) {
                INFO(dev.str() << " " << tl::dtype_name(d) << " " << shape.str() << " " << l.name
                               << " p " << p << " dims " << tl::Shape(dims).str()
                               << (keepdim ? " keepdim" : ""));
                const tl::Tensor r = tl::norm(x, p, dims, keepdim);
                CHECK(r.dtype() == d);
                CHECK(r.shape() == reduced_shape(shape, mask, keepdim));
                std::vector<double> want;
                for (const auto& g : groups(in, shape, mask)) want.push_back(norm_ref(g, p));
                check_values(r, want, t.rtol, t.atol);
              }
            }
            // "fro" is the 2-norm over the same dims.
            check_values(tl::norm(x, "fro", dims), values_of(tl::norm(x, 2, dims)), 0, 0);
          }
        }
      }
    }
  }
}

TEST_CASE("norm: defaults, NaN, empty inputs and refused arguments") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    const tl::Tensor x = tl::from_vector<float>({3, -4}, {2}).to(dev);
    CHECK(tl::norm(x).item<float>() == 5.0f);
    CHECK(tl::norm(x, 1).item<float>() == 7.0f);
    CHECK(tl::norm(x, 0).item<float>() == 2.0f);
    const tl::Tensor n = tl::from_vector<double>({1, kNaN, -3}, {3}).to(dev);
    for (double p : {2.0, 1.0, kInf, -kInf, 3.0}) CHECK(std::isnan(tl::norm(n, p).item<double>()));
    CHECK(tl::norm(n, 0).item<double>() == 3.0);  // NaN is not zero
    // Empty: sums give 0; inf and negative p have no identity (an empty reduced dim is refused),
    // while an empty kept dim just gives an empty result.
    const tl::Tensor e = tl::empty({0, 3}, tl::TensorOptions(dev));
    CHECK(tl::norm(e).item<float>() == 0.0f);
    CHECK(tl::norm(e, 1, {0}).shape() == tl::Shape{3});
    check_throws<tl::IndexError>([&] { tl::norm(e, kInf, {0}); }, "[tl::norm]");
    check_throws<tl::IndexError>([&] { tl::norm(e, -1); }, "[tl::norm]");
    CHECK(tl::norm(e, kInf, {1}).shape() == tl::Shape{0});
    check_throws<tl::DTypeError>([&] { tl::norm(tl::ones({2}, tl::kInt64).to(dev)); }, "int64");
    check_throws<tl::Error>([&] { tl::norm(x, "nuc"); }, "[tl::norm]");
  }
}

TEST_CASE("count_nonzero, nansum, nanmean: dims, NaN, dtypes, empty slices") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16, tl::kInt32,
                        tl::kInt64, tl::kUInt8, tl::kBool}) {
      // Random values with zeros and, for floats, NaNs sprinkled in.
      tl::Tensor x = tl::is_integral(d) ? ints_in(-9, 10, {4, 5}, d) : random_tensor({4, 5}, d);
      if (d != tl::kBool) x = tl::where(tl::rand({4, 5}) < 0.25, 0, x);
      if (tl::is_floating_point(d)) x = tl::where(tl::rand({4, 5}) < 0.25, kNaN, x);
      for (const Layout& l : layouts_of(x)) {
        const tl::Tensor v = same_layout_on(l.tensor, dev);
        const std::vector<double> in = values_of(v);
        for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, {0}, {-1}, {0, 1}}) {
          INFO(dev.str() << " " << tl::dtype_name(d) << " " << l.name << " dims "
                         << tl::Shape(dims).str());
          const auto g = groups(in, {4, 5}, mask_of(dims, 2));
          std::vector<double> count, sum, mean;
          for (const auto& group : g) {
            double c = 0, s = 0, valid = 0;
            for (double e : group) {
              c += e != 0;  // NaN != 0
              if (!std::isnan(e)) {
                s += e;
                valid += 1;
              }
            }
            count.push_back(c);
            sum.push_back(s);
            mean.push_back(s / valid);
          }
          const tl::Tensor nz = tl::count_nonzero(v, dims);
          CHECK(nz.dtype() == tl::kInt64);
          check_values(nz, count, 0, 0);
          const tl::Tensor ns = tl::nansum(v, dims);
          CHECK(ns.dtype() == (tl::is_floating_point(d) ? d : tl::kInt64));
          const Tols t = tols_for(tl::is_floating_point(d) ? d : tl::kFloat64);
          check_values(ns, sum, t.rtol, t.atol * 10);
          check_values(tl::nansum(v, dims, true), sum, t.rtol, t.atol * 10);
          CHECK(tl::nansum(v, dims, true).dim() == 2);
          if (tl::is_floating_point(d)) {
            const tl::Tensor nm = tl::nanmean(v, dims);
            CHECK(nm.dtype() == d);
            check_values(nm, mean, t.rtol * 2, t.atol * 10);
          } else {
            check_throws<tl::DTypeError>([&] { tl::nanmean(v, dims); }, "[tl::nanmean]");
          }
        }
      }
    }
    // All-NaN and empty slices: nansum 0, nanmean NaN (0 / 0).
    const tl::Tensor all_nan = tl::full({2, 3}, kNaN, tl::TensorOptions(dev));
    check_values(tl::nansum(all_nan, 1), {0, 0}, 0, 0);
    check_values(tl::nanmean(all_nan, 1), {kNaN, kNaN}, 0, 0);
    const tl::Tensor empty = tl::empty({0, 3}, tl::TensorOptions(dev));
    check_values(tl::nansum(empty, 0), {0, 0, 0}, 0, 0);
    check_values(tl::nanmean(empty, 0), {kNaN, kNaN, kNaN}, 0, 0);
    CHECK(tl::count_nonzero(empty).item<int64_t>() == 0);
    // 0-dim.
    CHECK(tl::count_nonzero(tl::scalar_tensor(2.0, dev)).item<int64_t>() == 1);
    CHECK(tl::nansum(tl::scalar_tensor(kNaN, dev)).item<float>() == 0.0f);
  }
}

namespace {

// torch's CPU median along a dim: the first NaN if any, else the element of rank (n - 1) / 2 in
// (value, position) order.
void median_ref(const std::vector<double>& x, const tl::Shape& s, int64_t dim,
                std::vector<double>& values, std::vector<int64_t>& indices) {
  const int64_t nd = s.size();
  if (dim < 0) dim += nd;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= s[d];
  for (int64_t d = dim + 1; d < nd; ++d) inner *= s[d];
  const int64_t n = s[dim];
  values.clear();
  indices.clear();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      auto at = [&](int64_t i) { return x[(o * n + i) * inner + j]; };
      int64_t pick = -1;
      for (int64_t i = 0; i < n && pick < 0; ++i)
        if (std::isnan(at(i))) pick = i;
      if (pick < 0) {
        std::sort(order.begin(), order.end(),
                  [&](int64_t a, int64_t b) { return at(a) < at(b) || (at(a) == at(b) && a < b); });
        pick = order[(n - 1) / 2];
      }
      values.push_back(at(pick));
      indices.push_back(pick);
    }
}

}  // namespace

TEST_CASE("median: all elements and along a dim, ties by position, NaN, every layout") {
  for (tl::Device dev : test_devices()) {
    for (tl::DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16, tl::kInt32,
                        tl::kInt64, tl::kUInt8, tl::kInt8, tl::kInt16}) {
      // Few distinct values, so ties are common.
      const tl::Tensor values = ints_in(-3, 4, {4, 6}, d);
      for (const Layout& l : layouts_of(values)) {
        const tl::Tensor x = same_layout_on(l.tensor, dev);
        const std::vector<double> in = values_of(x);
        INFO(dev.str() << " " << tl::dtype_name(d) << " " << l.name);
        std::vector<double> sorted = in;
        std::sort(sorted.begin(), sorted.end());
        const tl::Tensor m = tl::median(x);
        CHECK(m.dim() == 0);
        CHECK(m.dtype() == d);
        CHECK(m.item<double>() == sorted[(sorted.size() - 1) / 2]);
        for (int64_t dim : {0, 1, -1}) {
          for (bool keepdim : {false, true}) {
            INFO("dim " << dim << (keepdim ? " keepdim" : ""));
            auto [v, i] = tl::median(x, dim, keepdim);
            tl::Shape want = x.shape();
            if (keepdim)
              want[dim < 0 ? dim + 2 : dim] = 1;
            else
              want.erase(dim < 0 ? dim + 2 : dim);
            CHECK(v.shape() == want);
            CHECK(i.shape() == want);
            CHECK(v.dtype() == d);
            std::vector<double> rv;
            std::vector<int64_t> ri;
            median_ref(in, x.shape(), dim, rv, ri);
            check_values(v, rv, 0, 0);
            CHECK(i.cpu().to_vector<int64_t>() == ri);
          }
        }
      }
    }
    // A 3-D random float tensor, every dim.
    const tl::Tensor r = random_tensor({3, 5, 4}, tl::kFloat32).to(dev);
    for (int64_t dim : {0, 1, 2}) {
      auto [v, i] = tl::median(r, dim);
      std::vector<double> rv;
      std::vector<int64_t> ri;
      median_ref(values_of(r), r.shape(), dim, rv, ri);
      check_values(v, rv, 0, 0);
      CHECK(i.cpu().to_vector<int64_t>() == ri);
    }
  }
}

TEST_CASE("median: ties, -0, NaN, 0-dim, empty and long rows") {
  for (tl::Device dev : test_devices()) {
    INFO(dev.str());
    auto along = [&](const std::vector<double>& x, double value, int64_t index) {
      auto [v, i] =
          tl::median(tl::from_vector<double>(x, {static_cast<int64_t>(x.size())}).to(dev), 0);
      check_values(v, {value}, 0, 0);
      CHECK(i.item<int64_t>() == index);
    };
    along({1, 2, 2, 2, 3}, 2, 2);  // rank 2 in (value, position) order
    along({2, 2, 2, 2}, 2, 1);     // the lower median of an even count
    along({5, 1, 4, 2}, 2, 3);
    along({1, kNaN, 3, kNaN}, kNaN, 1);  // the first NaN
    along({7}, 7, 0);
    // -0 equals 0: ranked by position; the value is the element itself.
    auto [zv, zi] = tl::median(tl::from_vector<float>({0.0f, -0.0f, 1.0f}, {3}).to(dev), 0);
    CHECK(zi.item<int64_t>() == 1);
    CHECK(std::signbit(zv.item<float>()));
    // All elements: NaN anywhere gives NaN; empty gives NaN.
    CHECK(
        std::isnan(tl::median(tl::from_vector<double>({1, kNaN, 2}, {3}).to(dev)).item<double>()));
    CHECK(std::isnan(tl::median(tl::empty({0}, tl::TensorOptions(dev))).item<float>()));
    CHECK(tl::median(tl::from_vector<int64_t>({9, -3, 4, 4}, {2, 2}).to(dev)).item<int64_t>() == 4);
    // 0-dim: the element and index 0.
    auto [sv, si] = tl::median(tl::scalar_tensor(1.5, dev), -1);
    CHECK(sv.dim() == 0);
    CHECK(sv.item<float>() == 1.5f);
    CHECK(si.item<int64_t>() == 0);
    // No rows: an empty result of the kept shape.
    auto [ev, ei] = tl::median(tl::empty({0, 3}, tl::TensorOptions(dev)), 1, true);
    CHECK(ev.shape() == tl::Shape{0, 1});
    CHECK(ei.shape() == tl::Shape{0, 1});
    // Long rows (the CPU's parallel path and several radix passes of one block on CUDA).
    const tl::Tensor big = random_tensor({3, 50001}, tl::kFloat64).to(dev);
    auto [bv, bi] = tl::median(big, 1);
    std::vector<double> rv;
    std::vector<int64_t> ri;
    median_ref(values_of(big), big.shape(), 1, rv, ri);
    check_values(bv, rv, 0, 0);
    CHECK(bi.cpu().to_vector<int64_t>() == ri);
    std::vector<double> all = values_of(big);
    std::nth_element(all.begin(), all.begin() + (all.size() - 1) / 2, all.end());
    CHECK(tl::median(big).item<double>() == all[(all.size() - 1) / 2]);
  }
}

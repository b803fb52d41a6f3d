// softmax, log_softmax, logsumexp, var, std, var_mean, std_mean against double-precision
// references computed here, on every device: layouts, specials, 0-dim, zero-size, dtype rules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "numeric_refs.h"
#include "test_util.h"

using namespace tl_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

Tols tols_for(tl::DType d) { return float_result_tols(d); }

const std::vector<tl::DType> kFloatDTypes = {tl::kFloat32, tl::kFloat64, tl::kFloat16,
                                             tl::kBFloat16};

// Random values in [-8, 8) (never all zeros: softmax of a constant row would hide the max).
tl::Tensor spread(const tl::Shape& s, tl::DType d) {
  return (random_tensor(s, tl::kFloat64) * 4.0).to(d);
}

// torch's softmax in double: exp(x - max) / sum, log: x - max - log(sum), max without NaN
// skipping (a NaN in the sum makes the row NaN anyway).
std::vector<double> softmax_ref(const std::vector<double>& x, const tl::Shape& s, int64_t dim,
                                bool log) {
  const Geometry g = geometry(s, dim);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t j = 0; j < g.inner; ++j) {
      auto at = [&](int64_t i) { return (o * g.n + i) * g.inner + j; };
      double m = -kInf;
      for (int64_t i = 0; i < g.n; ++i) m = std::max(m, x[at(i)]);
      double sum = 0;
      for (int64_t i = 0; i < g.n; ++i) sum += std::exp(x[at(i)] - m);
      for (int64_t i = 0; i < g.n; ++i)
        y[at(i)] = log ? x[at(i)] - m - std::log(sum) : std::exp(x[at(i)] - m) / sum;
    }
  }
  return y;
}

// Output index (keepdim, row-major) of every input element for a reduction mask.
std::vector<int64_t> output_index(const tl::Shape& s, const std::vector<bool>& mask,
                                  int64_t& n_out) {
  std::vector<int64_t> index(s.numel());
  n_out = 1;
  for (int64_t d = 0; d < s.size(); ++d)
    if (!mask[d]) n_out *= s[d];
  for (int64_t i = 0; i < s.numel(); ++i) {
    const std::vector<int64_t> idx = unravel(i, s);
    int64_t o = 0;
    for (int64_t d = 0; d < s.size(); ++d)
      if (!mask[d]) o = o * s[d] + idx[d];
    index[i] = o;
  }
  return index;
}

std::vector<bool> mask_of(const std::vector<int64_t>& dims, int64_t nd) {
  std::vector<bool> mask(nd, dims.empty());
  if (nd == 0) return mask;  // a 0-dim tensor takes dim 0 / -1 and has nothing to mask
  for (int64_t d : dims) mask[d < 0 ? d + nd : d] = true;
  return mask;
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

// torch's logsumexp in double: log(sum(exp(x - m))) + m, m set to 0 where infinite.
std::vector<double> logsumexp_ref(const std::vector<double>& x, const tl::Shape& s,
                                  const std::vector<int64_t>& dims) {
  int64_t n_out = 0;
  const std::vector<int64_t> index = output_index(s, mask_of(dims, s.size()), n_out);
  std::vector<double> m(n_out, -kInf), sum(n_out, 0.0);
  for (size_t i = 0; i < x.size(); ++i)
    m[index[i]] = std::isnan(x[i]) || std::isnan(m[index[i]]) ? kNaN : std::max(m[index[i]], x[i]);
  for (double& v : m)
    if (std::isinf(v)) v = 0;
  for (size_t i = 0; i < x.size(); ++i) sum[index[i]] += std::exp(x[i] - m[index[i]]);
  for (int64_t o = 0; o < n_out; ++o) sum[o] = std::log(sum[o]) + m[o];
  return sum;
}

// Two-pass variance in double and the mean, per output.
void moments_ref(const std::vector<double>& x, const tl::Shape& s, const std::vector<int64_t>& dims,
                 double correction, std::vector<double>& var, std::vector<double>& mean) {
  int64_t n_out = 0;
  const std::vector<int64_t> index = output_index(s, mask_of(dims, s.size()), n_out);
  const double count = n_out ? static_cast<double>(x.size()) / n_out : 0;
  mean.assign(n_out, 0.0);
  var.assign(n_out, 0.0);
  for (size_t i = 0; i < x.size(); ++i) mean[index[i]] += x[i];
  for (double& v : mean) v /= count;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dev = x[i] - mean[index[i]];
    var[index[i]] += dev * dev;
  }
  for (double& v : var) v /= std::max(0.0, count - correction);
}

void check_softmax(const tl::Tensor& x, int64_t dim, const std::string& what) {
  const std::vector<double> in = values_of(x);
  const Tols t = tols_for(x.dtype());
  for (bool log : {false, true}) {
    INFO(what << (log ? " log_softmax" : " softmax") << " dim " << dim);
    const tl::Tensor y = log ? tl::log_softmax(x, dim) : tl::softmax(x, dim);
    CHECK(y.dtype() == x.dtype());
    CHECK(y.shape() == x.shape());
    CHECK(y.device() == x.device());
    CHECK(y.is_contiguous());
    check_values(y, softmax_ref(in, x.shape(), dim, log), t.rtol, t.atol);
  }
}

}  // namespace

TEST_CASE("softmax and log_softmax: every dim of several shapes, every floating dtype") {
  const std::vector<std::pair<tl::Shape, std::vector<int64_t>>> cases{
      {{5, 7}, {0, 1, -1, -2}}, {{3, 4, 5}, {0, 1, 2, -1}},
      {{1000}, {0, -1}},        {{2, 4097}, {1, 0}},
      {{3, 31}, {1}},           {{1, 1}, {0, 1}},
      {{2, 3, 1}, {2, 1}},      {{64, 20000}, {-1}},
      {{600, 300}, {0}},
  };
  for (const tl::Device& dev : test_devices()) {
    for (tl::DType d : kFloatDTypes) {
      for (const auto& [shape, dims] : cases) {
        const tl::Tensor x = spread(shape, d).to(dev);
        for (int64_t dim : dims)
          check_softmax(x, dim, dev.str() + " " + tl::dtype_name(d) + " " + shape.str());
      }
    }
  }
}

TEST_CASE("softmax: transposed, sliced and offset inputs give contiguous results") {
  for (const tl::Device& dev : test_devices()) {
    for (tl::DType d : {tl::kFloat32, tl::kFloat16}) {
      for (const Layout& l : layouts_of(spread({6, 37}, d))) {
        const tl::Tensor x = same_layout_on(l.tensor, dev);
        for (int64_t dim : {0, 1}) check_softmax(x, dim, dev.str() + " " + l.name);
      }
      // A permuted 3-D view and a softmax dim in the middle.
      const tl::Tensor p = same_layout_on(spread({4, 5, 6}, d).permute({2, 0, 1}), dev);
      for (int64_t dim : {0, 1, 2}) check_softmax(p, dim, dev.str() + " permuted");
    }
  }
}

TEST_CASE("softmax: -inf rows, NaN, +inf, 0-dim and zero-size inputs") {
  for (const tl::Device& dev : test_devices()) {
    INFO(dev.str());
    for (tl::DType d : kFloatDTypes) {
      // Rows: all -inf (NaN, as torch), some -inf (0 / -inf there), a NaN (the row is NaN), a
      // +inf (the row is NaN: exp(inf - inf)), ordinary.
      const std::vector<double> rows{-kInf, -kInf, -kInf, -kInf, -kInf, 1.5,  -kInf,
                                     -0.5,  0.25,  kNaN,  3.0,   -1.0,  kInf, 2.0,
                                     -1.0,  1.0,   2.0,   -3.0,  0.5,   1.25};
      const tl::Tensor x = tl::from_vector(rows, {5, 4}).to(d).to(dev);
      check_softmax(x, 1, "specials " + std::string(tl::dtype_name(d)));
      const std::vector<double> sm = values_of(tl::softmax(x, 1));
      for (int i = 0; i < 4; ++i) CHECK(std::isnan(sm[i]));
      CHECK(sm[4] == 0.0);
      CHECK(sm[6] == 0.0);
      for (int i = 8; i < 16; ++i) CHECK(std::isnan(sm[i]));
      const std::vector<double> lsm = values_of(tl::log_softmax(x, 1));
      CHECK(lsm[4] == -kInf);
      // The same rows as columns (the dim with elements after it).
      check_softmax(x.t().contiguous(), 0, "specials as columns");

      // 0-dim: one element, softmax 1, log_softmax 0, dims 0 and -1.
      const tl::Tensor s = tl::full({}, 3.5, tl::TensorOptions(d).device(dev));
      for (int64_t dim : {0, -1}) {
        CHECK(tl::softmax(s, dim).dim() == 0);
        CHECK(tl::softmax(s, dim).item<double>() == 1.0);
        CHECK(tl::log_softmax(s, dim).item<double>() == 0.0);
      }
      // Zero-size: an empty result of the same shape and dtype.
      for (const tl::Shape& shape : {tl::Shape{0, 5}, tl::Shape{3, 0}, tl::Shape{0}}) {
        const tl::Tensor e = tl::zeros(shape, tl::TensorOptions(d).device(dev));
        for (int64_t dim : {0, -1}) {
          const tl::Tensor y = tl::log_softmax(e, dim);
          CHECK(y.shape() == shape);
          CHECK(y.dtype() == d);
        }
      }
    }
  }
}

TEST_CASE("softmax: the dtype argument converts first; integer inputs need it") {
  for (const tl::Device& dev : test_devices()) {
    const tl::Tensor i = random_tensor({4, 9}, tl::kInt64, dev);
    check_throws<tl::DTypeError>([&] { tl::softmax(i, 1); }, "[tl::softmax]");
    check_throws<tl::DTypeError>([&] { tl::log_softmax(i, 0); }, "[tl::log_softmax]");
    check_throws<tl::DTypeError>([&] { tl::softmax(random_tensor({3}, tl::kBool, dev), 0); },
                                 "[tl::softmax]");
    check_throws<tl::DTypeError>(
        [&] { tl::softmax(spread({3}, tl::kFloat32).to(dev), 0, tl::kInt32); }, "[tl::softmax]");
    const tl::Tensor y = tl::softmax(i, 1, tl::kFloat32);
    CHECK(y.dtype() == tl::kFloat32);
    check_values(y, softmax_ref(values_of(i), i.shape(), 1, false), 2e-5, 2e-6);
    // float32 input computed in float64 when asked.
    const tl::Tensor f = spread({3, 50}, tl::kFloat32).to(dev);
    const tl::Tensor z = tl::log_softmax(f, -1, tl::kFloat64);
    CHECK(z.dtype() == tl::kFloat64);
    check_values(z, softmax_ref(values_of(f), f.shape(), 1, true), 1e-12, 1e-13);
    // Half input to float32 output.
    const tl::Tensor h = spread({3, 50}, tl::kFloat16).to(dev);
    const tl::Tensor hf = h.softmax(1, tl::kFloat32);
    CHECK(hf.dtype() == tl::kFloat32);
    check_values(hf, softmax_ref(values_of(h), h.shape(), 1, false), 2e-5, 2e-6);
    // Method forms.
    CHECK(tl::equal(f.softmax(0), tl::softmax(f, 0)));
    CHECK(tl::equal(f.log_softmax(1), tl::log_softmax(f, 1)));
  }
}

TEST_CASE("logsumexp: dims, keepdim, infinite slices, empty slices, integer inputs") {
  const std::vector<std::pair<tl::Shape, std::vector<std::vector<int64_t>>>> cases{
      {{3, 4, 5}, {{}, {1}, {-1}, {0, 2}, {0, 1, 2}}},
      {{7, 33}, {{0}, {1}}},
      {{}, {{}, {0}}},
  };
  for (const tl::Device& dev : test_devices()) {
    for (tl::DType d : kFloatDTypes) {
      const Tols t = tols_for(d);
      for (const auto& [shape, dim_sets] : cases) {
        for (const Layout& l : layouts_of(spread(shape, d))) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          for (const std::vector<int64_t>& dims : dim_sets) {
            for (bool keepdim : {false, true}) {
              INFO(dev.str() << " " << tl::dtype_name(d) << " " << shape.str() << " " << l.name
                             << " dims " << tl::Shape(dims).str() << " keepdim " << keepdim);
              const tl::Tensor y = tl::logsumexp(x, dims, keepdim);
              CHECK(y.dtype() == d);
              CHECK(y.shape() == reduced_shape(shape, mask_of(dims, shape.size()), keepdim));
              check_values(y, logsumexp_ref(values_of(x), shape, dims), t.rtol, t.atol);
            }
          }
        }
      }
      // Slices of -inf give -inf, a +inf gives +inf, a NaN gives NaN, a large value is exact.
      const std::vector<double> v{-kInf, -kInf, 1.0, kInf, 2.0, kNaN, 1000.0, 999.0};
      const tl::Tensor s = tl::from_vector(v, {4, 2}).to(d).to(dev);
      const std::vector<double> got = values_of(tl::logsumexp(s, 1));
      CHECK(got[0] == -kInf);
      CHECK(got[1] == kInf);
      CHECK(std::isnan(got[2]));
      check_values(s.logsumexp(1), logsumexp_ref(values_of(s), {4, 2}, {1}), t.rtol, t.atol);
      // Empty slices: -inf; an empty kept dim: an empty result.
      const tl::Tensor e = tl::zeros({3, 0}, tl::TensorOptions(d).device(dev));
      check_values(tl::logsumexp(e, 1), {-kInf, -kInf, -kInf});
      CHECK(tl::logsumexp(e, 0).shape() == tl::Shape{0});
    }
    // Integer and bool inputs give float32.
    const tl::Tensor i = random_tensor({5, 6}, tl::kInt32, dev);
    const tl::Tensor y = tl::logsumexp(i, 1);
    CHECK(y.dtype() == tl::kFloat32);
    check_values(y, logsumexp_ref(values_of(i), {5, 6}, {1}), 2e-6, 2e-6);
    CHECK(tl::logsumexp(random_tensor({4}, tl::kBool, dev), 0).dtype() == tl::kFloat32);
  }
}

TEST_CASE("var, std, var_mean, std_mean: dims, corrections, keepdim, layouts, dtypes") {
  const std::vector<std::pair<tl::Shape, std::vector<std::vector<int64_t>>>> cases{
      {{3, 4, 5}, {{}, {0}, {1}, {-1}, {0, 2}}},
      {{1025}, {{}, {0}}},
      {{}, {{}, {0}}},
  };
  for (const tl::Device& dev : test_devices()) {
    for (tl::DType d : kFloatDTypes) {
      const Tols t = tols_for(d);
      for (const auto& [shape, dim_sets] : cases) {
        for (const Layout& l : layouts_of(spread(shape, d))) {
          const tl::Tensor x = same_layout_on(l.tensor, dev);
          for (const std::vector<int64_t>& dims : dim_sets) {
            for (double correction : {0.0, 1.0, 2.0}) {
              for (bool keepdim : {false, true}) {
                INFO(dev.str() << " " << tl::dtype_name(d) << " " << shape.str() << " " << l.name
                               << " dims " << tl::Shape(dims).str() << " correction " << correction
                               << " keepdim " << keepdim);
                std::vector<double> var, mean;
                moments_ref(values_of(x), shape, dims, correction, var, mean);
                std::vector<double> sd(var.size());
                for (size_t k = 0; k < var.size(); ++k) sd[k] = std::sqrt(var[k]);
                const tl::Shape out = reduced_shape(shape, mask_of(dims, shape.size()), keepdim);
                const tl::Tensor v = tl::var(x, dims, correction, keepdim);
                CHECK(v.dtype() == d);
                CHECK(v.shape() == out);
                check_values(v, var, t.rtol, t.atol);
                check_values(x.std(dims, correction, keepdim), sd, t.rtol, t.atol);
                auto [v2, m2] = tl::var_mean(x, dims, correction, keepdim);
                CHECK(m2.shape() == out);
                check_values(v2, var, t.rtol, t.atol);
                check_values(m2, mean, t.rtol, t.atol);
                auto [s3, m3] = tl::std_mean(x, dims, correction, keepdim);
                check_values(s3, sd, t.rtol, t.atol);
                check_values(m3, mean, t.rtol, t.atol);
              }
            }
          }
        }
      }
    }
    // One element with correction 1: 0 / 0 = NaN; N - correction < 0 clamps to 0: inf.
    const tl::Tensor one = spread({1}, tl::kFloat32).to(dev);
    CHECK(std::isnan(tl::var(one).item<float>()));
    CHECK(std::isnan(tl::std(one, 0).item<float>()));
    CHECK(tl::var(one, {}, 0).item<float>() == 0.0f);
    const tl::Tensor two = tl::from_vector<float>({1.0f, 3.0f}, {2}).to(dev);
    CHECK(tl::var(two, {}, 3).item<float>() == std::numeric_limits<float>::infinity());
    CHECK(tl::var(two).item<float>() == 2.0f);
    CHECK(two.var({}, 0).item<float>() == 1.0f);
    // Two passes: a large mean does not cancel the variance (a one-pass E[x^2] - E[x]^2 in float
    // would lose every digit here).
    const tl::Tensor small = random_tensor({4096}, tl::kFloat64, dev) * 1e-2;
    const tl::Tensor shifted = (small + 1e4).to(tl::kFloat32);
    std::vector<double> var, mean;
    moments_ref(values_of(shifted), {4096}, {}, 1, var, mean);
    check_values(tl::var(shifted), var, 1e-6, 0);
    // Empty reductions give NaN (0 / 0), as torch.
    CHECK(std::isnan(
        tl::var(tl::zeros({0}, tl::TensorOptions(tl::kFloat32).device(dev))).item<float>()));
    // Integer input is refused, naming the function called.
    const tl::Tensor i = random_tensor({3}, tl::kInt64, dev);
    check_throws<tl::DTypeError>([&] { tl::var(i); }, "[tl::var]");
    check_throws<tl::DTypeError>([&] { i.std(); }, "[tl::std]");
    check_throws<tl::DTypeError>([&] { tl::var_mean(i); }, "[tl::var_mean]");
    check_throws<tl::DTypeError>([&] { tl::std_mean(i); }, "[tl::std_mean]");
  }
}

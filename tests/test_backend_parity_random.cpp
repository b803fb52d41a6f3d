// Backend parity of the random ops: for one seed every device draws the CPU's numbers — the same
// bits for uniform_, exponential_, random_, randperm, bernoulli and multinomial without
// replacement; normals (Box-Muller through each side's log/sin/cos) to a relative 1e-6 as randn;
// multinomial with replacement the same samples except where the GPU's cumsum rounds a category
// boundary otherwise (checked: at most 1 in 10^4, to a neighbouring category, same distribution).
// In-place fills run on poisoned views (contiguous, offset, sliced, transposed), so elements
// outside the view must keep their sentinel on every device.
#include <cmath>
#include <string>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

const std::vector<Shape> kShapes{{}, {0}, {1}, {7}, {33, 65}, {3, 5, 7}};
// Normals: the devices' Box-Muller values differ in the last bits of the double (each side's
// log/sin/cos); rounded to the dtype, then scaled and shifted in it (the tensor forms), that is
// at most an ulp or two of the dtype at the result's magnitude (|mean| + |std z| < 16 here).
Tol normal_tol(DType d) {
  if (is_half(d)) return {1e-2, 3e-2};
  return d == tl::kFloat32 ? Tol{1e-5, 1e-5} : Tol{1e-9, 1e-12};
}

using FillFn = std::function<void(Tensor&, const tl::Generator&)>;

// Runs a fill on a poisoned view of every layout on the CPU and on dev, from one seed, and
// compares the whole storage.
void check_fill(tl::Device dev, const std::string& op, DType d, const FillFn& fill, Tol tol) {
  for (const Shape& s : kShapes) {
    for (const std::string& layout : kViewLayouts) {
      const Tensor cpu_view = poisoned_view(s, d, layout);
      check_made(
          dev, describe(op, d, s, layout),
          [&](tl::Device x) {
            Tensor v = same_layout_on(cpu_view, x);
            fill(v, tl::Generator(1234, x));
            return whole_storage(v);
          },
          tol);
    }
  }
}

}  // namespace

TL_PARITY_CASE("backend parity: uniform_, normal_ and exponential_ on every floating dtype") {
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    check_fill(
        dev, "uniform_", d, [](Tensor& t, const tl::Generator& g) { t.uniform_(0, 1, g); }, kExact);
    check_fill(
        dev, "uniform_(-3, 5)", d, [](Tensor& t, const tl::Generator& g) { t.uniform_(-3, 5, g); },
        kExact);
    check_fill(
        dev, "exponential_(1.5)", d,
        [](Tensor& t, const tl::Generator& g) { t.exponential_(1.5, g); }, kExact);
    check_fill(
        dev, "normal_(2, 3)", d, [](Tensor& t, const tl::Generator& g) { t.normal_(2, 3, g); },
        normal_tol(d));
  }
}

TL_PARITY_CASE("backend parity: random_ and bernoulli_ on every dtype") {
  for (DType d : all_dtypes()) {
    check_fill(
        dev, "random_(0, 2)", d, [](Tensor& t, const tl::Generator& g) { t.random_(0, 2, g); },
        kExact);
    check_fill(
        dev, "random_()", d, [](Tensor& t, const tl::Generator& g) { t.random_(g); }, kExact);
    check_fill(
        dev, "bernoulli_(0.3)", d, [](Tensor& t, const tl::Generator& g) { t.bernoulli_(0.3, g); },
        kExact);
  }
}

TL_PARITY_CASE("backend parity: randperm, normal and bernoulli factories") {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{33}, int64_t{4096}, int64_t{4097},
                    int64_t{100000}}) {
    for (DType d : {tl::kInt64, tl::kInt32, tl::kFloat32, tl::kFloat64}) {
      check_made(dev, "randperm " + std::to_string(n) + " " + tl::dtype_name(d), [&](tl::Device x) {
        return tl::randperm(n, tl::TensorOptions(d).device(x), tl::Generator(5, x));
      });
    }
  }
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    for (const Shape& s : kShapes) {
      check_made(
          dev, "normal(1, 2) " + s.str() + " " + tl::dtype_name(d),
          [&](tl::Device x) {
            return tl::normal(1, 2, s, tl::TensorOptions(d).device(x), tl::Generator(6, x));
          },
          normal_tol(d));
      // Tensor forms: broadcast and expanded means/stds, transposed inputs.
      const Tensor mean = make_values(s, d);
      const Tensor stdt = make_values(s, d).abs();
      // (check_made, not check_op: a half result rounds after each of torch's steps, so it
      // cannot match one float32 computation rounded once.)
      check_made(
          dev, "normal(mean, std) " + s.str() + " " + tl::dtype_name(d),
          [&](tl::Device x) {
            return tl::normal(same_layout_on(mean, x), same_layout_on(stdt, x),
                              tl::Generator(7, x));
          },
          normal_tol(d));
      check_op(dev, "bernoulli(p) " + s.str() + " " + tl::dtype_name(d), {(mean.abs() / 2.0).to(d)},
               [](std::vector<Tensor>& in) {
                 return tl::bernoulli(in[0], tl::Generator(8, in[0].device()));
               });
    }
    for (const Variant& v : variants({6, 9}, d)) {
      check_made(
          dev, "normal(mean, 0.5) " + v.name + " " + tl::dtype_name(d),
          [&](tl::Device x) {
            return tl::normal(same_layout_on(v.t, x), 0.5, tl::Generator(9, x));
          },
          normal_tol(d));
      check_op(dev, "bernoulli(p) " + v.name + " " + tl::dtype_name(d), {(v.t.abs() / 2.0).to(d)},
               [](std::vector<Tensor>& in) {
                 return tl::bernoulli(in[0], tl::Generator(10, in[0].device()));
               });
    }
  }
  // Large: every Philox block of a multi-block launch.
  check_made(dev, "randperm large",
             [](tl::Device x) { return tl::randperm(kBig, x, tl::Generator(11, x)); });
  check_made(dev, "exponential_ large", [](tl::Device x) {
    return tl::empty({kBig}, tl::TensorOptions(tl::kFloat64).device(x))
        .exponential_(1, tl::Generator(12, x));
  });
}

TL_PARITY_CASE("backend parity: multinomial without replacement is the same samples") {
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    for (const Shape& s : {Shape{5}, Shape{3, 17}, Shape{4, 4096}, Shape{2, 5000}}) {
      // Weights in [0, 2) with about a third zero; enough non-zero ones for 3 samples a row.
      Tensor w = make_values(s, d, Fill::Sparse).abs();
      w = tl::where(tl::arange(s.back()) < 3, tl::ones({}, d), w);
      const int64_t k = std::min<int64_t>(3, s.back());
      check_op(dev, "multinomial " + s.str() + " " + tl::dtype_name(d), {w},
               [k](std::vector<Tensor>& in) {
                 return tl::multinomial(in[0], k, false, tl::Generator(13, in[0].device()));
               });
    }
  }
  // A transposed and a sliced probability matrix.
  const Tensor wt = (tl::rand({40, 6}) + 0.1).t();
  check_op(dev, "multinomial transposed", {wt}, [](std::vector<Tensor>& in) {
    return tl::multinomial(in[0], 20, false, tl::Generator(14, in[0].device()));
  });
  const Tensor ws = (tl::rand({6, 80}) + 0.1).slice(1, 0, 80, 2);
  check_op(dev, "multinomial sliced", {ws}, [](std::vector<Tensor>& in) {
    return tl::multinomial(in[0], 40, false, tl::Generator(15, in[0].device()));
  });
}

TL_PARITY_CASE("backend parity: multinomial with replacement, up to cdf rounding") {
  for (const Shape& s : {Shape{7}, Shape{3, 50}, Shape{2, 5000}}) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16}) {
      INFO("multinomial replacement " << s.str() << " " << tl::dtype_name(d) << " [device "
                                      << dev.str() << "]");
      const Tensor w = (make_values(s, d, Fill::Sparse).abs() + (tl::arange(s.back()) == 0)).to(d);
      const int64_t k = 20000;
      const Tensor cpu = tl::multinomial(w, k, true, tl::Generator(16));
      const Tensor got =
          tl::multinomial(same_layout_on(w, dev), k, true, tl::Generator(16, dev)).cpu();
      REQUIRE(got.shape() == cpu.shape());
      const std::vector<int64_t> a = cpu.to_vector<int64_t>(), b = got.to_vector<int64_t>();
      const std::vector<double> wv = values_of(w);
      const int64_t n = s.back(), rows = static_cast<int64_t>(a.size()) / k;
      int64_t differ = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i]) continue;
        ++differ;
        // A boundary case: neighbouring non-zero categories (only zero weights between them).
        const int64_t row = static_cast<int64_t>(i) / k;
        for (int64_t j = std::min(a[i], b[i]) + 1; j < std::max(a[i], b[i]); ++j)
          CHECK(wv[row * n + j] == 0);
      }
      CHECK(differ * 10000 <= static_cast<int64_t>(a.size()));
      // Same distribution: the per-category counts agree to the few differing samples.
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int64_t> ca(n, 0), cb(n, 0);
        for (int64_t i = 0; i < k; ++i) {
          ca[a[r * k + i]] += 1;
          cb[b[r * k + i]] += 1;
        }
        for (int64_t j = 0; j < n; ++j) REQUIRE(std::abs(ca[j] - cb[j]) <= differ);
      }
    }
  }
}

TL_PARITY_CASE("backend parity: one generator through a sequence of ops advances alike") {
  // Every op of the family in turn from one generator per device: the offsets each call
  // reserves must agree, or every later result would differ.
  const auto run = [](tl::Device x, uint64_t* offset) {
    tl::Generator g(2024, x);
    const auto f64 = tl::TensorOptions(tl::kFloat64).device(x);
    std::vector<Tensor> out;
    out.push_back(tl::rand({7}, x, g));
    out.push_back(tl::randperm(33, x, g));
    out.push_back(tl::empty({5}, f64).exponential_(1, g));
    out.push_back(tl::bernoulli(tl::full({9}, 0.5, f64), g));
    out.push_back(tl::multinomial(tl::ones({3, 6}, f64), 4, false, g));
    out.push_back(tl::multinomial(tl::ones({2, 6}, f64), 5, true, g));
    out.push_back(tl::empty({3, 3}, tl::TensorOptions(tl::kInt32).device(x)).random_(-4, 4, g));
    out.push_back(tl::randint(0, int64_t{1} << 40, {5}, x, g));
    out.push_back(tl::empty({11}, f64).uniform_(-1, 1, g));
    out.push_back(tl::empty({4}, x).bernoulli_(0.5, g));
    *offset = g.get_offset();
    return out;
  };
  uint64_t cpu_offset = 0, dev_offset = 0;
  const std::vector<Tensor> cpu = run(tl::Device::cpu(), &cpu_offset);
  const std::vector<Tensor> got = run(dev, &dev_offset);
  CHECK(cpu_offset == dev_offset);
  for (size_t i = 0; i < cpu.size(); ++i) {
    INFO("step " << i);
    check_same(cpu[i], got[i], kExact, dev);
  }
}

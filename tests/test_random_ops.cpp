// tl::Generator and the random ops of issue 14 (randperm, normal, uniform_, exponential_,
// random_, bernoulli, multinomial): state and seeding, values against naive references built from
// the Philox layout (backends/math/philox.h), and distributions with fixed seeds and wide margins.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <thread>

#include <tensorlet/backends/math/philox.h>

#include "test_util.h"

using namespace tl_test;

namespace {

// Pearson's chi-square of observed counts against expected ones.
double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double c = 0;
  for (size_t i = 0; i < observed.size(); ++i)
    c += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return c;
}
tl::TensorOptions opts(tl::DType d, tl::Device dev) { return tl::TensorOptions(d).device(dev); }

}  // namespace

TEST_CASE("random ops: a Generator is a shared, seedable, restorable stream") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    tl::Generator g(5, dev);
    CHECK(g.initial_seed() == 5);
    CHECK(g.get_offset() == 0);
    CHECK(g.device() == dev);
    const std::vector<double> a = values_of(tl::rand({100}, dev, g));
    CHECK(g.get_offset() == 25);  // 100 float32 values, 4 a block
    const std::vector<double> b = values_of(tl::rand({100}, dev, g));
    CHECK(a != b);
    // A second generator with the seed repeats the stream; manual_seed rewinds.
    tl::Generator h(5, dev);
    CHECK(values_of(tl::rand({100}, dev, h)) == a);
    g.manual_seed(5);
    CHECK(values_of(tl::rand({100}, dev, g)) == a);
    // Copies share the state, as torch.Generator objects.
    tl::Generator copy = g;
    CHECK(copy.is_same(g));
    (void)tl::rand({8}, dev, copy);
    CHECK(g.get_offset() == 27);
    // get_state / set_state and set_offset reproduce the numbers.
    const tl::GeneratorState saved = g.get_state();
    const std::vector<double> c = values_of(tl::randn({33}, opts(tl::kFloat64, dev), g));
    g.set_state(saved);
    CHECK(values_of(tl::randn({33}, opts(tl::kFloat64, dev), g)) == c);
    g.set_offset(25);
    CHECK(values_of(tl::rand({100}, dev, g)) == b);
    // An explicit generator leaves the default one alone, and the default one is manual_seed's.
    tl::manual_seed(5);
    const uint64_t before = tl::default_generator(dev).get_offset();
    (void)tl::rand({64}, dev, g);
    CHECK(tl::default_generator(dev).get_offset() == before);
    CHECK(values_of(tl::rand({100}, dev)) == a);
    tl::default_generator(dev).manual_seed(5);
    CHECK(values_of(tl::rand({100}, dev)) == a);
    CHECK(tl::default_generator(dev).is_same(tl::default_generator(dev)));
  }
  // seed(): a fresh seed, returned and used; tl::seed() seeds every default generator.
  tl::Generator g;
  CHECK(g.initial_seed() == tl::kDefaultSeed);
  const uint64_t s = g.seed();
  CHECK(g.initial_seed() == s);
  CHECK(g.get_offset() == 0);
  const uint64_t t = tl::seed();
  CHECK(tl::initial_seed() == t);
  tl::manual_seed(9);
  CHECK(tl::initial_seed() == 9);
}

TEST_CASE("random ops: draws from one generator on many threads never overlap") {
  tl::Generator g(3);
  constexpr int kThreads = 4, kDraws = 50;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kDraws; ++i) {
        const std::vector<double> v = values_of(tl::rand({8}, tl::kFloat64, g));
        got[t].insert(got[t].end(), v.begin(), v.end());
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(g.get_offset() == uint64_t{kThreads * kDraws * 4});  // 8 float64 values: 4 blocks
  // Together they are exactly the stream's first 1600 values, each once.
  std::vector<double> all;
  for (const auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::vector<double> stream =
      values_of(tl::rand({kThreads * kDraws * 8}, tl::kFloat64, tl::Generator(3)));
  std::sort(all.begin(), all.end());
  std::sort(stream.begin(), stream.end());
  CHECK(all == stream);
}

TEST_CASE("random ops: randperm is the stable order of the layout's 64-bit keys") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    for (int64_t n : {0, 1, 2, 5, 100, 5000}) {
      CAPTURE(n);
      const tl::Tensor p = tl::randperm(n, dev, tl::Generator(17, dev));
      CHECK(p.dtype() == tl::kInt64);
      CHECK(p.shape() == tl::Shape{n});
      // The naive reference: key i = INT64_MIN + word64 % (2^64 - 1), sorted stably.
      std::vector<int64_t> keys(n), expected(n);
      for (int64_t i = 0; i < n; ++i)
        keys[i] = static_cast<int64_t>(static_cast<uint64_t>(INT64_MIN) +
                                       tl::philox::word64(17, 0, i) % UINT64_MAX);
      std::iota(expected.begin(), expected.end(), 0);
      std::stable_sort(expected.begin(), expected.end(),
                       [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
      CHECK(p.to_vector<int64_t>() == expected);
    }
    CHECK(tl::randperm(256, opts(tl::kUInt8, dev)).dtype() == tl::kUInt8);
    std::vector<double> f = values_of(tl::randperm(300, opts(tl::kFloat32, dev)));
    std::sort(f.begin(), f.end());
    for (int i = 0; i < 300; ++i) REQUIRE(f[i] == i);
    CHECK(tl::randperm(2049, opts(tl::kFloat16, dev)).numel() == 2049);
    CHECK(tl::randperm(7, opts(tl::kBFloat16, dev)).dtype() == tl::kBFloat16);
  }
  // Every permutation of 3 equally often: chi-square with 5 degrees of freedom (p ~ 1e-6 at 35).
  tl::Generator g(1);
  std::vector<double> counts(6, 0);
  for (int i = 0; i < 3000; ++i) {
    const std::vector<int64_t> p = tl::randperm(3, {}, g).to_vector<int64_t>();
    counts[p[0] * 2 + (p[1] > p[2] ? 1 : 0)] += 1;
  }
  CHECK(chi_square(counts, std::vector<double>(6, 500)) < 35);
}

TEST_CASE("random ops: normal with numbers and tensors") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    // normal(0, 1) is randn; normal(m, s) is m + s z on the same standard normals, in double.
    const tl::Shape s{1001};
    CHECK(tl::equal(tl::normal(0, 1, s, dev, tl::Generator(4, dev)),
                    tl::randn(s, dev, tl::Generator(4, dev))));
    const std::vector<double> z =
        values_of(tl::randn(s, opts(tl::kFloat64, dev), tl::Generator(4, dev)));
    const std::vector<double> x =
        values_of(tl::normal(-3, 2.5, s, opts(tl::kFloat64, dev), tl::Generator(4, dev)));
    for (size_t i = 0; i < z.size(); ++i) REQUIRE(x[i] == -3 + 2.5 * z[i]);
    // Moments with wide margins.
    const std::vector<double> big =
        values_of(tl::normal(2, 3, {100000}, opts(tl::kFloat64, dev), tl::Generator(8, dev)));
    CHECK(std::abs(mean_of(big) - 2) < 0.05);
    CHECK(std::abs(std::sqrt(var_of(big)) - 3) < 0.05);
    // std = 0 gives the mean.
    CHECK((tl::normal(1.5, 0, {7}, dev) == 1.5).all().item<bool>());

    // Tensor forms: mean's dtype and device, broadcast shapes, torch's composition.
    const tl::Tensor mean = random_tensor({3, 1}, tl::kFloat64, dev);
    const tl::Tensor stdt = random_tensor({1, 4}, tl::kFloat64, dev).abs();
    const tl::Tensor r = tl::normal(mean, stdt, tl::Generator(6, dev));
    CHECK(r.shape() == tl::Shape{3, 4});
    CHECK(r.dtype() == tl::kFloat64);
    const tl::Tensor zz = tl::randn({3, 4}, opts(tl::kFloat64, dev), tl::Generator(6, dev));
    CHECK(tl::equal(r, zz * stdt + mean));
    CHECK(tl::equal(
        tl::normal(mean, 2.0, tl::Generator(6, dev)),
        tl::normal(0, 2.0, {3, 1}, opts(tl::kFloat64, dev), tl::Generator(6, dev)) + mean));
    CHECK(
        tl::equal(tl::normal(1.0, stdt, tl::Generator(6, dev)),
                  tl::randn({1, 4}, opts(tl::kFloat64, dev), tl::Generator(6, dev)) * stdt + 1.0));
    CHECK(tl::normal(random_tensor({5}, tl::kFloat16, dev), 1.0).dtype() == tl::kFloat16);
    // Per-element means and stds: 20000 draws of N(4, 0.5^2) through the tensor form.
    const std::vector<double> t = values_of(tl::normal(
        tl::full({20000}, 4.0, dev), tl::full({20000}, 0.5, dev), tl::Generator(2, dev)));
    CHECK(std::abs(mean_of(t) - 4) < 0.02);
    CHECK(std::abs(std::sqrt(var_of(t)) - 0.5) < 0.02);
  }
}

TEST_CASE("random ops: uniform_, normal_, exponential_ and random_ fill in place") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    // uniform_(): rand's numbers; uniform_(a, b): a + u (b - a) in double.
    tl::Tensor x = tl::empty({999}, dev);
    x.uniform_(0, 1, tl::Generator(3, dev));
    CHECK(tl::equal(x, tl::rand({999}, dev, tl::Generator(3, dev))));
    tl::Tensor y = tl::empty({999}, opts(tl::kFloat64, dev));
    y.uniform_(-2, 3, tl::Generator(3, dev));
    const std::vector<double> u =
        values_of(tl::rand({999}, opts(tl::kFloat64, dev), tl::Generator(3, dev)));
    const std::vector<double> yv = values_of(y);
    for (size_t i = 0; i < u.size(); ++i) REQUIRE(yv[i] == -2 + u[i] * 5);
    const std::vector<double> big =
        values_of(tl::empty({100000}, dev).uniform_(-2, 3, tl::Generator(5, dev)));
    for (double v : big) REQUIRE((v >= -2 && v < 3));
    CHECK(std::abs(mean_of(big) - 0.5) < 0.03);
    CHECK(std::abs(var_of(big) - 25.0 / 12) < 0.05);

    // normal_ on a view writes the view only.
    tl::Tensor base = tl::full({4, 6}, 7.0, dev);
    tl::Tensor view = base.slice(1, 1, 6, 2);
    view.normal_(10, 2);
    const std::vector<double> b = values_of(base);
    for (int64_t i = 0; i < 24; ++i)
      CHECK((b[i] == 7.0) == (i % 6 % 2 == 0));  // columns 1, 3, 5 drawn
    const std::vector<double> nv =
        values_of(tl::empty({50000}, dev).normal_(10, 2, tl::Generator(9, dev)));
    CHECK(std::abs(mean_of(nv) - 10) < 0.05);
    CHECK(std::abs(std::sqrt(var_of(nv)) - 2) < 0.05);

    // exponential_: -log(1 - u) / lambda, close to libm's log; mean 1/lambda, variance 1/lambda^2.
    tl::Tensor e = tl::empty({2001}, opts(tl::kFloat64, dev));
    e.exponential_(2.0, tl::Generator(12, dev));
    const std::vector<double> eu =
        values_of(tl::rand({2001}, opts(tl::kFloat64, dev), tl::Generator(12, dev)));
    const std::vector<double> ev = values_of(e);
    for (size_t i = 0; i < eu.size(); ++i) {
      const double ref = -std::log1p(-eu[i]) / 2.0;
      REQUIRE(std::abs(ev[i] - ref) <= 2e-15 * ref);
    }
    const std::vector<double> ebig =
        values_of(tl::empty({100000}, dev).exponential_(0.5, tl::Generator(13, dev)));
    for (double v : ebig) REQUIRE((v >= 0 && std::isfinite(v)));
    CHECK(std::abs(mean_of(ebig) - 2) < 0.05);
    CHECK(std::abs(var_of(ebig) - 4) < 0.2);

    // random_: [from, to) in any dtype, every value reached.
    const std::vector<double> r =
        values_of(tl::empty({3000}, opts(tl::kInt32, dev)).random_(3, 10, tl::Generator(1, dev)));
    std::set<double> seen(r.begin(), r.end());
    CHECK(seen == std::set<double>{3, 4, 5, 6, 7, 8, 9});
    const std::vector<double> r5 = values_of(tl::empty({3000}, dev).random_(5));
    CHECK(std::set<double>(r5.begin(), r5.end()) == std::set<double>{0, 1, 2, 3, 4});
    const std::vector<double> ru8 = values_of(tl::empty({20000}, opts(tl::kUInt8, dev)).random_());
    CHECK(std::set<double>(ru8.begin(), ru8.end()).size() == 256);
    const std::vector<double> rb = values_of(tl::empty({100}, opts(tl::kBool, dev)).random_());
    CHECK(std::set<double>(rb.begin(), rb.end()).size() == 2);
    for (double v : values_of(tl::empty({1000}, opts(tl::kFloat16, dev)).random_()))
      REQUIRE((v >= 0 && v <= 2048 && v == std::floor(v)));
    for (double v : values_of(tl::empty({1000}, opts(tl::kInt64, dev)).random_())) REQUIRE(v >= 0);
  }
}

TEST_CASE("random ops: bernoulli is u < p on float64 uniforms") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    const tl::Tensor p = tl::rand({4, 250}, opts(tl::kFloat64, dev));
    const tl::Tensor b = tl::bernoulli(p, tl::Generator(21, dev));
    CHECK(b.dtype() == tl::kFloat64);
    const tl::Tensor u = tl::rand({4, 250}, opts(tl::kFloat64, dev), tl::Generator(21, dev));
    CHECK(tl::equal(b, (u < p).to(tl::kFloat64)));
    // p = 0 never, p = 1 always; a p of 0.3 about 30% of the time.
    const tl::Tensor edge = tl::from_vector<float>({0, 1, 0, 1, 1}).to(dev);
    CHECK(tl::equal(tl::bernoulli(edge), edge));
    const std::vector<double> f = values_of(tl::bernoulli(tl::full({100000}, 0.3, dev)));
    CHECK(std::abs(mean_of(f) - 0.3) < 0.01);
    // bernoulli(self, p): self's dtype and shape; the methods.
    const tl::Tensor i = tl::bernoulli(tl::zeros({3, 3}, opts(tl::kInt32, dev)), 0.5);
    CHECK(i.dtype() == tl::kInt32);
    CHECK(i.shape() == tl::Shape{3, 3});
    CHECK(tl::bernoulli(tl::full({9}, 0.5, opts(tl::kFloat16, dev))).dtype() == tl::kFloat16);
    tl::Tensor m = tl::zeros({2, 500}, opts(tl::kBool, dev));
    m.bernoulli_(0.25, tl::Generator(4, dev));
    const tl::Tensor u2 = tl::rand({2, 500}, opts(tl::kFloat64, dev), tl::Generator(4, dev));
    CHECK(tl::equal(m, u2 < 0.25));
    // bernoulli_(p tensor) broadcasts p over the tensor.
    tl::Tensor q = tl::zeros({3, 2000}, dev);
    q.bernoulli_(tl::from_vector<float>({0.0f, 1.0f, 0.5f}).to(dev).view({3, 1}));
    const tl::Tensor rows = q.mean(1);
    CHECK(rows[0].item<float>() == 0);
    CHECK(rows[1].item<float>() == 1);
    CHECK(std::abs(rows[2].item<float>() - 0.5) < 0.05);
    CHECK(q.bernoulli(0.5).shape() == q.shape());
  }
}

TEST_CASE("random ops: multinomial without replacement is the exponential race") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    const tl::Tensor w =
        tl::from_vector<float>({0.5f, 0, 2, 1, 0, 3, 0.25f, 1.5f}).to(dev).view({2, 4});
    const tl::Tensor s = tl::multinomial(w, 2, false, tl::Generator(30, dev));
    CHECK(s.dtype() == tl::kInt64);
    CHECK(s.shape() == tl::Shape{2, 2});
    // The reference: keys E / w, E the float64 exponential stream, the 2 smallest in order.
    tl::Tensor e = tl::empty({2, 4}, opts(tl::kFloat64, dev));
    e.exponential_(1.0, tl::Generator(30, dev));
    const std::vector<double> ev = values_of(e), wv = values_of(w);
    std::vector<int64_t> expected;
    for (int r = 0; r < 2; ++r) {
      std::vector<int64_t> idx{0, 1, 2, 3};
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        const double ka = ev[r * 4 + a] / wv[r * 4 + a], kb = ev[r * 4 + b] / wv[r * 4 + b];
        return ka < kb || (!std::isnan(ka) && std::isnan(kb));
      });
      expected.insert(expected.end(), idx.begin(), idx.begin() + 2);
    }
    CHECK(s.to_vector<int64_t>() == expected);
    // All non-zero categories, each once; never a zero-weight one.
    for (int seed = 0; seed < 20; ++seed) {
      std::vector<int64_t> all =
          tl::multinomial(w[0], 3, false, tl::Generator(seed, dev)).to_vector<int64_t>();
      std::sort(all.begin(), all.end());
      REQUIRE(all == std::vector<int64_t>{0, 2, 3});
    }
    // First draws in proportion to the weights (1:2:3:4): chi-square, 3 degrees of freedom.
    const tl::Tensor ww = tl::from_vector<double>({1, 2, 3, 4}).to(dev).expand({20000, 4});
    const std::vector<int64_t> first =
        tl::multinomial(ww, 2, false, tl::Generator(31, dev)).select(1, 0).to_vector<int64_t>();
    std::vector<double> counts(4, 0);
    for (int64_t c : first) counts[c] += 1;
    CHECK(chi_square(counts, {2000, 4000, 6000, 8000}) < 30);
    CHECK(tl::multinomial(tl::ones({5}, dev), 5).shape() == tl::Shape{5});
  }
}

TEST_CASE("random ops: multinomial with replacement is inverse CDF") {
  for (tl::Device dev : test_devices()) {
    CAPTURE(dev);
    const std::vector<double> wv{0, 1, 0, 2, 3, 4, 0};
    const tl::Tensor w = tl::from_vector<double>(wv).to(tl::kFloat32).to(dev);
    const int64_t k = 100000;
    const std::vector<int64_t> s =
        tl::multinomial(w, k, true, tl::Generator(40, dev)).to_vector<int64_t>();
    REQUIRE(static_cast<int64_t>(s.size()) == k);
    // The naive reference: a sequential float64 cdf and the first entry above u * total.
    const std::vector<double> u =
        values_of(tl::rand({k}, opts(tl::kFloat64, dev), tl::Generator(40, dev)));
    std::vector<double> cdf(wv.size());
    std::partial_sum(wv.begin(), wv.end(), cdf.begin());
    std::vector<double> counts(wv.size(), 0);
    int64_t mismatched = 0;
    for (int64_t i = 0; i < k; ++i) {
      const double x = u[i] * cdf.back();
      const int64_t j = std::upper_bound(cdf.begin(), cdf.end(), x) - cdf.begin();
      mismatched += s[i] != j;
      counts[s[i]] += 1;
    }
    CHECK(mismatched == 0);
    CHECK(counts[0] == 0);
    CHECK(counts[2] == 0);
    CHECK(counts[6] == 0);
    CHECK(chi_square({counts[1], counts[3], counts[4], counts[5]}, {10000, 20000, 30000, 40000}) <
          30);
    // 2-D: a row each, more samples than categories.
    const tl::Tensor two =
        tl::multinomial(tl::from_vector<float>({1, 0, 0, 1}).to(dev).view({2, 2}), 6, true);
    CHECK(two.shape() == tl::Shape{2, 6});
    CHECK(tl::equal(
        two, tl::from_vector<int64_t>({0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}).view({2, 6}).to(dev)));
    CHECK(tl::multinomial(tl::ones({0, 3}, dev), 2).shape() == tl::Shape{0, 2});
  }
}

TEST_CASE("random ops: neg_log is -log to a few ulp, +0 at 1") {
  tl::Generator g(77);
  std::vector<double> xs = values_of(tl::rand({20000}, tl::kFloat64, g));
  xs.insert(xs.end(), {1.0, 0.5, 0x1p-53, 1 - 0x1p-53, 0.70710678118654752, 1e-300});
  double worst = 0;
  for (double u : xs) {
    const double x = u == 0 ? 1 : u;
    const double got = tl::philox::neg_log(x), ref = -std::log(x);
    if (ref != 0) worst = std::max(worst, std::abs(got - ref) / std::abs(ref));
  }
  CHECK(worst < 1e-15);  // about 4 ulp (the worst seen: 2.2 ulp, near x = 0.705)
  CHECK(std::signbit(tl::philox::neg_log(1.0)) == false);
}

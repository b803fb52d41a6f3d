// einsum, addmm, baddbmm and outer against naive references written independently here (an
// einsum loop over every label assignment, addmm's triple loop), on every device.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

namespace tl = tensorlet;
using tl::DType;
using tl::Shape;
using tl::Tensor;
using tl_test::chain_bound;
using tl_test::check_values;
using tl_test::random_tensor;
using tl_test::values_of;

// ---- einsum reference ----

// The equation read the simple way: spaces dropped, "..." turned into one character per dim it
// covers ('0' + j, right-aligned over the widest ellipsis), the implicit output built by
// numpy's rule. Every label of the equation is then enumerated and the products summed.
struct Naive {
  std::vector<std::string> inputs;  // one char per dim
  std::string output;
};

Naive naive_parse(std::string eq, const std::vector<Tensor>& ops) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> raw;
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    raw.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  REQUIRE(raw.size() == ops.size());
  int64_t widest = 0;
  for (size_t i = 0; i < raw.size(); ++i)
    if (raw[i].find("...") != std::string::npos)
      widest = std::max<int64_t>(widest, ops[i].dim() - (int64_t(raw[i].size()) - 3));
  auto expand = [&](const std::string& s, int64_t covered) {
    const size_t e = s.find("...");
    if (e == std::string::npos) return s;
    std::string dims;
    for (int64_t j = widest - covered; j < widest; ++j) dims += char('0' + j);
    return s.substr(0, e) + dims + s.substr(e + 3);
  };
  Naive n;
  for (size_t i = 0; i < raw.size(); ++i)
    n.inputs.push_back(expand(raw[i], ops[i].dim() - (int64_t(raw[i].size()) - 3)));
  if (arrow != std::string::npos) {
    n.output = expand(eq.substr(arrow + 2), widest);
  } else {
    std::string ell;
    for (int64_t j = 0; j < widest; ++j) ell += char('0' + j);
    std::map<char, int> count;
    for (const std::string& s : raw)
      for (char c : s)
        if (std::isalpha(static_cast<unsigned char>(c))) ++count[c];
    std::string once;
    for (auto [c, k] : count)  // std::map: ASCII order, uppercase first
      if (k == 1) once += c;
    n.output = ell + once;
  }
  return n;
}

struct Expected {
  Shape shape;
  std::vector<double> values;
  int64_t terms = 1;  // products summed into each output element
};

// With `absolute`, the einsum of the operands' absolute values: the magnitude a rounding-error
// bound scales with.
Expected naive_einsum(const std::string& eq, const std::vector<Tensor>& ops,
                      bool absolute = false) {
  const Naive n = naive_parse(eq, ops);
  std::map<char, int64_t> size;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t d = 0; d < n.inputs[i].size(); ++d) {
      int64_t& s = size.try_emplace(n.inputs[i][d], 1).first->second;
      if (ops[i].shape()[d] != 1) s = ops[i].shape()[d];
    }
  std::string labels = n.output;
  for (auto [c, s] : size)
    if (n.output.find(c) == std::string::npos) labels += c;
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : ops) {
    vals.push_back(values_of(t));
    if (absolute)
      for (double& v : vals.back()) v = std::abs(v);
  }
  Expected e;
  int64_t out_count = 1, total = 1;
  for (size_t p = 0; p < labels.size(); ++p) {
    const int64_t s = size.at(labels[p]);
    if (p < n.output.size()) {
      e.shape.push_back(s);
      out_count *= s;
    }
    total *= s;
  }
  e.values.assign(out_count, 0.0);
  e.terms = out_count == 0 ? 0 : total / out_count;
  std::vector<int64_t> idx(labels.size(), 0);
  std::map<char, size_t> pos;
  for (size_t p = 0; p < labels.size(); ++p) pos[labels[p]] = p;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear;
    for (int64_t p = int64_t(labels.size()) - 1; p >= 0; --p) {
      idx[p] = rest % size.at(labels[p]);
      rest /= size.at(labels[p]);
    }
    double prod = 1;
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t flat = 0;
      for (size_t d = 0; d < n.inputs[i].size(); ++d) {
        const int64_t extent = ops[i].shape()[d];
        flat = flat * extent + (extent == 1 ? 0 : idx[pos.at(n.inputs[i][d])]);
      }
      prod *= vals[i][flat];
    }
    int64_t out = 0;
    for (size_t p = 0; p < n.output.size(); ++p) out = out * e.shape[p] + idx[p];
    e.values[out] += prod;
  }
  return e;
}

struct EinsumCase {
  std::string equation;
  std::vector<Shape> shapes;
};

// Trace, diagonals, transposes, sums, outer products, matmul and bmm, ellipsis batches, bilinear
// and 4-operand chains, size-1 broadcasting, repeated labels, uppercase, spaces, zero sizes.
const std::vector<EinsumCase> kCases{
    {"ii", {{4, 4}}},
    {"ii->i", {{4, 4}}},
    {"ij->ji", {{3, 5}}},
    {"ij->", {{3, 5}}},
    {"ij->j", {{3, 5}}},
    {"ij", {{3, 5}}},
    {"ji", {{3, 5}}},
    {"i,j->ij", {{3}, {4}}},
    {"i,j", {{3}, {4}}},
    {"i,j->", {{3}, {4}}},
    {"i,i->", {{5}, {5}}},
    {"i,i->i", {{5}, {5}}},
    {"ij,jk->ik", {{3, 4}, {4, 5}}},
    {"ij,jk", {{3, 4}, {4, 5}}},
    {"ij,jk->ki", {{3, 4}, {4, 5}}},
    {"ij,kj->ik", {{3, 4}, {5, 4}}},
    {"ij,j->i", {{3, 4}, {4}}},
    {"ij,ij->ij", {{3, 4}, {3, 4}}},
    {"ij,ij->", {{3, 4}, {3, 4}}},
    {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
    {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}},
    {"...ij,...jk", {{2, 1, 3, 4}, {5, 4, 2}}},
    {"bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
    {"ij,jk,kl,lm->im", {{2, 3}, {3, 4}, {4, 5}, {5, 2}}},
    {"abc,cd,de,ef->abf", {{2, 3, 4}, {4, 5}, {5, 3}, {3, 2}}},
    {"a,b,c,d->abcd", {{2}, {3}, {2}, {3}}},
    {"ijk,ikl,ilm->ijm", {{2, 3, 4}, {2, 4, 3}, {2, 3, 5}}},
    {"i,i,i->i", {{4}, {4}, {4}}},
    {"iij->ij", {{3, 3, 4}}},
    {"iji->j", {{3, 4, 3}}},
    {"ii,jj->ij", {{3, 3}, {2, 2}}},
    {"...ii->...i", {{2, 3, 3}}},
    {"...->...", {{2, 3}}},
    {"...", {{2, 3}}},
    {"...i->...", {{2, 3, 4}}},
    {"i...->...", {{3, 2, 4}}},
    {"...ij->ij", {{2, 3, 4}}},
    {"i...,i...->...", {{3, 2}, {3, 2}}},
    {"ABc,cD->ABD", {{2, 3, 4}, {4, 5}}},
    {"ba,aB", {{3, 4}, {4, 2}}},
    {" i j , j k -> i k ", {{3, 4}, {4, 5}}},
    {"ij,jk->ik", {{3, 1}, {4, 5}}},
    {"ij,ij->i", {{1, 4}, {3, 4}}},
    {"ij,jk->ik", {{0, 3}, {3, 4}}},
    {"ij,jk->ik", {{3, 0}, {0, 4}}},
    {"ij,jk->ik", {{3, 4}, {4, 0}}},
    {"bij,bjk->bik", {{0, 3, 4}, {0, 4, 5}}},
    {"ii->", {{0, 0}}},
    {",->", {{}, {}}},
    {"", {{}}},
    {"ij,jk->", {{3, 4}, {4, 5}}},
    {"ijk,jil->kl", {{2, 3, 4}, {3, 2, 5}}},
};

// The rounded reductions of any pairwise contraction of these operands (one for a single
// operand's sum): one matmul per pair, plus one sum for each operand holding a label that no other
// operand or the output has (summed out before it meets another operand). Size-1 dims broadcast
// and do not count as holding their label.
int einsum_steps(const Naive& n, const std::vector<Tensor>& ops) {
  if (ops.size() == 1) {
    for (char l : n.inputs[0])
      if (n.output.find(l) == std::string::npos) return 1;
    return 0;  // a view
  }
  std::map<char, int> holders;  // how many operands hold each label
  std::vector<std::string> held(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t d = 0; d < n.inputs[i].size(); ++d) {
      const char l = n.inputs[i][d];
      if (ops[i].shape()[d] == 1 || held[i].find(l) != std::string::npos) continue;
      held[i] += l;
      ++holders[l];
    }
  }
  int steps = static_cast<int>(ops.size()) - 1;
  for (const std::string& h : held)
    for (char l : h)
      if (holders[l] == 1 && n.output.find(l) == std::string::npos) {
        ++steps;
        break;
      }
  return steps;
}

Tensor transposed_memory(const Tensor& t) {
  return t.dim() < 2 ? t : t.transpose(-1, -2).contiguous().transpose(-1, -2);
}

void check_einsum(tl::Device dev, DType dtype, const EinsumCase& c, bool transposed) {
  std::vector<Tensor> ops;
  for (const Shape& s : c.shapes) {
    Tensor t = random_tensor(s, dtype, dev);
    ops.push_back(transposed ? transposed_memory(t) : t);
  }
  CAPTURE(c.equation);
  CAPTURE(dev);
  CAPTURE(dtype);
  CAPTURE(transposed);
  const Expected e = naive_einsum(c.equation, ops);
  Tensor got = tl::einsum(c.equation, ops);
  CHECK(got.shape() == e.shape);
  CHECK(got.device() == dev);
  // One integer operand with a label missing from the output is summed: int64, as torch (which
  // calls sum there); otherwise the dtype stays.
  const Naive n = naive_parse(c.equation, ops);
  bool sums = false;
  for (char l : n.inputs[0]) sums |= n.output.find(l) == std::string::npos;
  const bool widens = ops.size() == 1 && sums && !tl::is_floating_point(dtype);
  CHECK(got.dtype() == (widens ? tl::kInt64 : dtype));
  if (!tl::is_floating_point(dtype)) {
    check_values(got, e.values, 0, 0);
    return;
  }
  // Each element within the rounding bound of the pairwise contraction: a bfloat16 intermediate
  // rounds where the exact value may cancel later, so the error scales with the einsum of the
  // absolute values, not with the result (a fixed rtol/atol failed on cuda:0 for
  // ij,jk,kl,lm->im: got 0.0522 for -0.0036, within this bound).
  const Expected mag = naive_einsum(c.equation, ops, true);
  const int steps = einsum_steps(n, ops), extra = tl_test::partial_roundings(dev, dtype);
  const double terms = static_cast<double>(e.terms);
  const double f = chain_bound(dtype, steps, terms, extra);
  // random_tensor's floats are below 2 in magnitude.
  const double floor = tl_test::chain_subnormal_floor(dtype, steps, 2 * terms, extra);
  std::vector<double> tol(mag.values.size());
  for (size_t i = 0; i < tol.size(); ++i) tol[i] = f * mag.values[i] + floor;
  tl_test::check_values_within(got, e.values, tol);
}

}  // namespace

TEST_CASE("einsum: a table of equations against a naive loop, every device and layout") {
  for (tl::Device dev : tl_test::test_devices())
    for (DType dtype :
         {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64, tl::kFloat16, tl::kBFloat16})
      for (const EinsumCase& c : kCases)
        for (bool transposed : {false, true}) check_einsum(dev, dtype, c, transposed);
}

TEST_CASE("einsum: result dtypes, views and a single operand's sums") {
  for (tl::Device dev : tl_test::test_devices()) {
    Tensor i32 = random_tensor({3, 3}, tl::kInt32, dev);
    CHECK(tl::einsum("ii", {i32}).dtype() == tl::kInt64);      // sum, as torch
    CHECK(tl::einsum("ij->ji", {i32}).dtype() == tl::kInt32);  // a view
    CHECK(tl::einsum("ii->i", {i32}).dtype() == tl::kInt32);
    CHECK(tl::einsum("ij,jk", {i32, i32}).dtype() == tl::kInt32);
    Tensor b = random_tensor({3, 4}, tl::kBool, dev);
    CHECK(tl::einsum("ij->ji", {b}).dtype() == tl::kBool);
    CHECK(tl::einsum("ij->i", {b}).dtype() == tl::kInt64);
    // A permutation is a view of the operand, as torch's.
    Tensor x = random_tensor({3, 4}, tl::kFloat32, dev);
    Tensor t = tl::einsum("ij->ji", {x});
    CHECK(t.storage() == x.storage());
    check_values(t, values_of(x.t()), 0, 0);
    // The diagonal of a 2-D operand is a view too.
    Tensor sq = random_tensor({4, 4}, tl::kFloat64, dev);
    check_values(tl::einsum("ii->i", {sq}), values_of(sq.diagonal()), 0, 0);
    // NaN in a summed label propagates.
    Tensor n = tl::ones({2, 3}, tl::TensorOptions(tl::kFloat32).device(dev));
    n.select(0, 1).select(0, 2).fill_(NAN);
    std::vector<double> got = values_of(tl::einsum("ij,jk->ik", {n, n.t()}));
    CHECK(!std::isnan(got[0]));
    CHECK(std::isnan(got[3]));
  }
}

// ---- addmm, baddbmm, outer ----

namespace {

// beta * input (broadcast) + alpha * a @ b over [*batch, n, m], in double; beta 0 ignores input.
// The magnitude is the same on absolute values (|beta| |input| + |alpha| |a| @ |b|), which a
// rounding-error bound scales with.
struct GemmRef {
  std::vector<double> values, magnitude;
  int64_t k = 0;  // products per element
};

GemmRef naive_addmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta,
                    double alpha) {
  const int64_t nd = a.dim();
  const int64_t batch = nd == 3 ? a.shape()[0] : 1;
  const int64_t n = a.shape()[nd - 2], k = a.shape()[nd - 1], m = b.shape()[nd - 1];
  Shape full = nd == 3 ? Shape{batch, n, m} : Shape{n, m};
  std::vector<double> in = values_of(input.expand(full).contiguous());
  std::vector<double> av = values_of(a), bv = values_of(b);
  GemmRef r;
  r.k = k;
  r.values.resize(batch * n * m);
  r.magnitude.resize(batch * n * m);
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0, sa = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = av[(q * n + i) * k + p], y = bv[(q * k + p) * m + j];
          s += x * y;
          sa += std::abs(x * y);
        }
        const int64_t o = (q * n + i) * m + j;
        r.values[o] = (beta == 0 ? 0 : beta * in[o]) + (alpha == 0 ? 0 : alpha * s);
        r.magnitude[o] =
            (beta == 0 ? 0 : std::abs(beta * in[o])) + (alpha == 0 ? 0 : std::abs(alpha) * sa);
      }
  return r;
}

void check_close(const Tensor& got, const GemmRef& expected, DType dtype) {
  if (!tl::is_floating_point(dtype)) {
    check_values(got, expected.values, 0, 0);
    return;
  }
  // One rounding to dtype of an accumulation of k products, beta * input, the alpha scaling and
  // their add (float for float16/bfloat16/float32, plus cuBLAS's half partial roundings on
  // CUDA): bounded by the magnitude where the result cancels, where a fixed tolerance fails on
  // some inputs (float32 with K = 90: 1.1e-5 off for -0.0084, past 1e-5 + 1e-5 |e|).
  std::vector<double> tol(expected.values.size());
  for (size_t i = 0; i < tol.size(); ++i)
    tol[i] = tl_test::rounded_sum_bound(dtype, expected.values[i], expected.magnitude[i],
                                        static_cast<double>(expected.k + 3),
                                        tl_test::partial_roundings(got.device(), dtype));
  tl_test::check_values_within(got, expected.values, tol);
}

}  // namespace

TEST_CASE("addmm: broadcast inputs, layouts, alpha and beta, dtypes, every device") {
  const std::vector<Shape> inputs{{3, 5}, {5}, {1, 5}, {3, 1}, {}};
  for (tl::Device dev : tl_test::test_devices())
    for (DType dtype : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64, tl::kFloat16})
      for (const Shape& is : inputs)
        for (auto [beta, alpha] : {std::pair{1.0, 1.0}, {0.5, 2.0}, {0.0, 1.5}, {2.0, -1.0}}) {
          const bool integral = !tl::is_floating_point(dtype);
          const tl::Scalar b = integral ? tl::Scalar(int64_t(beta * 2)) : tl::Scalar(beta);
          const tl::Scalar a = integral ? tl::Scalar(int64_t(alpha * 2)) : tl::Scalar(alpha);
          Tensor input = random_tensor(is, dtype, dev);
          Tensor m1 = random_tensor({3, 4}, dtype, dev), m2 = random_tensor({4, 5}, dtype, dev);
          const GemmRef expected = naive_addmm(input, m1, m2, b.to<double>(), a.to<double>());
          for (const auto& l1 : tl_test::layouts_of(m1))
            for (const auto& l2 : tl_test::layouts_of(m2)) {
              CAPTURE(dev);
              CAPTURE(dtype);
              CAPTURE(is);
              CAPTURE(beta);
              CAPTURE(l1.name);
              CAPTURE(l2.name);
              Tensor got = tl::addmm(input, l1.tensor, l2.tensor, b, a);
              CHECK(got.shape() == Shape{3, 5});
              CHECK(got.dtype() == dtype);
              check_close(got, expected, dtype);
              check_close(input.addmm(l1.tensor, l2.tensor, b, a), expected, dtype);
            }
        }
}

TEST_CASE("addmm: beta 0 ignores NaN input, alpha 0 the product, K = 0, large sizes") {
  for (tl::Device dev : tl_test::test_devices()) {
    const tl::TensorOptions f32 = tl::TensorOptions(tl::kFloat32).device(dev);
    Tensor nan_in = tl::full({3, 5}, NAN, f32);
    Tensor m1 = random_tensor({3, 4}, tl::kFloat32, dev),
           m2 = random_tensor({4, 5}, tl::kFloat32, dev);
    check_values(tl::addmm(nan_in, m1, m2, 0), naive_addmm(nan_in, m1, m2, 0, 1).values);
    // Infinities too: beta 0 multiplies nothing.
    check_values(tl::addmm(tl::full({5}, INFINITY, f32), m1, m2, 0, 2),
                 naive_addmm(nan_in, m1, m2, 0, 2).values);
    // alpha 0: NaN in the matrices does not reach the result (BLAS skips the product).
    Tensor input = random_tensor({3, 5}, tl::kFloat32, dev);
    Tensor nan_m = tl::full({3, 4}, NAN, f32);
    check_values(tl::addmm(input, nan_m, m2, 2, 0), values_of(input * 2));
    check_values(tl::addmm(input, nan_m, m2, 0, 0), std::vector<double>(15, 0.0));
    // K = 0: beta * input.
    Tensor e1 = tl::zeros({3, 0}, f32), e2 = tl::zeros({0, 5}, f32);
    check_values(tl::addmm(input, e1, e2, 3), values_of(input * 3));
    CHECK(tl::addmm(tl::zeros({0, 5}, f32), tl::zeros({0, 4}, f32), m2).shape() == Shape{0, 5});
    // Sizes past the small kernels (cuBLAS and Eigen paths), transposed operands.
    for (DType dtype : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kBFloat16}) {
      CAPTURE(dtype);
      Tensor x = random_tensor({70}, dtype, dev);
      Tensor a = random_tensor({90, 40}, dtype, dev).t(), b = random_tensor({90, 70}, dtype, dev);
      const bool integral = !tl::is_floating_point(dtype);
      const tl::Scalar beta = integral ? tl::Scalar(3) : tl::Scalar(0.25);
      const tl::Scalar alpha = integral ? tl::Scalar(-2) : tl::Scalar(1.5);
      check_close(tl::addmm(x, a, b, beta, alpha),
                  naive_addmm(x, a.contiguous(), b, beta.to<double>(), alpha.to<double>()), dtype);
    }
  }
}

TEST_CASE("addmm_ and addmm_out: in place, poisoned out, aliasing operands") {
  for (tl::Device dev : tl_test::test_devices())
    for (DType dtype : {tl::kFloat32, tl::kInt64}) {
      CAPTURE(dev);
      CAPTURE(dtype);
      Tensor m1 = random_tensor({4, 6}, dtype, dev), m2 = random_tensor({6, 4}, dtype, dev);
      Tensor self = random_tensor({4, 4}, dtype, dev);
      const GemmRef expected = naive_addmm(self, m1, m2, 2, 3);
      Tensor inplace = self.clone();
      Tensor& r = inplace.addmm_(m1, m2, 2, 3);
      CHECK(&r == &inplace);
      check_close(inplace, expected, dtype);
      // In place on a transposed view (not contiguous: computed aside, copied back).
      Tensor tview = self.t().contiguous().t();
      tview.addmm_(m1, m2, 2, 3);
      check_close(tview, expected, dtype);
      // out=, poisoned; an empty out is resized; out that is the input.
      Tensor out = tl::full({4, 4}, 77, tl::TensorOptions(dtype).device(dev));
      tl::addmm_out(out, self, m1, m2, 2, 3);
      check_close(out, expected, dtype);
      Tensor empty = tl::empty({0}, tl::TensorOptions(dtype).device(dev));
      tl::addmm_out(empty, self, m1, m2, 2, 3);
      CHECK(empty.shape() == Shape{4, 4});
      check_close(empty, expected, dtype);
      Tensor same = self.clone();
      tl::addmm_out(same, same, m1, m2, 2, 3);
      check_close(same, expected, dtype);
      // The destination is also an operand: x.addmm_(x, x).
      Tensor x = random_tensor({4, 4}, dtype, dev);
      const GemmRef xx = naive_addmm(x, x, x, 1, 1);
      x.addmm_(x, x);
      check_close(x, xx, dtype);
      // A float64 out for a float32 product (cast on the way in, as matmul_out).
      if (dtype == tl::kFloat32) {
        Tensor wide = tl::full({4, 4}, 5.0, tl::TensorOptions(tl::kFloat64).device(dev));
        tl::addmm_out(wide, self, m1, m2, 2, 3);
        CHECK(wide.dtype() == tl::kFloat64);
        check_close(wide, expected, tl::kFloat32);
      }
    }
}

TEST_CASE("baddbmm and baddbmm_: broadcast inputs, layouts, alpha and beta") {
  for (tl::Device dev : tl_test::test_devices())
    for (DType dtype : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kBFloat16})
      for (const Shape& is : {Shape{3, 4, 5}, Shape{4, 5}, Shape{1, 1, 5}, Shape{}})
        for (auto [n, k, m] : {std::array<int64_t, 3>{4, 2, 5}, {4, 40, 5}}) {
          if (is.size() > 0 && is.back() != 5) continue;
          const bool integral = !tl::is_floating_point(dtype);
          const tl::Scalar beta = integral ? tl::Scalar(2) : tl::Scalar(0.5);
          const tl::Scalar alpha = integral ? tl::Scalar(-3) : tl::Scalar(1.25);
          Tensor input = random_tensor(is, dtype, dev);
          Tensor b1 = random_tensor({3, n, k}, dtype, dev),
                 b2 = random_tensor({3, k, m}, dtype, dev);
          const GemmRef expected =
              naive_addmm(input, b1, b2, beta.to<double>(), alpha.to<double>());
          for (const auto& l1 : tl_test::layouts_of(b1)) {
            CAPTURE(dev);
            CAPTURE(dtype);
            CAPTURE(is);
            CAPTURE(k);
            CAPTURE(l1.name);
            Tensor got = tl::baddbmm(input, l1.tensor, b2, beta, alpha);
            CHECK(got.shape() == Shape{3, n, m});
            check_close(got, expected, dtype);
          }
          // Expanded (stride-0) batch operand.
          Tensor one = random_tensor({1, n, k}, dtype, dev);
          check_close(tl::baddbmm(input, one.expand({3, n, k}), b2, beta, alpha),
                      naive_addmm(input, one.expand({3, n, k}).contiguous(), b2, beta.to<double>(),
                                  alpha.to<double>()),
                      dtype);
          if (is == Shape{3, n, m}) {
            Tensor self = input.clone();
            self.baddbmm_(b1, b2, beta, alpha);
            check_close(self, expected, dtype);
            check_close(input.baddbmm(b1, b2, beta, alpha), expected, dtype);
          }
        }
  // beta 0 with NaN input.
  for (tl::Device dev : tl_test::test_devices()) {
    Tensor nan_in = tl::full({2, 3, 4}, NAN, tl::TensorOptions(tl::kFloat64).device(dev));
    Tensor b1 = random_tensor({2, 3, 5}, tl::kFloat64, dev),
           b2 = random_tensor({2, 5, 4}, tl::kFloat64, dev);
    check_values(tl::baddbmm(nan_in, b1, b2, 0), naive_addmm(nan_in, b1, b2, 0, 1).values, 1e-12,
                 1e-12);
  }
}

TEST_CASE("outer: 1-D products with promotion") {
  for (tl::Device dev : tl_test::test_devices()) {
    Tensor a = random_tensor({4}, tl::kInt32, dev), b = random_tensor({3}, tl::kFloat32, dev);
    Tensor o = tl::outer(a, b);
    CHECK(o.shape() == Shape{4, 3});
    CHECK(o.dtype() == tl::kFloat32);
    std::vector<double> av = values_of(a), bv = values_of(b), expected;
    for (double x : av)
      for (double y : bv) expected.push_back(x * y);
    check_values(o, expected);
    check_values(a.outer(b), expected);
    Tensor p = random_tensor({3}, tl::kBool, dev);
    CHECK(tl::outer(p, p).dtype() == tl::kBool);
    CHECK(tl::outer(a, tl::zeros({0}, tl::TensorOptions(tl::kInt64).device(dev))).shape() ==
          Shape{4, 0});
    // A sliced operand.
    Tensor s = random_tensor({8}, tl::kFloat64, dev).slice(0, 0, std::nullopt, 2);
    std::vector<double> sv = values_of(s), ss;
    for (double x : sv)
      for (double y : sv) ss.push_back(x * y);
    check_values(tl::outer(s, s), ss, 1e-12, 1e-12);
  }
}

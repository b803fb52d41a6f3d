// tensorlet's gradients against torch.autograd's in one process (issue 32; built and run by
// scripts/gpu-check --interop against the LibTorch inside python3's torch): random float64 cases of
// every differentiable op of src/autograd/op_gradients.h, the same input values and grad_output in
// both libraries, on the CPU and cuda:0; every input's gradient compared (rtol 1e-7, atol 1e-9).
// Prints a line per op and device and "N ops, M cases, K differences"; exits 1 on a difference not
// in kDepartures or on a "yes" op without a case (or a reason in kUncovered).
#include <torch/torch.h>

#include <tensorlet/autograd/op_gradients.h>
#include <tensorlet/tensorlet.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

namespace tl = tensorlet;

constexpr double kRtol = 1e-7;
constexpr double kAtol = 1e-9;

// Where tensorlet means to differ from torch: {op, case ("" for all its cases), why}. The cases
// still run and print, but are not counted as differences.
struct Departure {
  const char* op;
  const char* what;
  const char* why;
};
const Departure kDepartures[] = {
    {"", "", ""},  // none so far
};

// "yes" ops of op_gradients.h without a case here, and why.
struct Uncovered {
  const char* op;
  const char* why;
};
const Uncovered kUncovered[] = {
    {"", ""},  // none so far
};

// ---- inputs ----------------------------------------------------------------------------------

enum class Kind {
  kAny,       // uniform in [-2, 2), requires grad
  kPositive,  // [0.5, 2.5), requires grad (log, sqrt, divisors)
  kUnit,      // (-0.9, 0.9), requires grad (asin, acos, tan)
  kNaN,       // kAny with about a quarter NaN and some +-inf, requires grad (nan_to_num, nan*)
  kConst,     // kAny without requires_grad
  kIndex,     // int64 in [0, high)
  kMask,      // bool, about half true
};
enum class View { kContiguous, kTransposed, kSliced };

struct In {
  std::vector<int64_t> shape;
  Kind kind = Kind::kAny;
  View view = View::kContiguous;
  int64_t high = 0;     // kIndex: values in [0, high)
  int unique_dim = -2;  // kIndex: -2 repeats allowed, -1 distinct over all, d >= 0 per line of d
};

In any(std::vector<int64_t> s) { return {std::move(s), Kind::kAny}; }
In pos(std::vector<int64_t> s) { return {std::move(s), Kind::kPositive}; }
In unit(std::vector<int64_t> s) { return {std::move(s), Kind::kUnit}; }
In nan(std::vector<int64_t> s) { return {std::move(s), Kind::kNaN}; }
In cst(std::vector<int64_t> s) { return {std::move(s), Kind::kConst}; }
In mask(std::vector<int64_t> s) { return {std::move(s), Kind::kMask}; }
In idx(std::vector<int64_t> s, int64_t high, int unique_dim = -2) {
  In in{std::move(s), Kind::kIndex};
  in.high = high;
  in.unique_dim = unique_dim;
  return in;
}
// The op sees the stored tensor transposed in its last two dims, or every second row of it.
In T(In in) {
  in.view = View::kTransposed;
  return in;
}
In S(In in) {
  in.view = View::kSliced;
  return in;
}

bool requires_grad(Kind k) {
  return k == Kind::kAny || k == Kind::kPositive || k == Kind::kUnit || k == Kind::kNaN;
}

// The stored (leaf) shape: the view taken of it has the case's shape.
std::vector<int64_t> stored_shape(const In& in) {
  std::vector<int64_t> s = in.shape;
  if (in.view == View::kTransposed) std::swap(s[s.size() - 1], s[s.size() - 2]);
  if (in.view == View::kSliced) s[0] = 2 * s[0] + 1;
  return s;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct HostData {
  std::vector<double> values;  // floating kinds
  std::vector<int64_t> ints;   // kIndex, kMask (0/1)
};

// Index values in the case's (not stored) shape, row-major; distinct where asked for.
std::vector<int64_t> index_values(const In& in, std::mt19937_64& rng) {
  const int64_t n = numel(in.shape);
  std::vector<int64_t> v(n);
  if (in.unique_dim == -2) {
    std::uniform_int_distribution<int64_t> u(0, in.high - 1);
    for (auto& x : v) x = u(rng);
  } else if (in.unique_dim == -1) {
    std::vector<int64_t> perm(in.high);
    for (int64_t i = 0; i < in.high; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::copy(perm.begin(), perm.begin() + n, v.begin());
  } else {
    // Each line along unique_dim: the first entries of a permutation of [0, high).
    const int d = in.unique_dim;
    const int64_t len = in.shape[d];
    int64_t inner = 1;
    for (size_t i = d + 1; i < in.shape.size(); ++i) inner *= in.shape[i];
    const int64_t outer = n / (len * inner);
    std::vector<int64_t> perm(in.high);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t k = 0; k < in.high; ++k) perm[k] = k;
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int64_t k = 0; k < len; ++k) v[(o * len + k) * inner + i] = perm[k];
      }
    }
  }
  return v;
}

HostData make_host(const In& in, std::mt19937_64& rng) {
  HostData h;
  if (in.kind == Kind::kIndex) {
    h.ints = index_values(in, rng);
    return h;
  }
  const int64_t n = numel(stored_shape(in));
  if (in.kind == Kind::kMask) {
    std::bernoulli_distribution b(0.5);
    for (int64_t i = 0; i < n; ++i) h.ints.push_back(b(rng) ? 1 : 0);
    return h;
  }
  double lo = -2, hi = 2;
  if (in.kind == Kind::kPositive) lo = 0.5, hi = 2.5;
  if (in.kind == Kind::kUnit) lo = -0.9, hi = 0.9;
  std::uniform_real_distribution<double> u(lo, hi);
  std::uniform_real_distribution<double> pick(0, 1);
  for (int64_t i = 0; i < n; ++i) {
    double x = u(rng);
    if (in.kind == Kind::kNaN) {
      const double p = pick(rng);
      if (p < 0.25)
        x = std::numeric_limits<double>::quiet_NaN();
      else if (p < 0.3)
        x = std::numeric_limits<double>::infinity();
      else if (p < 0.35)
        x = -std::numeric_limits<double>::infinity();
    }
    h.values.push_back(x);
  }
  return h;
}

// ---- the two libraries' tensors --------------------------------------------------------------

struct OursDev {
  tl::Device device;
};
struct TheirsDev {
  at::Device device;
};

// The leaf (stored) tensor; a 0-dim one when the shape is empty.
tl::Tensor make_leaf(const In& in, const HostData& h, const tl::Device& dev) {
  const bool index_like = in.kind == Kind::kIndex;
  const std::vector<int64_t> shape = index_like ? in.shape : stored_shape(in);
  const std::vector<int64_t> shape1 = shape.empty() ? std::vector<int64_t>{1} : shape;
  tl::Tensor t;
  if (in.kind == Kind::kIndex) {
    t = tl::from_vector<int64_t>(h.ints, shape1);
  } else if (in.kind == Kind::kMask) {
    std::vector<uint8_t> b(h.ints.begin(), h.ints.end());
    t = tl::from_vector<uint8_t>(b, shape1).to(tl::kBool);
  } else {
    t = tl::from_vector<double>(h.values, shape1);
  }
  if (shape.empty()) t = t.squeeze();
  t = t.to(dev);
  if (requires_grad(in.kind)) t.requires_grad_();
  return t;
}
at::Tensor make_leaf(const In& in, const HostData& h, const at::Device& dev) {
  const bool index_like = in.kind == Kind::kIndex;
  const std::vector<int64_t> shape = index_like ? in.shape : stored_shape(in);
  at::Tensor t;
  if (in.kind == Kind::kIndex || in.kind == Kind::kMask) {
    std::vector<int64_t> v = h.ints;
    t = at::from_blob(v.data(), shape, at::TensorOptions().dtype(at::kLong)).clone();
    if (in.kind == Kind::kMask) t = t.to(at::kBool);
  } else {
    std::vector<double> v = h.values;
    t = at::from_blob(v.data(), shape, at::TensorOptions().dtype(at::kDouble)).clone();
  }
  t = t.to(dev);
  if (requires_grad(in.kind)) t.requires_grad_(true);
  return t;
}

// What the op sees of the leaf.
template <typename Tensor>
Tensor view_of(const In& in, const Tensor& leaf) {
  if (in.kind == Kind::kIndex) return leaf;
  if (in.view == View::kTransposed) return leaf.transpose(-2, -1);
  if (in.view == View::kSliced) return leaf.slice(0, 1, 2 * in.shape[0] + 1, 2);
  return leaf;
}

std::vector<double> host_values(const tl::Tensor& t) {
  tl::Tensor h = t.detach().to(tl::kFloat64).cpu().contiguous();
  const auto* p = static_cast<const double*>(h.data_ptr());
  return {p, p + h.numel()};
}
std::vector<double> host_values(const at::Tensor& t) {
  at::Tensor h = t.detach().to(at::kDouble).cpu().contiguous();
  const double* p = h.data_ptr<double>();
  return {p, p + h.numel()};
}
std::vector<int64_t> shape_of(const tl::Tensor& t) { return t.shape().vec(); }
std::vector<int64_t> shape_of(const at::Tensor& t) { return t.sizes().vec(); }
bool floating(const tl::Tensor& t) { return tl::is_floating_point(t.dtype()); }
bool floating(const at::Tensor& t) { return t.is_floating_point(); }

// An op's results as a list (the floating ones are differentiated).
std::vector<tl::Tensor> outs(const tl::Tensor& t) { return {t}; }
std::vector<tl::Tensor> outs(const tl::ValuesIndices& r) { return {r.values, r.indices}; }
std::vector<tl::Tensor> outs(const std::pair<tl::Tensor, tl::Tensor>& r) {
  return {r.first, r.second};
}
std::vector<tl::Tensor> outs(const std::vector<tl::Tensor>& r) { return r; }
std::vector<at::Tensor> outs(const at::Tensor& t) { return {t}; }
std::vector<at::Tensor> outs(const std::tuple<at::Tensor, at::Tensor>& r) {
  return {std::get<0>(r), std::get<1>(r)};
}
std::vector<at::Tensor> outs(const std::vector<at::Tensor>& r) { return r; }

// at::index_put's index list.
c10::List<std::optional<at::Tensor>> list(const at::Tensor& index) {
  c10::List<std::optional<at::Tensor>> l;
  l.push_back(index);
  return l;
}

using OursFn = std::function<std::vector<tl::Tensor>(const std::vector<tl::Tensor>&)>;
using TheirsFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

struct Case {
  std::string op;    // the op's name in op_gradients.h
  std::string what;  // which variant
  std::vector<In> ins;
  OursFn ours;
  TheirsFn theirs;
};

// One expression for both libraries: x holds the inputs, L names tl or at, I their indexing
// namespace, T their Tensor.
#define SAME(expr)                             \
  [](const std::vector<tl::Tensor>& x) {       \
    namespace L = tl;                          \
    namespace I = tl::indexing;                \
    using T [[maybe_unused]] = tl::Tensor;     \
    return outs(expr);                         \
  },                                           \
      [](const std::vector<at::Tensor>& x) {   \
        namespace L = at;                      \
        namespace I = at::indexing;            \
        using T [[maybe_unused]] = at::Tensor; \
        return outs(expr);                     \
      }
// One expression each, where the two APIs differ.
#define EACH(ours_expr, theirs_expr)                                \
  [](const std::vector<tl::Tensor>& x) { return outs(ours_expr); }, \
      [](const std::vector<at::Tensor>& x) { return outs(theirs_expr); }

std::vector<Case> make_cases() {
  std::vector<Case> c;
  auto add = [&](const char* op, const char* what, std::vector<In> ins, OursFn ours,
                 TheirsFn theirs) {
    c.push_back({op, what, std::move(ins), std::move(ours), std::move(theirs)});
  };

  // Unary elementwise: contiguous, transposed and sliced, with an odd size.
#define UNARY(name, kind)                                           \
  add(#name, "contiguous", {kind({5, 7})}, SAME(L::name(x[0])));    \
  add(#name, "transposed", {T(kind({3, 6}))}, SAME(L::name(x[0]))); \
  add(#name, "sliced", {S(kind({4, 3, 5}))}, SAME(L::name(x[0])));
  UNARY(abs, any)
  UNARY(acos, unit)
  UNARY(asin, unit)
  UNARY(atan, any)
  UNARY(ceil, any)
  UNARY(cos, any)
  UNARY(cosh, any)
  UNARY(erf, any)
  UNARY(erfc, any)
  UNARY(exp, any)
  UNARY(exp2, any)
  UNARY(expm1, any)
  UNARY(floor, any)
  UNARY(gelu, any)
  UNARY(log, pos)
  UNARY(log10, pos)
  UNARY(log1p, pos)
  UNARY(log2, pos)
  UNARY(neg, any)
  UNARY(reciprocal, pos)
  UNARY(relu, any)
  UNARY(round, any)
  UNARY(rsqrt, pos)
  UNARY(sigmoid, any)
  UNARY(sign, any)
  UNARY(silu, any)
  UNARY(sin, any)
  UNARY(sinh, any)
  UNARY(softplus, any)
  UNARY(sqrt, pos)
  UNARY(square, any)
  UNARY(tan, unit)
  UNARY(tanh, any)
  UNARY(trunc, any)
#undef UNARY
  add("gelu", "tanh approximation", {T(any({4, 6}))}, SAME(L::gelu(x[0], "tanh")));
  add("softplus", "beta 2, threshold 1", {any({6, 5})}, SAME(L::softplus(x[0], 2.0, 1.0)));

  // Binary elementwise: broadcast, transposed, and a Scalar operand.
#define BINARY(name, ka, kb)                                                                    \
  add(#name, "broadcast", {ka({4, 1, 5}), kb({3, 5})}, SAME(L::name(x[0], x[1])));              \
  add(#name, "transposed x sliced", {T(ka({5, 3})), S(kb({5, 3}))}, SAME(L::name(x[0], x[1]))); \
  add(#name, "row broadcast", {ka({6, 7}), kb({1, 7})}, SAME(L::name(x[0], x[1])));
  BINARY(add, any, any)
  BINARY(sub, any, any)
  BINARY(mul, any, any)
  BINARY(div, any, pos)
  BINARY(atan2, any, any)
  BINARY(maximum, any, any)
  BINARY(minimum, any, any)
  BINARY(pow, pos, any)
  BINARY(fmod, any, pos)
  BINARY(remainder, any, pos)
#undef BINARY
  add("add", "alpha", {any({4, 5}), any({5})}, SAME(L::add(x[0], x[1], 0.5)));
  add("sub", "alpha", {any({4, 5}), any({4, 1})}, SAME(L::sub(x[0], x[1], 1.5)));
  add("mul", "scalar", {T(any({4, 5}))}, SAME(L::mul(x[0], 2.5)));
  add("div", "scalar", {any({4, 5})}, SAME(L::div(x[0], -1.75)));
  add("div", "scalar / tensor", {pos({4, 5})}, EACH(tl::div(3.0, x[0]), 3.0 / x[0]));
  add("pow", "tensor ^ scalar", {pos({4, 5})}, SAME(L::pow(x[0], 2.5)));
  add("pow", "tensor ^ 2", {any({4, 5})}, SAME(L::pow(x[0], 2)));
  add("pow", "scalar ^ tensor", {any({4, 5})}, SAME(L::pow(1.5, x[0])));
  add("atan2", "0-dim other", {any({4, 5}), cst({})}, SAME(L::atan2(x[0], x[1])));
  add("fmod", "scalar divisor", {any({4, 5})}, SAME(L::fmod(x[0], 0.7)));
  add("remainder", "scalar divisor", {any({4, 5})}, SAME(L::remainder(x[0], 0.7)));

  add("clamp", "scalar bounds", {any({5, 6})},
      EACH(tl::clamp(x[0], std::optional<tl::Scalar>(-0.5), std::optional<tl::Scalar>(0.8)),
           at::clamp(x[0], std::optional<at::Scalar>(-0.5), std::optional<at::Scalar>(0.8))));
  add("clamp", "min only", {T(any({5, 6}))},
      EACH(tl::clamp(x[0], std::optional<tl::Scalar>(0.1)),
           at::clamp(x[0], std::optional<at::Scalar>(0.1))));
  add("clamp", "tensor bounds, broadcast", {any({5, 6}), any({1, 6}), any({5, 1})},
      SAME(L::clamp(x[0], std::optional<T>(x[1] - 1.0), std::optional<T>(x[2] + 1.0))));
  add("masked_fill", "scalar value", {any({5, 6}), mask({5, 6})},
      SAME(L::masked_fill(x[0], x[1], 0.5)));
  add("masked_fill", "0-dim tensor value, broadcast mask", {T(any({5, 6})), mask({1, 6}), any({})},
      SAME(L::masked_fill(x[0], x[1], x[2])));
  add("where", "broadcast", {mask({4, 1, 5}), any({3, 5}), T(any({4, 3, 5}))},
      SAME(L::where(x[0], x[1], x[2])));
  add("where", "scalar other", {mask({4, 5}), any({4, 5})}, SAME(L::where(x[0], x[1], 0.25)));
  add("lerp", "tensor weight, broadcast", {any({4, 5}), any({5}), unit({4, 1})},
      SAME(L::lerp(x[0], x[1], x[2])));
  add("lerp", "scalar weight", {T(any({4, 5})), any({4, 5})}, SAME(L::lerp(x[0], x[1], 0.3)));
  add("nan_to_num", "NaN and infinities", {nan({6, 7})}, SAME(L::nan_to_num(x[0], 0.5, 3.0, -3.0)));
  add("nan_to_num", "defaults", {S(nan({5, 4}))}, SAME(L::nan_to_num(x[0])));

  // Indexing.
  add("index", "int64 index, repeats", {any({6, 5}), idx({7}, 6)}, SAME(x[0].index({x[1]})));
  add("index", "slice then index", {T(any({4, 6})), idx({2, 3}, 6)},
      SAME(x[0].index({I::Slice(), x[1]})));
  add("index", "bool mask", {any({5, 6}), mask({5, 6})}, SAME(x[0].index({x[1]})));
  add("index_put", "accumulate, repeats", {any({6, 5}), idx({8}, 6), any({8, 5})},
      EACH(tl::index_put(x[0], {x[1]}, x[2], true), at::index_put(x[0], list(x[1]), x[2], true)));
  add("index_put", "distinct indices", {any({6, 5}), idx({4}, 6, -1), any({4, 5})},
      EACH(tl::index_put(x[0], {x[1]}, x[2], false), at::index_put(x[0], list(x[1]), x[2], false)));
  add("index_put", "broadcast values", {T(any({6, 5})), idx({3}, 6, -1), any({5})},
      EACH(tl::index_put(x[0], {x[1]}, x[2]), at::index_put(x[0], list(x[1]), x[2])));
  add("put", "accumulate, repeats", {any({4, 5}), idx({3, 4}, 20), any({3, 4})},
      SAME(L::put(x[0], x[1], x[2], true)));
  add("put", "distinct", {T(any({4, 5})), idx({7}, 20, -1), any({7})},
      SAME(L::put(x[0], x[1], x[2], false)));
  add("take", "repeats", {T(any({4, 5})), idx({3, 6}, 20)}, SAME(L::take(x[0], x[1])));
  add("gather", "dim 1", {any({5, 7}), idx({5, 4}, 7)}, SAME(L::gather(x[0], 1, x[1])));
  add("gather", "dim 0, transposed", {T(any({6, 4})), idx({3, 4}, 6)},
      SAME(L::gather(x[0], 0, x[1])));
  add("index_select", "dim 0, repeats", {any({6, 5}), idx({8}, 6)},
      SAME(L::index_select(x[0], 0, x[1])));
  add("index_select", "dim 1, sliced", {S(any({3, 7})), idx({4}, 7)},
      SAME(L::index_select(x[0], 1, x[1])));
  add("masked_select", "same shape", {any({5, 6}), mask({5, 6})},
      SAME(L::masked_select(x[0], x[1])));
  add("masked_select", "broadcast mask", {T(any({5, 6})), mask({6})},
      SAME(L::masked_select(x[0], x[1])));

  // Joining.
  add("cat", "dim 1", {any({3, 4}), T(any({3, 2})), any({3, 5})},
      SAME(L::cat({x[0], x[1], x[2]}, 1)));
  add("cat", "dim 0", {S(any({2, 5})), any({4, 5})}, SAME(L::cat({x[0], x[1]}, 0)));
  add("stack", "dim 1", {any({3, 4}), T(any({3, 4}))}, SAME(L::stack({x[0], x[1]}, 1)));
  add("vstack", "1-D and 2-D", {any({5}), any({2, 5})}, SAME(L::vstack({x[0], x[1]})));
  add("hstack", "2-D", {any({3, 2}), T(any({3, 4}))}, SAME(L::hstack({x[0], x[1]})));
  add("dstack", "2-D", {any({3, 4}), any({3, 4})}, SAME(L::dstack({x[0], x[1]})));
  add("atleast_1d", "0-dim", {any({})}, SAME(L::atleast_1d(x[0])));
  add("atleast_2d", "1-D", {any({5})}, SAME(L::atleast_2d(x[0])));
  add("atleast_3d", "2-D", {T(any({3, 4}))}, SAME(L::atleast_3d(x[0])));

  // Linear algebra.
  add("addmm", "beta, alpha", {any({5, 4}), T(any({5, 3})), any({3, 4})},
      SAME(L::addmm(x[0], x[1], x[2], 0.5, 1.5)));
  add("addmm", "broadcast input", {any({4}), any({5, 3}), T(any({3, 4}))},
      SAME(L::addmm(x[0], x[1], x[2])));
  add("baddbmm", "beta, alpha", {any({3, 5, 4}), any({3, 5, 6}), T(any({3, 6, 4}))},
      SAME(L::baddbmm(x[0], x[1], x[2], 0.25, 2.0)));
  add("bmm", "transposed", {T(any({2, 5, 3})), any({2, 3, 4})}, SAME(L::bmm(x[0], x[1])));
  add("dot", "odd size", {any({7}), any({7})}, SAME(L::dot(x[0], x[1])));
  add("mm", "transposed", {T(any({5, 3})), S(any({3, 4}))}, SAME(L::mm(x[0], x[1])));
  add("matmul", "batch broadcast", {any({2, 1, 5, 6}), any({3, 6, 4})},
      SAME(L::matmul(x[0], x[1])));
  add("matmul", "1-D @ 2-D", {any({6}), T(any({6, 4}))}, SAME(L::matmul(x[0], x[1])));
  add("matmul", "2-D @ 1-D", {any({5, 6}), any({6})}, SAME(L::matmul(x[0], x[1])));
  add("linear", "bias", {any({2, 5, 6}), any({4, 6}), any({4})}, SAME(L::linear(x[0], x[1], x[2])));
  add("outer", "odd sizes", {any({5}), any({3})}, SAME(L::outer(x[0], x[1])));
  add("einsum", "batched matmul", {any({2, 3, 4}), any({2, 4, 5})},
      SAME(L::einsum("bij,bjk->bik", {x[0], x[1]})));
  add("einsum", "row dot", {T(any({4, 3})), any({4, 3})},
      SAME(L::einsum("ij,ij->i", {x[0], x[1]})));

  // Convolution (cuDNN's node on cuda:0) and pooling.
  add("conv2d", "stride, padding, dilation, bias", {any({2, 3, 6, 7}), any({4, 3, 3, 2}), any({4})},
      SAME(L::conv2d(x[0], x[1], x[2], {2, 1}, {1, 2}, {1, 2}, 1)));
  add("conv2d", "groups, transposed input", {T(any({2, 4, 5, 5})), any({2, 2, 3, 3})},
      SAME(L::conv2d(x[0], x[1], {}, {1, 1}, {1, 1}, {1, 1}, 2)));
  add("max_pool2d", "padding, dilation, ceil_mode", {any({2, 2, 7, 6})},
      SAME(L::max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}, {1, 2}, true)));
  add("avg_pool2d", "padding, ceil_mode, count_include_pad false", {any({2, 2, 7, 6})},
      SAME(L::avg_pool2d(x[0], {3, 2}, {2, 2}, {1, 1}, true, false)));
  add("adaptive_avg_pool2d", "uneven windows", {S(any({2, 3, 5, 7}))},
      SAME(L::adaptive_avg_pool2d(x[0], {3, 4})));

  // Softmax family and reductions with a dim.
  add("softmax", "dim 1", {any({4, 7})}, SAME(L::softmax(x[0], 1)));
  add("softmax", "dim 0, transposed", {T(any({5, 6}))}, SAME(L::softmax(x[0], 0)));
  add("log_softmax", "dim -1", {any({3, 4, 5})}, SAME(L::log_softmax(x[0], -1)));
  add("log_softmax", "dim 0, sliced", {S(any({4, 6}))}, SAME(L::log_softmax(x[0], 0)));
  add("logsumexp", "dim 1, keepdim", {any({4, 7})},
      EACH(tl::logsumexp(x[0], {1}, true), at::logsumexp(x[0], at::IntArrayRef{1}, true)));
  add("logsumexp", "dims 0 and 2", {any({3, 4, 5})},
      EACH(tl::logsumexp(x[0], {0, 2}), at::logsumexp(x[0], at::IntArrayRef{0, 2})));
  add("median", "all (even count)", {any({4, 6})}, SAME(L::median(x[0])));
  add("median", "dim 1, odd size", {T(any({5, 7}))}, SAME(L::median(x[0], 1)));
  add("median", "dim 0, keepdim", {any({6, 5})}, SAME(L::median(x[0], 0, true)));
  add("norm", "2, all", {any({4, 5})}, SAME(L::norm(x[0])));
  add("norm", "3, dim 1", {T(any({4, 5}))},
      EACH(tl::norm(x[0], 3.0, {1}),
           at::norm(x[0], std::optional<at::Scalar>(3.0), at::IntArrayRef{1}, false)));
  add("norm", "1, dim 0, keepdim", {any({4, 5})},
      EACH(tl::norm(x[0], 1.0, {0}, true),
           at::norm(x[0], std::optional<at::Scalar>(1.0), at::IntArrayRef{0}, true)));
  add("norm", "inf, dim 1", {any({4, 5})},
      EACH(tl::norm(x[0], INFINITY, {1}),
           at::norm(x[0], std::optional<at::Scalar>(INFINITY), at::IntArrayRef{1}, false)));
#define VAR_LIKE(name)                                                                       \
  add(#name, "all", {any({4, 5})},                                                           \
      EACH(tl::name(x[0]),                                                                   \
           at::name(x[0], at::OptionalIntArrayRef(), std::optional<at::Scalar>(1), false))); \
  add(#name, "dim 1, correction 0, keepdim", {T(any({4, 5}))},                               \
      EACH(tl::name(x[0], {1}, 0, true),                                                     \
           at::name(x[0], at::IntArrayRef{1}, std::optional<at::Scalar>(0), true)));         \
  add(#name, "dims 0 and 2", {any({3, 4, 5})},                                               \
      EACH(tl::name(x[0], {0, 2}),                                                           \
           at::name(x[0], at::IntArrayRef{0, 2}, std::optional<at::Scalar>(1), false)));
  VAR_LIKE(std)
  VAR_LIKE(var)
  VAR_LIKE(std_mean)
  VAR_LIKE(var_mean)
#undef VAR_LIKE
  add("kthvalue", "k 2, dim 1", {any({4, 7})}, SAME(L::kthvalue(x[0], 2, 1)));
  add("kthvalue", "k 4, dim 0, keepdim", {T(any({6, 5}))}, SAME(L::kthvalue(x[0], 4, 0, true)));
  add("sort", "dim 1", {any({4, 7})}, SAME(L::sort(x[0], 1)));
  add("sort", "dim 0, descending", {S(any({5, 3}))}, SAME(L::sort(x[0], 0, true)));
  add("topk", "k 3, dim 1", {any({4, 7})}, SAME(L::topk(x[0], 3, 1)));
  add("topk", "k 2, smallest, dim 0", {T(any({6, 5}))}, SAME(L::topk(x[0], 2, 0, false)));
  add("amax", "dim 1", {any({4, 7})},
      EACH(tl::amax(x[0], {1}), at::amax(x[0], at::IntArrayRef{1})));
  add("amax", "dims 0 and 2, keepdim", {any({3, 4, 5})},
      EACH(tl::amax(x[0], {0, 2}, true), at::amax(x[0], at::IntArrayRef{0, 2}, true)));
  add("amin", "dim 0", {T(any({4, 7}))},
      EACH(tl::amin(x[0], {0}), at::amin(x[0], at::IntArrayRef{0})));
  add("amin", "all", {any({3, 5})}, EACH(tl::amin(x[0]), at::amin(x[0], at::IntArrayRef{})));
  add("max", "all", {any({4, 7})}, SAME(L::max(x[0])));
  add("max", "dim 1, keepdim", {T(any({4, 7}))}, SAME(L::max(x[0], 1, true)));
  add("min", "all", {S(any({4, 7}))}, SAME(L::min(x[0])));
  add("min", "dim 0", {any({4, 7})}, SAME(L::min(x[0], 0)));
  add("mean", "all", {any({4, 7})}, SAME(L::mean(x[0])));
  add("mean", "dim 1, keepdim", {T(any({4, 7}))},
      EACH(tl::mean(x[0], {1}, true), at::mean(x[0], at::IntArrayRef{1}, true)));
  add("prod", "all", {any({3, 5})}, SAME(L::prod(x[0])));
  add("prod", "dim 1", {T(any({4, 5}))}, EACH(tl::prod(x[0], {1}), at::prod(x[0], 1)));
  add("prod", "dim 0, keepdim", {any({4, 5})},
      EACH(tl::prod(x[0], {0}, true), at::prod(x[0], 0, true)));
  add("sum", "all", {S(any({4, 7}))}, SAME(L::sum(x[0])));
  add("sum", "dims 0 and 2", {any({3, 4, 5})},
      EACH(tl::sum(x[0], {0, 2}), at::sum(x[0], at::IntArrayRef{0, 2})));
  add("sum", "dim 1, keepdim", {T(any({4, 5}))},
      EACH(tl::sum(x[0], {1}, true), at::sum(x[0], at::IntArrayRef{1}, true)));
  add("nansum", "dim 1", {nan({4, 7})},
      EACH(tl::nansum(x[0], {1}), at::nansum(x[0], at::IntArrayRef{1})));
  add("nansum", "all", {T(nan({4, 5}))}, EACH(tl::nansum(x[0]), at::nansum(x[0])));
  add("nanmean", "dim 1", {nan({4, 7})},
      EACH(tl::nanmean(x[0], {1}), at::nanmean(x[0], at::IntArrayRef{1})));
  add("nanmean", "all", {S(nan({4, 5}))}, EACH(tl::nanmean(x[0]), at::nanmean(x[0])));

  // Scans.
  add("cumsum", "dim 1", {any({4, 7})}, SAME(L::cumsum(x[0], 1)));
  add("cumsum", "dim 0, transposed", {T(any({5, 4}))}, SAME(L::cumsum(x[0], 0)));
  add("cumprod", "dim 1", {any({4, 7})}, SAME(L::cumprod(x[0], 1)));
  add("cumprod", "dim 0, sliced", {S(any({5, 4}))}, SAME(L::cumprod(x[0], 0)));
  add("cummax", "dim 1", {any({4, 7})}, SAME(L::cummax(x[0], 1)));
  add("cummax", "dim 0, transposed", {T(any({6, 4}))}, SAME(L::cummax(x[0], 0)));
  add("cummin", "dim 1", {any({4, 7})}, SAME(L::cummin(x[0], 1)));
  add("cummin", "dim 0, sliced", {S(any({6, 4}))}, SAME(L::cummin(x[0], 0)));

  // Scatter family.
  add("index_add", "dim 0, repeats, alpha", {any({6, 5}), idx({8}, 6), any({8, 5})},
      SAME(L::index_add(x[0], 0, x[1], x[2], 0.5)));
  add("index_add", "dim 1", {T(any({4, 6})), idx({3}, 6), any({4, 3})},
      SAME(L::index_add(x[0], 1, x[1], x[2])));
  add("index_copy", "dim 0, distinct", {any({6, 5}), idx({4}, 6, -1), any({4, 5})},
      SAME(L::index_copy(x[0], 0, x[1], x[2])));
  add("index_copy", "dim 1, distinct", {S(any({4, 6})), idx({3}, 6, -1), T(any({4, 3}))},
      SAME(L::index_copy(x[0], 1, x[1], x[2])));
  add("index_fill", "dim 1", {any({4, 6}), idx({3}, 6)}, SAME(L::index_fill(x[0], 1, x[1], 0.5)));
  add("masked_scatter", "same shape", {any({5, 6}), mask({5, 6}), any({5, 6})},
      SAME(L::masked_scatter(x[0], x[1], x[2])));
  add("masked_scatter", "broadcast mask, longer source", {T(any({5, 6})), mask({6}), any({40})},
      SAME(L::masked_scatter(x[0], x[1], x[2])));
  add("scatter", "dim 1, distinct per row", {any({4, 7}), idx({4, 3}, 7, 1), any({4, 3})},
      SAME(L::scatter(x[0], 1, x[1], x[2])));
  add("scatter", "dim 0, value", {T(any({6, 4})), idx({3, 4}, 6, 0)},
      SAME(L::scatter(x[0], 0, x[1], 0.5)));
  add("scatter_add", "dim 1, repeats", {any({4, 7}), idx({4, 9}, 7), any({4, 9})},
      SAME(L::scatter_add(x[0], 1, x[1], x[2])));
  add("scatter_add", "dim 0, transposed src", {any({5, 4}), idx({6, 3}, 5), T(any({6, 3}))},
      SAME(L::scatter_add(x[0], 0, x[1], x[2])));
#define SCATTER_REDUCE(how, include_self)                    \
  add("scatter_reduce", how ", include_self " #include_self, \
      {any({5, 4}), idx({7, 4}, 5), T(any({7, 4}))},         \
      SAME(L::scatter_reduce(x[0], 0, x[1], x[2], how, include_self)));
  SCATTER_REDUCE("sum", true)
  SCATTER_REDUCE("mean", true)
  SCATTER_REDUCE("mean", false)
  SCATTER_REDUCE("amax", true)
  SCATTER_REDUCE("amin", false)
#undef SCATTER_REDUCE

  // Diagonals and triangles.
  add("diag", "1-D -> 2-D, offset 1", {any({5})}, SAME(L::diag(x[0], 1)));
  add("diag", "2-D -> 1-D, offset -1", {T(any({4, 5}))}, SAME(L::diag(x[0], -1)));
  add("diag_embed", "offset 1, dims 0 and 2", {any({3, 4})}, SAME(L::diag_embed(x[0], 1, 0, 2)));
  add("diag_embed", "default", {S(any({2, 3}))}, SAME(L::diag_embed(x[0])));
  add("diagonal", "offset 1", {any({4, 6})}, SAME(L::diagonal(x[0], 1)));
  add("diagonal", "offset -1, dims 2 and 0", {T(any({3, 4, 5}))},
      SAME(L::diagonal(x[0], -1, 2, 0)));
  add("tril", "offset 1", {any({5, 6})}, SAME(L::tril(x[0], 1)));
  add("triu", "offset -1, transposed", {T(any({5, 6}))}, SAME(L::triu(x[0], -1)));

  // Shape and view composites.
  add("broadcast_to", "to 3-D", {any({4, 1})}, SAME(L::broadcast_to(x[0], {3, 4, 5})));
  add("chunk", "3 along dim 1", {any({4, 8})}, SAME(L::chunk(x[0], 3, 1)));
  add("flip", "dims 0 and 1", {T(any({4, 5}))}, SAME(L::flip(x[0], {0, 1})));
  add("meshgrid", "xy", {any({3}), any({4})}, SAME(L::meshgrid({x[0], x[1]}, "xy")));
  add("movedim", "0 -> 2", {any({2, 3, 4})}, SAME(L::movedim(x[0], 0, 2)));
  add("repeat", "3-D", {T(any({2, 3}))}, SAME(x[0].repeat({2, 1, 3})));
  add("roll", "two dims", {any({4, 5})}, SAME(L::roll(x[0], {1, -2}, {0, 1})));
  add("roll", "flattened", {S(any({3, 4}))}, SAME(L::roll(x[0], {5})));
  add("split", "size 2 along dim 1", {any({3, 7})}, SAME(L::split(x[0], 2, 1)));
  add("split_with_sizes", "1, 3, 2", {T(any({3, 6}))},
      SAME(L::split_with_sizes(x[0], {1, 3, 2}, 1)));
  add("tile", "2-D", {any({2, 3})}, SAME(L::tile(x[0], {2, 2})));

  // In-place ops on views (the base rebased through CopySlices; other views remade).
  add("mul", "in place into a view of a view", {any({4, 5}), any({4})}, SAME(([&] {
        T b = x[0] * 1.0;
        b.t().select(0, 2).mul_(x[1]);
        return b * b;
      })()));
  add("tanh", "in place on a column, an overlapping view read after", {T(any({4, 5}))}, SAME(([&] {
        T b = x[0] * 1.0;
        T v = b.narrow(1, 1, 3);
        b.select(1, 2).tanh_();
        return v * 2.0;
      })()));
  add("mul", "copy_ into a slice of the product", {any({5, 3}), any({2, 3})}, SAME(([&] {
        T b = x[0] * 1.0;
        b.narrow(0, 1, 2).copy_(x[1] * 3.0);
        return b * b;
      })()));
  add("unbind", "dim 1", {any({3, 4})}, SAME(L::unbind(x[0], 1)));
  return c;
}

// ---- running ---------------------------------------------------------------------------------

struct Result {
  double max_diff = 0;  // max |ours - theirs| over results and gradients
  std::string problem;  // empty when within tolerance
};

bool close(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= kAtol + kRtol * std::abs(b);
}

// Compares two value lists, raising r.max_diff and noting the first difference.
void compare(const std::string& what, const std::vector<double>& ours,
             const std::vector<double>& theirs, Result& r) {
  if (ours.size() != theirs.size()) {
    if (r.problem.empty())
      r.problem = what + ": " + std::to_string(ours.size()) + " vs " +
                  std::to_string(theirs.size()) + " elements";
    return;
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    if (std::isfinite(ours[i]) && std::isfinite(theirs[i]))
      r.max_diff = std::max(r.max_diff, std::abs(ours[i] - theirs[i]));
    if (!close(ours[i], theirs[i]) && r.problem.empty()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s[%zu]: ours %.17g, torch %.17g", what.c_str(), i, ours[i],
                    theirs[i]);
      r.problem = buf;
    }
  }
}

// The grad_output values for a result, and zeros for an undefined gradient.
std::vector<double> random_values(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}
std::vector<double> grad_values(const tl::Tensor& leaf) {
  return leaf.grad().defined() ? host_values(leaf.grad()) : std::vector<double>(leaf.numel(), 0.0);
}
std::vector<double> grad_values(const at::Tensor& leaf) {
  return leaf.grad().defined() ? host_values(leaf.grad()) : std::vector<double>(leaf.numel(), 0.0);
}

Result run_case(const Case& k, bool cuda, uint64_t seed) {
  Result r;
  std::mt19937_64 rng(seed);
  std::vector<HostData> host;
  for (const In& in : k.ins) host.push_back(make_host(in, rng));
  const tl::Device our_dev = cuda ? tl::Device::cuda(0) : tl::Device::cpu();
  const at::Device their_dev = cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);

  std::vector<tl::Tensor> our_leaves, our_in;
  std::vector<at::Tensor> their_leaves, their_in;
  for (size_t i = 0; i < k.ins.size(); ++i) {
    our_leaves.push_back(make_leaf(k.ins[i], host[i], our_dev));
    their_leaves.push_back(make_leaf(k.ins[i], host[i], their_dev));
    our_in.push_back(view_of(k.ins[i], our_leaves.back()));
    their_in.push_back(view_of(k.ins[i], their_leaves.back()));
  }
  std::vector<tl::Tensor> ours;
  std::vector<at::Tensor> theirs;
  for (const tl::Tensor& t : k.ours(our_in))
    if (floating(t)) ours.push_back(t);
  for (const at::Tensor& t : k.theirs(their_in))
    if (floating(t)) theirs.push_back(t);
  if (ours.size() != theirs.size()) {
    r.problem = "results: " + std::to_string(ours.size()) + " vs " + std::to_string(theirs.size());
    return r;
  }

  // Forward values, then backward of sum(result_i * grad_output_i) in both.
  tl::Tensor our_loss;
  at::Tensor their_loss;
  for (size_t i = 0; i < ours.size(); ++i) {
    const std::vector<int64_t> shape = shape_of(ours[i]);
    if (shape != shape_of(theirs[i])) {
      r.problem = "result " + std::to_string(i) + " shapes differ";
      return r;
    }
    compare("result " + std::to_string(i), host_values(ours[i]), host_values(theirs[i]), r);
    std::vector<double> g = random_values(numel(shape), rng);
    const std::vector<int64_t> shape1 = shape.empty() ? std::vector<int64_t>{1} : shape;
    tl::Tensor our_g = tl::from_vector<double>(g, shape1).to(our_dev);
    if (shape.empty()) our_g = our_g.squeeze();
    at::Tensor their_g = at::from_blob(g.data(), shape, at::TensorOptions().dtype(at::kDouble))
                             .clone()
                             .to(their_dev);
    tl::Tensor our_term = (ours[i] * our_g).sum();
    at::Tensor their_term = (theirs[i] * their_g).sum();
    our_loss = our_loss.defined() ? our_loss + our_term : our_term;
    their_loss = their_loss.defined() ? their_loss + their_term : their_term;
  }
  our_loss.backward();
  their_loss.backward();
  for (size_t i = 0; i < k.ins.size(); ++i) {
    if (!requires_grad(k.ins[i].kind)) continue;
    compare("grad of input " + std::to_string(i), grad_values(our_leaves[i]),
            grad_values(their_leaves[i]), r);
  }
  return r;
}

const Departure* departure_of(const Case& k) {
  for (const Departure& d : kDepartures)
    if (k.op == d.op && (std::string(d.what).empty() || k.what == d.what)) return &d;
  return nullptr;
}

}  // namespace

int main() {
  // An op's cases side by side (in the order its first case appears), for one line per op.
  std::vector<Case> cases = make_cases();
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < cases.size(); ++i) first.emplace(cases[i].op, i);
  std::stable_sort(cases.begin(), cases.end(),
                   [&](const Case& a, const Case& b) { return first.at(a.op) < first.at(b.op); });
  int failures = 0;

  // Every op with a derivative ("yes", "yes (composite)", ...) has a case or a reason.
  std::map<std::string, int> per_op;
  for (const Case& k : cases) per_op[k.op]++;
  for (const auto& g : tl::autograd::kOpGradients) {
    const std::string status = g.status;
    if (status.rfind("yes", 0) != 0 || per_op.count(g.op)) continue;
    bool explained = false;
    for (const Uncovered& u : kUncovered) explained |= std::string(u.op) == g.op;
    if (!explained) {
      std::printf("MISSING %s (%s): no case and no reason in kUncovered\n", g.op, g.status);
      ++failures;
    }
  }
  for (const auto& [op, n] : per_op) {
    bool known = false;
    for (const auto& g : tl::autograd::kOpGradients) known |= op == g.op;
    if (!known) {
      std::printf("UNKNOWN %s: a case for an op that op_gradients.h does not list\n", op.c_str());
      ++failures;
    }
  }

  std::vector<bool> devices = {false};
  if (tl::cuda::is_available() && torch::cuda::is_available())
    devices.push_back(true);
  else
    std::printf("no cuda:0 in %s: CPU only\n", tl::cuda::is_available() ? "torch" : "tensorlet");

  int total_cases = 0, differences = 0, departures = 0;
  for (bool cuda : devices) {
    const char* dev = cuda ? "cuda:0" : "cpu";
    size_t i = 0;
    while (i < cases.size()) {
      // One line per op and device.
      const std::string op = cases[i].op;
      size_t j = i;
      while (j < cases.size() && cases[j].op == op) ++j;
      double max_diff = 0;
      int n = 0, bad = 0;
      std::vector<std::string> notes;
      for (size_t c = i; c < j; ++c) {
        Result r;
        try {
          r = run_case(cases[c], cuda, 1000 + c);
        } catch (const std::exception& e) {
          std::string msg = e.what();
          r.problem = "threw: " + msg.substr(0, msg.find('\n'));
        }
        ++n;
        max_diff = std::max(max_diff, r.max_diff);
        if (r.problem.empty()) continue;
        if (const Departure* d = departure_of(cases[c])) {
          ++departures;
          notes.push_back("  departure (" + cases[c].what + "): " + r.problem + "; " + d->why);
        } else {
          ++bad;
          notes.push_back("  DIFFERENCE (" + cases[c].what + "): " + r.problem);
        }
      }
      std::printf("%-18s %-6s %2d cases  max diff %.3g  %s\n", op.c_str(), dev, n, max_diff,
                  bad ? "DIFFERENT" : "ok");
      for (const std::string& s : notes) std::printf("%s\n", s.c_str());
      std::fflush(stdout);
      total_cases += n;
      differences += bad;
      i = j;
    }
  }
  std::printf("%zu ops, %d cases, %d differences (%d departures written down)\n", per_op.size(),
              total_cases, differences, departures);  // cases: over every device
  return failures + differences > 0 ? 1 : 0;
}

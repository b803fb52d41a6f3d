// Sampling ops of issue 14: normal (number and tensor forms), bernoulli and multinomial, as
// composites of Philox draws (ops/random_fill.h) and existing ops, plus inverse-CDF lookup.
#include <cmath>

#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/ordering.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/ops/random_fill.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/scan.h"

namespace tensorlet {
namespace {

// torch's CHECK_NORMAL_TENSOR_STD: every std >= 0 (a NaN fails too, as torch's min() >= 0).
void check_std_tensor(const Tensor& std, const char* op) {
  check_defined(std, op);
  if (std.numel() > 0 && !(std.to(kFloat64) >= 0.0).all().item<bool>())
    fail<ShapeError>(op, "expects all elements of std >= 0.0");
}

void check_std(double std, const char* op) {
  if (!(std >= 0.0)) fail<ShapeError>(op, "expects std >= 0.0, but found std ", std);
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device())
    fail<DeviceError>(op, "expects mean and std on one device, got ", a.device(), " and ",
                      b.device());
}

// The result of the tensor forms: standard normals (or N(0, std) for a number std), in `like`'s
// dtype (floating, else DTypeError as torch's normal_ kernel) and device, of `shape`.
Tensor normals(const Shape& shape, const Tensor& like, double std,
               const std::optional<Generator>& gen, const char* op) {
  if (!is_floating_point(like.dtype()))
    fail<DTypeError>(op, "expects a floating point result dtype, got ", like.dtype());
  const Generator g = detail::generator_for(gen, like.device(), op);
  Tensor out = make_tensor(shape, like.dtype(), like.device());
  detail::fill_random({.kind = RandomKind::Normal, .a = 0, .b = std}, out, g);
  return out;
}

}  // namespace

Tensor normal(double mean, double std, IntArrayRef size, TensorOptions options,
              const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::normal";
  profiler::OpScope scope(op);
  if (!is_floating_point(options.dtype()))
    fail<DTypeError>(op, "expected a floating point dtype, got ", options.dtype());
  check_std(std, op);
  const Generator g = detail::generator_for(gen, options.device(), op);
  Tensor out = make_tensor(Shape(size), options.dtype(), options.device());
  detail::fill_random({.kind = RandomKind::Normal, .a = mean, .b = std}, out, g);
  return out;
}

// torch: N(0, std) drawn into mean's shape and dtype, then mean added.
Tensor normal(const Tensor& mean, double std, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::normal";
  profiler::OpScope scope(op);
  check_defined(mean, op);
  check_std(std, op);
  Tensor out = normals(mean.shape(), mean, std, gen, op);
  return out.add_(mean);
}

// torch: standard normals in std's shape and dtype, times std, plus mean.
Tensor normal(double mean, const Tensor& std, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::normal";
  profiler::OpScope scope(op);
  check_std_tensor(std, op);
  Tensor out = normals(std.shape(), std, 1, gen, op);
  return out.mul_(std).add_(mean);
}

// torch: standard normals in the broadcast shape and mean's dtype, times std, plus mean.
Tensor normal(const Tensor& mean, const Tensor& std, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::normal";
  profiler::OpScope scope(op);
  check_defined(mean, op);
  check_std_tensor(std, op);
  check_same_device(mean, std, op);
  const Shape shape = broadcast_shapes(mean.shape(), std.shape(), op);
  Tensor out = normals(shape, mean, 1, gen, op);
  return out.mul_(std).add_(mean);
}

Tensor bernoulli(const Tensor& p, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::bernoulli";
  profiler::OpScope scope(op);
  check_defined(p, op);
  if (!is_floating_point(p.dtype()))
    fail<DTypeError>(op, "expects a floating point p, got ", p.dtype());
  Tensor out = make_tensor(p.shape(), p.dtype(), p.device());
  detail::bernoulli_into(out, &p, 0, gen, op);
  return out;
}

Tensor bernoulli(const Tensor& self, double p, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::bernoulli";
  profiler::OpScope scope(op);
  check_defined(self, op);
  Tensor out = make_tensor(self.shape(), self.dtype(), self.device());
  detail::bernoulli_into(out, nullptr, p, gen, op);
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement,
                   const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::multinomial";
  profiler::OpScope scope(op);
  check_defined(probs, op);
  if (probs.dim() != 1 && probs.dim() != 2)
    fail<ShapeError>(op, "prob_dist must be 1 or 2 dim, got ", probs.dim(), "-D");
  if (!is_floating_point(probs.dtype()))
    fail<DTypeError>(op, "only supports floating-point dtypes for input, got ", probs.dtype());
  if (num_samples <= 0) fail<ShapeError>(op, "cannot sample n_sample <= 0 samples");
  const int64_t n = probs.size(-1);
  if (!replacement && num_samples > n)
    fail<ShapeError>(op, "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
                     " (", num_samples, " > ", n, ")");
  if (n > (int64_t{1} << 24)) fail<ShapeError>(op, "number of categories cannot exceed 2^24");
  const Generator g = detail::generator_for(gen, probs.device(), op);

  const Tensor w = (probs.dim() == 1 ? probs.unsqueeze(0) : probs).to(kFloat64).contiguous();
  const int64_t rows = w.size(0);
  Tensor out = make_tensor({rows, num_samples}, kInt64, probs.device());
  if (rows > 0) {
    // torch's checks, each one host-synchronizing reduction.
    if (n > 0 && !((w >= 0.0) & (w < INFINITY)).all().item<bool>())
      fail<ShapeError>(op, "probability tensor contains either `inf`, `nan` or element < 0");
    const Tensor positive = (w > 0.0).sum(1);  // int64 per row
    const int64_t fewest = n > 0 ? positive.amin().item<int64_t>() : 0;
    if (fewest == 0)
      fail<ShapeError>(op, "invalid multinomial distribution (sum of probabilities <= 0)");
    if (!replacement && fewest < num_samples)
      fail<ShapeError>(op,
                       "invalid multinomial distribution (with replacement=False, not enough "
                       "non-negative category to sample): a row has ",
                       fewest, " non-zero weights for ", num_samples, " samples");
    if (!replacement) {
      // The exponential race: keys E / w with E ~ Exp(1); the k smallest are a sample without
      // replacement, in draw order. E and the division round alike on every backend
      // (philox::neg_log), so the keys and the choice are the same bits everywhere. Zero weights
      // give inf (or NaN for E = 0), ranked after every positive weight's key.
      Tensor e = make_tensor(w.shape(), kFloat64, w.device());
      detail::fill_random({.kind = RandomKind::Exponential, .a = 1}, e, g);
      // abs: a -0.0 weight (it passed >= 0) would give -inf, the first key.
      out = topk(e / abs(w), num_samples, -1, /*largest=*/false, /*sorted=*/true).indices;
    } else {
      // Inverse CDF: the float64 running sum, a uniform per sample scaled by the row's total,
      // a binary search. The CPU's cumsum adds in order and the GPU's scan in another, so the
      // cdf can differ in its last bits across backends: a sample then differs only when u *
      // total falls within those bits of a category boundary (about 2^-50 per sample).
      const Tensor cdf = cumsum(w, 1).contiguous();
      Tensor u = make_tensor({rows, num_samples}, kFloat64, w.device());
      detail::fill_random({.kind = RandomKind::Uniform}, u, g);
      backend_for(w.device()).sample_from_cdf(cdf, u, out);
    }
  }
  return probs.dim() == 1 ? out.squeeze(0) : out;
}

Tensor Tensor::bernoulli(const std::optional<Generator>& gen) const {
  return tensorlet::bernoulli(*this, gen);
}
Tensor Tensor::bernoulli(double p, const std::optional<Generator>& gen) const {
  return tensorlet::bernoulli(*this, p, gen);
}
Tensor Tensor::multinomial(int64_t num_samples, bool replacement,
                           const std::optional<Generator>& gen) const {
  return tensorlet::multinomial(*this, num_samples, replacement, gen);
}

}  // namespace tensorlet

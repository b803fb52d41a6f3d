// In-place random fills (x.uniform_, normal_, exponential_, random_, bernoulli_): torch's checks,
// then one Philox draw into the tensor's elements (backends/math/philox.h's layouts).
#include <cmath>
#include <limits>

#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/out_arg.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/ops/random_fill.h"
#include "tensorlet/ops/reduce.h"

namespace tensorlet {
namespace {

// The checks every in-place fill shares: a defined, writable tensor.
void check_target(const Tensor& t, const char* op) {
  check_defined(t, op);
  check_writable(op, t);
}

void check_floating(const Tensor& t, const char* op) {
  if (!is_floating_point(t.dtype()))
    fail<DTypeError>(op, "expected a floating point tensor, got ", t.dtype());
}

void fill(const Tensor& t, const RandomParams& params, const std::optional<Generator>& gen,
          const char* op) {
  detail::fill_random(params, t, detail::generator_for(gen, t.device(), op));
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::uniform_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  check_floating(*this, op);
  // As torch: both bounds values of the dtype (finite), from <= to, and to - from finite in it.
  const double max = dispatch_dtype<kFloatingDTypes>(
      dtype(), [&]<typename T>() { return static_cast<double>(std::numeric_limits<T>::max()); },
      op);
  if (!(from >= -max && from <= max))
    fail<DTypeError>(op, "from=", from, " is out of bounds for ", dtype());
  if (!(to >= -max && to <= max))
    fail<DTypeError>(op, "to=", to, " is out of bounds for ", dtype());
  if (from > to)
    fail<ShapeError>(op, "expects to return a [from, to) range, but found from=", from,
                     " > to=", to);
  if (!(to - from <= max))
    fail<DTypeError>(op, "expects to - from <= the largest ", dtype(), ", got to=", to,
                     " and from=", from);
  fill(*this, {.kind = RandomKind::Uniform, .a = from, .b = to}, gen, op);
  return *this;
}

Tensor& Tensor::normal_(double mean, double std, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::normal_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  check_floating(*this, op);
  if (!(std >= 0.0)) fail<ShapeError>(op, "expects std >= 0.0, but found std ", std);
  fill(*this, {.kind = RandomKind::Normal, .a = mean, .b = std}, gen, op);
  return *this;
}

Tensor& Tensor::exponential_(double lambd, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::exponential_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  check_floating(*this, op);
  if (!(lambd > 0.0 && std::isfinite(lambd)))
    fail<ShapeError>(op, "expects lambda > 0.0 (and finite), but found lambda=", lambd);
  fill(*this, {.kind = RandomKind::Exponential, .a = lambd}, gen, op);
  return *this;
}

Tensor& Tensor::random_(int64_t from, int64_t to, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::random_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  if (from >= to)
    fail<ShapeError>(op, "expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
  detail::check_int_range_fits(from, to, dtype(), op);
  fill(*this, {.kind = RandomKind::Integer, .low = from, .high = to}, gen, op);
  return *this;
}

Tensor& Tensor::random_(int64_t to, const std::optional<Generator>& gen) {
  return random_(0, to, gen);
}

Tensor& Tensor::random_(const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::random_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  // torch: floats [0, 2^digits] (every integer there exact), integers [0, max], bool [0, 1].
  // high is one past the top, as uint64: int64's 2^63 wraps to INT64_MIN, and the kernel's
  // range (high - low, unsigned) is still 2^63.
  const uint64_t high = dispatch_dtype(
      dtype(),
      [&]<typename T>() -> uint64_t {
        if constexpr (std::is_same_v<T, bool>) {
          return 2;
        } else if constexpr (is_floating_v<T>) {
          return (uint64_t{1} << std::numeric_limits<T>::digits) + 1;
        } else {
          return static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1;
        }
      },
      op);
  fill(*this, {.kind = RandomKind::Integer, .low = 0, .high = static_cast<int64_t>(high)}, gen, op);
  return *this;
}

namespace detail {

void bernoulli_into(const Tensor& out, const Tensor* p_tensor, double p,
                    const std::optional<Generator>& gen, const char* op) {
  if (p_tensor != nullptr) {
    const Tensor& pt = *p_tensor;
    check_defined(pt, op);
    if (pt.device() != out.device())
      fail<DeviceError>(op, "expects p on the tensor's device ", out.device(), ", got ",
                        pt.device());
    if (!is_floating_point(pt.dtype()))
      fail<DTypeError>(op, "expects a floating point p, got ", pt.dtype());
    if (broadcast_shapes(pt.shape(), out.shape(), op) != out.shape())
      fail<ShapeError>(op, "p of shape ", pt.shape(), " does not broadcast to ", out.shape());
    if (!((pt >= 0.0) & (pt <= 1.0)).all().item<bool>())
      fail<ShapeError>(op, "expects every p to be in [0, 1]");
  } else if (!(p >= 0.0 && p <= 1.0)) {
    fail<ShapeError>(op, "expects p to be in [0, 1], but got p=", p);
  }
  const Generator g = generator_for(gen, out.device(), op);
  Tensor u = make_tensor(out.shape(), kFloat64, out.device());
  fill_random({.kind = RandomKind::Uniform}, u, g);
  const Tensor hit = p_tensor != nullptr ? u < *p_tensor : u < p;
  Tensor target = out;  // a handle to the same elements
  target.copy_(hit);
}

}  // namespace detail

Tensor& Tensor::bernoulli_(double p, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::bernoulli_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  detail::bernoulli_into(*this, nullptr, p, gen, op);
  return *this;
}

Tensor& Tensor::bernoulli_(const Tensor& p, const std::optional<Generator>& gen) {
  constexpr const char* op = "tl::bernoulli_";
  profiler::OpScope scope(op);
  check_target(*this, op);
  detail::bernoulli_into(*this, &p, 0, gen, op);
  return *this;
}

}  // namespace tensorlet

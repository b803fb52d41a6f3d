// Bad-input suite, op front-ends: dtypes, devices, dims, shapes and index ranges of the
// elementwise, reduction, indexing, joining, linear-algebra, comparison and random ops.
#include <cstdint>
#include <limits>
#include <optional>

#include "bad_input.h"

using namespace tl_test;

namespace {

// Short constructors so that each row reads as the call it makes.
tl::Tensor f(const tl::Shape& s) { return tl::ones(s); }
tl::Tensor d(const tl::Shape& s) { return tl::ones(s, tl::kFloat64); }
tl::Tensor i32(const tl::Shape& s) { return tl::zeros(s, tl::kInt32); }
tl::Tensor i64(const tl::Shape& s) { return tl::zeros(s, tl::kInt64); }
tl::Tensor b8(const tl::Shape& s) { return tl::ones(s, tl::kBool); }
tl::Tensor idx(const tl::Shape& s, int64_t v) { return tl::full(s, v, tl::kInt64); }
tl::Tensor idx32(const tl::Shape& s, int64_t v) { return tl::full(s, v, tl::kInt32); }
tl::Tensor undef() { return tl::Tensor(); }
// A cheap tensor of 2^62 elements (one stored value, stride 0).
tl::Tensor huge() { return tl::ones({1}).expand({int64_t{1} << 62}); }
// The same tensors on the first CUDA device.
tl::Tensor cu(const tl::Tensor& t) { return t.cuda(); }
constexpr std::optional<tl::Scalar> kNoBound = std::nullopt;
const std::optional<tl::Tensor> kNoTensor = std::nullopt;

}  // namespace

TEST_CASE("bad input: elementwise ops") {
  run_bad_inputs({
      // Broadcasting.
      TL_BAD(tl::ShapeError, "[tl::add] ", "[4]", tl::add(f({2, 3}), f({4}))),
      TL_BAD(tl::ShapeError, "[tl::sub] ", "[2, 3]", f({2, 3}) - f({3, 2})),
      TL_BAD(tl::ShapeError, "[tl::mul] ", "[5]", tl::mul(f({5}), f({2, 4}))),
      TL_BAD(tl::ShapeError, "[tl::div] ", "[3]", f({3}) / f({2})),
      TL_BAD(tl::ShapeError, "[tl::pow] ", "[2]", tl::pow(f({3}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::maximum] ", "[2]", tl::maximum(f({3}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::minimum] ", "[2]", tl::minimum(f({3}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::eq] ", "[2]", f({3}) == f({2})),
      TL_BAD(tl::ShapeError, "[tl::lt] ", "[2]", f({3}) < f({2})),
      TL_BAD(tl::ShapeError, "[tl::logical_and] ", "[2]", tl::logical_and(b8({3}), b8({2}))),
      TL_BAD(tl::ShapeError, "[tl::logical_or] ", "[2]", tl::logical_or(b8({3}), b8({2}))),
      // Undefined operands.
      TL_BAD(tl::Error, "[tl::add] ", "undefined", tl::add(undef(), f({2}))),
      TL_BAD(tl::Error, "[tl::mul] ", "undefined", tl::mul(f({2}), undef())),
      TL_BAD(tl::Error, "[tl::exp] ", "undefined", tl::exp(undef())),
      TL_BAD(tl::Error, "[tl::neg] ", "undefined", tl::neg(undef())),
      TL_BAD(tl::Error, "[tl::where] ", "undefined", tl::where(undef(), f({2}), f({2}))),
      TL_BAD(tl::Error, "[tl::clamp] ", "undefined", tl::clamp(undef(), 0, 1)),
      // Dtype rules (torch's).
      TL_BAD(tl::DTypeError, "[tl::sub] ", "bool", b8({2}) - b8({2})),
      TL_BAD(tl::DTypeError, "[tl::neg] ", "bool", tl::neg(b8({2}))),
      TL_BAD(tl::DTypeError, "[tl::abs] ", "bool", tl::abs(b8({2}))),
      TL_BAD(tl::DTypeError, "[tl::relu] ", "bool", tl::relu(b8({2}))),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "bool", tl::pow(b8({2}), b8({2}))),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "negative", tl::pow(i64({2}), -1)),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "negative", tl::pow(b8({2}), -2)),
      TL_BAD(tl::DTypeError, "[tl::where] ", "bool condition", tl::where(f({2}), f({2}), f({2}))),
      TL_BAD(tl::DTypeError, "[tl::where] ", "int64", tl::where(i64({2}), 1, 2)),
      TL_BAD(tl::ShapeError, "[tl::where] ", "[3]", tl::where(b8({2}), f({3}), f({2}))),
      // clamp.
      TL_BAD(tl::ShapeError, "[tl::clamp] ", "'min' or 'max'",
             tl::clamp(f({2}), kNoBound, kNoBound)),
      TL_BAD(tl::ShapeError, "[tl::clamp] ", "'min' or 'max'",
             tl::clamp(f({2}), kNoTensor, kNoTensor)),
      TL_BAD(tl::DTypeError, "[tl::clamp] ", "bool", tl::clamp(b8({2}), false, true)),
      TL_BAD(tl::DTypeError, "[tl::clamp] ", "bool", tl::clamp(b8({2}), b8({2}), b8({2}))),
      TL_BAD(tl::ShapeError, "[tl::clamp] ", "[4]", tl::clamp(f({2, 3}), f({4}), kNoTensor)),
      TL_BAD(tl::ShapeError, "[tl::clamp] ", "[5]", tl::clamp(f({2, 3}), kNoTensor, f({5}))),
      TL_BAD(tl::Error, "[tl::clamp] ", "undefined", tl::clamp(f({2}), undef(), kNoTensor)),
      TL_BAD(tl::Error, "[tl::sigmoid] ", "undefined", tl::sigmoid(undef())),
      TL_BAD(tl::Error, "[tl::logical_not] ", "undefined", tl::logical_not(undef())),
      TL_BAD(tl::Error, "[tl::result_type] ", "undefined", tl::result_type(undef(), f({2}))),
      // Bitwise operators take integer and bool tensors.
      TL_BAD(tl::DTypeError, "[tl::bitwise_not] ", "float32", ~f({2})),
      TL_BAD(tl::DTypeError, "[tl::bitwise_and] ", "float32", f({2}) & f({2})),
      TL_BAD(tl::DTypeError, "[tl::bitwise_or] ", "float32", f({2}) | b8({2})),
      TL_BAD(tl::DTypeError, "[tl::bitwise_xor] ", "float32", i64({2}) ^ 1.5),
      TL_BAD(tl::DTypeError, "[tl::bitwise_left_shift] ", "bool", b8({2}) << b8({2})),
      TL_BAD(tl::DTypeError, "[tl::bitwise_right_shift] ", "float32", f({2}) >> 1),
      TL_BAD(tl::ShapeError, "[tl::bitwise_or] ", "[3]", b8({2}) | b8({3})),
      TL_BAD(tl::DTypeError, "[tl::bitwise_not_] ", "float32", f({2}).bitwise_not_()),
      // Integer division by zero, as torch's CPU (a scalar divisor on every device).
      TL_BAD(tl::Error, "[tl::fmod] ", "ZeroDivisionError", tl::fmod(i64({2}), 0)),
      TL_BAD(tl::Error, "[tl::remainder] ", "ZeroDivisionError",
             tl::remainder(i64({2}), tl::zeros({2}, tl::kInt64))),
      TL_BAD(tl::Error, "[tl::floor_divide] ", "ZeroDivisionError",
             tl::floor_divide(7, tl::zeros({3}, tl::kInt32))),
      // A CUDA tensor divisor: found by the kernel, raised at the host's next wait for the device.
      TL_BAD_CUDA(tl::Error, "[tl::fmod] ", "ZeroDivisionError",
                  tl::fmod(i64({2}).cuda(), tl::zeros({2}, tl::kInt64).cuda()).cpu()),
      TL_BAD_CUDA(tl::Error, "[tl::remainder] ", "ZeroDivisionError",
                  (tl::remainder(i64({3}).cuda(), tl::zeros({1}, tl::kInt32).cuda()),
                   tl::cuda::synchronize())),
      TL_BAD_CUDA(tl::Error, "[tl::floor_divide] ", "ZeroDivisionError",
                  tl::floor_divide(7, tl::zeros({3}, tl::kInt8).cuda()).sum().item<int64_t>()),
      TL_BAD(tl::DTypeError, "[tl::floor_divide] ", "bool", tl::floor_divide(b8({2}), b8({2}))),
      TL_BAD(tl::ShapeError, "[tl::atan2] ", "[3]", tl::atan2(f({2}), f({3}))),
      TL_BAD(tl::Error, "[tl::logical_xor] ", "undefined", tl::logical_xor(undef(), f({2}))),
      // The new unary ops (issue 14).
      TL_BAD(tl::DTypeError, "[tl::square_] ", "bool", b8({2}).square_()),
      TL_BAD(tl::DTypeError, "[tl::reciprocal_] ", "int64", i64({2}).reciprocal_()),
      TL_BAD(tl::Error, "[tl::isnan] ", "undefined", tl::isnan(undef())),
      TL_BAD(tl::DTypeError, "[tl::silu] ", "int64", tl::silu(i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::gelu] ", "int64", tl::gelu(i64({2}), "tanh")),
      TL_BAD(tl::Error, "[tl::gelu] ", "\"fast\"", tl::gelu(f({2}), "fast")),
      TL_BAD(tl::DTypeError, "[tl::softplus] ", "int32", tl::softplus(i64({2}).to(tl::kInt32), 2)),
      TL_BAD(tl::ShapeError, "[tl::pow] ", "[3]", f({2}).pow(f({3}))),
      // In-place ops: the result must fit self's dtype and shape.
      TL_BAD(tl::DTypeError, "[tl::add_] ", "int64", i64({2}).add_(1.5)),
      TL_BAD(tl::DTypeError, "[tl::div_] ", "int64", i64({2}).div_(2)),
      TL_BAD(tl::DTypeError, "[tl::mul_] ", "bool", b8({2}).mul_(i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::sub_] ", "bool", b8({2}).sub_(b8({2}))),
      TL_BAD(tl::ShapeError, "[tl::add_] ", "[3]", f({1}).add_(f({3}))),
      TL_BAD(tl::ShapeError, "[tl::mul_] ", "[2, 3]", f({3}).mul_(f({2, 3}))),
      TL_BAD(tl::ShapeError, "[tl::add_] ", "broadcast", f({1}).expand({3}).add_(1)),
      TL_BAD(tl::Error, "[tl::add_] ", "undefined", f({2}).add_(undef())),
      // Shape ops, masked_fill, one_hot (issue 14).
      TL_BAD(tl::ShapeError, "[tl::split] ", "add up",
             tl::split(f({4}), std::vector<int64_t>{1, 2})),
      TL_BAD(tl::ShapeError, "[tl::split] ", "split_size", tl::split(f({4}), 0)),
      TL_BAD(tl::ShapeError, "[tl::split] ", "overflow", tl::split(f({4}), {INT64_MAX, 1})),
      TL_BAD(tl::ShapeError, "[tl::split_with_sizes] ", "add up",
             tl::split_with_sizes(f({4}), {1, 2})),
      TL_BAD(tl::ShapeError, "[tl::split_with_sizes] ", "non-negative",
             f({4}).split_with_sizes({5, -1})),
      TL_BAD(tl::IndexError, "[tl::squeeze] ", "multiple", f({1, 2}).squeeze({0, -2})),
      TL_BAD(tl::IndexError, "[tl::squeeze] ", "3", f({1, 2}).squeeze({3})),
      TL_BAD(tl::IndexError, "[tl::chunk] ", "0-dim", tl::chunk(f({}), 2)),
      TL_BAD(tl::ShapeError, "[tl::chunk] ", "positive", tl::chunk(f({4}), 0)),
      TL_BAD(tl::IndexError, "[tl::unbind] ", "3", tl::unbind(f({2, 3}), 3)),
      TL_BAD(tl::IndexError, "[tl::movedim] ", "repeated", tl::movedim(f({2, 3}), {0, 0}, {0, 1})),
      TL_BAD(tl::ShapeError, "[tl::movedim] ", "same number", tl::movedim(f({2, 3}), {0}, {0, 1})),
      TL_BAD(tl::ShapeError, "[tl::diagonal] ", "at least 2", tl::diagonal(f({3}))),
      TL_BAD(tl::ShapeError, "[tl::repeat] ", "smaller", tl::repeat(f({2, 3}), {2})),
      TL_BAD(tl::ShapeError, "[tl::repeat] ", "non-negative", tl::repeat(f({2}), {-1})),
      TL_BAD(tl::ShapeError, "[tl::repeat] ", "overflow",
             tl::repeat(f({2}), {int64_t{1} << 62, 4})),
      TL_BAD(tl::IndexError, "[tl::flip] ", "multiple", tl::flip(f({2, 3}), {0, -2})),
      TL_BAD(tl::ShapeError, "[tl::roll] ", "align", tl::roll(f({2, 3}), {1, 1}, {0})),
      TL_BAD(tl::ShapeError, "[tl::triu] ", "2 dimensions", tl::triu(f({3}))),
      TL_BAD(tl::ShapeError, "[tl::diag] ", "1-D or 2-D", tl::diag(f({2, 2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::diag] ", "overflow",
             tl::diag(f({2}), std::numeric_limits<int64_t>::min())),
      TL_BAD(tl::ShapeError, "[tl::diag_embed] ", "overflow",
             tl::diag_embed(f({2}), std::numeric_limits<int64_t>::max())),
      TL_BAD(tl::Error, "[tl::meshgrid] ", "\"ab\"", tl::meshgrid({f({2})}, "ab")),
      TL_BAD(tl::ShapeError, "[tl::meshgrid] ", "1-D", tl::meshgrid({f({2, 2})})),
      TL_BAD(tl::DTypeError, "[tl::one_hot] ", "float32", tl::one_hot(f({2}))),
      TL_BAD(tl::ShapeError, "[tl::one_hot] ", "empty", tl::one_hot(i64({0}))),
      TL_BAD(tl::DTypeError, "[tl::masked_fill] ", "int64", tl::masked_fill(f({2}), i64({2}), 1)),
      TL_BAD(tl::ShapeError, "[tl::masked_fill] ", "[3]", tl::masked_fill(f({2}), b8({3}), 1)),
      TL_BAD(tl::ShapeError, "[tl::masked_fill] ", "0-dimensional",
             tl::masked_fill(f({2}), b8({2}), f({1}))),
      TL_BAD(tl::ShapeError, "[tl::masked_fill_] ", "broadcast",
             f({2}).masked_fill_(b8({3, 2}), 1)),
      TL_BAD(tl::Error, "[tl::masked_fill] ", "undefined", tl::masked_fill(undef(), b8({2}), 1)),
      // A value outside the dtype's range, as torch's checked conversion.
      TL_BAD(tl::DTypeError, "[tl::masked_fill] ", "value",
             tl::masked_fill(i32({2}), b8({2}), 3e9)),
      TL_BAD(tl::DTypeError, "[tl::masked_fill_] ", "value", i32({2}).masked_fill_(b8({2}), 1e10)),
      TL_BAD(tl::DTypeError, "[tl::masked_fill] ", "value",
             tl::masked_fill(f({2}), b8({2}), 1e300)),
      // out= (issue 14).
      TL_BAD(tl::ShapeError, "[tl::add] ", "out= has shape [3]",
             [] {
               tl::Tensor out = f({3});
               return tl::add_out(out, f({2}), f({2}));
             }()),
      TL_BAD(tl::DTypeError, "[tl::div] ", "can't be cast",
             [] {
               tl::Tensor out = i64({2});
               return tl::div_out(out, i64({2}), 2);
             }()),
      TL_BAD(tl::Error, "[tl::sqrt] ", "undefined",
             [] {
               tl::Tensor out;
               return tl::sqrt_out(out, f({2}));
             }()),
      // alpha (issue 14).
      TL_BAD(tl::DTypeError, "[tl::add] ", "alpha", tl::add(i64({2}), i64({2}), 0.5)),
      TL_BAD(tl::DTypeError, "[tl::sub] ", "bool", tl::sub(f({2}), b8({2}), 2)),
      TL_BAD(tl::DTypeError, "[tl::add] ", "Boolean alpha", tl::add(b8({2}), b8({2}), 3)),
      TL_BAD(tl::DTypeError, "[tl::add] ", "alpha", tl::add(i64({2}).to(tl::kInt8), 1, 1000)),
      TL_BAD(tl::ShapeError, "[tl::add_] ", "[3]", f({2}).add_(f({3}), 2)),
      TL_BAD(tl::DTypeError, "[tl::sub_] ", "bool", b8({2}).sub_(b8({2}), true)),
      TL_BAD(tl::Error, "[tl::sub] ", "undefined", tl::sub(f({2}), undef(), 2)),
  });
}

TEST_CASE("bad input: reductions") {
  run_bad_inputs({
      TL_BAD(tl::IndexError, "[tl::sum] ", "2", tl::sum(f({2, 3}), {2})),
      TL_BAD(tl::IndexError, "[tl::sum] ", "-3", tl::sum(f({2, 3}), {-3})),
      TL_BAD(tl::IndexError, "[tl::sum] ", "dim 0 appears multiple times",
             tl::sum(f({2, 3}), {0, 0})),
      TL_BAD(tl::IndexError, "[tl::sum] ", "dim 1 appears multiple times",
             tl::sum(f({2, 3}), {1, -1})),
      TL_BAD(tl::IndexError, "[tl::sum] ", "7", f({2, 3}).sum({7})),
      TL_BAD(tl::IndexError, "[tl::prod] ", "5", tl::prod(f({2, 3}), {5})),
      TL_BAD(tl::IndexError, "[tl::mean] ", "2", tl::mean(f({2, 3}), {2})),
      TL_BAD(tl::DTypeError, "[tl::mean] ", "int64", tl::mean(i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::mean] ", "bool", tl::mean(b8({2}))),
      TL_BAD(tl::IndexError, "[tl::max] ", "2", tl::max(f({2, 3}), {2})),
      TL_BAD(tl::IndexError, "[tl::amin] ", "-4", tl::amin(f({2, 3}), {-4})),
      TL_BAD(tl::IndexError, "[tl::max] ", "[0]", tl::max(f({0}))),
      TL_BAD(tl::IndexError, "[tl::max] ", "-3", f({2, 3}).max(-3)),
      TL_BAD(tl::DTypeError, "[tl::sqrt_] ", "int64", i64({2}).sqrt_()),
      TL_BAD(tl::ShapeError, "[tl::exp_] ", "stride", f({1, 3}).expand({2, 3}).exp_()),
      TL_BAD(tl::ShapeError, "[tl::clamp_] ", "min", f({2}).clamp_(std::nullopt)),
      TL_BAD(tl::DTypeError, "[tl::clamp_] ", "int64", i64({2}).clamp_(0.5)),
      TL_BAD(tl::IndexError, "[tl::min] ", "[2, 0]", tl::min(f({2, 0}), 1)),
      TL_BAD(tl::IndexError, "[tl::amin] ", "[2, 0]", tl::amin(f({2, 0}), {1})),
      TL_BAD(tl::IndexError, "[tl::all] ", "3", tl::all(b8({2}), {3})),
      TL_BAD(tl::IndexError, "[tl::any] ", "1", tl::any(b8({2}), {1})),
      TL_BAD(tl::IndexError, "[tl::argmax] ", "2", tl::argmax(f({2, 3}), 2)),
      TL_BAD(tl::IndexError, "[tl::argmin] ", "-3", tl::argmin(f({2, 3}), -3)),
      TL_BAD(tl::IndexError, "[tl::argmax] ", "non-empty", tl::argmax(f({0}))),
      // Numerics (issue 14): floating inputs only (softmax takes a floating dtype argument).
      TL_BAD(tl::DTypeError, "[tl::softmax] ", "int64", tl::softmax(i64({2, 3}), 1)),
      TL_BAD(tl::DTypeError, "[tl::softmax] ", "bool", tl::softmax(b8({2}), 0)),
      TL_BAD(tl::DTypeError, "[tl::softmax] ", "int32", tl::softmax(f({2}), 0, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::log_softmax] ", "int32", i32({2}).log_softmax(0)),
      TL_BAD(tl::IndexError, "[tl::softmax] ", "2", tl::softmax(f({2, 3}), 2)),
      TL_BAD(tl::IndexError, "[tl::log_softmax] ", "-3", tl::log_softmax(f({2, 3}), -3)),
      TL_BAD(tl::IndexError, "[tl::softmax] ", "1", tl::softmax(f({}), 1)),
      TL_BAD(tl::Error, "[tl::softmax] ", "undefined", tl::softmax(undef(), 0)),
      TL_BAD(tl::Error, "[tl::log_softmax] ", "undefined", tl::log_softmax(undef(), 0)),
      TL_BAD(tl::IndexError, "[tl::logsumexp] ", "2", tl::logsumexp(f({2, 3}), {2})),
      TL_BAD(tl::IndexError, "[tl::logsumexp] ", "dim 1 appears multiple times",
             tl::logsumexp(f({2, 3}), {1, -1})),
      TL_BAD(tl::Error, "[tl::logsumexp] ", "undefined", tl::logsumexp(undef(), {0})),
      TL_BAD(tl::DTypeError, "[tl::var] ", "int64", tl::var(i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::std] ", "bool", b8({2}).std()),
      TL_BAD(tl::DTypeError, "[tl::var_mean] ", "int32", tl::var_mean(i32({2}))),
      TL_BAD(tl::DTypeError, "[tl::std_mean] ", "int64", tl::std_mean(i64({2}), 0)),
      TL_BAD(tl::IndexError, "[tl::var] ", "-3", tl::var(d({2, 3}), {-3})),
      TL_BAD(tl::IndexError, "[tl::std] ", "5", f({2, 3}).std({5})),
      TL_BAD(tl::IndexError, "[tl::std_mean] ", "dim 0 appears multiple times",
             tl::std_mean(f({2, 3}), {0, 0})),
      TL_BAD(tl::Error, "[tl::var] ", "undefined", tl::var(undef())),
      TL_BAD(tl::Error, "[tl::std_mean] ", "undefined", tl::std_mean(undef())),
      // Ordering (issue 14): dims and the range of k (every dtype sorts).
      TL_BAD(tl::IndexError, "[tl::sort] ", "2", tl::sort(f({2, 3}), 2)),
      TL_BAD(tl::IndexError, "[tl::argsort] ", "-3", tl::argsort(f({2, 3}), -3)),
      TL_BAD(tl::IndexError, "[tl::sort] ", "1", tl::scalar_tensor(1.0).sort(1)),
      TL_BAD(tl::Error, "[tl::sort] ", "undefined", tl::sort(undef())),
      TL_BAD(tl::Error, "[tl::argsort] ", "undefined", tl::argsort(undef())),
      TL_BAD(tl::IndexError, "[tl::topk] ", "selected index k out of range",
             tl::topk(f({2, 3}), 4)),
      TL_BAD(tl::IndexError, "[tl::topk] ", "k = -1", tl::topk(f({2, 3}), -1)),
      TL_BAD(tl::IndexError, "[tl::topk] ", "k = 2", tl::topk(tl::scalar_tensor(1.0), 2)),
      TL_BAD(tl::IndexError, "[tl::topk] ", "2", f({2, 3}).topk(1, 2)),
      TL_BAD(tl::Error, "[tl::topk] ", "undefined", tl::topk(undef(), 1)),
      TL_BAD(tl::IndexError, "[tl::kthvalue] ", "k = 0", tl::kthvalue(f({2, 3}), 0)),
      TL_BAD(tl::IndexError, "[tl::kthvalue] ", "k = 4", f({2, 3}).kthvalue(4)),
      TL_BAD(tl::IndexError, "[tl::kthvalue] ", "non-zero size", tl::kthvalue(f({2, 0}), 1)),
      TL_BAD(tl::IndexError, "[tl::kthvalue] ", "-3", tl::kthvalue(f({2, 3}), 1, -3)),
      TL_BAD(tl::Error, "[tl::kthvalue] ", "undefined", tl::kthvalue(undef(), 1)),
      TL_BAD(tl::DTypeError, "[tl::topk] ", "bool", tl::topk(b8({3}), 1)),
      TL_BAD(tl::DTypeError, "[tl::kthvalue] ", "bool", b8({3}).kthvalue(1)),
      TL_BAD_CUDA(tl::IndexError, "[tl::topk] ", "selected index k out of range",
                  tl::topk(cu(f({5})), 6)),
      TL_BAD_CUDA(tl::IndexError, "[tl::sort] ", "1", cu(f({5})).sort(1)),
      TL_BAD(tl::IndexError, "[tl::argmin] ", "non-zero size", tl::argmin(f({2, 0}), 1)),
      TL_BAD(tl::DTypeError, "[tl::argmax] ", "bool", tl::argmax(b8({3}))),
      TL_BAD(tl::DTypeError, "[tl::argmin] ", "bool", tl::argmin(b8({3}), 0)),
      TL_BAD(tl::DTypeError, "[tl::argmax] ", "bool", b8({2, 2}).argmax(1, true)),
      TL_BAD(tl::IndexError, "[tl::prod] ", "dim 0 appears multiple times",
             tl::prod(f({2}), {0, 0})),
      TL_BAD(tl::IndexError, "[tl::mean] ", "dim 0 appears multiple times",
             tl::mean(f({2}), {0, -1})),
      TL_BAD(tl::IndexError, "[tl::sum] ", "got 1", tl::sum(tl::scalar_tensor(1.0), {1})),
      TL_BAD(tl::IndexError, "[tl::sum] ", "got -2", tl::sum(tl::scalar_tensor(1.0), {-2})),
      TL_BAD(tl::IndexError, "[tl::argmax] ", "got 1", tl::argmax(tl::scalar_tensor(1.0), 1)),
      TL_BAD(tl::IndexError, "[tl::any] ", "got 5", tl::any(b8({2, 0}), {5})),
      TL_BAD(tl::Error, "[tl::sum] ", "undefined", tl::sum(undef())),
      TL_BAD(tl::Error, "[tl::argmax] ", "undefined", tl::argmax(undef())),
  });
}

TEST_CASE("bad input: scans and more reductions") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  run_bad_inputs({
      // Scans (issue 14): one dim in range; cumsum/cumprod refuse a bool dtype argument.
      TL_BAD(tl::IndexError, "[tl::cumsum] ", "2", tl::cumsum(f({2, 3}), 2)),
      TL_BAD(tl::IndexError, "[tl::cumprod] ", "-3", tl::cumprod(f({2, 3}), -3)),
      TL_BAD(tl::IndexError, "[tl::cummax] ", "1", tl::cummax(f({}), 1)),
      TL_BAD(tl::IndexError, "[tl::cummin] ", "5", i64({2, 3}).cummin(5)),
      TL_BAD(tl::IndexError, "[tl::cumsum] ", "3", f({2, 3}).cumsum(3)),
      TL_BAD(tl::DTypeError, "[tl::cumsum] ", "bool", tl::cumsum(i32({2}), 0, tl::kBool)),
      TL_BAD(tl::DTypeError, "[tl::cumprod] ", "bool", b8({2}).cumprod(0, tl::kBool)),
      TL_BAD(tl::Error, "[tl::cumsum] ", "undefined", tl::cumsum(undef(), 0)),
      TL_BAD(tl::Error, "[tl::cummax] ", "undefined", tl::cummax(undef(), 0)),
      // norm: floating inputs, "fro" the only string, no identity for inf / p < 0 when empty.
      TL_BAD(tl::DTypeError, "[tl::norm] ", "int64", tl::norm(i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::norm] ", "bool", tl::norm(b8({2}), 1)),
      TL_BAD(tl::Error, "[tl::norm] ", "nuc", tl::norm(f({2, 2}), "nuc")),
      TL_BAD(tl::IndexError, "[tl::norm] ", "2", tl::norm(f({2, 3}), 2, {2})),
      TL_BAD(tl::IndexError, "[tl::norm] ", "dim 0 appears multiple times",
             tl::norm(f({2, 3}), 1, {0, -2})),
      TL_BAD(tl::IndexError, "[tl::norm] ", "inf", tl::norm(f({0, 3}), kInf, {0})),
      TL_BAD(tl::IndexError, "[tl::norm] ", "-1", tl::norm(f({0}), -1)),
      TL_BAD(tl::Error, "[tl::norm] ", "undefined", tl::norm(undef())),
      // count_nonzero, nansum, nanmean (floating only).
      TL_BAD(tl::IndexError, "[tl::count_nonzero] ", "2", tl::count_nonzero(f({2, 3}), {2})),
      TL_BAD(tl::IndexError, "[tl::count_nonzero] ", "dim 1 appears multiple times",
             tl::count_nonzero(i64({2, 3}), {1, 1})),
      TL_BAD(tl::Error, "[tl::count_nonzero] ", "undefined", tl::count_nonzero(undef())),
      TL_BAD(tl::IndexError, "[tl::nansum] ", "-3", tl::nansum(f({2, 3}), {-3})),
      TL_BAD(tl::Error, "[tl::nansum] ", "undefined", tl::nansum(undef())),
      TL_BAD(tl::DTypeError, "[tl::nanmean] ", "int64", tl::nanmean(i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::nanmean] ", "bool", tl::nanmean(b8({2}))),
      TL_BAD(tl::IndexError, "[tl::nanmean] ", "4", tl::nanmean(f({2, 3}), {4})),
      // median: not bool; a dim in range and not empty.
      TL_BAD(tl::DTypeError, "[tl::median] ", "bool", tl::median(b8({3}))),
      TL_BAD(tl::DTypeError, "[tl::median] ", "bool", tl::median(b8({3}), 0)),
      TL_BAD(tl::IndexError, "[tl::median] ", "2", tl::median(f({2, 3}), 2)),
      TL_BAD(tl::IndexError, "[tl::median] ", "1", tl::median(f({}), 1)),
      TL_BAD(tl::IndexError, "[tl::median] ", "[2, 0]", tl::median(f({2, 0}), 1)),
      TL_BAD(tl::Error, "[tl::median] ", "undefined", tl::median(undef())),
      TL_BAD(tl::Error, "[tl::median] ", "undefined", tl::median(undef(), 0)),
      // The same checks on CUDA tensors.
      TL_BAD_CUDA(tl::IndexError, "[tl::cumsum] ", "2", tl::cumsum(cu(f({2, 3})), 2)),
      TL_BAD_CUDA(tl::DTypeError, "[tl::median] ", "bool", tl::median(cu(b8({3})))),
      TL_BAD_CUDA(tl::IndexError, "[tl::norm] ", "inf", tl::norm(cu(f({0})), kInf)),
  });
}

TEST_CASE("bad input: indexing") {
  run_bad_inputs({
      // gather: index dtype, rank, sizes, dim and values.
      TL_BAD(tl::DTypeError, "[tl::gather] ", "float32", tl::gather(f({2, 3}), 1, f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::gather] ", "bool", tl::gather(f({2, 3}), 1, b8({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::gather] ", "[3]", tl::gather(f({2, 3}), 1, idx({3}, 0))),
      TL_BAD(tl::ShapeError, "[tl::gather] ", "[4, 2]", tl::gather(f({2, 3}), 1, idx({4, 2}, 0))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "2", tl::gather(f({2, 3}), 2, idx({2, 2}, 0))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index 3", tl::gather(f({2, 3}), 1, idx({2, 2}, 3))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index -1",
             tl::gather(f({2, 3}), 0, idx({2, 2}, -1))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index 3",
             tl::gather(f({2, 3}), 1, idx32({2, 2}, 3))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index -5",
             tl::gather(f({2, 3}), -1, idx32({1, 1}, -5))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index " + std::to_string(INT64_MAX),
             tl::gather(f({2, 3}), 1, idx({2, 1}, INT64_MAX))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "size 0", tl::gather(f({3, 0}), 1, idx({3, 2}, 0))),
      TL_BAD(tl::Error, "[tl::gather] ", "undefined", tl::gather(f({2}), 0, undef())),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index 9", f({4}).gather(0, idx({2}, 9))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "got 1",
             tl::gather(tl::scalar_tensor(1.0), 1, idx({}, 0))),
      TL_BAD(tl::IndexError, "[tl::gather] ", "index 1",
             tl::gather(tl::scalar_tensor(1.0), 0, idx({}, 1))),
      // index_select.
      TL_BAD(tl::DTypeError, "[tl::index_select] ", "float32",
             tl::index_select(f({2, 3}), 1, f({2}))),
      TL_BAD(tl::DTypeError, "[tl::index_select] ", "bool", tl::index_select(f({3}), 0, b8({1}))),
      TL_BAD(tl::ShapeError, "[tl::index_select] ", "[2, 2]",
             tl::index_select(f({2, 3}), 1, idx({2, 2}, 0))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "2",
             tl::index_select(f({2, 3}), 2, idx({1}, 0))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "index 3",
             tl::index_select(f({2, 3}), 1, idx({2}, 3))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "index -1",
             tl::index_select(f({2, 3}), 0, idx({2}, -1))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "index 2",
             tl::index_select(f({2, 3}), 0, idx32({1}, 2))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "exactly one",
             tl::index_select(tl::scalar_tensor(1.0), 0, idx({2}, 0))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "index 1",
             tl::index_select(tl::scalar_tensor(1.0), 0, idx({1}, 1))),
      TL_BAD(tl::IndexError, "[tl::index_select] ", "size 0",
             tl::index_select(f({0, 2}), 0, idx({1}, 0))),
      TL_BAD(tl::Error, "[tl::index_select] ", "undefined",
             tl::index_select(undef(), 0, idx({1}, 0))),
      // masked_select.
      TL_BAD(tl::DTypeError, "[tl::masked_select] ", "int64", tl::masked_select(f({2}), i64({2}))),
      TL_BAD(tl::DTypeError, "[tl::masked_select] ", "float32", f({2}).masked_select(f({2}))),
      TL_BAD(tl::ShapeError, "[tl::masked_select] ", "[3]", tl::masked_select(f({2}), b8({3}))),
      TL_BAD(tl::Error, "[tl::masked_select] ", "undefined", tl::masked_select(f({2}), undef())),
      TL_BAD(tl::Error, "[tl::nonzero] ", "undefined", tl::nonzero(undef())),
      TL_BAD(tl::Error, "[tl::nonzero_tuple] ", "undefined", tl::nonzero_tuple(undef())),
  });
}

TEST_CASE("bad input: joining") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::cat] ", "non-empty", tl::cat({})),
      TL_BAD(tl::Error, "[tl::cat] ", "undefined", tl::cat({f({2}), undef()})),
      TL_BAD(tl::ShapeError, "[tl::cat] ", "dimension 1", tl::cat({f({2, 3}), f({2, 4})}, 0)),
      TL_BAD(tl::ShapeError, "[tl::cat] ", "[3]", tl::cat({f({2, 3}), f({3})})),
      TL_BAD(tl::ShapeError, "[tl::cat] ", "zero-dimensional",
             tl::cat({tl::scalar_tensor(1.0), tl::scalar_tensor(2.0)})),
      TL_BAD(tl::IndexError, "[tl::cat] ", "2", tl::cat({f({2, 3}), f({2, 3})}, 2)),
      TL_BAD(tl::IndexError, "[tl::cat] ", "-3", tl::cat({f({2, 3}), f({2, 3})}, -3)),
      TL_BAD(tl::ShapeError, "[tl::cat] ", "overflow", tl::cat({huge(), huge(), huge(), huge()})),
      TL_BAD(tl::ShapeError, "[tl::cat] ", "overflow",
             tl::cat({f({2}), tl::ones({1}).expand({INT64_MAX})})),
      TL_BAD(tl::ShapeError, "[tl::stack] ", "non-empty", tl::stack({})),
      TL_BAD(tl::ShapeError, "[tl::stack] ", "[3]", tl::stack({f({2}), f({3})})),
      TL_BAD(tl::IndexError, "[tl::stack] ", "3", tl::stack({f({2}), f({2})}, 3)),
      TL_BAD(tl::Error, "[tl::stack] ", "undefined", tl::stack({undef()})),
      TL_BAD(tl::ShapeError, "[tl::vstack] ", "non-empty", tl::vstack({})),
      TL_BAD(tl::ShapeError, "[tl::hstack] ", "non-empty", tl::hstack({})),
      TL_BAD(tl::ShapeError, "[tl::dstack] ", "non-empty", tl::dstack({})),
      TL_BAD(tl::Error, "[tl::atleast_3d] ", "undefined", tl::atleast_3d(undef())),
      TL_BAD(tl::ShapeError, "[tl::vstack] ", "[1, 4]", tl::vstack({f({3}), f({4})})),
      TL_BAD(tl::ShapeError, "[tl::hstack] ", "[3, 3]", tl::hstack({f({2, 3}), f({3, 3})})),
      TL_BAD(tl::ShapeError, "[tl::dstack] ", "dimension", tl::dstack({f({2, 3}), f({3, 3})})),
      TL_BAD(tl::Error, "[tl::atleast_2d] ", "undefined", tl::atleast_2d(undef())),
  });
}

TEST_CASE("bad input: linear algebra") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::matmul] ", "[2, 3] @ [4, 5]", tl::matmul(f({2, 3}), f({4, 5}))),
      TL_BAD(tl::ShapeError, "[tl::matmul] ", "[3] @ [4]", tl::matmul(f({3}), f({4}))),
      TL_BAD(tl::ShapeError, "[tl::matmul] ", "0D", tl::matmul(tl::scalar_tensor(1.0), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::matmul] ", "batch dimensions [2] and [3]",
             tl::matmul(f({2, 2, 3}), f({3, 3, 4}))),
      TL_BAD(tl::DTypeError, "[tl::matmul] ", "float32 and float64",
             tl::matmul(f({2, 2}), d({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::matmul] ", "int32 and int64",
             tl::matmul(i32({2, 2}), i64({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::matmul] ", "bool", tl::matmul(b8({2, 2}), b8({2, 2}))),
      TL_BAD(tl::Error, "[tl::matmul] ", "undefined", tl::matmul(undef(), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::mm] ", "2-D", tl::mm(f({2, 2, 2}), f({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::mm] ", "2-D", tl::mm(f({2}), f({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::mm] ", "inner dimensions differ: [2, 3] @ [2, 3]",
             tl::mm(f({2, 3}), f({2, 3}))),
      TL_BAD(tl::ShapeError, "[tl::bmm] ", "3-D", tl::bmm(f({2, 3}), f({3, 2}))),
      TL_BAD(tl::ShapeError, "[tl::bmm] ", "batch sizes differ",
             tl::bmm(f({2, 2, 3}), f({3, 3, 2}))),
      TL_BAD(tl::ShapeError, "[tl::bmm] ", "inner dimensions differ",
             tl::bmm(f({2, 2, 3}), f({2, 2, 3}))),
      TL_BAD(tl::ShapeError, "[tl::dot] ", "1-D", tl::dot(f({2, 2}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::dot] ", "[2] @ [3]", tl::dot(f({2}), f({3}))),
      TL_BAD(tl::DTypeError, "[tl::dot] ", "int64", tl::dot(f({2}), i64({2}))),
      TL_BAD(tl::ShapeError, "[tl::linear] ", "bias", tl::linear(f({2, 3}), f({4, 3}), f({5}))),
      TL_BAD(tl::ShapeError, "[tl::linear] ", "bias", tl::linear(f({2, 3}), f({4, 3}), f({3, 4}))),
      TL_BAD(tl::ShapeError, "[tl::linear] ", "bias", tl::linear(f({3}), f({4, 3}), f({2, 4}))),
      TL_BAD(tl::DTypeError, "[tl::linear] ", "bias", tl::linear(f({2, 3}), f({4, 3}), d({4}))),
      TL_BAD(tl::Error, "[tl::linear] ", "undefined", tl::linear(f({2, 3}), f({4, 3}), undef())),
      TL_BAD(tl::ShapeError, "[tl::linear] ", "weight", tl::linear(f({2, 3}), f({4, 3, 1}))),
      TL_BAD(tl::ShapeError, "[tl::linear] ", "weight", tl::linear(f({2, 3}), f({4, 2}))),
      TL_BAD(tl::DTypeError, "[tl::linear] ", "float64", tl::linear(f({2, 3}), d({4, 3}))),
  });
}

TEST_CASE("bad input: comparisons, copies and random") {
  run_bad_inputs({
      TL_BAD(tl::DTypeError, "[tl::allclose] ", "int64 and float32",
             tl::allclose(i64({2}), f({2}))),
      TL_BAD(tl::DTypeError, "[tl::allclose] ", "float32 and float64",
             tl::allclose(f({2}), d({2}))),
      TL_BAD(tl::ShapeError, "[tl::allclose] ", "[3]", tl::allclose(f({2}), f({3}))),
      TL_BAD(tl::Error, "[tl::allclose] ", "undefined", tl::allclose(undef(), f({2}))),
      TL_BAD(tl::Error, "[tl::equal] ", "undefined", tl::equal(f({2}), undef())),
      TL_BAD(tl::ShapeError, "[tl::copy_] ", "[3]", f({2}).copy_(f({3}))),
      TL_BAD(tl::Error, "[tl::item] ", "2 elements", f({2}).item<float>()),
      TL_BAD(tl::Error, "[tl::item] ", "0 elements", f({0}).item<float>()),
      TL_BAD(tl::ShapeError, "[tl::copy_] ", "broadcast", f({1}).expand({3}).copy_(f({3}))),
      TL_BAD(tl::ShapeError, "[tl::randint] ", "low=5 high=5", tl::randint(5, 5, {2})),
      TL_BAD(tl::ShapeError, "[tl::randint] ", "low=9223372036854775807 high=-9223372036854775808",
             tl::randint(INT64_MAX, INT64_MIN, {1})),
      TL_BAD(tl::ShapeError, "[tl::randint] ", "high=0", tl::randint(0, {3})),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "int32",
             tl::randint(0, int64_t{1} << 40, {2}, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "int32",
             tl::randint(INT64_MIN, INT64_MAX, {2}, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "bool", tl::randint(-1, 2, {2}, tl::kBool)),
      TL_BAD(tl::DTypeError, "[tl::rand] ", "int64", tl::rand({2}, tl::kInt64)),
      TL_BAD(tl::DTypeError, "[tl::randn] ", "int32", tl::randn({2}, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::randn] ", "bool", tl::randn({2}, tl::kBool)),
  });
}

TEST_CASE("bad input: ops on CUDA tensors") {
  run_bad_inputs({
      // Out-of-range indices on the device raise before any kernel reads them.
      TL_BAD_CUDA(tl::IndexError, "[tl::gather] ", "index 3",
                  tl::gather(cu(f({2, 3})), 1, cu(idx({2, 2}, 3)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::gather] ", "index -1",
                  tl::gather(cu(f({2, 3})), 0, cu(idx({2, 2}, -1)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::gather] ", "index 7",
                  tl::gather(cu(f({2, 3})), 1, cu(idx32({2, 2}, 7)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::gather] ", "index " + std::to_string(INT64_MIN),
                  tl::gather(cu(f({4})), 0, cu(idx({1000}, INT64_MIN)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_select] ", "index 2",
                  tl::index_select(cu(f({2, 3})), 0, cu(idx({5}, 2)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_select] ", "index -4",
                  tl::index_select(cu(f({2, 3})), 1, cu(idx32({3}, -4)))),
      TL_BAD_CUDA(tl::IndexError, "[tl::index_select] ", "index 1",
                  tl::index_select(cu(tl::scalar_tensor(1.0)), 0, cu(idx({1}, 1)))),
      // Operands on different devices.
      TL_BAD_CUDA(tl::DeviceError, "[tl::add] ", "cuda:0", tl::add(f({2}), cu(f({2})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::mul_] ", "cuda:0", f({2}).mul_(cu(f({2})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::exp] ", "out= is on cpu",
                  [] {
                    tl::Tensor out = f({2});
                    return tl::exp_out(out, cu(f({2})));
                  }()),
      TL_BAD_CUDA(tl::DeviceError, "[tl::where] ", "cuda:0",
                  tl::where(b8({2}), cu(f({2})), f({2}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::clamp] ", "cuda:0",
                  tl::clamp(cu(f({2})), f({2}), kNoTensor)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::matmul] ", "cuda:0", tl::matmul(f({2, 2}), cu(f({2, 2})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::linear] ", "bias",
                  tl::linear(cu(f({2, 3})), cu(f({4, 3})), f({4}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::gather] ", "index",
                  tl::gather(cu(f({2, 3})), 1, idx({2, 2}, 0))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::index_select] ", "index",
                  tl::index_select(cu(f({2, 3})), 1, idx({2}, 0))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::masked_select] ", "mask",
                  tl::masked_select(cu(f({2})), b8({2}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::cat] ", "cuda:0", tl::cat({f({2}), cu(f({2}))})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::allclose] ", "cuda:0", tl::allclose(f({2}), cu(f({2})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::equal] ", "cuda:0", tl::equal(cu(f({2})), f({2}))),
      // A 0-dim CPU tensor is read as a scalar beside CUDA tensors only as an input of the ops
      // torch allows it in (test_host_scalars.cpp); everything else stays refused, as in torch.
      TL_BAD_CUDA(tl::DeviceError, "[tl::mul_] ", "cuda:0",  // a CPU destination
                  tl::scalar_tensor(1.0).mul_(cu(tl::scalar_tensor(2.0)))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::add_] ", "cuda:0",
                  f({2}).add_(cu(tl::scalar_tensor(2.0)))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::add] ", "cpu",  // one element, but 1-dim
                  tl::add(cu(f({2})), f({1}))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::lt] ", "cpu", cu(f({2})) < f({1})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::add] ", "cpu",  // a CUDA 0-dim beside a CPU tensor
                  tl::add(f({2}), cu(tl::scalar_tensor(2.0)))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::add] ", "out= is on cpu",
                  [] {
                    tl::Tensor out = f({2});
                    return tl::add_out(out, cu(f({2})), tl::scalar_tensor(2.0));
                  }()),
      TL_BAD_CUDA(tl::DeviceError, "[tl::add] ", "out= is on cuda:0",  // two host 0-dims
                  [] {
                    tl::Tensor out = cu(tl::scalar_tensor(0.0));
                    return tl::add_out(out, tl::scalar_tensor(1.0), tl::scalar_tensor(2.0));
                  }()),
      TL_BAD_CUDA(tl::DeviceError, "[tl::where] ", "cpu",  // a 1-dim CPU condition
                  tl::where(b8({2}), cu(f({2})), tl::scalar_tensor(1.0))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::clamp] ", "cuda:0",  // torch's clamp takes no CPU scalar
                  tl::clamp(cu(f({2})), tl::scalar_tensor(1.0), kNoTensor)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::lerp] ", "cuda:0",  // only the weight may be one
                  tl::lerp(tl::scalar_tensor(1.0), cu(f({2})), cu(f({2})))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::masked_fill] ", "cuda:0",  // nor the mask
                  tl::masked_fill(cu(f({2})), tl::scalar_tensor(true, tl::kBool), 1.0)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::equal] ", "cuda:0",
                  tl::equal(cu(f({2})), tl::scalar_tensor(1.0))),
      TL_BAD_CUDA(tl::DeviceError, "[tl::cat] ", "cuda:0",
                  tl::cat({cu(f({2})), tl::scalar_tensor(1.0)})),
      TL_BAD_CUDA(tl::DeviceError, "[tl::matmul] ", "cuda:0",
                  tl::matmul(cu(f({2, 2})), tl::scalar_tensor(1.0))),
      // record_stream names itself (not the Stream::current its argument came from).
      TL_BAD_CUDA(tl::DeviceError, "[tl::cuda::record_stream] ", "CUDA tensor",
                  tl::cuda::record_stream(f({2}), tl::cuda::Stream::current(0))),
      // Device-side versions of the front-end checks.
      TL_BAD_CUDA(tl::DTypeError, "[tl::argmax] ", "bool", tl::argmax(cu(b8({3})))),
      TL_BAD_CUDA(tl::DTypeError, "[tl::abs] ", "bool", tl::abs(cu(b8({3})))),
      TL_BAD_CUDA(tl::DTypeError, "[tl::allclose] ", "int64",
                  tl::allclose(cu(i64({2})), cu(f({2})))),
      TL_BAD_CUDA(tl::ShapeError, "[tl::linear] ", "bias",
                  tl::linear(cu(f({2, 3})), cu(f({4, 3})), cu(f({5})))),
      TL_BAD_CUDA(
          tl::ShapeError, "[tl::randint] ", "low=3 high=1",
          tl::randint(3, 1, {2}, tl::TensorOptions(tl::kInt64).device(tl::Device::cuda(0)))),
      // Huge results on the device: out of memory (never a fault), or an overflowing size.
      TL_BAD_CUDA(tl::OutOfMemoryError, "[tl::add] ", "out of memory",
                  cu(f({1})).expand({int64_t{1} << 40}) + 1),
      TL_BAD_CUDA(tl::OutOfMemoryError, "[tl::matmul] ", "out of memory",
                  tl::matmul(cu(f({1, 1})).expand({int64_t{1} << 20, 1}),
                             cu(f({1, 1})).expand({1, int64_t{1} << 20}))),
      TL_BAD_CUDA(
          tl::ShapeError, "[tl::cat] ", "overflow",
          tl::cat({cu(f({1})).expand({int64_t{1} << 62}), cu(f({1})).expand({int64_t{1} << 62}),
                   cu(f({1})).expand({int64_t{1} << 62}), cu(f({1})).expand({int64_t{1} << 62})})),
      // Matmul on the new dtypes (issue 12): bool and mixed dtypes are refused naming the op
      // and the dtype; the float32 precision setting takes only PyTorch's three names.
      TL_BAD(tl::DTypeError, "[tl::matmul] ", "bool", tl::matmul(b8({2, 2}), b8({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::bmm] ", "bool", tl::bmm(b8({1, 2, 2}), b8({1, 2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::matmul] ", "float16",
             tl::matmul(f({2, 2}).to(tl::kFloat16), f({2, 2}))),
      TL_BAD(tl::DTypeError, "[tl::linear] ", "bfloat16",
             tl::linear(f({2, 2}).to(tl::kBFloat16), f({2, 2}))),
      TL_BAD(tl::Error, "[tl::set_float32_matmul_precision] ", "\"fast\"",
             tl::set_float32_matmul_precision("fast")),
      TL_BAD_CUDA(tl::DTypeError, "[tl::matmul] ", "bool",
                  tl::matmul(cu(b8({2, 2})), cu(b8({2, 2})))),
      // The new dtypes through the elementwise ops (issue 12).
      TL_BAD(tl::DTypeError, "[tl::bitwise_and] ", "float16",
             f({2}).to(tl::kFloat16) & f({2}).to(tl::kFloat16)),
      TL_BAD(tl::DTypeError, "[tl::bitwise_not] ", "bfloat16", ~f({2}).to(tl::kBFloat16)),
      TL_BAD(tl::DTypeError, "[tl::bitwise_or] ", "float16",
             i64({2}).to(tl::kUInt8) | f({2}).to(tl::kFloat16)),
      TL_BAD(tl::DTypeError, "[tl::add_] ", "int8", i64({2}).to(tl::kInt8).add_(1.5)),
      TL_BAD(tl::DTypeError, "[tl::div_] ", "uint8", i64({2}).to(tl::kUInt8).div_(2)),
      TL_BAD(tl::DTypeError, "[tl::mul_] ", "float16",
             i64({2}).to(tl::kInt16).mul_(f({2}).to(tl::kFloat16))),
      TL_BAD(tl::DTypeError, "[tl::sub] ", "bool", b8({2}) - f({2}).to(tl::kFloat16)),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "negative", tl::pow(i64({2}).to(tl::kInt16), -1)),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "exponent", tl::pow(i64({2}).to(tl::kInt8), 1000)),
      // Reductions on the new dtypes (issue 12): refused by the op's dtype set, before a kernel.
      TL_BAD(tl::DTypeError, "[tl::mean] ", "int8", tl::mean(tl::ones({3}, tl::kInt8))),
      TL_BAD(tl::DTypeError, "[tl::mean] ", "uint8", tl::mean(tl::ones({2, 3}, tl::kUInt8), {1})),
      TL_BAD(tl::DTypeError, "[tl::mean] ", "int16", tl::mean(tl::empty({0}, tl::kInt16))),
      TL_BAD(tl::DTypeError, "[tl::argmin] ", "bool", tl::argmin(tl::ones({2, 3}, tl::kBool), 1)),
      TL_BAD_CUDA(tl::DTypeError, "[tl::mean] ", "uint8", tl::mean(cu(tl::ones({3}, tl::kUInt8)))),
      // issue 12, data ops: rand/randn on integer dtypes, randint ranges per dtype (as torch).
      TL_BAD(tl::DTypeError, "[tl::rand] ", "int8", tl::rand({2}, tl::kInt8)),
      TL_BAD(tl::DTypeError, "[tl::rand] ", "uint8", tl::rand({2}, tl::kUInt8)),
      TL_BAD(tl::DTypeError, "[tl::randn] ", "int16", tl::randn({2}, tl::kInt16)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "uint8", tl::randint(0, 257, {2}, tl::kUInt8)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "uint8", tl::randint(-1, 3, {2}, tl::kUInt8)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "int8", tl::randint(-129, 3, {2}, tl::kInt8)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "int16", tl::randint(0, 32769, {2}, tl::kInt16)),
      TL_BAD(tl::DTypeError, "[tl::randint] ", "float16", tl::randint(0, 70000, {2}, tl::kFloat16)),
  });
}

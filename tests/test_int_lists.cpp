// Lists of integers (tl::IntArrayRef): every function taking one accepts one integer and a
// braced list, as LibTorch does, with LibTorch's meaning (one integer is a list of one).
#include <array>
#include <span>
#include <sstream>
#include <type_traits>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::Shape;
using tl::Tensor;

// What one integer and a braced list may be passed as, and what must not compile.
static_assert(std::is_convertible_v<int, tl::IntArrayRef>);
static_assert(std::is_convertible_v<int64_t, tl::IntArrayRef>);
static_assert(std::is_convertible_v<std::initializer_list<int64_t>, tl::IntArrayRef>);
static_assert(std::is_convertible_v<const std::vector<int64_t>&, tl::IntArrayRef>);
static_assert(std::is_convertible_v<const Shape&, tl::IntArrayRef>);
static_assert(std::is_convertible_v<std::span<const int64_t>, tl::IntArrayRef>);
static_assert(std::is_convertible_v<const std::array<int64_t, 2>&, tl::IntArrayRef>);
static_assert(!std::is_convertible_v<double, tl::IntArrayRef>);  // tl::zeros(2.5)
static_assert(!std::is_convertible_v<bool, tl::IntArrayRef>);
static_assert(!std::is_convertible_v<const std::vector<int>&, tl::IntArrayRef>);

std::vector<double> vals(const Tensor& t) { return values_of(t); }

// 0, 1, ..., n - 1 in `shape`, float32.
Tensor iota(const Shape& shape) { return tl::arange(shape.numel(), tl::kFloat32).reshape(shape); }

TEST_CASE("int lists: an IntArrayRef views its list; one integer is held inline") {
  const tl::IntArrayRef one = 7;  // kept past its full expression: safe, the value is inline
  CHECK(one.size() == 1);
  CHECK(one[0] == 7);
  const tl::IntArrayRef copy = one;
  CHECK(copy.vec() == std::vector<int64_t>{7});
  const std::vector<int64_t> v{3, 4, 5};
  const tl::IntArrayRef view = v;
  CHECK(view.data() == v.data());
  CHECK(view.back() == 5);
  CHECK(tl::IntArrayRef().empty());
  std::ostringstream os;
  os << view << ' ' << one << ' ' << tl::IntArrayRef();
  CHECK(os.str() == "[3, 4, 5] [7] []");
}

TEST_CASE("int lists: factories take sizes as one integer or a braced list") {
  CHECK(tl::empty(5).shape() == Shape{5});
  CHECK(tl::empty({2, 3}).shape() == Shape{2, 3});
  CHECK(tl::empty({}).shape() == Shape{});
  CHECK(vals(tl::zeros(3)) == std::vector<double>{0, 0, 0});
  CHECK(tl::zeros({2, 3}, tl::kInt64).shape() == Shape{2, 3});
  CHECK(vals(tl::ones(2)) == std::vector<double>{1, 1});
  CHECK(tl::ones({2, 2}).shape() == Shape{2, 2});
  CHECK(vals(tl::full(2, 1.5)) == std::vector<double>{1.5, 1.5});
  CHECK(tl::full(2, 7).dtype() == tl::kInt64);
  CHECK(vals(tl::full({1, 2}, 7)) == std::vector<double>{7, 7});
  CHECK(tl::full({1, 2}, 7).shape() == Shape{1, 2});
  CHECK(tl::zeros(Shape{4, 1}).shape() == Shape{4, 1});
  CHECK(tl::zeros(std::vector<int64_t>{4, 2}).shape() == Shape{4, 2});
  tl::manual_seed(1);
  CHECK(tl::rand(4).shape() == Shape{4});
  CHECK(tl::rand({2, 3}, tl::kFloat64).shape() == Shape{2, 3});
  CHECK(tl::randn(4).shape() == Shape{4});
  CHECK(tl::randn({2, 3}).shape() == Shape{2, 3});
  CHECK(tl::randint(10, 4).shape() == Shape{4});
  CHECK(tl::randint(10, {2, 3}).shape() == Shape{2, 3});
  CHECK(tl::randint(5, 10, 4).shape() == Shape{4});
  CHECK(tl::randint(5, 10, {2, 3}, tl::kInt32).dtype() == tl::kInt32);
  CHECK(tl::randint(0, 10, {}).dim() == 0);
  CHECK(tl::normal(0, 1, 4).shape() == Shape{4});
  CHECK(tl::normal(0, 1, {2, 3}).shape() == Shape{2, 3});
  const std::vector<float> six{0, 1, 2, 3, 4, 5};
  CHECK(tl::from_vector(six, 6).shape() == Shape{6});
  CHECK(tl::from_vector(six, {2, 3}).shape() == Shape{2, 3});
  std::vector<float> buf{0, 1, 2, 3, 4, 5};
  CHECK(vals(tl::from_blob(buf.data(), 6)) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(vals(tl::from_blob(buf.data(), 3, 2)) == std::vector<double>{0, 2, 4});  // strides 2
  CHECK(vals(tl::from_blob(buf.data(), {2, 3}, {1, 2})) == std::vector<double>{0, 2, 4, 1, 3, 5});
  CHECK(tl::from_blob(buf.data(), {2, 3}, tl::kFloat32).shape() == Shape{2, 3});
}

TEST_CASE("int lists: views take one integer or a braced list") {
  const Tensor x = iota({2, 3});
  CHECK(x.view(6).shape() == Shape{6});
  CHECK(x.view(-1).shape() == Shape{6});
  CHECK(x.view({3, 2}).shape() == Shape{3, 2});
  CHECK(x.reshape(6).shape() == Shape{6});
  CHECK(x.reshape({3, -1}).shape() == Shape{3, 2});
  CHECK(iota({1}).reshape({}).dim() == 0);
  CHECK(vals(x.view(6).permute(0)) == vals(x));
  CHECK(vals(x.permute({1, 0})) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(vals(iota({1}).expand(3)) == std::vector<double>{0, 0, 0});
  CHECK(x.expand({4, 2, 3}).shape() == Shape{4, 2, 3});
  CHECK(x.expand({-1, 3}).shape() == Shape{2, 3});
  CHECK(vals(x.as_strided(3, 2, 0)) == std::vector<double>{0, 2, 4});
  CHECK(vals(x.as_strided({2, 2}, {1, 2}, 1)) == std::vector<double>{1, 3, 2, 4});
  CHECK(vals(iota({1}).broadcast_to(2)) == std::vector<double>{0, 0});
  CHECK(tl::broadcast_to(x, {2, 2, 3}).shape() == Shape{2, 2, 3});
  const Tensor s = iota({1, 2, 1});
  CHECK(s.squeeze(0).shape() == Shape{2, 1});
  CHECK(s.squeeze({0, 2}).shape() == Shape{2});
  CHECK(s.squeeze({-1}).shape() == Shape{1, 2});
  CHECK(s.squeeze({1}).shape() == Shape{1, 2, 1});  // size 2: kept, as torch
  CHECK(tl::scalar_tensor(1.0).squeeze({0}).dim() == 0);
  check_throws<tl::IndexError>([&] { s.squeeze({0, -3}); }, "[tl::squeeze]");
}

TEST_CASE("int lists: split, split_with_sizes and movedim") {
  const Tensor x = iota({5, 2});
  const auto by_size = x.split(2);  // one integer here is the split size, as in LibTorch
  CHECK(by_size.size() == 3);
  const auto by_list = x.split({1, 4});
  REQUIRE(by_list.size() == 2);
  CHECK(by_list[1].shape() == Shape{4, 2});
  CHECK(tl::split(x, {2, 3}, 0)[1].shape() == Shape{3, 2});
  const auto with_sizes = x.split_with_sizes({3, 2});
  REQUIRE(with_sizes.size() == 2);
  CHECK(vals(with_sizes[1]) == std::vector<double>{6, 7, 8, 9});
  const auto whole = tl::split_with_sizes(x, 5);  // one size: one piece, the whole dim
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].shape() == Shape{5, 2});
  CHECK(tl::split_with_sizes(x, {1, 1}, 1)[0].shape() == Shape{5, 1});
  check_throws<tl::ShapeError>([&] { tl::split_with_sizes(x, {1, 1}); }, "[tl::split_with_sizes]");
  const Tensor y = iota({2, 3, 4});
  CHECK(y.movedim(0, 2).shape() == Shape{3, 4, 2});
  CHECK(y.movedim({0, 1}, {2, 0}).shape() == Shape{3, 4, 2});
  CHECK(tl::movedim(y, {0}, {2}).shape() == Shape{3, 4, 2});
  CHECK(tl::equal(tl::movedim(y, {0, 1}, {2, 0}), y.permute({1, 2, 0})));
}

TEST_CASE("int lists: repeat, tile, flip and roll take one integer or a braced list") {
  const Tensor v = iota({3});
  CHECK(vals(v.repeat(2)) == std::vector<double>{0, 1, 2, 0, 1, 2});
  CHECK(tl::repeat(v, {2, 1}).shape() == Shape{2, 3});
  CHECK(vals(v.tile(2)) == std::vector<double>{0, 1, 2, 0, 1, 2});
  CHECK(tl::tile(iota({2, 2}), 2).shape() == Shape{2, 4});  // padded with leading ones
  CHECK(tl::tile(v, {2, 1}).shape() == Shape{2, 3});
  CHECK(vals(v.flip(0)) == std::vector<double>{2, 1, 0});
  const Tensor x = iota({2, 3});
  CHECK(vals(tl::flip(x, {0, 1})) == std::vector<double>{5, 4, 3, 2, 1, 0});
  // Issue 30's example, and LibTorch's other spellings of roll.
  CHECK(vals(tl::roll(v, 1, 0)) == std::vector<double>{2, 0, 1});
  CHECK(vals(v.roll(-1, 0)) == std::vector<double>{1, 2, 0});
  CHECK(vals(tl::roll(x, 1)) == std::vector<double>{5, 0, 1, 2, 3, 4});  // flattened
  CHECK(vals(x.roll({1, 1}, {0, 1})) == std::vector<double>{5, 3, 4, 2, 0, 1});
  CHECK(vals(tl::roll(x, {1}, {1})) == std::vector<double>{2, 0, 1, 5, 3, 4});
}

TEST_CASE("int lists: reductions take one dim or a braced list of dims") {
  const Tensor x = iota({2, 3});
  CHECK(vals(x.sum(1)) == std::vector<double>{3, 12});
  CHECK(vals(tl::sum(x, {0, 1})) == std::vector<double>{15});
  CHECK(vals(x.mean(0)) == std::vector<double>{1.5, 2.5, 3.5});
  CHECK(vals(tl::prod(x + 1, 1)) == std::vector<double>{6, 120});
  CHECK(vals(x.amax({0})) == std::vector<double>{3, 4, 5});
  CHECK(vals(tl::amin(x, 1, true)) == std::vector<double>{0, 3});
  CHECK(vals(tl::all(x, 1)) == std::vector<double>{0, 1});
  CHECK(vals(x.any({0, 1})) == std::vector<double>{1});
  CHECK(vals(tl::var(x, 1)) == std::vector<double>{1, 1});
  CHECK(vals(x.std({0, 1}, 0)).size() == 1);
  CHECK(tl::var_mean(x, 0).second.shape() == Shape{3});
  CHECK(tl::std_mean(x, {1}).first.shape() == Shape{2});
  CHECK(tl::logsumexp(x, 1).shape() == Shape{2});
  CHECK(x.logsumexp({0, 1}).dim() == 0);
  CHECK(vals(tl::norm(x, 1, 1)) == std::vector<double>{3, 12});
  CHECK(vals(tl::count_nonzero(x, 1)) == std::vector<double>{2, 3});
  CHECK(vals(tl::nansum(x, {0})) == std::vector<double>{3, 5, 7});
  CHECK(vals(tl::nanmean(x, 1)) == std::vector<double>{1, 4});
  Tensor out = tl::empty(0);
  tl::sum_out(out, x, 1);
  CHECK(vals(out) == std::vector<double>{3, 12});
  Tensor all_dims = tl::empty(0);
  tl::amax_out(all_dims, x, {0, 1});
  CHECK(vals(all_dims) == std::vector<double>{5});
}

}  // namespace

// Shape ops and masked_fill / one_hot with torch's semantics on every device: views share
// storage, copies do not, values against loops over the input.
#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

std::vector<double> vals(const Tensor& t) { return values_of(t); }

Tensor iota(const Shape& shape, tl::Device dev, DType d = tl::kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return tl::arange(n, tl::TensorOptions(d)).reshape(shape).to(dev);
}

TEST_CASE("shape ops: split, chunk, unbind and movedim are views, as torch") {
  for (tl::Device dev : test_devices()) {
    Tensor x = iota({5, 4}, dev);
    auto parts = x.split(2);
    REQUIRE(parts.size() == 3);
    CHECK(parts[2].shape() == Shape{1, 4});
    CHECK(parts[1].storage() == x.storage());
    CHECK(vals(parts[1]) == std::vector<double>{8, 9, 10, 11, 12, 13, 14, 15});
    auto sized = tl::split(x, std::vector<int64_t>{1, 3}, 1);
    CHECK(sized[1].shape() == Shape{5, 3});
    auto ch = x.chunk(3, 1);  // ceil(4 / 3) = 2: two pieces, as torch
    CHECK(ch.size() == 2);
    CHECK(tl::chunk(tl::empty({0}, tl::TensorOptions().device(dev)), 3).size() == 3);
    auto rows = x.unbind(1);
    REQUIRE(rows.size() == 4);
    CHECK(vals(rows[3]) == std::vector<double>{3, 7, 11, 15, 19});
    Tensor y = iota({2, 3, 4}, dev);
    CHECK(y.movedim(0, -1).shape() == Shape{3, 4, 2});
    CHECK(tl::movedim(y, {0, 1}, {2, 0}).shape() == Shape{3, 4, 2});
    CHECK(tl::equal(tl::movedim(y, {0, 1}, {2, 0}), y.permute({1, 2, 0})));
    CHECK(x.broadcast_to({3, 5, 4}).shape() == Shape{3, 5, 4});
    check_throws<tl::ShapeError>([&] { tl::split(x, std::vector<int64_t>{1, 1}); }, "tl::split");
    check_throws<tl::IndexError>([&] { x.unbind(2); }, "tl::unbind");
  }
}

TEST_CASE("shape ops: diagonal, diag, diag_embed, tril and triu, as torch") {
  for (tl::Device dev : test_devices()) {
    Tensor m = iota({3, 4}, dev);
    CHECK(vals(m.diagonal()) == std::vector<double>{0, 5, 10});
    CHECK(vals(m.diagonal(1)) == std::vector<double>{1, 6, 11});
    CHECK(vals(m.diagonal(-1)) == std::vector<double>{4, 9});
    CHECK(m.diagonal(5).numel() == 0);
    CHECK(m.diagonal().storage() == m.storage());
    Tensor b = iota({2, 3, 3}, dev);
    CHECK(vals(tl::diagonal(b, 0, 1, 2)) == std::vector<double>{0, 4, 8, 9, 13, 17});
    CHECK(vals(tl::diag(m, 1)) == std::vector<double>{1, 6, 11});
    Tensor v = iota({3}, dev) + 1;
    CHECK(vals(tl::diag(v, 1)) ==
          std::vector<double>{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0});
    Tensor e = tl::diag_embed(iota({2, 2}, dev) + 1);
    CHECK(e.shape() == Shape{2, 2, 2});
    CHECK(vals(e) == std::vector<double>{1, 0, 0, 2, 3, 0, 0, 4});
    CHECK(vals(m.tril()) == std::vector<double>{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0});
    CHECK(vals(m.triu(1)) == std::vector<double>{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
    CHECK(vals(tl::tril(m, -1)) == std::vector<double>{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0});
    Tensor mask = tl::ones({2, 2}, tl::TensorOptions(tl::kBool).device(dev));
    CHECK(mask.triu().dtype() == tl::kBool);
    CHECK(vals(mask.triu()) == std::vector<double>{1, 1, 0, 1});
    check_throws<tl::ShapeError>([&] { tl::tril(v); }, "tl::tril");
    check_throws<tl::IndexError>([&] { tl::diagonal(m, 0, 1, -1); }, "tl::diagonal");
  }
}

TEST_CASE("shape ops: repeat, tile, flip and roll copy, as torch") {
  for (tl::Device dev : test_devices()) {
    Tensor x = iota({2, 3}, dev);
    Tensor r = x.repeat({2, 1, 2});
    CHECK(r.shape() == Shape{2, 2, 6});
    CHECK(vals(r[1][1]) == std::vector<double>{3, 4, 5, 3, 4, 5});
    CHECK(tl::equal(x.tile({2}), x.repeat({1, 2})));
    CHECK(vals(x.flip({1})) == std::vector<double>{2, 1, 0, 5, 4, 3});
    CHECK(vals(x.flip({0, 1})) == std::vector<double>{5, 4, 3, 2, 1, 0});
    CHECK(vals(x.t().flip({0})) == std::vector<double>{2, 5, 1, 4, 0, 3});
    CHECK(x.flip({}).storage() != x.storage());
    CHECK(vals(x.roll({1}, {1})) == std::vector<double>{2, 0, 1, 5, 3, 4});
    CHECK(vals(x.roll({-1}, {0})) == std::vector<double>{3, 4, 5, 0, 1, 2});
    CHECK(vals(x.roll({2})) == std::vector<double>{4, 5, 0, 1, 2, 3});
    CHECK(vals(tl::roll(x, {1, 1}, {0, 1})) == std::vector<double>{5, 3, 4, 2, 0, 1});
    check_throws<tl::ShapeError>([&] { x.repeat({2}); }, "tl::repeat");
    check_throws<tl::IndexError>([&] { x.flip({1, -1}); }, "tl::flip");
  }
}

TEST_CASE("shape ops: meshgrid, one_hot and masked_fill, as torch") {
  for (tl::Device dev : test_devices()) {
    Tensor a = iota({2}, dev), b = iota({3}, dev) + 10;
    auto ij = tl::meshgrid({a, b});
    CHECK(ij[0].shape() == Shape{2, 3});
    CHECK(vals(ij[1]) == std::vector<double>{10, 11, 12, 10, 11, 12});
    auto xy = tl::meshgrid({a, b}, "xy");
    CHECK(xy[0].shape() == Shape{3, 2});
    CHECK(vals(xy[0]) == std::vector<double>{0, 1, 0, 1, 0, 1});
    Tensor idx = tl::from_vector<int64_t>({2, 0, 1}).to(dev);
    Tensor oh = tl::one_hot(idx);
    CHECK(oh.dtype() == tl::kInt64);
    CHECK(vals(oh) == std::vector<double>{0, 0, 1, 1, 0, 0, 0, 1, 0});
    CHECK(tl::one_hot(idx, 5).shape() == Shape{3, 5});
    check_throws<tl::IndexError>([&] { tl::one_hot(idx, 2); }, "tl::one_hot");
    check_throws<tl::IndexError>([&] { tl::one_hot(idx - 1); }, "non-negative");
    Tensor x = random_tensor({3, 4}, tl::kFloat32, dev);
    Tensor mask = x > 0;
    Tensor filled = x.masked_fill(mask, -1.5);
    std::vector<double> xv = vals(x), fv = vals(filled);
    for (size_t i = 0; i < xv.size(); ++i) CHECK(fv[i] == (xv[i] > 0 ? -1.5 : xv[i]));
    Tensor i32 = random_tensor({3, 4}, tl::kInt32, dev);
    CHECK(tl::masked_fill(i32, mask, 7.9).dtype() == tl::kInt32);  // converted, as torch
    Tensor view = x.clone().t();  // in place through a view; the mask broadcasts from a row
    Tensor row = tl::from_vector<double>({1, 0, 1}).to(tl::kBool).to(dev);
    view.masked_fill_(row, tl::scalar_tensor(9.0));
    for (int64_t r = 0; r < 4; ++r)
      CHECK(vals(view[r]) == std::vector<double>{9, vals(x.t()[r])[1], 9});
    check_throws<tl::DTypeError>([&] { x.masked_fill(x, 0); }, "boolean masks");
    check_throws<tl::ShapeError>([&] { x[0].masked_fill_(mask, 0); }, "tl::masked_fill_");
  }
}

}  // namespace

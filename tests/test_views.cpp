// Views share storage and only change shape/strides/offset; reshape copies only when it must.
#include "test_util.h"

using namespace tl_test;

namespace {
tl::Tensor iota(const tl::Shape& shape, tl::DType dtype = tl::kFloat32) {
  return tl::arange(shape.numel(), dtype).view(shape);
}
}  // namespace

TEST_CASE("views: shape, strides and contiguity") {
  tl::Tensor x = iota({2, 3, 4});
  CHECK(x.shape() == tl::Shape{2, 3, 4});
  CHECK(x.strides() == tl::Shape{12, 4, 1});
  CHECK(x.is_contiguous());
  CHECK(x.numel() == 24);
  CHECK(x.dim() == 3);
  CHECK(x.size(-1) == 4);
  CHECK_FALSE(x.transpose(0, 2).is_contiguous());
  CHECK(tl::empty({0, 3}).is_contiguous());
}

TEST_CASE("views: transpose, permute and t share storage") {
  tl::Tensor x = iota({2, 3});
  tl::Tensor xt = x.t();
  CHECK(xt.shape() == tl::Shape{3, 2});
  CHECK(xt.storage() == x.storage());
  CHECK(values_of(xt) == std::vector<double>{0, 3, 1, 4, 2, 5});
  tl::Tensor y = iota({2, 3, 4}).permute({2, 0, 1});
  CHECK(y.shape() == tl::Shape{4, 2, 3});
  // y[k][i][j] == x[i][j][k] == 12 i + 4 j + k
  std::vector<double> v = values_of(y);
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) CHECK(v[k * 6 + i * 3 + j] == 12 * i + 4 * j + k);
  CHECK(iota({5}).t().shape() == tl::Shape{5});
  check_throws<tl::ShapeError>([] { iota({2, 2, 2}).t(); }, "tl::t");
  check_throws<tl::IndexError>([] { iota({2, 2}).transpose(0, 2); }, "tl::transpose");
  check_throws<tl::IndexError>([] { iota({2, 2}).permute({0, 0}); }, "tl::permute");
  check_throws<tl::ShapeError>([] { iota({2, 2}).permute({0}); }, "tl::permute");
}

TEST_CASE("views: select, operator[], slice, narrow") {
  tl::Tensor x = iota({4, 5});
  CHECK(values_of(x[1]) == std::vector<double>{5, 6, 7, 8, 9});
  CHECK(values_of(x.select(1, -1)) == std::vector<double>{4, 9, 14, 19});
  CHECK(x[2][3].item<float>() == 13);
  CHECK(values_of(x.slice(1, 1, 5, 2)) == std::vector<double>{1, 3, 6, 8, 11, 13, 16, 18});
  CHECK(x.slice(0, -2).shape() == tl::Shape{2, 5});
  CHECK(x.slice(0, 10, 20).shape() == tl::Shape{0, 5});  // clamps like Python slicing
  CHECK(x.slice(1, 3, 1).shape() == tl::Shape{4, 0});
  CHECK(values_of(x.narrow(0, 1, 2).select(1, 0)) == std::vector<double>{5, 10});
  check_throws<tl::IndexError>([&] { x[4]; }, "tl::select");
  check_throws<tl::IndexError>([&] { x.select(1, -6); }, "tl::select");
  check_throws<tl::IndexError>([&] { x.slice(0, 0, 2, 0); }, "tl::slice");
  check_throws<tl::IndexError>([&] { x.narrow(0, 3, 2); }, "tl::narrow");
  check_throws<tl::IndexError>([&] { tl::scalar_tensor(1.0)[0]; }, "tl::select");
}

TEST_CASE("views: unsqueeze, squeeze, expand") {
  tl::Tensor x = iota({3});
  CHECK(x.unsqueeze(0).shape() == tl::Shape{1, 3});
  CHECK(x.unsqueeze(-1).shape() == tl::Shape{3, 1});
  CHECK(x.unsqueeze(0).unsqueeze(2).squeeze().shape() == tl::Shape{3});
  CHECK(x.unsqueeze(0).squeeze(1).shape() == tl::Shape{1, 3});  // not size 1: unchanged
  tl::Tensor e = x.unsqueeze(0).expand({4, 3});
  CHECK(e.strides() == tl::Shape{0, 1});
  CHECK(values_of(e[3]) == std::vector<double>{0, 1, 2});
  CHECK(x.expand({2, -1}).shape() == tl::Shape{2, 3});
  check_throws<tl::ShapeError>([&] { x.expand({4}); }, "tl::expand");
  check_throws<tl::ShapeError>([&] { iota({2, 3}).expand({3}); }, "tl::expand");
  check_throws<tl::IndexError>([&] { x.unsqueeze(3); }, "tl::unsqueeze");
}

TEST_CASE("views: view and reshape") {
  tl::Tensor x = iota({2, 3, 4});
  tl::Tensor v = x.view({6, -1});
  CHECK(v.shape() == tl::Shape{6, 4});
  CHECK(v.storage() == x.storage());
  CHECK(x.view({24}).storage() == x.storage());
  // A transposed tensor cannot be viewed flat: view throws, reshape copies.
  tl::Tensor t = x.transpose(1, 2);
  check_throws<tl::ShapeError>([&] { t.view({24}); }, "tl::view");
  tl::Tensor r = t.reshape({24});
  CHECK(r.storage() != x.storage());
  std::vector<double> expect;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t j = 0; j < 3; ++j) expect.push_back(12 * i + 4 * j + k);
  CHECK(values_of(r) == expect);
  // Splitting a dim of a transposed view is still a view.
  CHECK(t.reshape({2, 2, 2, 3}).storage() == x.storage());
  CHECK(x.flatten().shape() == tl::Shape{24});
  CHECK(x.flatten(1).shape() == tl::Shape{2, 12});
  CHECK(tl::empty({0, 4}).reshape({-1, 2}).shape() == tl::Shape{0, 2});
  check_throws<tl::ShapeError>([&] { x.view({5, -1}); }, "tl::view");
  check_throws<tl::ShapeError>([&] { x.view({-1, -1}); }, "tl::view");
  check_throws<tl::ShapeError>([&] { x.reshape({7}); }, "tl::reshape");
}

TEST_CASE("views: writes through views reach the base; copy_, fill_ and rvalue assignment") {
  tl::Tensor x = tl::zeros({3, 4});
  x[1] = tl::full({4}, 7.0);
  x.select(1, 2).fill_(5.0);
  x.slice(0, 0, 1).copy_(tl::arange(4, tl::kFloat32));  // [1,4] <- [4] broadcasts
  x[2][3] = 9;
  CHECK(values_of(x) == std::vector<double>{0, 1, 2, 3, 7, 7, 5, 7, 0, 0, 5, 9});
  tl::Tensor y = x;  // lvalue assignment rebinds, shares
  y = tl::ones({2});
  CHECK(x.shape() == tl::Shape{3, 4});
  // copy_ converts dtypes and reads any layout.
  tl::Tensor d = tl::empty({4, 3}, tl::kFloat64);
  d.copy_(x.t());
  CHECK(values_of(d) == values_of(x.t()));
  // Overlapping self copy goes through a temporary.
  tl::Tensor a = tl::arange(6, tl::kFloat32);
  a.slice(0, 1).copy_(a.slice(0, 0, 5));
  CHECK(values_of(a) == std::vector<double>{0, 0, 1, 2, 3, 4});
  check_throws<tl::ShapeError>([&] { x[0].copy_(tl::ones({3})); }, "tl::copy_");
  check_throws<tl::ShapeError>([&] { tl::ones({1}).expand({3}).fill_(1); }, "tl::fill_");
  CHECK(tl::zeros({2}, tl::kInt32).fill_(-1.5).to_vector<int32_t>() ==
        std::vector<int32_t>{-1, -1});
  check_throws<tl::DTypeError>([&] { tl::zeros({2}, tl::kInt32).fill_(1e10); }, "[tl::fill_]");
  check_throws<tl::Error>(
      [] {
        tl::Tensor u;
        u.copy_(tl::ones({1}));
      },
      "tl::copy_");
}

TEST_CASE("views: contiguous, clone, to(dtype), item, to_vector") {
  tl::Tensor x = iota({3, 2}).t();
  tl::Tensor c = x.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.storage() != x.storage());
  CHECK(c.contiguous().storage() == c.storage());
  tl::Tensor k = c.clone();
  k[0][0] = 100;
  CHECK(c[0][0].item<float>() == 0);
  CHECK(x.to(tl::kInt32).dtype() == tl::kInt32);
  CHECK(x.to(tl::kInt32).to_vector<int32_t>() == std::vector<int32_t>{0, 2, 4, 1, 3, 5});
  CHECK(x.to(tl::kBool).to_vector<bool>() ==
        std::vector<bool>{false, true, true, true, true, true});
  CHECK(tl::full({}, 2.5).item<double>() == 2.5);
  CHECK(tl::full({1, 1}, 3).item<int64_t>() == 3);
  check_throws<tl::ShapeError>([&] { x.item<float>(); }, "tl::item");
  check_throws<tl::DTypeError>([&] { x.data<double>(); }, "tl::Tensor::data");
}

TEST_CASE("views: shapes beyond the supported rank and bad devices throw") {
  check_throws<tl::ShapeError>([] { (void)tl::Shape::filled(17, 1); }, "tl::Shape");
  check_throws<tl::ShapeError>([] { tl::empty({2, -1}); }, "tl::empty");
  check_throws<tl::DeviceError>([] { tl::Device::parse("gpu:0"); }, "tl::Device::parse");
  check_throws<tl::DeviceError>([] { tl::Device::parse("cuda:-1"); }, "tl::Device::parse");
  CHECK(tl::Device::parse("cuda:1") == tl::Device::cuda(1));
  CHECK(tl::Device::parse("cpu").str() == "cpu");
}

TEST_CASE("views: slice and narrow arguments near int64's limits clamp without overflow") {
  tl::Tensor x = iota({2, 3});
  // torch: x[:, 0:3:2**63-1] is [2, 1]; a one-element dim keeps its stride.
  tl::Tensor s = x.slice(1, 0, 3, INT64_MAX);
  CHECK(s.shape() == tl::Shape{2, 1});
  CHECK(s.storage() == x.storage());
  CHECK(values_of(s) == std::vector<double>{0, 3});
  CHECK(x.slice(1, INT64_MIN, INT64_MAX).shape() == tl::Shape{2, 3});
  CHECK(x.slice(1, INT64_MAX, INT64_MIN).shape() == tl::Shape{2, 0});
  CHECK(x.slice(1, 1, INT64_MAX, 2).shape() == tl::Shape{2, 1});
  CHECK(values_of(x.slice(0, -1, INT64_MAX, INT64_MAX)) == std::vector<double>{3, 4, 5});
  CHECK(x.narrow(1, 3, 0).shape() == tl::Shape{2, 0});
  CHECK(x.narrow(1, -3, 3).shape() == tl::Shape{2, 3});
}

TEST_CASE("views: as_strided within the storage, including torch's edge cases") {
  tl::Tensor x = iota({4});
  CHECK(values_of(x.as_strided({2, 2}, {1, 1}, 0)) == std::vector<double>{0, 1, 1, 2});
  CHECK(values_of(x.as_strided({2}, {1}, 2)) == std::vector<double>{2, 3});
  CHECK(values_of(x.as_strided({}, {}, 3)) == std::vector<double>{3});
  // No element reached: any offset and stride are accepted (as torch).
  CHECK(x.as_strided({0}, {1}, 100).numel() == 0);
  CHECK(x.as_strided({2, 0}, {1, 1}, 100).numel() == 0);
  // A one-element dim may carry any stride, and views of it stay in range.
  CHECK(values_of(x.as_strided({1}, {int64_t(1) << 62}, 1)) == std::vector<double>{1});
  tl::Tensor huge = x.as_strided({1, 2}, {INT64_MAX, 1}, 1);
  CHECK(values_of(huge.unsqueeze(0)) == std::vector<double>{1, 2});
  CHECK(values_of(huge.view({2, 1, 1})) == std::vector<double>{1, 2});
  CHECK(values_of(huge.t().reshape({1, 2})) == std::vector<double>{1, 2});
  CHECK(huge.slice(0, 1).numel() == 0);
  // The storage, not the view, bounds it: a slice can reach back into its base.
  CHECK(values_of(x.slice(0, 2).as_strided({4}, {1}, 0)) == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("views: 0-dim tensors view as any number of size-1 dims") {
  tl::Tensor s = tl::scalar_tensor(2.5);
  for (const tl::Shape& shape : {tl::Shape{1}, tl::Shape{1, 1, 1}, tl::Shape{-1}, tl::Shape{}}) {
    tl::Tensor v = s.view(shape);
    CHECK(v.storage() == s.storage());
    CHECK(v.strides() == tl::Shape::filled(v.dim(), 1));
    CHECK(v.item<double>() == 2.5);
  }
  CHECK(s.view({1, 1, 1}).shape() == tl::Shape{1, 1, 1});
  CHECK(s.reshape({1, 1}).storage() == s.storage());
  CHECK(s.flatten().storage() == s.storage());
  CHECK(s.flatten().shape() == tl::Shape{1});
  CHECK(s.flatten(0, -1).shape() == tl::Shape{1});
  CHECK(s.flatten(-1, 0).shape() == tl::Shape{1});
  // And back: a one-element tensor views as 0-dim.
  CHECK(s.view({1, 1}).view({}).dim() == 0);
}

TEST_CASE("views: a tensor without elements is contiguous whatever its strides") {
  tl::Tensor x = iota({6});
  CHECK(x.as_strided({2, 0, 3}, {5, 7, 2}, 0).is_contiguous());
  CHECK(x.as_strided({0, 3}, {3, 2}, 0).is_contiguous());
  CHECK_FALSE(x.as_strided({1, 3}, {3, 2}, 0).is_contiguous());
  // An empty view of the same shape keeps its strides (torch's computeStride).
  tl::Tensor e = tl::empty({3, 0}).t();
  CHECK(e.view({0, 3}).strides() == e.strides());
  CHECK(tl::ones({0}).reshape({3, -1}).shape() == tl::Shape{3, 0});
}

// Factories: values, dtypes inferred as torch infers them, options, and bad arguments.
#include "test_util.h"

using namespace tl_test;

TEST_CASE("factories: zeros, ones, full, empty and options") {
  CHECK(values_of(tl::zeros({2, 2})) == std::vector<double>(4, 0));
  CHECK(values_of(tl::ones({3}, tl::kInt32)) == std::vector<double>(3, 1));
  CHECK(tl::ones({3}, tl::kInt32).dtype() == tl::kInt32);
  CHECK(tl::zeros({2}).dtype() == tl::kFloat32);
  CHECK(tl::full({2}, 7).dtype() == tl::kInt64);  // inferred from the value, as torch.full
  CHECK(tl::full({2}, 7.5).dtype() == tl::kFloat32);
  CHECK(tl::full({2}, true).dtype() == tl::kBool);
  CHECK(tl::full({2}, 7, tl::kFloat64).dtype() == tl::kFloat64);
  CHECK(values_of(tl::full({2, 3}, -1.25)) == std::vector<double>(6, -1.25));
  CHECK(tl::empty({4, 0, 2}).numel() == 0);
  tl::TensorOptions o = tl::TensorOptions(tl::kFloat64).device(tl::Device::cpu());
  CHECK(tl::ones({1}, o).dtype() == tl::kFloat64);
  CHECK(tl::zeros({1}, tl::Device::cpu()).device() == tl::Device::cpu());
  CHECK(tl::scalar_tensor(3).dim() == 0);
  CHECK(tl::scalar_tensor(3).dtype() == tl::kFloat32);
  check_throws<tl::ShapeError>([] { tl::zeros({-2}); }, "[tl::zeros]");
  // As torch: a fraction is truncated into an integer dtype; a value out of its range is refused.
  CHECK(tl::full({2}, 1.5, tl::kInt64).to_vector<int64_t>() == std::vector<int64_t>{1, 1});
  check_throws<tl::DTypeError>([] { tl::full({2}, 1e10, tl::kInt32); }, "[tl::full]");
}

TEST_CASE("factories: the *_like family keeps shape, dtype and device unless told") {
  tl::Tensor x = tl::ones({2, 3}, tl::kInt32).t();
  CHECK(tl::zeros_like(x).shape() == tl::Shape{3, 2});
  CHECK(tl::zeros_like(x).dtype() == tl::kInt32);
  CHECK(tl::ones_like(x, tl::kFloat64).dtype() == tl::kFloat64);
  CHECK(values_of(tl::full_like(x, 4)) == std::vector<double>(6, 4));
  CHECK(tl::empty_like(x).is_contiguous());
}

TEST_CASE("factories: arange and linspace") {
  CHECK(tl::arange(5).dtype() == tl::kInt64);
  CHECK(values_of(tl::arange(5)) == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(values_of(tl::arange(2, 11, 3)) == std::vector<double>{2, 5, 8});
  CHECK(values_of(tl::arange(5, 0, -2)) == std::vector<double>{5, 3, 1});
  CHECK(tl::arange(0, 1, 0.25).dtype() == tl::kFloat32);
  CHECK(values_of(tl::arange(0, 1, 0.25)) == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(tl::arange(3, 3).numel() == 0);
  CHECK(tl::arange(4, tl::kFloat64).dtype() == tl::kFloat64);
  check_throws<tl::Error>([] { tl::arange(0, 5, 0); }, "tl::arange");
  check_throws<tl::Error>([] { tl::arange(5, 0, 1); }, "tl::arange");
  std::vector<double> l = values_of(tl::linspace(-1, 1, 5, tl::kFloat64));
  CHECK(l == std::vector<double>{-1, -0.5, 0, 0.5, 1});
  CHECK(values_of(tl::linspace(0, 1, 7)).back() == 1.0);
  CHECK(values_of(tl::linspace(2, 3, 1)) == std::vector<double>{2});
  CHECK(tl::linspace(2, 3, 0).numel() == 0);
  check_throws<tl::ShapeError>([] { tl::linspace(0, 1, -1); }, "tl::linspace");
}

TEST_CASE("factories: eye and from_vector") {
  CHECK(values_of(tl::eye(3)) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(values_of(tl::eye(2, 3, tl::kInt32)) == std::vector<double>{1, 0, 0, 0, 1, 0});
  CHECK(tl::eye(0).shape() == tl::Shape{0, 0});
  check_throws<tl::ShapeError>([] { tl::eye(-1); }, "tl::eye");
  tl::Tensor v = tl::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(v.shape() == tl::Shape{2, 3});
  CHECK(v.dtype() == tl::kFloat32);
  CHECK(v[1][2].item<float>() == 6);
  CHECK(tl::from_vector(std::vector<int64_t>{4, 5}).shape() == tl::Shape{2});
  CHECK(tl::from_vector(std::vector<bool>{true, false}).to_vector<bool>() ==
        std::vector<bool>{true, false});
  CHECK(tl::from_vector(std::vector<double>{}).numel() == 0);
  check_throws<tl::ShapeError>(
      [] {
        tl::from_vector(std::vector<float>{1, 2, 3}, {2, 2});
      },
      "tl::from_vector");
}

TEST_CASE("factories: arange lengths and values match torch 2.11") {
  struct Case {
    tl::Tensor got;
    std::vector<double> want;
  };
  // torch 2.11's rule (aten/src/ATen/native/RangeUtils.h, compute_arange_size): int64 counts the
  // integer range of start, end and step truncated to int64; every other dtype counts
  // ceil((end - start) / step) in double on the values as given. An integer dtype's values are
  // truncated start + i * truncated step, wrapped into the dtype.
  std::vector<Case> cases{
      // Issue 30's examples, and torch's own outputs quoted in pytorch#80589, #149097, #151206.
      {tl::arange(1, 10.5, 1.0, tl::kInt64), {1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {tl::arange(0, 3.3, 1.0, tl::kInt64), {0, 1, 2}},
      {tl::arange(-1.5, 1.5, 1, tl::kInt64), {-1, 0}},
      {tl::arange(-1.5, 1.5, 1, tl::kInt32), {-1, 0, 1}},
      {tl::arange(0, 0.5, 1, tl::kInt64), {}},
      {tl::arange(0, 0.5, 1, tl::kInt32), {0}},
      {tl::arange(0, 1.5, 1, tl::kInt64), {0}},
      {tl::arange(0, 1.5, 1, tl::kInt32), {0, 1}},
      // int64: fractional start, end and step truncate before counting.
      {tl::arange(0, 2.5, 1, tl::kInt64), {0, 1}},
      {tl::arange(2.5, tl::kInt64), {0, 1}},
      {tl::arange(0.5, 3, 1, tl::kInt64), {0, 1, 2}},
      {tl::arange(0.5, 5, 1.5, tl::kInt64), {0, 1, 2, 3, 4}},
      {tl::arange(0, 2.1, 1.5, tl::kInt64), {0, 1}},
      {tl::arange(0, 5, 1.9, tl::kInt64), {0, 1, 2, 3, 4}},
      {tl::arange(-2.5, 0, 1, tl::kInt64), {-2, -1}},
      {tl::arange(0.5, 0.7, 1, tl::kInt64), {}},
      // int64, negative steps: truncated toward zero too.
      {tl::arange(2.9, 0, -1, tl::kInt64), {2, 1}},
      {tl::arange(0, -2.5, -1, tl::kInt64), {0, -1}},
      {tl::arange(5.5, 0.5, -1.5, tl::kInt64), {5, 4, 3, 2, 1}},
      {tl::arange(-0.5, -3.5, -1, tl::kInt64), {0, -1, -2}},
      // The other integer dtypes count in double, then step in truncated integers.
      {tl::arange(1, 10.5, 1.0, tl::kInt32), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
      {tl::arange(0, 3.3, 1.0, tl::kInt32), {0, 1, 2, 3}},
      {tl::arange(0, 3.3, 1.0, tl::kInt16), {0, 1, 2, 3}},
      {tl::arange(0.5, 5, 1.5, tl::kInt32), {0, 1, 2}},
      {tl::arange(2.9, 0, -1, tl::kInt32), {2, 1, 0}},
      {tl::arange(5.5, 0.5, -1.5, tl::kInt8), {5, 4, 3, 2}},
      {tl::arange(-0.5, -3.5, -1, tl::kInt32), {0, -1, -2}},
      {tl::arange(0, 3e9, 1e9, tl::kInt32), {0, 1e9, 2e9}},
      {tl::arange(100, 300, 100, tl::kInt8), {100, -56}},
      {tl::arange(0, -3, -1, tl::kUInt8), {0, 255, 254}},
      // Floating dtypes count in double on the values as given.
      {tl::arange(0, 2.5), {0, 1, 2}},
      {tl::arange(1, 10.5, 1.0, tl::kFloat32), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
      {tl::arange(0, 3.3, 1.0, tl::kFloat64), {0, 1, 2, 3}},
      {tl::arange(0.5, -1.25, -0.75, tl::kFloat64), {0.5, -0.25, -1}},
      {tl::arange(-1.5, 1.5, 0.5, tl::kFloat16), {-1.5, -1, -0.5, 0, 0.5, 1}},
      {tl::arange(0, 10, 3, tl::kFloat32), {0, 3, 6, 9}},
      {tl::arange(5, 0, -2), {5, 3, 1}},
      {tl::arange(0, 1, int64_t(1) << 62), {0}},
      // Integer bounds past 2^53: int64 counts exactly, the others through double ((2^62 + 1)
      // rounds to 2^62).
      {tl::arange(0, (int64_t(1) << 62) + 1, int64_t(1) << 61),
       {0, 2305843009213693952.0, 4611686018427387904.0}},
      {tl::arange(0, (int64_t(1) << 62) + 1, int64_t(1) << 61, tl::kFloat64),
       {0, 2305843009213693952.0}},
      {tl::arange(INT64_MIN, INT64_MAX, int64_t(1) << 62, tl::kFloat64),
       {-9223372036854775808.0, -4611686018427387904.0, 0, 4611686018427387904.0}},
      // int64 bounds count exactly even across int64's whole range, where torch's int64
      // arithmetic overflows.
      {tl::arange(5, 0, INT64_MIN), {5}},
  };
  for (const Case& c : cases) CHECK(values_of(c.got) == c.want);
  CHECK(tl::arange(0, 3e9, 1e9, tl::kInt32).dtype() == tl::kInt32);
  CHECK(tl::arange(5.5, 0.5, -1.5, tl::kInt8).dtype() == tl::kInt8);
  CHECK(tl::arange(1, 10.5, 1.0).dtype() == tl::kFloat32);
  tl::Tensor wide = tl::arange(INT64_MIN, INT64_MAX, int64_t(1) << 62);
  CHECK(wide.to_vector<int64_t>() ==
        std::vector<int64_t>{INT64_MIN, -(int64_t(1) << 62), 0, int64_t(1) << 62});
  CHECK(tl::arange(INT64_MAX - 2, INT64_MAX).to_vector<int64_t>() ==
        std::vector<int64_t>{INT64_MAX - 2, INT64_MAX - 1});
}

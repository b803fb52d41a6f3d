// Bad-input suite, sizes, views and factories: overflow-checked shapes, checked views, 0-d tensors,
// undefined tensors.
#include <cmath>
#include <cstdint>

#include "bad_input.h"

using namespace tl_test;

namespace {
constexpr int64_t kBig = int64_t(1) << 62;
constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kMin = INT64_MIN;
}  // namespace

TEST_CASE("bad input: storage sizes overflow or exceed memory") {
  run_bad_inputs({
      // Element count overflows int64.
      TL_BAD(tl::ShapeError, "[tl::zeros] ", "overflowed",
             tl::zeros({int64_t(1) << 32, int64_t(1) << 32})),
      TL_BAD(tl::ShapeError, "[tl::ones] ", "overflowed", tl::ones({3, kBig + 1, 4})),
      TL_BAD(tl::ShapeError, "[tl::empty] ", "overflowed", tl::empty({kMax, 2})),
      TL_BAD(tl::ShapeError, "[tl::full] ", "overflowed", tl::full({kBig, 4}, 1.5)),
      TL_BAD(tl::ShapeError, "[tl::rand] ", "overflowed", tl::rand({kBig, 8})),
      TL_BAD(tl::ShapeError, "[tl::randn] ", "overflowed", tl::randn({kBig, kBig})),
      TL_BAD(tl::ShapeError, "[tl::randint] ", "overflowed", tl::randint(0, 5, {kBig, 2, 2})),
      TL_BAD(tl::ShapeError, "[tl::zeros] ", "sizes=[0, 4611686018427387904, 4]",
             tl::zeros({0, kBig, 4})),
      // The byte count overflows int64.
      TL_BAD(tl::ShapeError, "[tl::empty] ", "overflowed", tl::empty({kBig})),
      TL_BAD(tl::ShapeError, "[tl::zeros] ", "overflowed", tl::zeros({kBig})),
      TL_BAD(tl::ShapeError, "[tl::zeros] ", "overflowed", tl::zeros({kBig}, tl::kInt32)),
      TL_BAD(tl::ShapeError, "[tl::ones] ", "overflowed",
             tl::ones({int64_t(1) << 61}, tl::kFloat64)),
      TL_BAD(tl::ShapeError, "[tl::rand] ", "overflowed", tl::rand({kBig})),
      TL_BAD(tl::ShapeError, "[tl::randn] ", "overflowed", tl::randn({kBig}, tl::kFloat64)),
      TL_BAD(tl::ShapeError, "[tl::randint] ", "overflowed", tl::randint(10, {kBig})),
      TL_BAD(tl::ShapeError, "[tl::full] ", "overflowed", tl::full({kBig}, int64_t(7))),
      TL_BAD(tl::ShapeError, "[tl::linspace] ", "overflowed", tl::linspace(0, 1, kBig)),
      TL_BAD(tl::ShapeError, "[tl::eye] ", "overflowed",
             tl::eye(int64_t(1) << 31, int64_t(1) << 31)),
      TL_BAD(tl::ShapeError, "[tl::eye] ", "overflowed", tl::eye(kBig)),
      TL_BAD(tl::ShapeError, "[tl::arange] ", "overflowed", tl::arange(0, kBig)),
      TL_BAD(tl::ShapeError, "[tl::zeros_like] ", "overflowed",
             tl::zeros_like(tl::ones({1}).expand({kBig}))),
      TL_BAD(tl::ShapeError, "[tl::clone] ", "overflowed", tl::ones({1}).expand({kBig}).clone()),
      TL_BAD(tl::ShapeError, "[tl::to] ", "overflowed",
             tl::ones({1}).expand({kBig}).to(tl::kFloat64)),
      // The byte count fits, but no host has that much memory.
      TL_BAD(tl::OutOfMemoryError, "[tl::empty] ", "bytes",
             tl::empty({int64_t(1) << 58}, tl::kFloat64)),
      TL_BAD(tl::OutOfMemoryError, "[tl::zeros] ", "bytes",
             tl::zeros({int64_t(1) << 60}, tl::kBool)),
      TL_BAD(tl::OutOfMemoryError, "[tl::rand] ", "bytes", tl::rand({int64_t(1) << 59})),
      TL_BAD(tl::OutOfMemoryError, "[tl::to_vector] ", "bytes",
             tl::ones({1}, tl::kFloat64).expand({int64_t(1) << 58}).to_vector<double>()),
      TL_BAD(tl::OutOfMemoryError, "[tl::contiguous] ", "bytes",
             tl::ones({1}).expand({int64_t(1) << 59}).contiguous()),
      TL_BAD(tl::OutOfMemoryError, "[tl::reshape] ", "bytes",
             tl::ones({1, 2}, tl::kFloat64).expand({int64_t(1) << 58, 2}).t().reshape({-1})),
  });
}

TEST_CASE("bad input: factory arguments name the factory") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::empty] ", "-2", tl::empty({-2})),
      TL_BAD(tl::ShapeError, "[tl::zeros] ", "-2", tl::zeros({-2})),
      TL_BAD(tl::ShapeError, "[tl::ones] ", "-1", tl::ones({3, -1})),
      TL_BAD(tl::ShapeError, "[tl::full] ", "-3", tl::full({-3}, 1)),
      TL_BAD(tl::ShapeError, "[tl::rand] ", "-2", tl::rand({-2})),
      TL_BAD(tl::ShapeError, "[tl::randn] ", "-2", tl::randn({2, -2})),
      TL_BAD(tl::ShapeError, "[tl::randint] ", "-2", tl::randint(0, 3, {-2})),
      TL_BAD(tl::ShapeError, "[tl::from_vector] ", "-2",
             tl::from_vector(std::vector<float>{}, {-2, 0})),
      TL_BAD(tl::ShapeError, "[tl::from_vector] ", "needs",
             tl::from_vector(std::vector<float>{1, 2, 3}, {2, 2})),
      TL_BAD(tl::ShapeError, "[tl::from_vector] ", "overflowed",
             tl::from_vector(std::vector<float>{1}, {kBig, kBig})),
      TL_BAD(tl::Error, "[tl::empty_like] ", "undefined", tl::empty_like(tl::Tensor())),
      TL_BAD(tl::Error, "[tl::zeros_like] ", "undefined", tl::zeros_like(tl::Tensor())),
      TL_BAD(tl::Error, "[tl::rand_like] ", "undefined", tl::rand_like(tl::Tensor())),
  });
}

TEST_CASE("bad input: arange lengths and bounds") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::arange] ", "18446744073709551615 elements",
             tl::arange(kMin, kMax)),
      TL_BAD(tl::ShapeError, "[tl::arange] ", "step -1", tl::arange(kMax, kMin, -1)),
      TL_BAD(tl::ShapeError, "[tl::arange] ", "more than int64", tl::arange(0.0, 1e30, 1e-30)),
      TL_BAD(tl::ShapeError, "[tl::arange] ", "more than int64", tl::arange(-1e308, 1e308, 1e-10)),
      TL_BAD(tl::ShapeError, "[tl::arange] ", "more than int64", tl::arange(0, 9.3e18, 1.0)),
      TL_BAD(tl::Error, "[tl::arange] ", "step -9223372036854775808", tl::arange(0, 5, kMin)),
      TL_BAD(tl::Error, "[tl::arange] ", "nonzero", tl::arange(0, 5, 0)),
      TL_BAD(tl::Error, "[tl::arange] ", "nonzero", tl::arange(0.0, 5.0, 0.0)),
      TL_BAD(tl::Error, "[tl::arange] ", "finite", tl::arange(0.0, 5.0, INFINITY)),
      TL_BAD(tl::Error, "[tl::arange] ", "nan", tl::arange(NAN, 5.0)),
      TL_BAD(tl::Error, "[tl::arange] ", "inf", tl::arange(0.0, INFINITY)),
      TL_BAD(tl::Error, "[tl::arange] ", "step 0.5", tl::arange(0, 3, 0.5, tl::kInt64)),
      TL_BAD(tl::Error, "[tl::arange] ", "step -0.25", tl::arange(3, 0, -0.25, tl::kInt32)),
      TL_BAD(tl::Error, "[tl::arange] ", "start", tl::arange(1e30, 1e30 + 1e15, 1e15, tl::kInt64)),
      TL_BAD(tl::Error, "[tl::arange] ", "end", tl::arange(0, 1e30, 1e29, tl::kInt64)),
      // Signs are checked on the values as given, before an integer dtype truncates them (as
      // torch 2.11's arange_check_bounds): both bounds truncate to 0 here.
      TL_BAD(tl::Error, "[tl::arange] ", "inconsistent", tl::arange(0, -0.5, 1, tl::kInt64)),
      TL_BAD(tl::Error, "[tl::arange] ", "inconsistent", tl::arange(0.7, 0.3, 1, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::arange] ", "bool", tl::arange(0, 2, 1, tl::kBool)),
  });
}

TEST_CASE("bad input: as_strided stays inside its storage") {
  run_bad_inputs({
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "out of bounds",
             tl::ones({4}).as_strided({10}, {1}, 0)),
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "out of bounds",
             tl::ones({4}).as_strided({2}, {1}, 3)),
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "out of bounds",
             tl::ones({4}).as_strided({2}, {1}, 4)),
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "out of bounds",
             tl::ones({4}).as_strided({2, 2}, {3, 1}, 0)),
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "out of bounds",
             tl::ones({4}).slice(0, 2).as_strided({}, {}, 4)),
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "-3", tl::ones({4}).as_strided({2}, {1}, -3)),
      TL_BAD(tl::IndexError, "[tl::as_strided] ", "-1", tl::ones({4}).as_strided({0}, {1}, -1)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "-2", tl::ones({4}).as_strided({-2}, {1}, 0)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "-1", tl::ones({4}).as_strided({2}, {-1}, 0)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "differ",
             tl::ones({4}).as_strided({2}, {1, 1}, 0)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "overflowed",
             tl::ones({4}).as_strided({3}, {kBig}, 0)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "overflowed",
             tl::ones({4}).as_strided({3, 0}, {kMax, 1}, 0)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "overflowed",
             tl::ones({4}).as_strided({2}, {1}, kMax)),
      TL_BAD(tl::ShapeError, "[tl::as_strided] ", "overflowed",
             tl::ones({4}).as_strided({kBig, kBig}, {0, 0}, 0)),
  });
}

TEST_CASE("bad input: view arguments near int64's limits") {
  run_bad_inputs({
      TL_BAD(tl::IndexError, "[tl::narrow] ", "9223372036854775807",
             tl::ones({2, 3}).narrow(1, 1, kMax)),
      TL_BAD(tl::IndexError, "[tl::narrow] ", "-1", tl::ones({2, 3}).narrow(1, 1, -1)),
      TL_BAD(tl::IndexError, "[tl::narrow] ", "-4", tl::ones({2, 3}).narrow(1, -4, 1)),
      TL_BAD(tl::IndexError, "[tl::slice] ", "step", tl::ones({2, 3}).slice(1, 0, 3, 0)),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "invalid for input of size 6",
             tl::ones({2, 3}).reshape({kBig, 4, -1})),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "invalid for input of size 6",
             tl::ones({2, 3}).reshape({kBig, 4, 0})),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "invalid for input of size 0",
             tl::ones({0}).reshape({kBig, 4, 0})),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "invalid for input of size 0",
             tl::ones({0}).reshape({kBig, 4, -1})),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "ambiguous", tl::ones({0, 3}).reshape({0, -1})),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "only one", tl::ones({2}).reshape({-1, -1})),
      TL_BAD(tl::ShapeError, "[tl::reshape] ", "-2", tl::ones({2}).reshape({-2, -1})),
      TL_BAD(tl::ShapeError, "[tl::view] ", "invalid for input of size 6",
             tl::ones({6}).view({kMax, kMax})),
      TL_BAD(tl::ShapeError, "[tl::view] ", "", tl::ones({2}).view({3})),
      TL_BAD(tl::ShapeError, "[tl::view] ", "invalid for input of size 0",
             tl::ones({0}).view({kBig, kBig, 0})),
      TL_BAD(tl::ShapeError, "[tl::expand] ", "-5", tl::ones({3}).expand({-5, 3})),
      TL_BAD(tl::ShapeError, "[tl::expand] ", "-5", tl::ones({1, 3}).expand({-5, 3})),
      TL_BAD(tl::ShapeError, "[tl::expand] ", "-1 is not allowed", tl::ones({3}).expand({-1, 3})),
      TL_BAD(tl::ShapeError, "[tl::expand] ", "overflowed", tl::ones({1}).expand({kBig, kBig})),
      TL_BAD(tl::ShapeError, "[tl::expand] ", "overflowed", tl::ones({1}).expand({0, kBig, kBig})),
      TL_BAD(tl::ShapeError, "[tl::expand] ", "overflowed", tl::ones({1, 1}).expand({kBig, 4})),
      TL_BAD(tl::ShapeError, "[tl::cat] ", "overflow",
             tl::cat({tl::ones({1}).expand({kMax}), tl::ones({1}).expand({kMax})})),
      TL_BAD(tl::ShapeError, "[tl::stack] ", "overflow",
             tl::stack({tl::ones({1}).expand({kBig}), tl::ones({1}).expand({kBig})})),
      // Each dim fits, the element count of the result does not (3 * 2^62).
      TL_BAD(tl::ShapeError, "[tl::stack] ", "overflow",
             tl::stack({tl::ones({1}).expand({int64_t(1) << 62}),
                        tl::ones({1}).expand({int64_t(1) << 62}),
                        tl::ones({1}).expand({int64_t(1) << 62})},
                       1)),
  });
}

TEST_CASE("bad input: 0-dim tensors have no dims to name") {
  run_bad_inputs({
      TL_BAD(tl::IndexError, "[tl::Tensor::size] ", "no dimensions",
             tl::scalar_tensor(1.0).size(0)),
      TL_BAD(tl::IndexError, "[tl::Tensor::size] ", "no dimensions",
             tl::scalar_tensor(1.0).size(-1)),
      TL_BAD(tl::IndexError, "[tl::Tensor::stride] ", "no dimensions",
             tl::scalar_tensor(1.0).stride(-1)),
      TL_BAD(tl::IndexError, "[tl::Tensor::stride] ", "no dimensions",
             tl::scalar_tensor(1.0).stride(0)),
      TL_BAD(tl::IndexError, "[tl::flatten] ", "5", tl::scalar_tensor(1.0).flatten(5)),
      TL_BAD(tl::IndexError, "[tl::flatten] ", "-2", tl::scalar_tensor(1.0).flatten(0, -2)),
      TL_BAD(tl::ShapeError, "[tl::view] ", "invalid for input of size 1",
             tl::scalar_tensor(1.0).view({2})),
      TL_BAD(tl::IndexError, "[tl::Tensor::size] ", "3", tl::ones({2}).size(3)),
  });
}

TEST_CASE("bad input: undefined tensors and wrong element types name the op") {
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::clone] ", "undefined", tl::Tensor().clone()),
      TL_BAD(tl::Error, "[tl::to] ", "undefined", tl::Tensor().to(tl::kFloat64)),
      TL_BAD(tl::Error, "[tl::to] ", "undefined", tl::Tensor().to(tl::kFloat32)),
      TL_BAD(tl::Error, "[tl::to] ", "undefined", tl::Tensor().to(tl::Device::cpu())),
      TL_BAD(tl::Error, "[tl::reshape] ", "undefined", tl::Tensor().reshape({-1})),
      TL_BAD(tl::Error, "[tl::view] ", "undefined", tl::Tensor().view({-1})),
      TL_BAD(tl::Error, "[tl::item] ", "undefined", tl::Tensor().item<float>()),
      TL_BAD(tl::Error, "[tl::fill_] ", "undefined", tl::Tensor().fill_(1)),
      TL_BAD(tl::Error, "[tl::add] ", "undefined", tl::add(tl::ones({1}), tl::Tensor())),
      TL_BAD(tl::DTypeError, "[tl::Tensor::data] ", "expected dtype float32, got int64",
             tl::zeros({2}, tl::kInt64).data<float>()),
      TL_BAD(tl::DTypeError, "[tl::Tensor::data] ", "expected dtype int32, got float64",
             tl::zeros({2}, tl::kFloat64).data<int32_t>()),
  });
}

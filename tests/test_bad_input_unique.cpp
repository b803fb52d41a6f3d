// Bad-input suite, unique / unique_consecutive / bincount / searchsorted / histc: dtypes, dims,
// zero-size dims, negative and out-of-range values, mismatched shapes and devices, sides,
// ranges, and sizes that overflow.
#include <cmath>
#include <cstdint>
#include <limits>

#include "bad_input.h"

using namespace tl_test;

namespace {

tl::Tensor f(const tl::Shape& s) { return tl::ones(s); }
tl::Tensor i64(const tl::Shape& s) { return tl::zeros(s, tl::kInt64); }
tl::Tensor b8(const tl::Shape& s) { return tl::ones(s, tl::kBool); }
tl::Tensor ints(std::vector<int64_t> v) { return tl::from_vector(v); }
tl::Tensor floats(std::vector<double> v) { return tl::from_vector(v); }
tl::Tensor undef() { return tl::Tensor(); }
// A cheap tensor of 2^62 elements (one stored value, stride 0).
tl::Tensor huge() { return tl::ones({1}).expand({int64_t{1} << 62}); }
// A sorted sequence of 2^31 elements with one stored value.
tl::Tensor long_sequence() { return tl::ones({1}).expand({int64_t{1} << 31}); }
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

TEST_CASE("bad input: unique and unique_consecutive") {
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::unique] ", "undefined", tl::unique(undef())),
      TL_BAD(tl::IndexError, "[tl::unique] ", "", tl::unique(f({2, 3}), true, false, false, 2)),
      TL_BAD(tl::IndexError, "[tl::unique] ", "", tl::unique(f({2, 3}), true, true, true, -3)),
      TL_BAD(tl::IndexError, "[tl::unique] ", "0-dim",
             tl::unique(tl::scalar_tensor(1.0), true, false, false, 0)),
      TL_BAD(tl::ShapeError, "[tl::unique] ", "[0, 0]",
             tl::unique(f({0, 0}), true, false, false, 0)),
      TL_BAD(tl::ShapeError, "[tl::unique] ", "[3, 0]",
             tl::unique(f({3, 0}), true, false, false, 0)),
      TL_BAD(tl::ShapeError, "[tl::unique] ", "overflow", tl::unique(huge())),
      TL_BAD(tl::Error, "[tl::unique_consecutive] ", "undefined", tl::unique_consecutive(undef())),
      TL_BAD(tl::IndexError, "[tl::unique_consecutive] ", "",
             tl::unique_consecutive(f({4}), false, false, 1)),
      TL_BAD(tl::ShapeError, "[tl::unique_consecutive] ", "[2, 0, 3]",
             tl::unique_consecutive(f({2, 0, 3}), false, false, 2)),
      TL_BAD(tl::IndexError, "[tl::unique] ", "", f({2, 3}).unique(true, false, false, 5)),
  });
}

TEST_CASE("bad input: bincount") {
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::bincount] ", "undefined", tl::bincount(undef())),
      TL_BAD(tl::DTypeError, "[tl::bincount] ", "float32", tl::bincount(f({3}))),
      TL_BAD(tl::DTypeError, "[tl::bincount] ", "bool", tl::bincount(b8({3}))),
      TL_BAD(tl::DTypeError, "[tl::bincount] ", "float64", floats({1, 2}).bincount()),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "[2, 2]", tl::bincount(i64({2, 2}))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "[]",
             tl::bincount(tl::scalar_tensor(1, tl::kInt64))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "minlength", tl::bincount(ints({1}), {}, -1)),
      TL_BAD(tl::IndexError, "[tl::bincount] ", "-3", tl::bincount(ints({1, -3, 2}))),
      TL_BAD(tl::IndexError, "[tl::bincount] ", "-1",
             tl::bincount(ints({-1}).to(tl::kInt8), f({1}))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "weights", tl::bincount(ints({1, 2}), f({3}))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "weights", tl::bincount(ints({1, 2}), f({2, 1}))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "overflow", tl::bincount(ints({kMax}))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "overflow", tl::bincount(ints({int64_t{1} << 61}))),
      TL_BAD(tl::ShapeError, "[tl::bincount] ", "overflow",
             tl::bincount(ints({0}), {}, int64_t{1} << 61)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::bincount] ", "weights",
                  tl::bincount(ints({1, 2}), f({2}).cuda())),
      TL_BAD_CUDA(tl::IndexError, "[tl::bincount] ", "-5", tl::bincount(ints({3, -5}).cuda())),
  });
}

TEST_CASE("bad input: searchsorted") {
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::searchsorted] ", "undefined", tl::searchsorted(undef(), f({2}))),
      TL_BAD(tl::Error, "[tl::searchsorted] ", "undefined", tl::searchsorted(f({2}), undef())),
      TL_BAD(tl::Error, "[tl::searchsorted] ", "\"middle\"",
             tl::searchsorted(f({3}), f({2}), false, false, "middle")),
      TL_BAD(tl::Error, "[tl::searchsorted] ", "opposites",
             tl::searchsorted(f({3}), f({2}), false, true, "left")),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "0",
             tl::searchsorted(tl::scalar_tensor(1.0), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "[2, 5]",
             tl::searchsorted(f({2, 5}), f({3, 4}))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "[2, 5]", tl::searchsorted(f({2, 5}), f({2}))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "[2, 5]",
             tl::searchsorted(f({2, 5}), f({2, 3, 1}))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "0-dim",
             tl::searchsorted(f({2, 5}), tl::scalar_tensor(1.0))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "0-dim", tl::searchsorted(f({2, 5}), 1.0)),
      TL_BAD(tl::DTypeError, "[tl::searchsorted] ", "bool", tl::searchsorted(b8({3}), b8({2}))),
      TL_BAD(tl::DTypeError, "[tl::searchsorted] ", "bool", tl::searchsorted(b8({3}), true)),
      TL_BAD(tl::DTypeError, "[tl::searchsorted] ", "int32",
             tl::searchsorted(f({3}), f({2}), false, false, "", tl::zeros({3}, tl::kInt32))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "sorter",
             tl::searchsorted(f({3}), f({2}), false, false, "", i64({4}))),
      TL_BAD(tl::IndexError, "[tl::searchsorted] ", "3",
             tl::searchsorted(f({3}), f({2}), false, false, "", ints({0, 3, 1}))),
      TL_BAD(tl::IndexError, "[tl::searchsorted] ", "-1",
             tl::searchsorted(f({3}), f({2}), false, false, "", ints({0, -1, 1}))),
      TL_BAD(tl::ShapeError, "[tl::searchsorted] ", "out_int32",
             tl::searchsorted(long_sequence(), f({2}), true)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::searchsorted] ", "values",
                  tl::searchsorted(f({3}), f({2}).cuda())),
      TL_BAD_CUDA(tl::DeviceError, "[tl::searchsorted] ", "sorter",
                  tl::searchsorted(f({3}).cuda(), f({2}).cuda(), false, false, "", i64({3}))),
      TL_BAD_CUDA(
          tl::IndexError, "[tl::searchsorted] ", "7",
          tl::searchsorted(f({3}).cuda(), f({2}).cuda(), false, false, "", ints({0, 7, 1}).cuda())),
  });
}

TEST_CASE("bad input: histc") {
  run_bad_inputs({
      TL_BAD(tl::Error, "[tl::histc] ", "undefined", tl::histc(undef())),
      TL_BAD(tl::DTypeError, "[tl::histc] ", "int64", tl::histc(i64({3}))),
      TL_BAD(tl::DTypeError, "[tl::histc] ", "bool", b8({3}).histc()),
      TL_BAD(tl::ShapeError, "[tl::histc] ", "bins", tl::histc(f({3}), 0)),
      TL_BAD(tl::ShapeError, "[tl::histc] ", "-5", tl::histc(f({3}), -5)),
      TL_BAD(tl::Error, "[tl::histc] ", "larger", tl::histc(f({3}), 10, 2, 1)),
      TL_BAD(tl::Error, "[tl::histc] ", "not finite", tl::histc(f({3}), 10, 0, INFINITY)),
      TL_BAD(tl::Error, "[tl::histc] ", "not finite", tl::histc(f({3}), 10, -INFINITY, 0)),
      TL_BAD(tl::Error, "[tl::histc] ", "not finite", tl::histc(f({3}), 10, std::nan(""), 1)),
      TL_BAD(tl::Error, "[tl::histc] ", "not finite", tl::histc(floats({1, std::nan(""), 2}))),
      TL_BAD(tl::Error, "[tl::histc] ", "not finite", tl::histc(floats({1, INFINITY}))),
      TL_BAD(tl::ShapeError, "[tl::histc] ", "overflow", tl::histc(f({3}), int64_t{1} << 62)),
      TL_BAD(tl::ShapeError, "[tl::histc] ", "overflow", tl::histc(huge(), 10, 0, 1)),
      TL_BAD_CUDA(tl::Error, "[tl::histc] ", "not finite",
                  tl::histc(floats({1, std::nan(""), 2}).cuda())),
  });
}

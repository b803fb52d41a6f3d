// Bad-input suite, numerics and indexing: conversions, fill ranges, bool masks, dtype rules,
// device-side index checks.
#include "bad_input.h"

using namespace tl_test;

TEST_CASE("bad input: numerics") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::view] ", "", tl::ones({2}).view({3})),
  });
}

namespace {
tl::Tensor int32s() { return tl::from_vector<int32_t>({1, 2}); }
tl::Tensor mask() { return tl::from_vector<bool>({true, false}); }
tl::TensorOptions on_cuda(tl::DType dtype) {
  return tl::TensorOptions(dtype).device(tl::Device::cuda(0));
}
}  // namespace

// Values outside a dtype's range: torch refuses them as fill values, where's scalars, an integer
// pow's exponent, clamp bounds and item<T>() (LibTorch's checked Scalar::to), where plain
// arithmetic with a scalar wraps (int32 + (1 << 40) is the int32 tensor, as torch).
TEST_CASE("bad input: values out of a dtype's range") {
  constexpr int64_t k40 = int64_t(1) << 40;
  run_bad_inputs({
      // full and fill_ (truncation of a fraction is fine; overflow is not)
      TL_BAD(tl::DTypeError, "[tl::full] ", "1e+10", tl::full({2}, 1e10, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::scalar_tensor] ", "1e+10", tl::scalar_tensor(1e10, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "1099511627776", tl::full({2}, k40, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "int32", tl::full({2}, NAN, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "inf", tl::full({2}, INFINITY, tl::kInt64)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "-inf", tl::full({2}, -INFINITY, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "int64", tl::full({2}, 9.3e18, tl::kInt64)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "int64",
             tl::full({2}, 9223372036854775808.0, tl::kInt64)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "int32", tl::full({2}, 2147483648.0, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "int32", tl::full({2}, -2147483648.5, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "2147483648",
             tl::full({2}, int64_t(INT32_MAX) + 1, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "-2147483649",
             tl::full({2}, int64_t(INT32_MIN) - 1, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "float32", tl::full({2}, 1e300, tl::kFloat32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "float32", tl::full({2}, -1e39, tl::kFloat32)),
      TL_BAD(tl::DTypeError, "[tl::full] ", "fill value", tl::full({}, 1e10, tl::kInt32)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "fill value 1e+10",
             tl::zeros({2}, tl::kInt32).fill_(1e10)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "nan", tl::zeros({2}, tl::kInt32).fill_(NAN)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "inf", tl::zeros({2}, tl::kInt64).fill_(INFINITY)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "1099511627776",
             tl::zeros({2}, tl::kInt32).fill_(k40)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "1e+300", tl::zeros({2}, tl::kFloat32).fill_(1e300)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "int32",
             tl::zeros({4}, tl::kInt32).slice(0, 0, 4, 2).fill_(3e9)),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "int32",
             tl::zeros({2}, tl::kInt32).fill_(tl::Scalar(-3e9))),
      TL_BAD(tl::DTypeError, "[tl::fill_] ", "int32", tl::zeros({2}, tl::kInt32) = 1e10),
      // where: a scalar must fit the result dtype
      TL_BAD(tl::DTypeError, "[tl::where] ", "'other'", tl::where(mask(), int32s(), k40)),
      TL_BAD(tl::DTypeError, "[tl::where] ", "'input'", tl::where(mask(), k40, int32s())),
      TL_BAD(tl::DTypeError, "[tl::where] ", "'other'",
             tl::where(mask(), int32s(), int64_t(INT32_MAX) + 1)),
      TL_BAD(tl::DTypeError, "[tl::where] ", "'other'", tl::where(mask(), tl::ones({2}), 1e300)),
      TL_BAD(tl::DTypeError, "[tl::where] ", "'input'", tl::where(mask(), -1e300, tl::ones({2}))),
      // pow: an integer exponent must fit the integer dtype
      TL_BAD(tl::DTypeError, "[tl::pow] ", "exponent 2147483648",
             tl::pow(int32s(), int64_t(1) << 31)),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "exponent", int32s().pow(k40)),
      TL_BAD(tl::DTypeError, "[tl::pow] ", "negative", tl::pow(int32s(), -k40)),
      // clamp: a bound beyond the range on the side where it would clamp everything
      TL_BAD(tl::DTypeError, "[tl::clamp] ", "max",
             tl::clamp(int32s(), std::nullopt, tl::Scalar(-k40))),
      TL_BAD(tl::DTypeError, "[tl::clamp] ", "min",
             tl::clamp(int32s(), tl::Scalar(k40), std::nullopt)),
      TL_BAD(tl::DTypeError, "[tl::clamp] ", "max",
             tl::clamp(tl::ones({2}), std::nullopt, tl::Scalar(1e300))),
      TL_BAD(tl::DTypeError, "[tl::clamp] ", "min",
             tl::clamp(tl::ones({2}), tl::Scalar(-1e300), std::nullopt)),
      // item<T>(): the value must fit T, as LibTorch's checked conversion
      TL_BAD(tl::DTypeError, "[tl::item] ", "nan", tl::scalar_tensor(NAN).item<int32_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "int32", tl::scalar_tensor(1e10).item<int32_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "inf", tl::scalar_tensor(INFINITY).item<int64_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "-inf",
             tl::scalar_tensor(-INFINITY, tl::kFloat64).item<int64_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "1099511627776",
             tl::scalar_tensor(k40, tl::kInt64).item<int32_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "float32",
             tl::scalar_tensor(1e300, tl::kFloat64).item<float>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "int32",
             tl::scalar_tensor(-2147483649.0, tl::kFloat64).item<int32_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "int64",
             tl::scalar_tensor(9223372036854775808.0, tl::kFloat64).item<int64_t>()),
      TL_BAD(tl::DTypeError, "[tl::item] ", "int32", (tl::ones({3}) * 3e9)[1].item<int32_t>()),
      // the same on a device
      TL_BAD_CUDA(tl::DTypeError, "[tl::full] ", "1e+10", tl::full({2}, 1e10, on_cuda(tl::kInt32))),
      TL_BAD_CUDA(tl::DTypeError, "[tl::fill_] ", "nan",
                  tl::zeros({2}, on_cuda(tl::kInt64)).fill_(NAN)),
      TL_BAD_CUDA(tl::DTypeError, "[tl::where] ", "'other'",
                  tl::where(mask().cuda(), int32s().cuda(), k40)),
      TL_BAD_CUDA(tl::DTypeError, "[tl::pow] ", "exponent",
                  tl::pow(int32s().cuda(), int64_t(1) << 31)),
      TL_BAD_CUDA(tl::DTypeError, "[tl::clamp] ", "max",
                  tl::clamp(int32s().cuda(), std::nullopt, tl::Scalar(-k40))),
      TL_BAD_CUDA(tl::DTypeError, "[tl::item] ", "nan",
                  tl::full({}, NAN, on_cuda(tl::kFloat32)).item<int32_t>()),
      TL_BAD_CUDA(tl::DTypeError, "[tl::item] ", "int32",
                  tl::full({}, k40, on_cuda(tl::kInt64)).item<int32_t>()),
  });
}

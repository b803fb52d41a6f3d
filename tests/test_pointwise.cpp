// lerp, isclose and nan_to_num: torch's values (exact ends of lerp, isclose's rounding in the
// tensor's dtype and integers in float32, nan_to_num's defaults), in-place and method
// forms, device parity over layouts and dtypes, and their bad inputs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend_parity.h"
#include "bad_input.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// torch's lerp in double: the two-sided formula as one fused multiply-add.
// Operands of the bad-input rows (the rows' lambdas capture nothing).
Tensor f() { return tl::ones({2}); }
Tensor d() { return tl::ones({2}, tl::kFloat64); }
Tensor i() { return tl::ones({2}, tl::kInt64); }

double lerp_ref(double s, double e, double w) {
  return std::fabs(w) < 0.5 ? std::fma(w, e - s, s) : std::fma(w - 1, e - s, e);
}

}  // namespace

TEST_CASE("lerp: torch's formula, exact ends, tensor and number weights, in place") {
  for (tl::Device dev : test_devices()) {
    const Tensor s = (random_tensor({5, 7}, tl::kFloat64) * 1.5).to(dev);
    const Tensor e = (random_tensor({5, 7}, tl::kFloat64) * 1.5).to(dev);
    const Tensor w = (random_tensor({7}, tl::kFloat64) * 0.75 + 0.5).to(dev);  // rows share it
    const std::vector<double> vs = values_of(s), ve = values_of(e), vw = values_of(w);
    std::vector<double> expected(35);
    for (int i = 0; i < 35; ++i) expected[i] = lerp_ref(vs[i], ve[i], vw[i % 7]);
    check_values(tl::lerp(s, e, w), expected, 0, 0);
    check_values(s.lerp(e, w), expected, 0, 0);
    for (double wn : {0.0, 1.0, 0.25, 0.75, -1.5}) {
      std::vector<double> ex(35);
      for (int i = 0; i < 35; ++i) ex[i] = lerp_ref(vs[i], ve[i], wn);
      check_values(tl::lerp(s, e, wn), ex, 0, 0);
    }
    // Weight 0 gives start and 1 gives end bit for bit, even where end - start rounds.
    const Tensor big = tl::from_vector<float>({1e30f, -3.1f, 7.7e-3f}).to(dev);
    const Tensor small = tl::from_vector<float>({-1e-30f, 2.9f, 1e20f}).to(dev);
    CHECK(bits_of(tl::lerp(big, small, 0.0)) == bits_of(big));
    CHECK(bits_of(tl::lerp(big, small, 1.0)) == bits_of(small));
    // float16: computed in float with the weight unrounded, then rounded once.
    const Tensor hs = tl::from_vector<float>({1, 2, -4}).to(tl::kFloat16).to(dev);
    const Tensor he = tl::from_vector<float>({2, 6, 4}).to(tl::kFloat16).to(dev);
    check_values(tl::lerp(hs, he, 0.1), {1.099609375, 2.400390625, -3.19921875}, 0, 0);
    CHECK(tl::lerp(hs, he, 0.1).dtype() == tl::kFloat16);
    // In place, with broadcasting of end and weight; NaN weight gives NaN.
    Tensor x = s.clone();
    x.lerp_(e, w);
    check_values(x, expected, 0, 0);
    Tensor y = tl::from_vector<double>({1, 2}).to(dev);
    y.lerp_(tl::from_vector<double>({3}).to(dev), kNaN);
    CHECK(std::isnan(values_of(y)[0]));
    // Zero-size.
    CHECK(tl::lerp(tl::zeros({0, 3}).to(dev), tl::ones({3}).to(dev), 0.5).shape() == Shape{0, 3});
  }
}

TEST_CASE("isclose: torch's rule in the tensor's dtype; NaN, infinities, integers, bool") {
  for (tl::Device dev : test_devices()) {
    const Tensor a = tl::from_vector<double>({1, 1, kInf, kInf, kNaN, kNaN, 0, 1e-9, 100}).to(dev);
    const Tensor b =
        tl::from_vector<double>({1, 1 + 1e-6, kInf, -kInf, kNaN, 1, 1e-9, 0, 100.001}).to(dev);
    CHECK(tl::isclose(a, b).to_vector<bool>() ==
          std::vector<bool>{true, true, true, false, false, false, true, true, true});
    CHECK(a.isclose(b, 1e-5, 1e-8, true).to_vector<bool>() ==
          std::vector<bool>{true, true, true, false, true, false, true, true, true});
    // Zero tolerances: equality only.
    CHECK(tl::isclose(a, b, 0, 0).to_vector<bool>() ==
          std::vector<bool>{true, false, true, false, false, false, false, false, false});
    // Broadcasting against a row.
    CHECK(
        tl::isclose(tl::ones({2, 3}).to(dev), tl::full({3}, 1.000001).to(dev)).all().item<bool>());
    // Integers compute in float32, as torch: differences do not wrap (100 - -28 is 128).
    const Tensor i8a = tl::from_vector<int8_t>({100, -100, 5, 0}).to(dev);
    const Tensor i8b = tl::from_vector<int8_t>({-28, 28, 6, 0}).to(dev);
    CHECK(tl::isclose(i8a, i8b).to_vector<bool>() == std::vector<bool>{false, false, false, true});
    CHECK(tl::isclose(i8a, i8b, 0.2, 0).to_vector<bool>() ==
          std::vector<bool>{false, false, true, true});
    const Tensor u8a = tl::from_vector<uint8_t>({3, 250}).to(dev);
    const Tensor u8b = tl::from_vector<uint8_t>({5, 251}).to(dev);
    CHECK(tl::isclose(u8a, u8b, 0, 2).to_vector<bool>() == std::vector<bool>{true, true});
    CHECK(tl::isclose(u8a, u8b, 0, 1).to_vector<bool>() == std::vector<bool>{false, true});
    // Zero tolerances on integers: equality in their own type, though float32 rounds these two
    // to one value (found by the fuzzer).
    const Tensor big = tl::from_vector<int64_t>({INT64_MIN, INT64_MAX}).to(dev);
    const Tensor near = tl::from_vector<int64_t>({INT64_MIN + 1, INT64_MAX}).to(dev);
    CHECK(tl::isclose(big, near, 0, 0).to_vector<bool>() == std::vector<bool>{false, true});
    // bool runs as float32.
    const Tensor t = tl::from_vector<bool>({true, false, true}).to(dev);
    const Tensor f = tl::from_vector<bool>({true, true, false}).to(dev);
    CHECK(tl::isclose(t, f).to_vector<bool>() == std::vector<bool>{true, false, false});
    CHECK(tl::isclose(t, f, 0, 1).to_vector<bool>() == std::vector<bool>{true, true, true});
    // float16: the allowed error is rounded to float16 (atol + |rtol * b| in half).
    const Tensor ha = tl::from_vector<float>({1000}).to(tl::kFloat16).to(dev);
    const Tensor hb = tl::from_vector<float>({1000.5f}).to(tl::kFloat16).to(dev);  // 1000 or 1001
    CHECK(tl::isclose(ha, hb, 1e-3, 0).item<bool>() == true);
    CHECK(tl::isclose(tl::zeros({0}).to(dev), tl::zeros({0}).to(dev)).numel() == 0);
  }
}

TEST_CASE("nan_to_num: defaults are the dtype's extremes; custom values; integers copied") {
  for (tl::Device dev : test_devices()) {
    const Tensor x = tl::from_vector<float>({1.5f, NAN, INFINITY, -INFINITY, -0.0f}).to(dev);
    const float big = std::numeric_limits<float>::max();
    check_values(tl::nan_to_num(x), {1.5, 0, big, -big, -0.0}, 0, 0);
    check_values(x.nan_to_num(2, 3, -4), {1.5, 2, 3, -4, 0}, 0, 0);
    check_values(tl::nan_to_num(x, std::nullopt, 1e300), {1.5, 0, kInf, -big, 0}, 0, 0);
    const Tensor h = x.to(tl::kFloat16);
    check_values(tl::nan_to_num(h), {1.5, 0, 65504, -65504, 0}, 0, 0);
    const Tensor bf = x.to(tl::kBFloat16);
    check_values(tl::nan_to_num(bf).to(tl::kFloat64),
                 {1.5, 0, static_cast<double>(std::numeric_limits<tl::BFloat16>::max()),
                  static_cast<double>(std::numeric_limits<tl::BFloat16>::lowest()), 0},
                 0, 0);
    Tensor y = x.clone();
    y.nan_to_num_(7);
    check_values(y, {1.5, 7, big, -big, 0}, 0, 0);
    // Integers and bool: a copy (a new tensor, not a view).
    const Tensor i = tl::from_vector<int32_t>({1, -2}).to(dev);
    Tensor c = tl::nan_to_num(i);
    CHECK(c.to_vector<int32_t>() == std::vector<int32_t>{1, -2});
    CHECK(c.data_ptr() != i.data_ptr());
    // Sliced input, in place on a strided view writes only the view.
    Tensor holder = tl::full({4, 2}, kNaN, tl::kFloat64).to(dev);
    Tensor col = holder.select(1, 0);
    col.nan_to_num_(5);
    check_values(holder, {5, kNaN, 5, kNaN, 5, kNaN, 5, kNaN}, 0, 0);
  }
}

TL_PARITY_CASE("backend parity: lerp, isclose, nan_to_num over layouts and dtypes") {
  for (DType d : all_dtypes()) {
    const bool floating = tl::is_floating_point(d);
    for (const Shape& shape :
         {Shape{}, Shape{1}, Shape{33}, Shape{5, 7}, Shape{3, 0}, Shape{kBig}}) {
      for (const Variant& v : variants(shape, d)) {
        const std::string what = describe("", d, shape, v.name);
        const Tensor other = make_values(shape, d);
        const Tensor weight = floating ? make_values(shape, d) : Tensor();
        check_op(
            dev, "tl::isclose" + what, {v.t, other},
            [](std::vector<Tensor>& in) { return tl::isclose(in[0], in[1], 0.1, 0.05); }, kExact,
            false);
        check_op(
            dev, "tl::isclose equal_nan" + what, {v.t, v.t},
            [](std::vector<Tensor>& in) { return tl::isclose(in[0], in[1], 0, 0, true); }, kExact,
            false);
        check_op(
            dev, "tl::nan_to_num" + what, {v.t},
            [](std::vector<Tensor>& in) { return tl::nan_to_num(in[0], 1, 2, -3); }, kExact, false);
        if (!floating) continue;
        check_op(dev, "tl::lerp tensor weight" + what, {v.t, other, weight},
                 [](std::vector<Tensor>& in) { return tl::lerp(in[0], in[1], in[2]); });
        check_op(dev, "tl::lerp number weight" + what, {v.t, other},
                 [](std::vector<Tensor>& in) { return tl::lerp(in[0], in[1], 0.7); });
      }
    }
    // Specials: NaN, infinities, extremes against themselves and shifted copies.
    const Tensor sp = floating ? float_specials(d) : int_specials(d);
    const Tensor shifted = tl::roll(sp, {1}, {0});
    check_op(
        dev, "tl::isclose specials " + std::string(tl::dtype_name(d)), {sp, shifted},
        [](std::vector<Tensor>& in) { return tl::isclose(in[0], in[1], 1e-3, 1e-3, true); }, kExact,
        false);
    check_op(
        dev, "tl::nan_to_num specials " + std::string(tl::dtype_name(d)), {sp},
        [](std::vector<Tensor>& in) { return tl::nan_to_num(in[0]); }, kExact, false);
    if (floating)
      check_op(dev, "tl::lerp specials " + std::string(tl::dtype_name(d)), {sp, shifted},
               [](std::vector<Tensor>& in) { return tl::lerp(in[0], in[1], in[1]); });
  }
  // In place into poisoned strided views (whole_storage shows writes outside the view).
  for (const std::string& layout : kViewLayouts) {
    const Tensor e = make_values({6, 5}, tl::kFloat32), w = make_values({5}, tl::kFloat32);
    check_op(dev, "tl::lerp_ " + layout, {poisoned_view({6, 5}, tl::kFloat32, layout), e, w},
             [](std::vector<Tensor>& in) {
               in[0].lerp_(in[1], in[2]);
               return whole_storage(in[0]);
             });
    check_op(dev, "tl::nan_to_num_ " + layout, {poisoned_view({6, 5}, tl::kFloat32, layout)},
             [](std::vector<Tensor>& in) {
               in[0].nan_to_num_(0.5);
               return whole_storage(in[0]);
             });
  }
}

TEST_CASE("bad input: lerp, isclose, nan_to_num") {
  run_bad_inputs({
      TL_BAD(tl::DTypeError, "[tl::lerp] ", "int64", tl::lerp(i(), i(), 0.5)),
      TL_BAD(tl::DTypeError, "[tl::lerp] ", "`end`", tl::lerp(f(), d(), 0.5)),
      TL_BAD(tl::DTypeError, "[tl::lerp] ", "`weight`", tl::lerp(f(), f(), d())),
      TL_BAD(tl::ShapeError, "[tl::lerp] ", "", tl::lerp(f(), tl::ones({3}), 0.5)),
      TL_BAD(tl::ShapeError, "[tl::lerp] ", "", tl::lerp(f(), f(), tl::ones({3}))),
      TL_BAD(tl::ShapeError, "[tl::lerp_] ", "broadcast shape",
             tl::ones({2}).lerp_(tl::ones({3, 2}), 0.5)),
      TL_BAD(tl::ShapeError, "[tl::lerp_] ", "", tl::ones({1}).expand({3}).lerp_(f().sum(), 0.5)),
      TL_BAD(tl::Error, "[tl::lerp] ", "undefined", tl::lerp(Tensor(), f(), 0.5)),
      TL_BAD(tl::DTypeError, "[tl::isclose] ", "same dtype", tl::isclose(f(), d())),
      TL_BAD(tl::Error, "[tl::isclose] ", "rtol", tl::isclose(f(), f(), -1)),
      TL_BAD(tl::Error, "[tl::isclose] ", "atol", tl::isclose(f(), f(), 0, NAN)),
      TL_BAD(tl::ShapeError, "[tl::isclose] ", "", tl::isclose(f(), tl::ones({3}))),
      TL_BAD(tl::ShapeError, "[tl::nan_to_num_] ", "", tl::ones({1}).expand({3}).nan_to_num_()),
      TL_BAD_CUDA(tl::DeviceError, "[tl::lerp] ", "device",
                  tl::lerp(f(), f().to(tl::Device::cuda(0)), 0.5)),
      TL_BAD_CUDA(tl::DeviceError, "[tl::isclose] ", "device",
                  tl::isclose(f(), f().to(tl::Device::cuda(0)))),
  });
}

// torch's semantics of the elementwise ops of issue 14 where a double reference does not tell:
// integer division by zero and at INT_MIN / -1, signs of fmod / remainder / floor_divide, shifts
// past the width, bitwise ops on masks, sign of NaN, the activations and the in-place forms, on
// every device.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Tensor;

Tensor ints(std::vector<int64_t> v, DType d, tl::Device dev) {
  return tl::from_vector<int64_t>(v).to(d).to(dev);
}
Tensor floats(std::vector<double> v, DType d, tl::Device dev) {
  return tl::from_vector<double>(v).to(d).to(dev);
}

TEST_CASE("elementwise semantics: floored and truncated division of integers, as torch") {
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kInt8, tl::kInt16, tl::kInt32, tl::kInt64}) {
      Tensor a = ints({7, -7, 7, -7, 0, 6}, d, dev), b = ints({2, 2, -2, -2, 3, -3}, d, dev);
      check_values(tl::fmod(a, b), {1, -1, 1, -1, 0, 0});
      check_values(tl::remainder(a, b), {1, 1, -1, -1, 0, 0});
      check_values(tl::floor_divide(a, b), {3, -4, -4, 3, 0, -2});
      // The smallest value over -1 wraps (torch); % -1 is 0. The hardware division would trap.
      const int64_t lo = d == tl::kInt8    ? -128
                         : d == tl::kInt16 ? -32768
                         : d == tl::kInt32 ? std::numeric_limits<int32_t>::min()
                                           : std::numeric_limits<int64_t>::min();
      Tensor m = ints({lo, lo, 5}, d, dev), neg1 = ints({-1, -1, -1}, d, dev);
      CHECK(tl::floor_divide(m, neg1).to(tl::kInt64).cpu().to_vector<int64_t>() ==
            std::vector<int64_t>{lo, lo, -5});
      CHECK(tl::remainder(m, neg1).to(tl::kInt64).cpu().to_vector<int64_t>() ==
            std::vector<int64_t>{0, 0, 0});
      CHECK(tl::fmod(m, -1).to(tl::kInt64).cpu().to_vector<int64_t>() ==
            std::vector<int64_t>{0, 0, 0});
      // A zero divisor raises, as torch's CPU, on every device: a number, a tensor, or a number
      // that is 0 in the compute dtype. A number raises at the call; a tensor on the CPU too, and
      // on CUDA the kernel finds it and the host's next wait for the device raises (the copy to
      // the host here), so the call itself never stalls.
      check_throws<tl::Error>([&] { tl::remainder(a, 0); }, "ZeroDivisionError");
      check_throws<tl::Error>([&] { tl::floor_divide(a, false); }, "ZeroDivisionError");
      check_throws<tl::Error>(
          [&] {
            (void)tl::fmod(a, ints({1, 0, 1, 1, 1, 1}, d, dev)).cpu();
          },
          "[tl::fmod] ZeroDivisionError");
      check_throws<tl::Error>([&] { (void)tl::floor_divide(5, b.slice(0, 4, 5) * 0).cpu(); },
                              "[tl::floor_divide] ZeroDivisionError");
    }
    // uint8 has no negative values: plain division.
    Tensor u = ints({200, 7, 255}, tl::kUInt8, dev), v = ints({7, 200, 16}, tl::kUInt8, dev);
    check_values(tl::floor_divide(u, v), {28, 0, 15});
    check_values(tl::remainder(u, v), {4, 7, 15});
  }
  check_throws<tl::Error>([&] { tl::remainder(ints({3}, tl::kInt8, tl::Device::cpu()), 256); },
                          "[tl::remainder] ZeroDivisionError");
}

TEST_CASE("elementwise semantics: floating fmod, remainder and floor_divide, as torch") {
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
      Tensor a = floats({5.5, -5.5, 5.5, -5.5, 1, -0.0, 3}, d, dev);
      Tensor b = floats({2, 2, -2, -2, 0, 2, 0.5}, d, dev);
      check_values(tl::fmod(a, b), {1.5, -1.5, 1.5, -1.5, NAN, -0.0, 0});
      check_values(tl::remainder(a, b), {1.5, 0.5, -0.5, -1.5, NAN, 0, 0});
      check_values(tl::floor_divide(a, b), {2, -3, -3, 2, INFINITY, -0.0, 6});
    }
    // Signs of zero: -0.0 // 2 is -0.0, 0.0 // -2 is -0.0, 1 // inf is 0.
    Tensor z = tl::floor_divide(floats({-0.0, 0.0, 1}, tl::kFloat64, dev),
                                floats({2, -2, INFINITY}, tl::kFloat64, dev))
                   .cpu();
    std::vector<double> zv = z.to_vector<double>();
    CHECK(std::signbit(zv[0]));
    CHECK(std::signbit(zv[1]));
    CHECK(zv[2] == 0);
    CHECK(!std::signbit(zv[2]));
    // The quotient from fmod is exact where a / b rounds up to the next integer.
    check_values(tl::floor_divide(floats({1}, tl::kFloat64, dev), floats({0.1}, tl::kFloat64, dev)),
                 {9});
    check_values(
        tl::atan2(floats({1, -1, 0}, tl::kFloat32, dev), floats({0, 0, -1}, tl::kFloat32, dev)),
        {M_PI / 2, -M_PI / 2, M_PI});
  }
}

TEST_CASE("elementwise semantics: bitwise ops, shifts and logical_xor, as torch") {
  for (tl::Device dev : test_devices()) {
    Tensor m = floats({1, 0, 1, 0}, tl::kBool, dev), n = floats({1, 1, 0, 0}, tl::kBool, dev);
    CHECK((m & n).dtype() == tl::kBool);
    check_values(m & n, {1, 0, 0, 0});
    check_values(m | n, {1, 1, 1, 0});
    check_values(m ^ n, {0, 1, 1, 0});
    check_values(~m, {0, 1, 0, 1});
    check_values(tl::logical_xor(floats({2, 0, -1}, tl::kFloat32, dev), 1), {0, 1, 0});
    Tensor i = ints({12, -12, 255}, tl::kInt32, dev);
    check_values(i & 10, {8, 0, 10});
    check_values(i | 1, {13, -11, 255});
    check_values(~i, {-13, 11, -256});
    check_values(5 ^ i, {9, -15, 250});
    // Shifts by a negative amount or by the width or more: 0 to the left, the sign fill to the
    // right (0 for unsigned), as torch.
    Tensor s = ints({1, -8, 3, -3, 1}, tl::kInt8, dev), by = ints({3, 1, 8, 9, -1}, tl::kInt8, dev);
    check_values(s << by, {8, -16, 0, 0, 0});
    check_values(s >> by, {0, -4, 0, -1, 0});
    Tensor u = ints({255, 128, 1}, tl::kUInt8, dev), ub = ints({1, 8, 7}, tl::kUInt8, dev);
    check_values(u << ub, {254, 0, 128});
    check_values(u >> ub, {127, 0, 0});
    Tensor w = ints({1}, tl::kInt64, dev);
    check_values(w << 62, {4611686018427387904.0});
    check_values(w << 64, {0});
    // In place.
    Tensor x = ints({12, 5}, tl::kInt16, dev);
    x.bitwise_not_();
    check_values(x, {-13, -6});
  }
}

TEST_CASE("elementwise semantics: sign, tests of values and rounding specials, as torch") {
  for (tl::Device dev : test_devices()) {
    Tensor x = floats({-2.5, 0, -0.0, 3, NAN, INFINITY, -INFINITY}, tl::kFloat32, dev);
    check_values(tl::sign(x), {-1, 0, 0, 1, 0, 1, -1});
    check_values(tl::isnan(x), {0, 0, 0, 0, 1, 0, 0});
    check_values(tl::isinf(x), {0, 0, 0, 0, 0, 1, 1});
    check_values(x.isfinite(), {1, 1, 1, 1, 0, 0, 0});
    CHECK(tl::isnan(ints({1, 2}, tl::kInt32, dev)).dtype() == tl::kBool);
    check_values(tl::isfinite(ints({1, 2}, tl::kInt32, dev)), {1, 1});
    check_values(tl::sign(ints({-5, 0, 7}, tl::kInt64, dev)), {-1, 0, 1});
    check_values(tl::sign(floats({1, 0}, tl::kBool, dev)), {1, 0});
    check_values(tl::square(ints({-3, 100}, tl::kInt8, dev)), {9, 16});  // 10000 wraps in int8
    CHECK(tl::square(floats({1, 0}, tl::kBool, dev)).dtype() == tl::kInt64);
    check_values(tl::square(floats({1, 0}, tl::kBool, dev)), {1, 0});
    check_values(tl::reciprocal(ints({2, 0, -4}, tl::kInt32, dev)), {0.5, INFINITY, -0.25});
    check_values(tl::rsqrt(floats({4, 0, -1}, tl::kFloat32, dev)), {0.5, INFINITY, NAN});
  }
}

// Activations against double references, on every floating dtype.
TEST_CASE("elementwise semantics: silu, gelu (exact and tanh) and softplus, as torch") {
  auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  auto gelu_tanh = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  auto softplus = [](double v, double beta, double threshold) {
    return v * beta > threshold ? v : std::log1p(std::exp(v * beta)) / beta;
  };
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
      const double rtol = d == tl::kFloat16 ? 2e-3 : d == tl::kBFloat16 ? 1.6e-2 : 1e-5;
      Tensor x =
          tl::cat({random_tensor({40}, d) * 5, floats({25, -30, 0, NAN}, d, tl::Device::cpu())})
              .to(dev);
      std::vector<double> xv = values_of(x), r1, r2, r3, r4, r5;
      for (double v : xv) {
        r1.push_back(v / (1 + std::exp(-v)));
        r2.push_back(gelu(v));
        r3.push_back(gelu_tanh(v));
        r4.push_back(softplus(v, 1, 20));
        r5.push_back(softplus(v, 2, 5));
      }
      CAPTURE(tl::dtype_name(d));
      check_values(tl::silu(x), r1, rtol, rtol);
      check_values(tl::gelu(x), r2, rtol, rtol);
      check_values(tl::gelu(x, "tanh"), r3, rtol, rtol);
      check_values(tl::softplus(x), r4, rtol, rtol);
      check_values(tl::softplus(x, 2, 5), r5, rtol, rtol);
      CHECK(tl::gelu(x).dtype() == d);
    }
  }
}

TEST_CASE("elementwise semantics: unary math methods and in-place forms") {
  for (tl::Device dev : test_devices()) {
    Tensor x = random_tensor({5, 6}, tl::kFloat32, dev).abs() + 0.1;
    Tensor view = x.t();  // in place through a transposed view
    Tensor expected = tl::log1p(view);
    CHECK(tl::equal(view.log1p(), expected));
    view.log1p_();
    CHECK(tl::equal(view, expected));
    Tensor y = x.clone();
    y.rsqrt_().reciprocal_().square_();  // (1 / (1 / sqrt(x)))^2 = x
    CHECK(tl::allclose(y, x, 1e-5, 1e-6));
    check_throws<tl::DTypeError>([&] { ints({4}, tl::kInt32, dev).log2_(); }, "[tl::log2_]");
  }
}

// torch.add / sub's alpha: one kernel, one rounding, torch's dtype rules, in place too.
TEST_CASE("elementwise semantics: add and sub with alpha, out of place and in place") {
  for (tl::Device dev : test_devices()) {
    for (DType d : {tl::kFloat32, tl::kFloat64, tl::kFloat16, tl::kBFloat16}) {
      Tensor a = random_tensor({7, 9}, d, dev), b = random_tensor({9}, d, dev);
      std::vector<double> av = values_of(a), bv = values_of(b), sum, diff;
      for (size_t i = 0; i < av.size(); ++i) {
        sum.push_back(av[i] + 0.3 * bv[i % 9]);
        diff.push_back(av[i] - 2.5 * bv[i % 9]);
      }
      // The reference rounded once to d, as the kernel stores it.
      auto rounded = [&](const std::vector<double>& v) {
        return values_of(tl::from_vector<double>(v).to(d));
      };
      // The half types: alpha is a float in the kernel (as torch's opmath), the reference a double,
      // so a result that cancels to about 0 may differ by float's rounding of alpha * b.
      const double tol = d == tl::kFloat32 ? 1e-6 : d == tl::kFloat64 ? 1e-14 : 1e-6;
      CAPTURE(tl::dtype_name(d));
      check_values(tl::add(a, b, 0.3), rounded(sum), tol, tol);
      check_values(tl::sub(a, b, 2.5), rounded(diff), tol, tol);
      Tensor view = a.clone().t().contiguous().t();  // in place through a transposed layout
      view.add_(b, 0.3);
      check_values(view, rounded(sum), tol, tol);
      Tensor c = a.clone();
      c.sub_(b, 2.5);
      check_values(c, rounded(diff), tol, tol);
      // A number is scaled first: x + 3 * 0.5.
      check_values(tl::add(a, 0.5, 3), rounded([&] {
                     std::vector<double> v;
                     for (double x : av) v.push_back(x + 1.5);
                     return v;
                   }()),
                   tol, tol);
    }
    // One rounding: 1 + 3 * (1 + 2^-23) would round twice as a product then a sum.
    Tensor one = floats({1}, tl::kFloat32, dev),
           eps = floats({1 + std::ldexp(1.0, -23)}, tl::kFloat32, dev);
    check_values(tl::add(one, eps, 3),
                 {static_cast<double>(static_cast<float>(1 + 3 * (1 + std::ldexp(1.0, -23))))}, 0,
                 0);
    // Integers wrap; bool takes a bool alpha.
    Tensor i = ints({100, -7}, tl::kInt8, dev), j = ints({3, 5}, tl::kInt8, dev);
    check_values(tl::add(i, j, 10), {-126, 43});  // 130 wraps in int8
    i.sub_(j, 2);
    check_values(i, {94, -17});
    Tensor m = floats({1, 0, 0}, tl::kBool, dev), n = floats({0, 1, 0}, tl::kBool, dev);
    check_values(tl::add(m, n, true), {1, 1, 0});
    check_values(tl::add(m, n, false), {1, 0, 0});
    // torch's alpha rules.
    check_throws<tl::DTypeError>([&] { tl::add(j, j, 1.5); }, "alpha must not be a floating");
    check_throws<tl::DTypeError>([&] { tl::add(m, n, 2); }, "Boolean alpha");
    check_throws<tl::DTypeError>([&] { j.add_(j, 0.5); }, "[tl::add_]");
  }
}

// out= forms: write into the given tensor (no allocation when it fits), resize an empty one, refuse
// a wrong shape, device or dtype, and stay right when out is one of the inputs.
TEST_CASE("elementwise semantics: out= forms write into the given tensor") {
  for (tl::Device dev : test_devices()) {
    Tensor a = random_tensor({4, 5}, tl::kFloat32, dev), b = random_tensor({5}, tl::kFloat32, dev);
    Tensor out = tl::empty({4, 5}, tl::TensorOptions(tl::kFloat32).device(dev));
    const void* where = out.data_ptr();
    Tensor& r = tl::mul_out(out, a, b);
    CHECK(&r == &out);
    CHECK(out.data_ptr() == where);  // written in place: nothing allocated for the result
    CHECK(tl::equal(out, a * b));
    tl::exp_out(out, a);
    CHECK(tl::equal(out, tl::exp(a)));
    tl::add_out(out, a, 2.5);
    CHECK(tl::equal(out, a + 2.5));
    // A strided destination (a transposed view) is written element by element.
    Tensor wide = tl::zeros({5, 4}, tl::TensorOptions(tl::kFloat32).device(dev));
    Tensor view = wide.t();
    tl::sub_out(view, a, b);
    CHECK(tl::equal(wide.t(), a - b));
    // An empty out is resized, as torch.
    Tensor e = tl::empty({0}, tl::TensorOptions(tl::kFloat32).device(dev));
    tl::div_out(e, a, b);
    CHECK(e.shape() == tl::Shape{4, 5});
    CHECK(tl::allclose(e, a / b));
    // A wider destination takes the result cast (int32 result into float64); bool into a mask.
    Tensor i = random_tensor({4, 5}, tl::kInt32, dev);
    Tensor d = tl::empty({4, 5}, tl::TensorOptions(tl::kFloat64).device(dev));
    tl::add_out(d, i, i);
    CHECK(tl::equal(d, (i + i).to(tl::kFloat64)));
    Tensor mask = tl::empty({4, 5}, tl::TensorOptions(tl::kBool).device(dev));
    tl::isnan_out(mask, a.log());
    CHECK(tl::equal(mask, tl::isnan(a.log())));
    // out is an input: same elements are fine; out as a transposed input is computed aside.
    Tensor x = a.clone();
    tl::mul_out(x, x, x);
    CHECK(tl::allclose(x, a * a));
    Tensor sq = random_tensor({5, 5}, tl::kFloat32, dev), expected = sq + sq.t();
    tl::add_out(sq, sq, sq.t());
    CHECK(tl::equal(sq, expected));
    // Refused: shape, dtype (float into int), broadcast dims, undefined.
    Tensor small = tl::empty({3}, tl::TensorOptions(tl::kFloat32).device(dev));
    check_throws<tl::ShapeError>([&] { tl::mul_out(small, a, b); }, "[tl::mul] out= has shape");
    Tensor ints_out = tl::empty({4, 5}, tl::TensorOptions(tl::kInt64).device(dev));
    check_throws<tl::DTypeError>([&] { tl::mul_out(ints_out, a, b); }, "can't be cast");
    Tensor bcast = tl::zeros({5}, tl::TensorOptions(tl::kFloat32).device(dev)).expand({4, 5});
    check_throws<tl::ShapeError>([&] { tl::exp_out(bcast, a); }, "broadcast");
    Tensor undefined;
    check_throws<tl::Error>([&] { tl::exp_out(undefined, a); }, "[tl::exp]");
  }
}

TEST_CASE("out= forms of reductions and matmul") {
  for (tl::Device dev : test_devices()) {
    auto opts = tl::TensorOptions(tl::kFloat32).device(dev);
    Tensor x = random_tensor({6, 7, 5}, tl::kFloat32, dev);
    Tensor out = tl::empty({6, 5}, opts);
    const void* where = out.data_ptr();
    tl::sum_out(out, x, 1);
    CHECK(out.data_ptr() == where);
    CHECK(tl::allclose(out, x.sum(1)));
    Tensor keep = tl::empty({6, 1, 5}, opts);
    tl::amax_out(keep, x, 1, true);
    CHECK(tl::equal(keep, x.amax(1, true)));
    Tensor e = tl::empty({0}, opts);
    tl::mean_out(e, x, {0, 2});
    CHECK(e.shape() == tl::Shape{7});
    CHECK(tl::allclose(e, x.mean({0, 2})));
    Tensor strided = tl::zeros({5, 6}, opts).t();  // not contiguous: computed aside, copied in
    tl::amin_out(strided, x, 1);
    CHECK(tl::equal(strided, x.amin(1)));
    Tensor wide = tl::empty({}, tl::TensorOptions(tl::kFloat64).device(dev));
    tl::sum_out(wide, x);
    CHECK(tl::allclose(wide, x.sum().to(tl::kFloat64)));
    check_throws<tl::ShapeError>([&] { tl::prod_out(out, x, 0); }, "[tl::prod] out= has shape");
    // matmul: 2-D, batched, vector; out aliasing an operand is computed aside.
    Tensor a = random_tensor({4, 3}, tl::kFloat32, dev),
           b = random_tensor({3, 4}, tl::kFloat32, dev);
    Tensor p = tl::empty({4, 4}, opts);
    const void* pw = p.data_ptr();
    tl::matmul_out(p, a, b);
    CHECK(p.data_ptr() == pw);
    CHECK(tl::allclose(p, tl::matmul(a, b)));
    Tensor ba = random_tensor({2, 4, 3}, tl::kFloat32, dev);
    Tensor bp = tl::empty({0}, opts);
    tl::matmul_out(bp, ba, b);
    CHECK(bp.shape() == tl::Shape{2, 4, 4});
    CHECK(tl::allclose(bp, tl::matmul(ba, b)));
    Tensor sq = random_tensor({4, 4}, tl::kFloat32, dev), expected = tl::matmul(sq, sq);
    tl::matmul_out(sq, sq, sq);
    CHECK(tl::allclose(sq, expected));
    Tensor bad = tl::empty({3, 3}, opts);
    check_throws<tl::ShapeError>([&] { tl::matmul_out(bad, a, b); }, "[tl::matmul] out= has shape");
  }
}

}  // namespace

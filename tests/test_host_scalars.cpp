// A 0-dim CPU tensor beside CUDA tensors is read on the host as a scalar, as torch's CPU scalars:
// binary ops, comparisons, in-place and out= forms, add/sub with alpha, where, masked_fill, lerp's
// weight and isclose/allclose give the all-CPU result for every dtype pair, promotion counts it as
// a 0-dim tensor (not a number), its value is the one it had when the op was called, a graph
// capture runs these ops, and no host memory is allocated. The CUDA cases skip without a device.
#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "backend_parity.h"
#include "tensorlet/backends/math/binary_ops.h"
#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Tensor;

const tl::Device kCuda = tl::Device::cuda(0);

// 0-dim CPU operands of every dtype, none of them zero (integer division by zero raises): 0.1,
// which neither half type holds, and integers that wrap in uint8/int8 (300) or are negative.
std::vector<Tensor> host_scalars() {
  std::vector<Tensor> out;
  for (DType d : all_dtypes()) {
    const auto make = [d](Scalar v) { return tl::scalar_tensor(v, tl::TensorOptions(d)); };
    if (d == tl::kBool) {
      out.push_back(make(true));
    } else if (tl::is_floating_point(d)) {
      out.push_back(make(0.1));
      out.push_back(make(-2.5));
    } else {
      out.push_back(make(3));
      out.push_back(make(d == tl::kUInt8 ? 250 : d == tl::kInt8 ? -2 : 300));
    }
  }
  return out;
}

std::string describe_pair(const std::string& op, const Tensor& x, const Tensor& s) {
  return op + " " + tl::dtype_name(x.dtype()) + " " + x.shape().str() + " with 0-dim CPU " +
         tl::dtype_name(s.dtype()) + " " + std::to_string(values_of(s)[0]);
}

// x as CUDA inputs in two layouts: contiguous (the flat kernel) and transposed (the strided one).
std::vector<Tensor> cuda_layouts(const Tensor& x) {
  return {same_layout_on(x, kCuda),
          same_layout_on(x.t().contiguous().t(), kCuda)};  // the values of x, strided
}

// The all-CPU form either throws, and the mixed form must throw the same tl error type, or gives
// the result the mixed form must give on cuda:0 (floating values within a few ulp of the math
// functions, which differ between the backends; everything else exactly).
void check_like_cpu(const std::string& what, const std::function<Tensor()>& all_cpu,
                    const std::function<Tensor()>& mixed, Tol tol) {
  CAPTURE(what);
  std::string expected_error, error;
  Tensor expected, got;
  try {
    expected = all_cpu();
  } catch (const tl::Error& e) {
    expected_error = typeid(e).name();
  }
  try {
    got = mixed();
    // A CUDA kernel reports bad data (an integer division by zero) at the next wait for the
    // device, not at the call: wait here so the mixed form's error is caught as the CPU's.
    tl::cuda::synchronize();
  } catch (const tl::Error& e) {
    error = typeid(e).name();
    INFO("the mixed form threw: " << e.what());
    CHECK(error == expected_error);
    return;
  }
  if (!expected_error.empty()) {
    FAIL_CHECK("the all-CPU form threw " << expected_error << ", the mixed form did not");
    return;
  }
  // Integer inputs may give a floating result (atan2, true division): the math functions'
  // tolerance then, as the backends' libm differ by an ulp.
  if (tol.exact() && tl::is_floating_point(expected.dtype())) tol = math_tol(expected.dtype());
  check_same(expected, got, tol, kCuda);
}

Tol tol_for(DType d) { return tl::is_floating_point(d) ? math_tol(d) : kExact; }

// Where the device keeps the 0-dim value in float (a float16/bfloat16 add/sub/mul/div: torch's
// opmath, as for a number), the all-CPU reference is the op in float32 rounded once to the half
// dtype; the CPU op on a 0-dim tensor rounds the value to the half dtype first. With alpha the
// value reaches add_scaled as a device tensor of the compute dtype, as on the CPU.
bool keeps_float(const std::string& op, DType compute) {
  if (!tl::is_reduced_float(compute) || op.find("alpha") != std::string::npos) return false;
  for (const char* name : {"add", "sub", "mul", "div"})
    if (op.rfind(name, 0) == 0) return true;
  return false;
}

// An operand of that float32 reference: the 0-dim one's own value, the other rounded to the
// compute dtype as the front-end converts it.
Tensor in_float(const Tensor& t, DType compute) {
  return t.dim() == 0 ? t.to(tl::kFloat32) : t.to(compute).to(tl::kFloat32);
}

using TensorTensor = Tensor (*)(const Tensor&, const Tensor&);
struct BinaryCase {
  std::string name;
  TensorTensor fn;
};
#define TL_HOST_SCALAR_CASE(e, name, rule, dtypes, Fn) \
  BinaryCase{#name, [](const Tensor& a, const Tensor& b) { return tl::name(a, b); }},
const std::vector<BinaryCase> kBinaryCases{TL_BINARY_OPS(TL_HOST_SCALAR_CASE)};
#undef TL_HOST_SCALAR_CASE

Tensor expected_binary(const BinaryCase& c, const Tensor& a, const Tensor& b) {
  Tensor plain = c.fn(a, b);  // throws where the mixed form must throw
  const DType compute = tl::result_type(a, b);
  if (!keeps_float(c.name, compute)) return plain;
  return c.fn(in_float(a, compute), in_float(b, compute)).to(plain.dtype());
}

}  // namespace

TEST_CASE("host scalars: binary ops and comparisons with a 0-dim CPU tensor, every dtype pair") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : all_dtypes()) {
    const Tensor x = random_tensor({3, 5}, d);
    for (const Tensor& xc : cuda_layouts(x))
      for (const Tensor& s : host_scalars())
        for (const BinaryCase& c : kBinaryCases) {
          const Tol tol = tol_for(tl::result_type(x, s));
          check_like_cpu(
              describe_pair(c.name, x, s) + " (tensor, 0-dim)",
              [&] { return expected_binary(c, x, s); }, [&] { return c.fn(xc, s); }, tol);
          check_like_cpu(
              describe_pair(c.name, x, s) + " (0-dim, tensor)",
              [&] { return expected_binary(c, s, x); }, [&] { return c.fn(s, xc); }, tol);
        }
  }
}

TEST_CASE("host scalars: operators, a 0-dim CUDA tensor, and add/sub with alpha") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor x = random_tensor({4, 3}, tl::kFloat32);
  const Tensor xc = x.to(kCuda);
  const Tensor s = tl::scalar_tensor(0.25, tl::TensorOptions(tl::kFloat64));
  check_like_cpu(
      "x <= s", [&] { return x <= s; }, [&] { return xc <= s; }, kExact);
  check_like_cpu(
      "s > x", [&] { return s > x; }, [&] { return s > xc; }, kExact);
  check_like_cpu(
      "x + s", [&] { return x + s; }, [&] { return xc + s; }, kExact);
  check_like_cpu(
      "s / x", [&] { return s / x; }, [&] { return s / xc; }, kExact);
  check_like_cpu(
      "x == s", [&] { return x == s; }, [&] { return xc == s; }, kExact);
  // Two 0-dim tensors: the CUDA one decides the device, and both promote as 0-dim tensors.
  const Tensor z = tl::scalar_tensor(1.5, tl::TensorOptions(tl::kFloat32));
  check_like_cpu(
      "cuda 0-dim * cpu 0-dim", [&] { return z * s; }, [&] { return z.to(kCuda) * s; }, kExact);
  check_like_cpu(
      "cpu 0-dim - cuda 0-dim", [&] { return s - z; }, [&] { return s - z.to(kCuda); }, kExact);

  // add/sub with alpha: one kernel, rounded once, the 0-dim value on either side (filled into a
  // device tensor of the compute dtype, so exactly the all-CPU result).
  for (DType d : all_dtypes()) {
    const Tensor xd = random_tensor({3, 5}, d);
    for (const Tensor& xdc : cuda_layouts(xd))
      for (const Tensor& t : host_scalars())
        for (Scalar alpha : {Scalar(2), Scalar(-0.5), Scalar(true)})
          for (const bool is_add : {true, false}) {
            const auto op = [is_add, alpha](const Tensor& a, const Tensor& b) {
              return is_add ? tl::add(a, b, alpha) : tl::sub(a, b, alpha);
            };
            const std::string name = is_add ? "add" : "sub";
            std::ostringstream what;
            what << describe_pair(name, xd, t) << " alpha " << alpha;
            Tol tol = tol_for(tl::result_type(xd, t));
            // A float16/bfloat16 a + alpha * b rounds on each backend at its own point (the CPU
            // rounds alpha * b first, the device once); near a cancellation the difference is
            // about one ulp of the operands (|x| < 2 here), not of the small result.
            if (tl::is_reduced_float(tl::result_type(xd, t)))
              tol.atol = std::max(tol.atol, 1.0 / 64);
            check_like_cpu(
                what.str() + " (tensor, 0-dim)", [&] { return op(xd, t); },
                [&] { return op(xdc, t); }, tol);
            check_like_cpu(
                what.str() + " (0-dim, tensor)", [&] { return op(t, xd); },
                [&] { return op(t, xdc); }, tol);
          }
  }
}

TEST_CASE(
    "host scalars: in-place ops on a CUDA tensor with a 0-dim CPU operand, every dtype pair") {
  TL_TEST_REQUIRE_CUDA();
  using InPlace = std::function<void(Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, InPlace>> ops{
      {"add_", [](Tensor& y, const Tensor& o) { y.add_(o); }},
      {"sub_", [](Tensor& y, const Tensor& o) { y.sub_(o); }},
      {"mul_", [](Tensor& y, const Tensor& o) { y.mul_(o); }},
      {"div_", [](Tensor& y, const Tensor& o) { y.div_(o); }},
      {"add_ alpha 3", [](Tensor& y, const Tensor& o) { y.add_(o, 3); }},
      {"sub_ alpha 0.5", [](Tensor& y, const Tensor& o) { y.sub_(o, 0.5); }},
      {"mul_ (*=)", [](Tensor& y, const Tensor& o) { y *= o; }},
  };
  for (DType d : all_dtypes()) {
    const Tensor x = random_tensor({3, 5}, d);
    for (const Tensor& xc : cuda_layouts(x))
      for (const Tensor& s : host_scalars())
        for (const auto& [name, fn] : ops) {
          const auto expected = [&, name = name, fn = fn] {
            Tensor y = x.clone();
            fn(y, s);  // throws where the mixed form must throw
            const DType compute = tl::result_type(x, s);
            if (!keeps_float(name, compute)) return y;
            Tensor y32 = x.to(tl::kFloat32);
            fn(y32, s.to(tl::kFloat32));
            return y32.to(d);
          };
          check_like_cpu(
              describe_pair(name, x, s), expected,
              [&, fn = fn] {
                Tensor y = same_layout_on(xc, kCuda);  // a copy, strided as xc
                fn(y, s);
                return y;
              },
              tol_for(d));
        }
  }
}

TEST_CASE("host scalars: out= forms with a 0-dim CPU operand write into a CUDA tensor") {
  TL_TEST_REQUIRE_CUDA();
  using Out = Tensor& (*)(Tensor&, const Tensor&, const Tensor&);
  const std::vector<std::pair<BinaryCase, Out>> ops{
      {{"add", &tl::add}, &tl::add_out},
      {{"mul", &tl::mul}, &tl::mul_out},
      {{"div", &tl::div}, &tl::div_out},
      {{"le", &tl::le}, &tl::le_out},
      {{"pow", &tl::pow}, &tl::pow_out},
      {{"maximum", &tl::maximum}, &tl::maximum_out},
      {{"remainder", &tl::remainder}, &tl::remainder_out}};
  for (DType d : all_dtypes()) {
    const Tensor x = random_tensor({3, 5}, d);
    const Tensor xc = x.to(kCuda);
    for (const Tensor& s : host_scalars())
      for (const auto& [c, fn] : ops)
        for (const bool zero_dim_first : {false, true}) {
          const Tensor& a = zero_dim_first ? s : x;
          const Tensor& b = zero_dim_first ? x : s;
          DType result = tl::kFloat32;  // any, where the op throws
          try {
            result = expected_binary(c, a, b).dtype();
          } catch (const tl::Error&) {
          }
          // out of the result's dtype (written directly), of float64 (computed aside and copied
          // in), and empty (resized, as torch).
          for (const int kind : {0, 1, 2}) {
            const DType out_dtype = kind == 1 ? tl::kFloat64 : result;
            const auto make_out = [&](tl::Device dev) {
              const tl::TensorOptions options = tl::TensorOptions(out_dtype).device(dev);
              return kind == 2 ? tl::empty({0}, options) : tl::full({3, 5}, 7, options);
            };
            check_like_cpu(
                describe_pair(c.name + "_out", x, s) + " out kind " + std::to_string(kind) +
                    (zero_dim_first ? " (0-dim, tensor)" : " (tensor, 0-dim)"),
                [&] { return expected_binary(c, a, b).to(out_dtype); },
                [&, fn = fn] {
                  Tensor out = make_out(kCuda);
                  fn(out, zero_dim_first ? s : xc, zero_dim_first ? xc : s);
                  return out;
                },
                tol_for(result));
          }
        }
  }
}

TEST_CASE("host scalars: where with 0-dim CPU inputs, the condition included, every dtype pair") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor c = random_tensor({3, 5}, tl::kBool);
  const Tensor cc = c.to(kCuda);
  for (DType d : all_dtypes()) {
    const Tensor x = random_tensor({3, 5}, d);
    for (const Tensor& xc : cuda_layouts(x))
      for (const Tensor& s : host_scalars()) {
        const std::string what = describe_pair("where", x, s);
        check_like_cpu(
            what + " (c, x, s)", [&] { return tl::where(c, x, s); },
            [&] { return tl::where(cc, xc, s); }, kExact);
        check_like_cpu(
            what + " (c, s, x)", [&] { return tl::where(c, s, x); },
            [&] { return tl::where(cc, s, xc); }, kExact);
        // Both values on the host: the condition decides the device.
        const Tensor s2 = tl::scalar_tensor(-1, tl::TensorOptions(d));
        check_like_cpu(
            what + " (c, s, s2)", [&] { return tl::where(c, s, s2); },
            [&] { return tl::where(cc, s, s2); }, kExact);
        // A 0-dim CPU condition beside device values.
        for (const bool flag : {true, false}) {
          const Tensor c0 = tl::scalar_tensor(flag, tl::TensorOptions(tl::kBool));
          check_like_cpu(
              what + " (c0 " + std::to_string(flag) + ", x, s)",
              [&] { return tl::where(c0, x, s); }, [&] { return tl::where(c0, xc, s); }, kExact);
          check_like_cpu(
              what + " (c0 " + std::to_string(flag) + ", s, x)",
              [&] { return tl::where(c0, s, x); }, [&] { return tl::where(c0, s, xc); }, kExact);
        }
      }
  }
}

TEST_CASE("host scalars: masked_fill with a 0-dim CPU value, every dtype pair") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor m = random_tensor({3, 5}, tl::kBool);
  const Tensor mc = m.to(kCuda);
  for (DType d : all_dtypes()) {
    const Tensor x = random_tensor({3, 5}, d);
    for (const Tensor& xc : cuda_layouts(x))
      for (const Tensor& s : host_scalars()) {
        const std::string what = describe_pair("masked_fill", x, s);
        check_like_cpu(
            what, [&] { return tl::masked_fill(x, m, s); },
            [&] { return tl::masked_fill(xc, mc, s); }, kExact);
        check_like_cpu(
            what + " in place",
            [&] {
              Tensor y = x.clone();
              y.masked_fill_(m, s);
              return y;
            },
            [&] {
              Tensor y = same_layout_on(xc, kCuda);
              y.masked_fill_(mc, s);
              return y;
            },
            kExact);
      }
  }
}

TEST_CASE("host scalars: lerp with a 0-dim CPU weight") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    const Tensor start = random_tensor({3, 5}, d), end = random_tensor({3, 5}, d);
    const Tensor sc = start.to(kCuda), ec = end.to(kCuda);
    for (const double w : {0.1, 0.75, -2.5}) {
      const Tensor weight = tl::scalar_tensor(w, tl::TensorOptions(d));
      const std::string what = describe_pair("lerp", start, weight);
      check_like_cpu(
          what, [&] { return tl::lerp(start, end, weight); },
          [&] { return tl::lerp(sc, ec, weight); }, tol_for(d));
      check_like_cpu(
          what + " in place",
          [&] {
            Tensor y = start.clone();
            y.lerp_(end, weight);
            return y;
          },
          [&] {
            Tensor y = sc.clone();
            y.lerp_(ec, weight);
            return y;
          },
          tol_for(d));
    }
  }
}

TEST_CASE("host scalars: isclose and allclose with a 0-dim CPU tensor on either side") {
  TL_TEST_REQUIRE_CUDA();
  for (DType d : all_dtypes()) {
    const Tensor x = random_tensor({3, 5}, d);
    const Tensor xc = x.to(kCuda);
    for (const Tensor& s : host_scalars()) {
      if (s.dtype() != d) continue;  // both take one dtype
      const std::string what = describe_pair("isclose", x, s);
      check_like_cpu(
          what + " (x, s)", [&] { return tl::isclose(x, s, 0.1, 0.5); },
          [&] { return tl::isclose(xc, s, 0.1, 0.5); }, kExact);
      check_like_cpu(
          what + " (s, x)", [&] { return tl::isclose(s, x, 0.1, 0.5); },
          [&] { return tl::isclose(s, xc, 0.1, 0.5); }, kExact);
      CAPTURE(what);
      CHECK(tl::allclose(xc, s, 0.1, 0.5) == tl::allclose(x, s, 0.1, 0.5));
      CHECK(tl::allclose(s, xc, 0.1, 0.5) == tl::allclose(s, x, 0.1, 0.5));
      CHECK(tl::allclose(s.to(kCuda).expand({3, 5}).contiguous(), s));
    }
  }
}

TEST_CASE("host scalars: promotion counts a 0-dim CPU tensor as a 0-dim tensor, not a number") {
  TL_TEST_REQUIRE_CUDA();
  const auto on_cuda = [](DType d, const std::vector<double>& v) {
    return tl::from_vector(v, {static_cast<int64_t>(v.size())}).to(d).to(kCuda);
  };
  const auto cpu0 = [](Scalar v, DType d) { return tl::scalar_tensor(v, tl::TensorOptions(d)); };
  struct Row {
    const char* what;
    Tensor result;
    DType dtype;
    std::vector<double> values;
  };
  const Tensor f32 = on_cuda(tl::kFloat32, {1.5, -2});
  const Tensor u8 = on_cuda(tl::kUInt8, {200, 10});
  const Tensor i32 = on_cuda(tl::kInt32, {1, -2});
  const Tensor b = on_cuda(tl::kBool, {1, 0});
  const Tensor f16 = on_cuda(tl::kFloat16, {1, 2});
  const std::vector<Row> rows{
      // A float64 0-dim tensor ranks below a float32 dimensioned one (torch keeps float32).
      {"float32 + float64 0-dim", f32 + cpu0(0.5, tl::kFloat64), tl::kFloat32, {2, -1.5}},
      // An int64 0-dim tensor takes uint8's dtype, its value wrapped (300 is 44).
      {"uint8 + int64 0-dim", u8 + cpu0(300, tl::kInt64), tl::kUInt8, {244, 54}},
      // A floating 0-dim tensor over integers: its own dtype (a number would give float32).
      {"int32 * float64 0-dim", i32 * cpu0(2.5, tl::kFloat64), tl::kFloat64, {2.5, -5}},
      {"int32 * 2.5 (a number)", i32 * 2.5, tl::kFloat32, {2.5, -5}},
      {"bool + int8 0-dim", b + cpu0(3, tl::kInt8), tl::kInt8, {4, 3}},
      {"float16 * float64 0-dim", f16 * cpu0(0.5, tl::kFloat64), tl::kFloat16, {0.5, 1}},
      {"int32 <= float64 0-dim", i32 <= cpu0(0.5, tl::kFloat64), tl::kBool, {0, 1}},
      // Two 0-dim tensors promote together: float64.
      {"float32 0-dim (cuda) + float64 0-dim",
       tl::scalar_tensor(1.5).to(kCuda) + cpu0(0.25, tl::kFloat64),
       tl::kFloat64,
       {1.75}},
      {"where(c, int32, float64 0-dim)",
       tl::where(b, i32, cpu0(0.5, tl::kFloat64)),
       tl::kFloat64,
       {1, 0.5}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    CHECK(r.result.device() == kCuda);
    CHECK(r.result.dtype() == r.dtype);
    check_values(r.result, r.values, 0, 0);
  }
}

TEST_CASE("host scalars: the value is read when the op is called, not when its kernel runs") {
  TL_TEST_REQUIRE_CUDA();
  const tl::TensorOptions cuda = tl::TensorOptions(tl::kFloat32).device(kCuda);
  const Tensor big = tl::ones({2048, 2048}, cuda);
  const Tensor x = tl::ones({1 << 20}, cuda);
  const Tensor mask = x > 0.0;
  Tensor s = tl::scalar_tensor(2.0);
  Tensor c = tl::scalar_tensor(true, tl::kBool);  // scalar_tensor is float32 unless told
  // Products ahead on the stream keep the kernels below waiting while the host goes on to
  // overwrite the 0-dim tensors: a kernel reading their memory would see the new values.
  Tensor busy = big;
  for (int i = 0; i < 8; ++i) busy = tl::matmul(busy, big) * (1.0 / 2048);
  Tensor y = x * s;                                    // 2
  y.add_(s, 3);                                        // 8
  Tensor w = tl::where(c, y, s);                       // 8: c was true
  Tensor f = tl::masked_fill(x, mask, s);              // 2
  Tensor l = tl::lerp(x, y, tl::scalar_tensor(0.5f));  // 4.5
  s.fill_(100.0);
  c.fill_(false);
  check_values(y.slice(0, 0, 4), {8, 8, 8, 8}, 0, 0);
  check_values(w.slice(0, 0, 4), {8, 8, 8, 8}, 0, 0);
  check_values(f.slice(0, 0, 4), {2, 2, 2, 2}, 0, 0);
  check_values(l.slice(0, 0, 4), {4.5, 4.5, 4.5, 4.5}, 0, 0);
  CHECK(tl::all(y == 8.0).item<bool>());
  CHECK(busy.sum().item<double>() == doctest::Approx(2048.0 * 2048.0));
}

TEST_CASE("host scalars: a graph capture takes the value of the 0-dim CPU tensor at capture") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor x = random_tensor({37, 19}).to(kCuda);
  Tensor s = tl::scalar_tensor(0.5, tl::TensorOptions(tl::kFloat64));
  Tensor c = tl::scalar_tensor(false, tl::kBool);
  const Tensor m = (x > 0.0);
  Tensor y, z, w, f;
  tl::cuda::Graph g;
  // Nothing here waits for the GPU or copies from the host: a capture would refuse it.
  g.capture([&] {
    y = x * s + s;
    y.mul_(s);
    z = tl::where(c, x, s);
    w = tl::add(x, s, 2);
    f = tl::masked_fill(x, m, s);
  });
  REQUIRE(g.is_captured());
  const Tensor xh = x.cpu();
  const auto check = [&] {
    check_values(y, values_of((xh * 0.5 + 0.5) * 0.5), 0, 0);
    check_values(z, values_of(tl::full({37, 19}, 0.5)), 0, 0);
    check_values(w, values_of(xh + 1.0), 0, 0);
    check_values(f, values_of(tl::masked_fill(xh, xh > 0.0, 0.5)), 0, 0);
  };
  g.replay();
  check();
  // The captured kernels hold the values they were given: a replay after the 0-dim tensors
  // change computes what the capture saw (as torch's CPU scalars in a CUDA graph).
  s.fill_(4.0);
  c.fill_(true);
  g.replay();
  check();
}

TEST_CASE("host scalars: a CUDA op with a 0-dim CPU operand allocates no host memory") {
  TL_TEST_REQUIRE_CUDA();
  namespace prof = tl::profiler;
  const Tensor x = random_tensor({3, 5}, tl::kFloat16).to(kCuda);
  const Tensor c = random_tensor({3, 5}, tl::kBool).to(kCuda);
  const Tensor s = tl::scalar_tensor(2.5, tl::TensorOptions(tl::kFloat64));
  prof::Profile profile({.profile_memory = true});
  {
    Tensor a = x + s, b = tl::where(c, x, s), d = s * x.t(), e = tl::add(x, s, 2);
    Tensor f = x.clone();
    f.mul_(s);
    f.sub_(s, 0.5);
    Tensor g = tl::masked_fill(x, c, s), h = x <= s;
  }
  profile.stop();
  for (const prof::Event& e : profile.events()) {
    if (e.kind == prof::EventKind::Memory) CHECK(e.device != "cpu");
    // The value is read in place: no tl::item (a host copy) and no conversion of the 0-dim tensor.
    CHECK(e.name != "tl::item");
    CHECK(e.name != "tl::to");
  }
}

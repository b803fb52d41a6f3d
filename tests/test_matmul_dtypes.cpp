// Matmul on float16, bfloat16 and the 8/16-bit integers (CPU, and CUDA against the CPU), and the
// float32 matmul precision setting.
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

namespace tl = tensorlet;
using tl::DType;
using tl::Shape;
using tl::Tensor;

// Runs fn, which must throw E with a message starting with `prefix` and containing `needle`.
template <typename E>
void check_error(const std::function<void()>& fn, const std::string& prefix,
                 const std::string& needle) {
  bool thrown = false;
  try {
    fn();
  } catch (const E& e) {
    thrown = true;
    const std::string what = e.what();
    INFO("message: " << what);
    CHECK(what.rfind(prefix, 0) == 0);
    CHECK(what.find(needle) != std::string::npos);
  }
  CHECK(thrown);
}

// Random operands built in float64 / int64 and converted, so they need no kernel of the dtype
// under test besides the conversion itself.
Tensor random_of(const Shape& shape, DType dtype) {
  if (tl::is_floating_point(dtype))
    return (tl::rand(shape, tl::TensorOptions(tl::kFloat64)) * 4.0 - 2.0).to(dtype);
  return tl::randint(-9, 10, shape, tl::kInt64).to(dtype);
}

// a @ b in float64 from the operands' exact values; `got`, computed on `device`, within the
// bound of one rounding to the half type of a float accumulation of k exact products (on CUDA,
// cuBLAS's partial sums perhaps rounded too): relative to the result, plus the float sums'
// error, which scales with |a| @ |b| where the result cancels.
void check_float_matmul(const Tensor& a, const Tensor& b, const Tensor& got,
                        tl::Device device = tl::Device::cpu()) {
  REQUIRE(got.dtype() == a.dtype());
  const Tensor expected = tl::matmul(a.to(tl::kFloat64), b.to(tl::kFloat64));
  REQUIRE(got.shape() == expected.shape());
  const std::vector<double> e = tl_test::values_of(expected),
                            m = tl_test::values_of(tl::matmul(tl::abs(a.to(tl::kFloat64)),
                                                              tl::abs(b.to(tl::kFloat64))));
  const double k = static_cast<double>(a.shape().back());
  std::vector<double> tol(e.size());
  for (size_t i = 0; i < e.size(); ++i)
    tol[i] = tl_test::rounded_sum_bound(a.dtype(), e[i], m[i], k,
                                        tl_test::partial_roundings(device, a.dtype()));
  INFO("dtype " << a.dtype() << " " << a.shape() << " @ " << b.shape());
  tl_test::check_values_within(got, e, tol);
}

// Integer products wrap: the exact int64 product narrowed to the dtype (two's complement).
void check_int_matmul(const Tensor& a, const Tensor& b, const Tensor& got) {
  REQUIRE(got.dtype() == a.dtype());
  const Tensor expected = tl::matmul(a.to(tl::kInt64), b.to(tl::kInt64)).to(a.dtype());
  CHECK_MESSAGE(tl::equal(got, expected), "dtype ", a.dtype(), " ", a.shape(), " @ ", b.shape());
}

void check_matmul(const Tensor& a, const Tensor& b, const Tensor& got,
                  tl::Device device = tl::Device::cpu()) {
  if (tl::is_floating_point(a.dtype()))
    check_float_matmul(a, b, got, device);
  else
    check_int_matmul(a, b, got);
}

const std::vector<DType> kNewDtypes{tl::kFloat16, tl::kBFloat16, tl::kUInt8, tl::kInt8, tl::kInt16};

// (a shape, b shape): tiny, Eigen-sized, 1-D rules, batched and broadcast batches.
const std::vector<std::pair<Shape, Shape>> kShapes{
    {{3, 4}, {4, 2}},
    {{33, 65}, {65, 17}},
    {{7}, {7, 5}},
    {{6, 9}, {9}},
    {{40}, {40}},
    {{4, 6, 8}, {4, 8, 5}},
    {{3, 1, 6, 8}, {2, 8, 5}},
    {{2, 20, 70}, {70, 30}},
    {{1, 128}, {128, 1}},
};

TEST_CASE("matmul dtypes: float16, bfloat16 and 8/16-bit integers on the CPU") {
  for (DType d : kNewDtypes)
    for (const auto& [sa, sb] : kShapes) {
      const Tensor a = random_of(sa, d), b = random_of(sb, d);
      check_matmul(a, b, tl::matmul(a, b));
    }
}

TEST_CASE("matmul dtypes: transposed, sliced and broadcast operands") {
  for (DType d : kNewDtypes) {
    const Tensor a = random_of({30, 20}, d), b = random_of({40, 30}, d);
    check_matmul(a.t(), b.t(), tl::matmul(a.t(), b.t()));        // both transposed
    const Tensor s = random_of({20, 50}, d).slice(1, 0, 50, 2);  // column step
    check_matmul(a, s, tl::matmul(a, s));                        // [30, 20] @ [20, 25]
    const Tensor w = random_of({8, 5}, d);
    const Tensor x = random_of({1, 9, 8}, d).expand({4, 9, 8});  // broadcast batch
    check_matmul(x, w, tl::matmul(x, w));
    check_matmul(x, w.unsqueeze(0).expand({4, 8, 5}), tl::bmm(x, w.unsqueeze(0).expand({4, 8, 5})));
    if (tl::is_floating_point(d)) {
      // linear = x @ w.T + b; the bias add needs the dtype's add kernel.
      const Tensor wt = random_of({5, 8}, d);
      check_float_matmul(x, wt.t(), tl::linear(x, wt));
    }
    check_matmul(a.select(1, 3), a, tl::matmul(a.select(1, 3), a));  // strided vector
  }
}

TEST_CASE("matmul dtypes: K = 0 gives zeros, empty M gives an empty result") {
  for (DType d : kNewDtypes) {
    const Tensor z = tl::matmul(random_of({3, 0}, d), random_of({0, 4}, d));
    CHECK(z.dtype() == d);
    CHECK(tl::equal(z.to(tl::kFloat64), tl::zeros({3, 4}, tl::kFloat64)));
    CHECK(tl::matmul(random_of({0, 5}, d), random_of({5, 4}, d)).shape() == Shape{0, 4});
  }
}

// PyTorch's values (CPU) for products that overflow the narrow types.
TEST_CASE("matmul dtypes: integer products wrap as PyTorch's") {
  const std::vector<int64_t> av{-128, -91, -54, -17, 20, 57, 94, -125, -88, -51, -14, 23};
  const std::vector<int64_t> bv{-128, -75, -22, 31, 84,  -119, -66, -13, 40, 93,
                                -110, -57, -4,  49, 102, -101, -48, 5,   58, 111};
  const Tensor a = tl::from_vector(av, {3, 4}), b = tl::from_vector(bv, {4, 5});
  auto product = [&](DType d) { return tl::matmul(a.to(d), b.to(d)).to(tl::kInt64); };
  CHECK(tl::equal(product(tl::kInt8), tl::from_vector<int64_t>({54, 44, 34, 24, 14, 110, -12, 122,
                                                                0, -122, -90, -68, -46, -24, -2},
                                                               {3, 5})));
  CHECK(tl::equal(product(tl::kUInt8), tl::from_vector<int64_t>({54, 44, 34, 24, 14, 110, 244, 122,
                                                                 0, 134, 166, 188, 210, 232, 254},
                                                                {3, 5})));
  CHECK(tl::equal(product(tl::kInt16),
                  tl::from_vector<int64_t>({-30666, 19500, 4130, -11240, -26610, -7058, -4620,
                                            -2182, 256, 2694, 16550, 9660, 2770, -4120, -11010},
                                           {3, 5})));
  const Tensor a16 = tl::from_vector<int64_t>(
      {-32768, -29767, -26766, -23765, -20764, -17763, -14762, -11761, -8760, -5759, -2758, 243},
      {3, 4});
  const Tensor b16 = tl::from_vector<int64_t>(
      {-32768, -30019, -27270, -24521, -21772, -19023, -16274, -13525, -10776, -8027,
       -5278,  -2529,  220,    2969,   5718,   8467,   11216,  13965,  16714,  19463},
      {4, 5});
  CHECK(
      tl::equal(tl::matmul(a16.to(tl::kInt16), b16.to(tl::kInt16)).to(tl::kInt64),
                tl::from_vector<int64_t>({-20802, -1988, 16826, -29896, -11082, 27798, -12444,
                                          12850, -27392, -2098, 10862, -22900, 8874, -24888, 6886},
                                         {3, 5})));
}

TEST_CASE("matmul dtypes: float16 rounds a float sum once") {
  // 2049 + 1 + 1 + ... : each partial sum rounded to float16 would stay at 2048; a float sum
  // rounded once gives 2048 + 64 = 2112.
  const int64_t k = 65;
  Tensor a = tl::ones({1, k}, tl::kFloat64);
  Tensor b = tl::ones({k, 1}, tl::kFloat64);
  b[0][0].fill_(2048.0);
  const Tensor r = tl::matmul(a.to(tl::kFloat16), b.to(tl::kFloat16));
  CHECK(r.to(tl::kFloat64).item<double>() == 2112.0);
}

TEST_CASE("matmul dtypes: set_float32_matmul_precision and allow_tf32 are one setting") {
  const std::string previous = tl::get_float32_matmul_precision();
  CHECK(previous == "highest");  // PyTorch's default
  for (const char* p : {"high", "medium", "highest"}) {
    tl::set_float32_matmul_precision(p);
    CHECK(tl::get_float32_matmul_precision() == p);
    CHECK(tl::cuda::allow_tf32() == (std::string(p) != "highest"));
  }
  tl::cuda::set_allow_tf32(true);
  CHECK(tl::get_float32_matmul_precision() == "high");
  tl::cuda::set_allow_tf32(false);
  CHECK(tl::get_float32_matmul_precision() == "highest");
  check_error<tl::Error>([] { tl::set_float32_matmul_precision("High"); },
                         "[tl::set_float32_matmul_precision] ", "High");
  check_error<tl::Error>([] { tl::set_float32_matmul_precision(""); },
                         "[tl::set_float32_matmul_precision] ", "highest");
  CHECK(tl::get_float32_matmul_precision() == "highest");  // a bad value changes nothing
  // The CPU computes float32 in full precision whatever the setting.
  tl::set_float32_matmul_precision("medium");
  const Tensor a = random_of({20, 30}, tl::kFloat32), b = random_of({30, 10}, tl::kFloat32);
  CHECK(tl::allclose(tl::matmul(a, b).to(tl::kFloat64),
                     tl::matmul(a.to(tl::kFloat64), b.to(tl::kFloat64)), 1e-5, 1e-5));
  tl::set_float32_matmul_precision(previous);
}

TEST_CASE("matmul dtypes: bool and mixed dtypes are refused naming the op") {
  const Tensor b = tl::ones({2, 2}, tl::kBool);
  check_error<tl::DTypeError>([&] { (void)tl::matmul(b, b); }, "[tl::matmul] ", "bool");
  check_error<tl::DTypeError>([&] { (void)tl::mm(b, b); }, "[tl::mm] ", "bool");
  const Tensor h = random_of({2, 2}, tl::kFloat16), f = random_of({2, 2}, tl::kFloat32);
  check_error<tl::DTypeError>([&] { (void)tl::matmul(h, f); }, "[tl::matmul] ", "float16");
}

// ---- CUDA: the same products on cuda:0, compared with the CPU ----

TEST_CASE("matmul dtypes: CUDA float16/bfloat16/integers agree with the CPU") {
  TL_TEST_REQUIRE_CUDA();
  const tl::Device cuda = tl::Device::cuda(0);
  std::vector<std::pair<Shape, Shape>> shapes = kShapes;
  shapes.push_back({{256, 384}, {384, 200}});       // cuBLAS, one product
  shapes.push_back({{5, 64, 96}, {5, 96, 48}});     // strided batched
  shapes.push_back({{3, 2, 40, 50}, {1, 50, 60}});  // broadcast b: one tall product
  shapes.push_back({{4, 1, 100}, {100, 70}});       // m = 1 rows folded
  for (DType d : kNewDtypes)
    for (const auto& [sa, sb] : shapes) {
      const Tensor a = random_of(sa, d), b = random_of(sb, d);
      const Tensor got = tl::matmul(a.to(cuda), b.to(cuda));
      CHECK(got.device() == cuda);
      check_matmul(a, b, got.to(tl::Device::cpu()), cuda);
    }
  for (DType d : {tl::kFloat16, tl::kBFloat16}) {  // transposed operands as cuBLAS flags
    const Tensor a = random_of({96, 64}, d), b = random_of({128, 96}, d);
    const Tensor ga = a.to(cuda), gb = b.to(cuda);
    check_matmul(a.t(), b.t(), tl::matmul(ga.t(), gb.t()).to(tl::Device::cpu()), cuda);
    const Tensor s = random_of({64, 200}, d);
    check_matmul(a, s.slice(1, 0, 200, 2),
                 tl::matmul(ga, s.to(cuda).slice(1, 0, 200, 2)).to(tl::Device::cpu()), cuda);
  }
}

TEST_CASE("matmul dtypes: CUDA float32 under each precision stays close to the CPU") {
  TL_TEST_REQUIRE_CUDA();
  const std::string previous = tl::get_float32_matmul_precision();
  const Tensor a = random_of({200, 300}, tl::kFloat32), b = random_of({300, 100}, tl::kFloat32);
  const Tensor ref = tl::matmul(a.to(tl::kFloat64), b.to(tl::kFloat64));
  const std::vector<double> e = tl_test::values_of(ref),
                            m = tl_test::values_of(tl::matmul(tl::abs(a.to(tl::kFloat64)),
                                                              tl::abs(b.to(tl::kFloat64))));
  for (const char* p : {"highest", "high", "medium"}) {
    tl::set_float32_matmul_precision(p);
    const Tensor got = tl::matmul(a.to(tl::Device::cuda(0)), b.to(tl::Device::cuda(0)));
    INFO("precision " << p);
    if (std::string(p) == "highest") {
      // Full float32: a tolerance TF32 (errors near 1e-2 here) cannot meet, so this tells the
      // settings apart.
      CHECK(tl::allclose(got.to(tl::Device::cpu()).to(tl::kFloat64), ref, 1e-5, 3e-5));
      continue;
    }
    // TF32: each element within its rounding bound, which scales with |a| @ |b| where the
    // result cancels (a fixed tolerance fails on some data there).
    std::vector<double> tol(e.size());
    for (size_t i = 0; i < e.size(); ++i) tol[i] = tl_test::tf32_matmul_bound(e[i], m[i], 300);
    tl_test::check_values_within(got, e, tol);
  }
  tl::set_float32_matmul_precision(previous);
}

}  // namespace

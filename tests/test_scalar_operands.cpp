// Scalar operands (x + 2.5, where(c, x, 0), clamp bounds, x.add_(1)) reach the backends as values:
// on every dtype, layout and device they give what the same op gives with a 0-dim tensor of the
// value, and they allocate nothing (no hidden host tensor, none at all for a CUDA op).
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>
#include <tuple>
#include <string>
#include <typeinfo>
#include <vector>

#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Tensor;
namespace prof = tensorlet::profiler;

const std::vector<DType> kEveryDtype{tl::kBool,    tl::kUInt8,  tl::kInt8,    tl::kInt16,
                                     tl::kInt32,   tl::kInt64,  tl::kFloat16, tl::kBFloat16,
                                     tl::kFloat32, tl::kFloat64};

// The 0-dim tensor torch promotes exactly as the scalar: bool for a bool scalar (so that sub
// refuses both); of x's dtype when the scalar's kind is not above x's (its value converted as the
// scalar is), else of the scalar kind's default dtype.
Tensor zero_dim_like(const Tensor& x, Scalar s) {
  const bool x_float = tl::is_floating_point(x.dtype());
  DType dtype = x.dtype();
  if (s.is_bool())
    dtype = tl::kBool;
  else if (s.is_floating_point() && !x_float)
    dtype = tl::kFloat32;
  else if (s.is_integral() && x.dtype() == tl::kBool)
    dtype = tl::kInt64;
  return tl::scalar_tensor(s, tl::TensorOptions(dtype).device(x.device()));
}

// Both forms throw the same exception type, or give one dtype and the same values (NaN where
// the other has NaN): the scalar and the 0-dim tensor run the same element math.
void check_same(const std::string& what, const std::function<Tensor()>& scalar_form,
                const std::function<Tensor()>& tensor_form) {
  CAPTURE(what);
  std::string scalar_error, tensor_error;
  Tensor a, b;
  try {
    a = scalar_form();
  } catch (const tl::Error& e) {
    scalar_error = typeid(e).name();
  }
  try {
    b = tensor_form();
  } catch (const tl::Error& e) {
    tensor_error = typeid(e).name();
  }
  REQUIRE(scalar_error == tensor_error);
  if (!scalar_error.empty()) return;
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> va = values_of(a), vb = values_of(b);
  for (size_t i = 0; i < va.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(vb[i]))
      CHECK(std::isnan(va[i]));
    else
      CHECK(va[i] == vb[i]);
  }
}

using ScalarRight = Tensor (*)(const Tensor&, Scalar);
using ScalarLeft = Tensor (*)(Scalar, const Tensor&);
using TensorTensor = Tensor (*)(const Tensor&, const Tensor&);
struct BinaryCase {
  const char* name;
  ScalarRight ts;
  ScalarLeft st;
  TensorTensor tt;
};

#define TL_SCALAR_CASE(name)                                                  \
  BinaryCase{#name, [](const Tensor& a, Scalar b) { return tl::name(a, b); }, \
             [](Scalar a, const Tensor& b) { return tl::name(a, b); },        \
             [](const Tensor& a, const Tensor& b) { return tl::name(a, b); }},
const std::vector<BinaryCase> kBinaryCases{
    TL_SCALAR_CASE(add) TL_SCALAR_CASE(sub) TL_SCALAR_CASE(mul) TL_SCALAR_CASE(div)
        TL_SCALAR_CASE(pow) TL_SCALAR_CASE(maximum) TL_SCALAR_CASE(minimum) TL_SCALAR_CASE(gt)
            TL_SCALAR_CASE(lt) TL_SCALAR_CASE(ge) TL_SCALAR_CASE(le) TL_SCALAR_CASE(eq)
                TL_SCALAR_CASE(ne) TL_SCALAR_CASE(logical_and) TL_SCALAR_CASE(logical_or)};
#undef TL_SCALAR_CASE

// Scalars of every kind; exponents stay non-negative so pow never meets torch's scalar-only
// "negative integer power" check, and 3 and 2.5 are never zero divisors.
const std::vector<Scalar> kScalars{Scalar(3), Scalar(2.5), Scalar(true), Scalar(2), Scalar(0.3)};

std::string describe(const char* op, DType d, const std::string& layout, Scalar s) {
  std::ostringstream os;
  os << op << " " << tl::dtype_name(d) << " " << layout << " scalar " << s;
  return os.str();
}

// random_tensor's values, with uint8 in [0, 10).
Tensor random_input(DType d) {
  return d == tl::kUInt8 ? tl::randint(0, 10, {3, 5}, d) : random_tensor({3, 5}, d);
}

// The layouts of test_util plus a broadcast one (stride 0 in a dim: the strided kernel paths).
std::vector<Layout> layouts_for(const Tensor& values) {
  std::vector<Layout> layouts = layouts_of(values);
  layouts.push_back({"broadcast", values.narrow(0, 0, 1).expand(values.shape())});
  return layouts;
}

}  // namespace

TEST_CASE("scalar operands: binary ops with a scalar equal the 0-dim tensor form, every dtype") {
  for (tl::Device device : test_devices())
    for (DType d : kEveryDtype)
      for (const Layout& l : layouts_for(random_input(d))) {
        const Tensor x = same_layout_on(l.tensor, device);
        for (Scalar s : kScalars) {
          const Tensor t = zero_dim_like(x, s);
          for (const BinaryCase& c : kBinaryCases) {
            // float16/bfloat16 add/sub/mul/div keep the scalar in float, as torch's CUDA kernels:
            // the op in float32 with a float32 0-dim tensor, rounded once.
            const std::string name = c.name;
            const bool keeps_float =
                tl::is_reduced_float(d) && !s.is_bool() &&
                (name == "add" || name == "sub" || name == "mul" || name == "div");
            const Tensor t32 = tl::scalar_tensor(s, tl::TensorOptions(tl::kFloat32).device(device));
            const auto tensor_form = [&](const Tensor& a, const Tensor& b) {
              if (!keeps_float) return c.tt(a, b);
              return c
                  .tt(a.defined() && a.dim() == 0 ? t32 : x.to(tl::kFloat32),
                      b.dim() == 0 ? t32 : x.to(tl::kFloat32))
                  .to(d);
            };
            check_same(
                describe(c.name, d, l.name, s) + " (tensor, scalar)", [&] { return c.ts(x, s); },
                [&] { return tensor_form(x, t); });
            check_same(
                describe(c.name, d, l.name, s) + " (scalar, tensor)", [&] { return c.st(s, x); },
                [&] { return tensor_form(t, x); });
          }
        }
      }
}

TEST_CASE("scalar operands: where, clamp and in-place ops with a scalar, every dtype") {
  for (tl::Device device : test_devices())
    for (DType d : kEveryDtype)
      for (const Layout& l : layouts_for(random_input(d))) {
        const Tensor x = same_layout_on(l.tensor, device);
        const Tensor c = random_tensor({3, 5}, tl::kBool, device);
        for (Scalar s : kScalars) {
          const Tensor t = zero_dim_like(x, s);
          check_same(
              describe("where", d, l.name, s) + " (x, s)", [&] { return tl::where(c, x, s); },
              [&] { return tl::where(c, x, t); });
          check_same(
              describe("where", d, l.name, s) + " (s, x)", [&] { return tl::where(c, s, x); },
              [&] { return tl::where(c, t, x); });
          // Two scalars: their own default dtype, as two 0-dim tensors of it.
          const Tensor own = tl::scalar_tensor(
              s, tl::TensorOptions(tl::default_dtype_for(s.kind())).device(device));
          check_same(
              describe("where", d, l.name, s) + " (s, s)", [&] { return tl::where(c, s, s); },
              [&] { return tl::where(c, own, own); });
          check_same(
              describe("clamp", d, l.name, s) + " (min)", [&] { return tl::clamp(x, s); },
              [&] { return tl::clamp(x, std::optional<Tensor>(t), std::nullopt); });
          check_same(
              describe("clamp", d, l.name, s) + " (max)",
              [&] { return tl::clamp(x, std::nullopt, s); },
              [&] { return tl::clamp(x, std::nullopt, std::optional<Tensor>(t)); });
          using InPlace = Tensor& (Tensor::*)(Scalar);
          using InPlaceT = Tensor& (Tensor::*)(const Tensor&);
          const std::vector<std::tuple<const char*, InPlace, InPlaceT>> inplace{
              {"add_", &Tensor::add_, &Tensor::add_},
              {"sub_", &Tensor::sub_, &Tensor::sub_},
              {"mul_", &Tensor::mul_, &Tensor::mul_},
              {"div_", &Tensor::div_, &Tensor::div_}};
          for (const auto& [name, fs, ft] : inplace) {
            if (l.name == "broadcast") continue;  // refused: stride-0 dims cannot be written
            // Into a copy of the same layout, so strided in-place writes run too.
            check_same(
                describe(name, d, l.name, s),
                [&, fs = fs] {
                  Tensor y = same_layout_on(x, device);
                  (y.*fs)(s);
                  return y;
                },
                [&, ft = ft] {
                  Tensor y = same_layout_on(x, device);
                  if (tl::is_reduced_float(d) && !s.is_bool()) {  // the scalar stays float
                    Tensor y32 = y.to(tl::kFloat32);
                    (y32.*ft)(tl::scalar_tensor(s, tl::TensorOptions(tl::kFloat32).device(device)));
                    y.copy_(y32);
                    return y;
                  }
                  (y.*ft)(t);
                  return y;
                });
          }
        }
      }
}

TEST_CASE("scalar operands: a scalar is converted to the op's dtype once, as torch") {
  // Integer scalars wrap into the tensor's dtype (torch: int8 100 + 100 = -56).
  const Tensor i8 = tl::full({4}, 100, tl::kInt8);
  check_values(i8 + 100, {-56, -56, -56, -56});
  check_values(tl::full({2}, 200, tl::kUInt8) + 100, {44, 44});
  // A float scalar on an integer tensor computes in float32; a bool one keeps the dtype.
  CHECK((tl::full({2}, 3, tl::kInt16) * 0.5).dtype() == tl::kFloat32);
  CHECK((tl::full({2}, 3, tl::kInt16) + true).dtype() == tl::kInt16);
  // where's scalar is stored in the result dtype: float16 0.1 is 0.0999755859375.
  const Tensor h = tl::where(tl::full({2}, false), tl::full({2}, 1.0, tl::kFloat16), 0.1);
  CHECK(h.dtype() == tl::kFloat16);
  // float16 add/sub/mul/div keep the scalar in float (torch's CUDA kernels; its CPU ones too for
  // mul/div): 1.2861328125 * 0.1 is 0.128662109375, times float16(0.1) it would be 0.1285400390625.
  for (tl::Device device : test_devices()) {
    const Tensor x = tl::full({3}, 1.2861328125, tl::TensorOptions(tl::kFloat16).device(device));
    check_values(x * 0.1, {0.128662109375, 0.128662109375, 0.128662109375});
    check_values(0.1 * x, {0.128662109375, 0.128662109375, 0.128662109375});
    // Comparisons round it, as torch: float16 0.1 == 0.1.
    const Tensor tenth = tl::full({1}, 0.1, tl::TensorOptions(tl::kFloat16).device(device));
    check_values(tenth == 0.1, {1});
  }
  CHECK(values_of(h)[0] == 0.0999755859375);
}

TEST_CASE("scalar operands: x + 2.0 allocates only its output") {
  const Tensor x = random_tensor({64}, tl::kFloat32);
  const Tensor c = random_tensor({64}, tl::kBool);
  const std::vector<std::pair<std::string, std::function<void()>>> cases{
      {"x + 2.0", [&] { Tensor y = x + 2.0; }},
      {"2 * x", [&] { Tensor y = 2 * x; }},
      {"x < 0.5", [&] { Tensor y = x < 0.5; }},
      {"pow(x, 2)", [&] { Tensor y = tl::pow(x, 2); }},
      {"where(c, x, 0)", [&] { Tensor y = tl::where(c, x, 0); }},
      {"clamp(x, -1, 1)", [&] { Tensor y = tl::clamp(x, -1, 1); }},
  };
  for (const auto& [name, run] : cases) {
    CAPTURE(name);
    prof::Profile profile({.profile_memory = true});
    run();
    profile.stop();
    int allocations = 0;
    for (const prof::Event& e : profile.events())
      if (e.kind == prof::EventKind::Memory && e.bytes > 0) {
        ++allocations;
        CHECK(e.bytes == 64 * static_cast<int64_t>(
                                  tl::element_size(name == "x < 0.5" ? tl::kBool : tl::kFloat32)));
      }
    CHECK(allocations == 1);
  }
  // In place: nothing at all.
  Tensor y = x.clone();
  prof::Profile profile({.profile_memory = true});
  y.add_(1);
  y.mul_(0.5);
  profile.stop();
  for (const prof::Event& e : profile.events()) CHECK(e.kind != prof::EventKind::Memory);
}

TEST_CASE("scalar operands: a CUDA op with a scalar touches no host memory") {
  TL_TEST_REQUIRE_CUDA();
  const Tensor x = random_tensor({3, 5}, tl::kFloat16, tl::Device::cuda(0));
  const Tensor c = random_tensor({3, 5}, tl::kBool, tl::Device::cuda(0));
  prof::Profile profile({.profile_memory = true});
  {
    Tensor a = x + 2.5, b = tl::where(c, x, 0), d = tl::clamp(x, -1, 1), e = x.t() * 3;
    Tensor f = x.clone();
    f.add_(1);
  }
  profile.stop();
  for (const prof::Event& e : profile.events())
    if (e.kind == prof::EventKind::Memory) CHECK(e.device != "cpu");
}

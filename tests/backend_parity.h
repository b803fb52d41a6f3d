// The device-generic parity suite's shared part: the devices under test, inputs in every memory
// layout, and check_op, which runs one op on the CPU and on a device from the same inputs and
// compares (values, dtypes, errors; half types also against a float32 reference).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace tl_test {

// Every device the parity suite compares with the CPU: the CPU itself (so the plumbing runs on a
// machine without an accelerator: CPU vs CPU must pass trivially), then cuda:0 when usable. A new
// backend adds its device here and runs the whole suite.
std::vector<tl::Device> parity_devices();

// Defines a doctest case whose body runs once per device under test, each pass a subcase named
// after the device ("device cuda:0"), so a failure names the device; -sc="*cuda*" picks one.
#define TL_PARITY_CAT2(a, b) a##b
#define TL_PARITY_CAT(a, b) TL_PARITY_CAT2(a, b)
#define TL_PARITY_CASE(name) TL_PARITY_CASE_IMPL(name, TL_PARITY_CAT(parity_body_, __LINE__))
#define TL_PARITY_CASE_IMPL(name, body)                       \
  static void body(tl::Device dev);                           \
  TEST_CASE(name) {                                           \
    for (const tl::Device& d : ::tl_test::parity_devices()) { \
      const std::string subcase = "device " + d.str();        \
      SUBCASE(subcase.c_str()) { body(d); }                   \
    }                                                         \
  }                                                           \
  static void body([[maybe_unused]] tl::Device dev)

// Ends a "(large)" case on the CPU: CPU vs CPU runs the same kernels, so at full size it would only
// cost minutes of a debug build; the small cases already run the plumbing there.
// TL_PARITY_LARGE_ON_CPU=1 runs them on the CPU too (about 10 minutes, 10 GiB, in a debug build).
#define TL_PARITY_SKIP_LARGE_ON_CPU()                                        \
  do {                                                                       \
    if (dev.is_cpu() && !std::getenv("TL_PARITY_LARGE_ON_CPU")) {            \
      MESSAGE("skipped on the CPU: large cases run on accelerator devices"); \
      return;                                                                \
    }                                                                        \
  } while (0)

// dtypes_of and all_dtypes are in test_util.h.
bool is_half(tl::DType d);  // float16 or bfloat16

inline constexpr int64_t kBig = (int64_t{1} << 20) + 3;  // not a multiple of any vector width

// |got - expected| <= atol + rtol |expected| + mag * magnitude on floating results, magnitude
// the op run on the inputs' absolute values (check_op): where an accumulation cancels, its
// rounding error scales with its terms, not with its result. Integers, bools and kExact checks
// compare exactly.
struct Tol {
  double rtol = 0, atol = 0, mag = 0;
  bool exact() const { return rtol == 0 && atol == 0 && mag == 0; }
};
inline constexpr Tol kExact{0, 0};

// A few ulp of d's math functions (CUDA's are within 1-4 ulp, glibc's within 1); for the half
// types, which compute in float and round once, one ulp of the half type.
Tol math_tol(tl::DType d);
// Sums of n values in another order (rounding grows with n).
Tol sum_tol(tl::DType d, int64_t n);
// Two float16/bfloat16 results of one accumulation of at most `terms` terms (a matmul's dot
// products), each side accumulated in float in its own order and rounded once to d, the device's
// with `extra` more roundings of partial sums (partial_roundings): two roundings of the result
// (rtol: 2u/(1 - u) under one ulp) and both float accumulations, bounded by the magnitude.
Tol half_accumulation_tol(tl::DType d, int64_t terms, int extra);
// Two float16/bfloat16 results of `steps` chained reductions (an einsum of several operands, each
// pairwise result rounded), against each other or a float32 reference rounded once: both errors,
// chain_bound's, scale with the magnitude.
Tol half_chain_tol(tl::DType d, int steps, int64_t terms, int extra);

// A non-exact tolerance raised to the floor of a half result dtype (float16 rtol 1e-3, bfloat16
// 8e-3): a float-computed result may round to the neighbouring half value.
Tol widen_for(Tol tol, tl::DType result);

// Checks a device result against the expected one: device, dtype, shape and every value (NaN
// equal to NaN, int64 exact). `against` names the expected side in the failure message.
void check_same(const tl::Tensor& expected, const tl::Tensor& got, Tol tol, tl::Device dev,
                const char* against = "cpu", const std::vector<double>& magnitude = {});

using Fn = std::function<tl::Tensor(std::vector<tl::Tensor>&)>;

// Runs fn on the CPU inputs and on their same-layout twins on dev and compares the results, or
// checks that both threw the same error type. An in-place fn returns whole_storage of what it
// wrote, so writes outside the view and unwritten elements both show. When an input is float16 or
// bfloat16, the device result is also checked against fn run on the CPU with those inputs in
// float32, rounded to the result's half dtype (both backends held to float math). Returns true
// when both sides produced a result (false: both threw, or they disagreed). float32_reference
// false skips the float32 check, for ops whose result depends on the half dtype by definition
// (isclose compares in it; nan_to_num's defaults are its extremes). A tolerance with mag runs
// `magnitude` (fn when empty) on the CPU on float64 copies of the inputs with floating values made
// absolute, for the per-element magnitude; an fn with negative coefficients (addmm's alpha and
// beta) passes one with their absolute values.
bool check_op(tl::Device dev, const std::string& what, const std::vector<tl::Tensor>& inputs,
              const Fn& fn, Tol tol = kExact, bool float32_reference = true,
              const Fn& magnitude = {});

// Runs a factory-like fn on the CPU and on dev and compares.
void check_made(tl::Device dev, const std::string& what,
                const std::function<tl::Tensor(tl::Device)>& fn, Tol tol = kExact);

// Random values (floats in [-2, 2), ints in [-9, 10) wrapped into unsigned types, bools),
// integer values in [-9, 10) in any dtype (sums and products exact in any order), or random
// values with about a third zero (nonzero, masks).
inline std::string str(const tl::Shape& s) { return s.str(); }

enum class Fill { Random, Integral, Sparse };
tl::Tensor make_values(const tl::Shape& s, tl::DType d, Fill f = Fill::Random);

// One shape in the layouts kernels must handle: contiguous; offset (one element past an aligned
// address); sliced (every other element of the last dim); transposed (last two dims swapped in
// memory); expanded (dim 0 broadcast, stride 0); permuted (all dims reversed in memory).
struct Variant {
  std::string name;
  tl::Tensor t;
};
std::vector<Variant> variants(const tl::Shape& s, tl::DType d, Fill f = Fill::Random);

// A view of `s` into a larger tensor of dtype d full of a sentinel, written by copy_/fill_/in-place
// ops: "sliced", "transposed", "offset" or "contiguous" (the whole holder).
tl::Tensor poisoned_view(const tl::Shape& s, tl::DType d, const std::string& layout);
extern const std::vector<std::string> kViewLayouts;

std::string describe(const std::string& op, tl::DType d, const tl::Shape& s,
                     const std::string& layout);

// Float specials (NaN, infinities, signed zeros, denormals, overflow edges) in d; an integer
// dtype's extremes and their neighbours.
tl::Tensor float_specials(tl::DType d);
tl::Tensor int_specials(tl::DType d);

}  // namespace tl_test

// Backend parity of conversions on every float16 and bfloat16 bit pattern (all 65 536 of each,
// bit-exact, NaN results compared as NaN), and of the random factories' shapes, dtypes and ranges.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

// All 65 536 bit patterns of a 2-byte dtype, 0x0000 .. 0xFFFF in order, written as raw bits (the
// library has no bit-cast view).
Tensor every_bit_pattern(DType d) {
  Tensor t = tl::empty({65536}, d);
  REQUIRE(t.element_size() == 2);
  auto* p = static_cast<uint16_t*>(t.data_ptr());
  for (uint32_t i = 0; i < 65536; ++i) p[i] = static_cast<uint16_t>(i);
  return t;
}

// Bit-exact, except that a NaN result matches any NaN: torch itself does not keep NaN payloads
// (float16 -> float32 gives 0x7FFFFFFF for every NaN in its vectorized loop, float -> bfloat16
// gives 0x7FC0, a GPU's float -> half 0x7FFF), so payloads are not part of the contract.
void check_bits(const Tensor& got, const Tensor& expected, const std::string& what) {
  INFO(what);
  REQUIRE(got.dtype() == expected.dtype());
  const std::vector<uint64_t> g = bits_of(got), e = bits_of(expected);
  REQUIRE(g.size() == e.size());
  int64_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok =
        is_nan_bits(e[i], expected.dtype()) ? is_nan_bits(g[i], expected.dtype()) : g[i] == e[i];
    if (ok) continue;
    if (bad++ == 0)
      FAIL_CHECK("first mismatch at source pattern " << i << ": got 0x" << std::hex << g[i]
                                                     << ", cpu 0x" << e[i] << std::dec);
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << g.size() << " patterns differ");
}

}  // namespace

TL_PARITY_CASE("backend parity: every float16 and bfloat16 bit pattern converts bit-exactly") {
  for (DType from : {tl::kFloat16, tl::kBFloat16}) {
    const Tensor src = every_bit_pattern(from);
    // Contiguous, and the same patterns through a transposed [256, 256] view (a strided read).
    const Tensor src_dev = src.to(dev);
    const Tensor src_t = src.view({256, 256}).t(), src_t_dev = src_dev.view({256, 256}).t();
    for (DType to : all_dtypes()) {
      const std::string what = std::string(tl::dtype_name(from)) + " -> " + tl::dtype_name(to);
      const Tensor got = src_dev.to(to);
      CHECK(got.device() == dev);
      check_bits(got, src.to(to), what);
      check_bits(src_t_dev.to(to), src_t.to(to), what + " transposed");
      // copy_ into a destination of the target dtype converts the same way.
      Tensor dst = tl::empty({65536}, tl::TensorOptions(to).device(dev));
      dst.copy_(src_dev);
      check_bits(dst, src.to(to), what + " copy_");
    }
    // The round trip back from float32 and float64 gives the pattern again (NaNs as NaN).
    for (DType wide : {tl::kFloat32, tl::kFloat64})
      check_bits(src_dev.to(wide).to(from), src,
                 std::string(tl::dtype_name(from)) + " via " + tl::dtype_name(wide) + " and back");
  }
}

TL_PARITY_CASE("backend parity: rand, randn and randint give the dtype, shape and range asked") {
  const std::vector<Shape> shapes{{}, {0}, {7}, {33, 65}, {2, 3, 4}};
  for (DType d : all_dtypes()) {
    const std::string name = tl::dtype_name(d);
    const auto opts = tl::TensorOptions(d).device(dev);
    for (const Shape& s : shapes) {
      INFO(name << " " << s.str() << " [device " << dev.str() << "]");
      if (tl::is_floating_point(d)) {
        const Tensor u = tl::rand(s, opts), n = tl::randn(s, opts);
        CHECK(u.device() == dev);
        CHECK(u.dtype() == d);
        CHECK(u.shape() == s);
        CHECK(n.dtype() == d);
        CHECK(n.shape() == s);
        for (double v : values_of(u)) CHECK((v >= 0 && v <= 1));  // 1 once rounded to a half
        for (double v : values_of(n)) CHECK(std::isfinite(v));
      } else {
        // torch's randint on bool draws 0/1; unsigned types need a non-negative range.
        const int64_t lo = d == tl::kBool || d == tl::kUInt8 ? 0 : -5;
        const int64_t hi = d == tl::kBool ? 2 : 100;
        const Tensor r = tl::randint(lo, hi, s, opts);
        CHECK(r.device() == dev);
        CHECK(r.dtype() == d);
        CHECK(r.shape() == s);
        for (double v : values_of(r)) CHECK((v >= lo && v < hi));
      }
    }
    // rand/randn on a non-floating dtype: the same answer (an error or not) on every device.
    if (!tl::is_floating_point(d)) {
      auto throws = [&](tl::Device x) {
        try {
          tl::rand({3}, tl::TensorOptions(d).device(x));
        } catch (const tl::Error&) {
          return true;
        }
        return false;
      };
      CHECK(throws(dev) == throws(tl::Device::cpu()));
    }
  }
}

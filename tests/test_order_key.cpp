// backends/math/order_key.h on the host: order_value inverts order_key for every key that names
// one element (CUDA's long-row sort writes its values from the sorted keys this way), and the
// keys that do not (zeros, NaNs) are exactly those order_key_exact rejects. Every pattern of the
// 1- and 2-byte types, specials and random patterns of the wider ones.
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <tensorlet/backends/math/order_key.h>

#include "test_util.h"

namespace {

// The element whose low bytes are b's: its key, the element order_value gives back, and whether
// that is the element itself (bit for bit) where the key is exact; otherwise the element is a
// float zero or NaN and order_value's has the same key. Returns false on the first mismatch.
template <typename T>
bool round_trips(uint64_t b) {
  using K = tl::order_key_t<T>;
  using L = tl::order_load_t<T>;
  L v;
  std::memcpy(&v, &b, sizeof v);  // little-endian: the low bytes
  const K k = tl::order_key<T>(v);
  const L back = tl::order_value<T>(k);
  if (tl::order_key<T>(back) != k) return false;
  if (tl::order_key_exact<T>(k)) return std::memcmp(&back, &v, sizeof v) == 0;
  if constexpr (!tl::is_floating_v<T>) {
    return false;  // every integer key is exact
  } else {
    const double d = static_cast<double>(v);
    return d == 0 || d != d;  // 0.0, -0.0 or NaN
  }
}

template <typename T>
void check_type() {
  std::vector<uint64_t> patterns;
  if constexpr (std::is_same_v<T, bool>) {
    patterns = {0, 1};  // a bool's byte is 0 or 1
  } else if constexpr (sizeof(T) <= 2) {
    for (uint64_t b = 0; b < (uint64_t{1} << (8 * sizeof(T))); ++b) patterns.push_back(b);
  } else {
    const uint64_t top = sizeof(T) == 4 ? 0x80000000u : 0x8000000000000000ull;
    const uint64_t all = sizeof(T) == 4 ? 0xffffffffu : ~uint64_t{0};
    const uint64_t inf = sizeof(T) == 4 ? 0x7f800000u : 0x7ff0000000000000ull;
    patterns = {0, top, all, all ^ top, 1, top | 1, inf, inf | top, inf + 1, (inf + 1) | top};
    std::mt19937_64 gen(7);
    for (int i = 0; i < 200000; ++i) patterns.push_back(gen() & all);
  }
  int64_t bad = 0;
  uint64_t first = 0;
  for (uint64_t b : patterns)
    if (!round_trips<T>(b) && bad++ == 0) first = b;
  INFO(bad << " patterns fail; the first: 0x" << std::hex << first);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("order_key: order_value gives each exact key's element back; zeros and NaNs are not") {
  for (tl::DType dt : tl_test::all_dtypes()) {
    INFO(tl::dtype_name(dt));
    tl::dispatch_dtype<tl::kAllDTypes>(dt, [&]<typename T>() { check_type<T>(); });
  }
}

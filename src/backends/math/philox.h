// Philox4x32-10 (Salmon et al., SC'11): a counter-based generator usable on host and device,
// so every backend draws the same numbers for the same (seed, block).
#pragma once

#include <cmath>
#include <cstdint>

#include "tensorlet/tensor/host_device.h"

namespace tensorlet::philox {

struct Block {
  uint32_t v[4];
};

TL_HOST_DEVICE inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

// The raw bijection: a 128-bit counter and a 64-bit key to four 32-bit words.
TL_HOST_DEVICE inline Block philox4x32_10(Block counter, uint32_t k0, uint32_t k1) {
  uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(0xD2511F53u, c0, hi0, lo0);
    mulhilo(0xCD9E8D57u, c2, hi1, lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Block{{c0, c1, c2, c3}};
}

// Four 32-bit random words for block number `block` of the stream keyed by `seed`.
TL_HOST_DEVICE inline Block philox4x32_10(uint64_t seed, uint64_t block) {
  Block counter{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}};
  return philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// The stream's layout, shared by all backends. A call that fills n elements starting at block
// `offset` gives element i:
//   uniform float32 : word i%4 of block offset+i/4, (w >> 8) * 2^-24
//   uniform float64 : words 2(i%2), 2(i%2)+1 of block offset+i/2 as (hi << 32 | lo),
//                     (u >> 11) * 2^-53
//   normal          : Box-Muller in double on the element pair (i & ~1, i | 1) of the uniform
//                     stream above (u1 = 1 - even element, u2 = odd element)
//   (uniform [a, b), normal (mean, std), exponential: uniform_to, normal_to, exponential_of below)
//   integer [lo,hi) : lo + w % (hi - lo) with the float32 layout when the range fits 32 bits,
//                     lo + u % (hi - lo) with the float64 layout otherwise
//   exponential     : exponential_of on the uniform layout of the dtype (float64: 53 bits)
// and advances the generator by blocks_used(n, words_per_element) blocks.
TL_HOST_DEVICE inline uint64_t blocks_used(int64_t n, int words_per_element) {
  int64_t per_block = 4 / words_per_element;
  return static_cast<uint64_t>((n + per_block - 1) / per_block);
}

TL_HOST_DEVICE inline uint32_t word32(uint64_t seed, uint64_t offset, int64_t i) {
  return philox4x32_10(seed, offset + static_cast<uint64_t>(i) / 4).v[i % 4];
}

TL_HOST_DEVICE inline uint64_t word64(uint64_t seed, uint64_t offset, int64_t i) {
  Block b = philox4x32_10(seed, offset + static_cast<uint64_t>(i) / 2);
  int lane = static_cast<int>(i % 2) * 2;
  return (static_cast<uint64_t>(b.v[lane + 1]) << 32) | b.v[lane];
}

TL_HOST_DEVICE inline float uniform_float(uint32_t w) {
  return static_cast<float>(w >> 8) * 0x1.0p-24f;
}
TL_HOST_DEVICE inline double uniform_double(uint64_t u) {
  return static_cast<double>(u >> 11) * 0x1.0p-53;
}
// uniform float16 / bfloat16: the float32 value above rounded toward zero, so that it stays below
// 1 (rounding to nearest would give 1.0 for the top 2^-12 of the range; torch never gives 1).
template <typename T>
TL_HOST_DEVICE inline T uniform_reduced(uint32_t w) {
  const float u = uniform_float(w);
  T r(u);
  if (static_cast<float>(r) > u) r = T::from_bits(static_cast<uint16_t>(r.bits - 1));
  return r;
}

// x * y rounded by itself. nvcc fuses a product and a following sum into one FMA (one rounding)
// unless told not to, and the host compiler (no -mfma in our builds) does not: the products that
// feed sums below go through this, so both backends round alike and give the same bits.
TL_HOST_DEVICE inline double mul_rn(double x, double y) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(x, y);
#else
  return x * y;
#endif
}

// -log(x) for x in (0, 1], from +, -, * and / alone, each rounded once on every backend, so the
// host and the device give the same bits (their libm logs differ in the last place, which would
// make exponential draws and multinomial's choices differ). Within a few ulp: x = m * 2^e with m
// in [sqrt(1/2), sqrt(2)) (exact), log(m) = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.1716,
// by its odd series up to s^25 (the next term is below 2^-60 of the sum).
TL_HOST_DEVICE inline double neg_log(double x) {
  int e = 0;
#ifdef __CUDA_ARCH__
  double m = frexp(x, &e);
#else
  double m = std::frexp(x, &e);
#endif
  if (m < 0.70710678118654752440) {
    m += m;
    --e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = mul_rn(s, s);
  double p = 1.0 / 25;  // atanh(s) / s = 1 + s2 / 3 + s2^2 / 5 + ..., by Horner from the top
  for (int k = 23; k >= 3; k -= 2) p = mul_rn(p, s2) + 1.0 / k;
  const double log_m = mul_rn(s + s, 1.0 + mul_rn(s2, p));
  // ln 2 split so that e * kLn2Hi is exact (|e| < 2^11 and kLn2Hi ends in 32 zero bits).
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  const double ed = static_cast<double>(e);
  return 0.0 - (mul_rn(ed, kLn2Hi) + (log_m + mul_rn(ed, kLn2Lo)));  // 0 - : x = 1 gives +0
}

// The real kinds' last step (RandomParams' a and b), the same expression on every backend:
// uniform v in [0, 1) to [a, b), a standard normal z to mean a and std b, a uniform v to an
// exponential of rate lambda. rand (0, 1) and randn (0, 1) skip it, keeping their bits.
TL_HOST_DEVICE inline double uniform_to(double v, double a, double b) {
  return a + mul_rn(v, b - a);
}
TL_HOST_DEVICE inline double normal_to(double z, double mean, double std) {
  return mean + mul_rn(std, z);
}
TL_HOST_DEVICE inline double exponential_of(double v, double lambda) {
  return neg_log(1.0 - v) / lambda;  // 1 - v is exact for v on a 2^-53 grid
}

}  // namespace tensorlet::philox

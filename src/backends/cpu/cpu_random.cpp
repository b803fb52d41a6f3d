// CPU random fill: one Philox block per iteration, blocks split across threads.
#include <cmath>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/backends/math/philox.h"

namespace tensorlet::cpu {

namespace {

// Box-Muller in double on (u_even, u_odd), so every backend rounds the same way.
inline void box_muller(double u_even, double u_odd, double& z0, double& z1) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  double r = std::sqrt(-2.0 * std::log(1.0 - u_even));
  z0 = r * std::cos(kTwoPi * u_odd);
  z1 = r * std::sin(kTwoPi * u_odd);
}

template <typename T>
void fill_block(const RandomParams& p, uint64_t block, T* out, int64_t first, int64_t n) {
  using namespace philox;
  Block b = philox4x32_10(p.seed, p.offset + block);
  const uint64_t range = static_cast<uint64_t>(p.high) - static_cast<uint64_t>(p.low);
  const bool wide =
      p.kind == RandomKind::Integer ? range > (uint64_t{1} << 32) : std::is_same_v<T, double>;
  const int per_block = wide ? 2 : 4;
  // rand and randn (a = 0, b = 1) skip the affine step, so their bits stay those of the layout.
  const bool plain = p.a == 0 && p.b == 1;
  const bool reduced_uniform = is_reduced_float_v<T> && p.kind == RandomKind::Uniform && plain;
  double v[4] = {};  // every used lane is written below; GCC cannot always tell
  for (int k = 0; k < per_block; ++k) {
    uint64_t u = wide ? (static_cast<uint64_t>(b.v[2 * k + 1]) << 32) | b.v[2 * k] : b.v[k];
    if (p.kind == RandomKind::Integer) {
      // Written directly (not through double) to keep int64 values exact; the offset is added
      // unsigned so a range wider than INT64_MAX (randint(INT64_MIN, INT64_MAX)) wraps, not
      // overflows.
      if (first + k < n)
        out[first + k] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(p.low) + u % range));
    } else if constexpr (is_reduced_float_v<T>) {
      if (reduced_uniform) {
        if (first + k < n) out[first + k] = uniform_reduced<T>(static_cast<uint32_t>(u));
      } else {
        v[k] = static_cast<double>(uniform_float(static_cast<uint32_t>(u)));
      }
    } else {
      v[k] =
          wide ? uniform_double(u) : static_cast<double>(uniform_float(static_cast<uint32_t>(u)));
    }
  }
  if (p.kind == RandomKind::Integer || reduced_uniform) return;
  if (p.kind == RandomKind::Normal) {
    for (int k = 0; k < per_block; k += 2) box_muller(v[k], v[k + 1], v[k], v[k + 1]);
    if (!plain)
      for (int k = 0; k < per_block; ++k) v[k] = normal_to(v[k], p.a, p.b);
  } else if (p.kind == RandomKind::Uniform) {
    if (!plain)
      for (int k = 0; k < per_block; ++k) v[k] = uniform_to(v[k], p.a, p.b);
  } else {  // Exponential
    for (int k = 0; k < per_block; ++k) v[k] = exponential_of(v[k], p.a);
  }
  // float16 / bfloat16 normals: the double rounded to float, then to T, as torch rounds its float.
  for (int k = 0; k < per_block && first + k < n; ++k) out[first + k] = convert<T>(v[k]);
}

}  // namespace

void CpuBackend::random(const RandomParams& params, const Tensor& out) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* data = static_cast<T*>(out.data_ptr());
    const int64_t n = out.numel();
    const uint64_t range = static_cast<uint64_t>(params.high) - static_cast<uint64_t>(params.low);
    const bool wide = params.kind == RandomKind::Integer ? range > (uint64_t{1} << 32)
                                                         : std::is_same_v<T, double>;
    const int64_t per_block = wide ? 2 : 4;
    const int64_t blocks = (n + per_block - 1) / per_block;
    parallel_for(blocks, kGrainSize / 4, [&](int64_t begin, int64_t end) {
      for (int64_t blk = begin; blk < end; ++blk)
        fill_block<T>(params, static_cast<uint64_t>(blk), data, blk * per_block, n);
    });
  });
}

}  // namespace tensorlet::cpu

// Device-side Philox random fill: a thread per Philox block writes that block's 2 or 4 elements,
// with the CPU backend's layout (backends/math/philox.h), so both give the same numbers for a seed.
#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_dependent_launch.h"
#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/math/philox.h"
#include "tensorlet/tensor/convert.h"

namespace tensorlet::cuda {
namespace {

// The elements one block yields, stored at once when the output is aligned for it.
template <typename T, int PerBlock>
struct alignas(sizeof(T) * PerBlock > 16 ? 16 : sizeof(T) * PerBlock) Pack {
  T v[PerBlock];
};

// PerBlock 4: one 32-bit word per element; 2: two words (lo, hi) per element.
template <typename T, int PerBlock>
__global__ void random_kernel(T* out, int64_t n, uint64_t blocks, RandomParams p, bool aligned,
                              bool dependent) {
  constexpr bool wide = PerBlock == 2;
  const uint64_t range = static_cast<uint64_t>(p.high) - static_cast<uint64_t>(p.low);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  // rand and randn (a = 0, b = 1) skip the affine step, as on the CPU.
  const bool plain = p.a == 0 && p.b == 1;
  // In a captured graph the seed and base block are read at run time (set before each replay by
  // a node that precedes all the graph's work with full dependencies, so every kernel of the graph
  // starts after it finished: the slot may be read before waiting for the kernel just before).
  uint64_t seed = p.seed, base = 0;
  if (p.philox_base != nullptr) {
    const auto* slot = reinterpret_cast<const unsigned long long*>(p.philox_base);
    seed = __ldcg(slot);
    base = __ldcg(slot + 1);
  }
  if (dependent) {  // launched early in a graph (cuda_dependent_launch.h): before the first store
    wait_for_prior_kernels();
    allow_next_kernel();
  }
  for (uint64_t blk = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
       blk += stride) {
    const philox::Block b = philox::philox4x32_10(seed, base + p.offset + blk);
    Pack<T, PerBlock> pack;
    if (p.kind == RandomKind::Integer) {
#pragma unroll
      for (int k = 0; k < PerBlock; ++k) {
        uint64_t u = wide ? (static_cast<uint64_t>(b.v[2 * k + 1]) << 32) | b.v[2 * k] : b.v[k];
        // A 32-bit word below a range up to 2^32 needs no 64-bit division (slow on the GPU);
        // the remainder is the same.
        if (!wide)
          u = range > UINT32_MAX ? u : static_cast<uint32_t>(u) % static_cast<uint32_t>(range);
        else
          u %= range;
        // Written directly (not through double) to keep int64 values exact; unsigned so a
        // full-width range wraps without overflow.
        pack.v[k] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(p.low) + u));
      }
    } else if (is_reduced_float_v<T> && p.kind == RandomKind::Uniform && plain) {
      // Rounded toward zero from the float32 value (philox.h), as the CPU backend does.
#pragma unroll
      for (int k = 0; k < PerBlock; ++k) {
        if constexpr (is_reduced_float_v<T>) pack.v[k] = philox::uniform_reduced<T>(b.v[k]);
      }
    } else {
      double v[PerBlock];
#pragma unroll
      for (int k = 0; k < PerBlock; ++k)
        v[k] =
            wide
                ? philox::uniform_double((static_cast<uint64_t>(b.v[2 * k + 1]) << 32) | b.v[2 * k])
                : static_cast<double>(philox::uniform_float(b.v[k]));
      if (p.kind == RandomKind::Normal) {
        // Box-Muller in double on (even, odd) pairs, the CPU backend's formula.
        constexpr double kTwoPi = 6.283185307179586476925286766559;
#pragma unroll
        for (int k = 0; k < PerBlock; k += 2) {
          const double r = sqrt(-2.0 * log(1.0 - v[k]));
          const double angle = kTwoPi * v[k + 1];
          double sin_a, cos_a;
          sincos(angle, &sin_a, &cos_a);
          v[k] = r * cos_a;
          v[k + 1] = r * sin_a;
        }
        if (!plain) {
#pragma unroll
          for (int k = 0; k < PerBlock; ++k) v[k] = philox::normal_to(v[k], p.a, p.b);
        }
      } else if (p.kind == RandomKind::Uniform) {
        if (!plain) {
#pragma unroll
          for (int k = 0; k < PerBlock; ++k) v[k] = philox::uniform_to(v[k], p.a, p.b);
        }
      } else {  // Exponential
#pragma unroll
        for (int k = 0; k < PerBlock; ++k) v[k] = philox::exponential_of(v[k], p.a);
      }
#pragma unroll
      for (int k = 0; k < PerBlock; ++k) pack.v[k] = convert<T>(v[k]);
    }
    const int64_t first = static_cast<int64_t>(blk) * PerBlock;
    if (aligned && first + PerBlock <= n) {
      reinterpret_cast<Pack<T, PerBlock>*>(out)[blk] = pack;
    } else {
#pragma unroll
      for (int k = 0; k < PerBlock; ++k)
        if (first + k < n) out[first + k] = pack.v[k];
    }
  }
}

template <typename T, int PerBlock>
void launch_random(const RandomParams& p, const Tensor& out, cudaStream_t s) {
  T* data = static_cast<T*>(out.data_ptr());
  const int64_t n = out.numel();
  const int64_t blocks = (n + PerBlock - 1) / PerBlock;
  const bool aligned = reinterpret_cast<uintptr_t>(data) % alignof(Pack<T, PerBlock>) == 0;
  uint64_t count = static_cast<uint64_t>(blocks);
  RandomParams params = p;
  bool dependent = dependent_launch(out.device().index());
  void* args[] = {&data,   const_cast<int64_t*>(&n),    &count,
                  &params, const_cast<bool*>(&aligned), &dependent};
  const cudaError_t err = launch_kernel(reinterpret_cast<const void*>(&random_kernel<T, PerBlock>),
                                        dim3(grid_for(blocks, kElementwiseThreads)),
                                        dim3(kElementwiseThreads), args, 0, s, dependent);
  check_launched(err, s, "random_kernel");
}

}  // namespace

void random(const RandomParams& params, const Tensor& out) {
  if (out.numel() == 0) return;
  cudaStream_t s = current_stream_handle(out.device().index());
  dispatch_dtype<kAllDTypes>(out.dtype(), [&]<typename T>() {
    // Two words per element for float64, or for integers whose range needs more than 32 bits.
    const uint64_t range = static_cast<uint64_t>(params.high) - static_cast<uint64_t>(params.low);
    const bool wide = params.kind == RandomKind::Integer ? range > (uint64_t{1} << 32)
                                                         : std::is_same_v<T, double>;
    if (wide)
      launch_random<T, 2>(params, out, s);
    else
      launch_random<T, 4>(params, out, s);
  });
}

}  // namespace tensorlet::cuda

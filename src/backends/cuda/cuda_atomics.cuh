// Atomic read-modify-write of one tensor element on CUDA, for every element type: the scatter
// family's combine step (backends/math/scatter_ops.h) with native atomics where the hardware has
// them, a compare-and-swap loop otherwise. Used by cuda_scatter.cu and put's accumulate
// (cuda_take_put.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/math/scatter_ops.h"
#include "tensorlet/tensor/convert.h"
#include "tensorlet/tensor/dtype.h"

namespace tensorlet::cuda {

// Replaces *addr by f(*addr) atomically: read, combine, compare-and-swap until no other thread
// wrote in between. 1- and 2-byte elements swap the aligned 32-bit word that holds them, the
// other bytes written back as they were (an allocation is at least 4-byte aligned and whole
// words, so the word lies inside it).
template <typename T, typename F>
__device__ __forceinline__ void atomic_update(T* addr, const F& f) {
  using S = Stored<T>;
  if constexpr (sizeof(S) == 4 || sizeof(S) == 8) {
    using W = std::conditional_t<sizeof(S) == 4, unsigned int, unsigned long long>;
    W* word = reinterpret_cast<W*>(addr);
    W old = *word, assumed;
    do {
      assumed = old;
      S cur;
      memcpy(&cur, &assumed, sizeof cur);
      const S next = f(cur);
      W bits;
      memcpy(&bits, &next, sizeof bits);
      if (bits == assumed) return;  // nothing to write (a max already held, say)
      old = atomicCAS(word, assumed, bits);
    } while (old != assumed);
  } else {
    using U = std::conditional_t<sizeof(S) == 1, uint8_t, uint16_t>;
    constexpr unsigned kMask = sizeof(S) == 1 ? 0xffu : 0xffffu;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    unsigned int* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(a & 3) * 8;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const U cur_bits = static_cast<U>((assumed >> shift) & kMask);
      S cur;
      memcpy(&cur, &cur_bits, sizeof cur);
      const S next = f(cur);
      U next_bits;
      memcpy(&next_bits, &next, sizeof next_bits);
      const unsigned int bits = (assumed & ~(kMask << shift)) | (unsigned{next_bits} << shift);
      if (bits == assumed) return;
      old = atomicCAS(word, assumed, bits);
    } while (old != assumed);
  }
}

// Folds v (in compute_t<T>) into *e with the op's atomic.
template <ScatterOp Op, typename T>
__device__ __forceinline__ void combine_into(T* e, compute_t<T> v) {
  using C = compute_t<T>;
  constexpr bool kAdd = Op == ScatterOp::Add;
  constexpr bool kExtremum = Op == ScatterOp::Max || Op == ScatterOp::Min;
  if constexpr (kAdd && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    atomicAdd(e, v);
  } else if constexpr (kAdd && std::is_same_v<T, int32_t>) {
    atomicAdd(reinterpret_cast<unsigned int*>(e), static_cast<unsigned int>(v));  // wraps
  } else if constexpr (kAdd && std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(e), static_cast<unsigned long long>(v));
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
  } else if constexpr (kAdd && std::is_same_v<T, Half>) {
    atomicAdd(reinterpret_cast<__half*>(e), __float2half_rn(v));
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  } else if constexpr (kAdd && std::is_same_v<T, BFloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(e), __float2bfloat16_rn(v));
#endif
  } else if constexpr (kExtremum && std::is_same_v<T, int32_t>) {
    if constexpr (Op == ScatterOp::Max)
      atomicMax(reinterpret_cast<int*>(e), static_cast<int>(v));
    else
      atomicMin(reinterpret_cast<int*>(e), static_cast<int>(v));
  } else if constexpr (kExtremum && std::is_same_v<T, int64_t>) {
    if constexpr (Op == ScatterOp::Max)
      atomicMax(reinterpret_cast<long long*>(e), static_cast<long long>(v));
    else
      atomicMin(reinterpret_cast<long long*>(e), static_cast<long long>(v));
  } else {
    atomic_update(e, [v](Stored<T> cur) {
      const C r = scatter_ops::combine<Op>(static_cast<C>(from_stored<T>(cur)), v);
      return static_cast<Stored<T>>(static_cast<T>(r));
    });
  }
}

}  // namespace tensorlet::cuda

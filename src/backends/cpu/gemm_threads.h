// How many threads one float32/float64 BLAS product gets, by its size, and the blocks of its output
// the threads share when we split it ourselves (cpu_matmul.cpp). Internal to the CPU backend.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace tensorlet::cpu {

// The least multiply-adds a thread is given. 2^17 take about 4 µs on one core of the 16-core GPU
// host (its 4096^2 product ran at ~34 G multiply-adds/s a core), a few times what waking and
// joining a hot OpenMP team costs (about 1-2 µs: an estimate, which bench_cpu's C8 sweep checks),
// and our split has no other synchronization (each thread owns its block of the output). OpenBLAS
// 0.3.21 instead runs one thread up to 2^18 and every thread above it, with waits between them
// inside the product: there a 100^3 product woke a team of 16 for 8 useful threads (its split
// keeps >= 16 rows a thread) and took 48.6 µs, where 32^3 on one thread took 1.8. OpenBLAS 0.3.27
// caps its own threads at one per 2^18 (interface/gemm.c). TL_CPU_GEMM_GRAIN overrides it (tuning
// on a new machine; read once).
inline constexpr int64_t kGemmGrain = int64_t{1} << 17;
// Up to this many multiply-adds (1024^3) a product that gets every thread is still split by us:
// on its own 16 threads OpenBLAS 0.3.21 ran 316^2 at 330 GFLOP/s, under a third of its 4096^2
// rate, and our split of column-major blocks took 768^3 in 863 us against its 1134 and 1024^3 in
// 1974 against 2297 (H200 host, 2026-11-28, scratch C8 sweep). Larger ones run on the BLAS's own
// threads, which share its packed panels of b and so copy less per thread. TL_CPU_GEMM_SPLIT_MAX
// overrides it (0: every all-thread product on the BLAS's threads).
inline constexpr int64_t kGemmSplitMax = int64_t{1} << 30;

inline int64_t env_int64(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long parsed = std::strtoll(v, &end, 10);
  return *end == '\0' && parsed >= 0 ? parsed : fallback;
}

inline int64_t gemm_grain() {
  static const int64_t grain = std::max<int64_t>(1, env_int64("TL_CPU_GEMM_GRAIN", kGemmGrain));
  return grain;
}

inline int64_t gemm_split_max() {
  static const int64_t split_max = env_int64("TL_CPU_GEMM_SPLIT_MAX", kGemmSplitMax);
  return split_max;
}

// Threads for a product of `macs` multiply-adds: one per grain, at least one, at most `max`.
// Only the size decides, so a product of a given shape runs the same way (same bits) every call.
inline int gemm_threads(int64_t macs, int64_t grain, int max) {
  return static_cast<int>(std::clamp<int64_t>(macs / grain, 1, std::max(max, 1)));
}

// Block edges fall on multiples of these: columns on 16 elements (a 64-byte line of float32, so
// no two threads write one line of the output, and whole 16-wide tiles for OpenBLAS's kernels,
// whose 16-element side runs along our columns); rows on 4 (its kernels' other side).
inline constexpr int64_t kGemmRowAlign = 4, kGemmColAlign = 16;

// rows x cols blocks over an m x n output.
struct GemmGrid {
  int rows = 1, cols = 1;
  int blocks() const { return rows * cols; }
};

// The grid for `threads` threads: as many blocks as threads where the sizes allow, then the blocks
// with the shortest rows + columns (each thread reads its rows of a and its columns of b, k deep,
// so that is what it copies), then more row blocks (whole rows of the output are contiguous).
inline GemmGrid gemm_grid(int64_t m, int64_t n, int threads) {
  const int64_t max_rows = (m + kGemmRowAlign - 1) / kGemmRowAlign;
  const int64_t max_cols = (n + kGemmColAlign - 1) / kGemmColAlign;
  GemmGrid best;
  int64_t best_side = m + n;
  for (int cols = 1; cols <= threads && cols <= max_cols; ++cols) {
    const int rows = static_cast<int>(std::min<int64_t>(threads / cols, max_rows));
    const int64_t side = (m + rows - 1) / rows + (n + cols - 1) / cols;
    const int blocks = rows * cols;
    if (blocks > best.blocks() || (blocks == best.blocks() && side < best_side)) {
      best = {rows, cols};
      best_side = side;
    }
  }
  return best;
}

// [begin, end) of part i of `parts` over `size`: whole units of `align` shared as evenly as they
// go (the last part takes the remainder), so parts differ by at most one unit.
struct Range {
  int64_t begin, end;
};
inline Range block_range(int64_t size, int parts, int i, int64_t align) {
  const int64_t units = (size + align - 1) / align;
  return {std::min(size, units * i / parts * align),
          std::min(size, units * (i + 1) / parts * align)};
}

}  // namespace tensorlet::cpu

// Threads for a CPU float32/float64 product by its size (backends/cpu/gemm_threads.h): the rule,
// the blocks our split cuts the output into, and products on every path (one thread, our split, the
// BLAS's own threads, batches spread over threads) against a double-precision loop.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "tensorlet/backends/cpu/gemm_threads.h"
#include "tensorlet/backends/cpu/small_loops.h"
#include "tensorlet/tensor/cpu_quota.h"
#include "test_util.h"

namespace {

namespace cpu = tl::cpu;
using tl_test::bits_of;
using tl_test::random_tensor;
using tl_test::values_of;

// Restores the thread count, whatever the test did.
struct ThreadsGuard {
  int threads = tl::get_num_threads();
  ~ThreadsGuard() { tl::set_num_threads(threads); }
};

// beta * c + alpha * (a @ b) at `samples` elements spread over the [*batch, m, n] result (every
// element when samples is 0), against the result's values there, in double from the operands.
void check_product(const tl::Tensor& got, const tl::Tensor& a, const tl::Tensor& b,
                   int64_t samples = 0, double alpha = 1, double beta = 0,
                   const tl::Tensor* c = nullptr) {
  const std::vector<double> av = values_of(a), bv = values_of(b), out = values_of(got);
  const std::vector<double> cv = c != nullptr ? values_of(*c) : std::vector<double>{};
  const int64_t m = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1], n = b.shape().back();
  const int64_t total = static_cast<int64_t>(out.size());
  REQUIRE(total == a.numel() / k * n);
  const int64_t step = samples == 0 ? 1 : std::max<int64_t>(1, total / samples);
  // float32 sums of k terms of size up to 4: a relative bound growing with k.
  const double tol = got.dtype() == tl::kFloat32 ? 4e-6 * static_cast<double>(k) : 1e-12 * k;
  for (int64_t o = 0; o < total; o += step) {
    const int64_t batch = o / (m * n), i = o / n % m, j = o % n;
    const int64_t b_off = b.dim() == 2 ? 0 : batch * k * n;
    double s = 0, mag = 0;
    for (int64_t p = 0; p < k; ++p) {
      const double t = av[(batch * m + i) * k + p] * bv[b_off + p * n + j];
      s += t;
      mag += std::abs(t);
    }
    const double want = alpha * s + (c != nullptr ? beta * cv[o] : 0.0);
    if (std::abs(out[o] - want) > tol * (mag + 1)) {
      INFO("element " << o << " (batch " << batch << ", " << i << ", " << j << "): got " << out[o]
                      << ", expected " << want);
      CHECK(false);
      return;
    }
  }
}

}  // namespace

TEST_CASE("cpu gemm threads: one thread per grain of multiply-adds, within the threads there are") {
  const int64_t g = cpu::kGemmGrain;
  CHECK(cpu::gemm_threads(1, g, 16) == 1);
  CHECK(cpu::gemm_threads(2 * g - 1, g, 16) == 1);
  CHECK(cpu::gemm_threads(2 * g, g, 16) == 2);
  CHECK(cpu::gemm_threads(7 * g + 5, g, 16) == 7);
  CHECK(cpu::gemm_threads(1000 * g, g, 16) == 16);
  CHECK(cpu::gemm_threads(1000 * g, g, 1) == 1);
  // No cliff: more work never gets fewer threads.
  int last = 1;
  for (int64_t n = 8; n <= 1024; n += 4) {
    const int t = cpu::gemm_threads(n * n * n, g, 16);
    CHECK(t >= last);
    last = t;
  }
}

TEST_CASE("cpu gemm threads: blocks cover the output once, on aligned edges") {
  for (const auto& [m, n] : std::vector<std::pair<int64_t, int64_t>>{
           {100, 100}, {1, 1000}, {1000, 1}, {37, 300}, {5, 17}, {316, 316}, {64, 2048}})
    for (int threads : {1, 2, 3, 7, 8, 16, 64}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(threads);
      const cpu::GemmGrid grid = cpu::gemm_grid(m, n, threads);
      CHECK(grid.rows >= 1);
      CHECK(grid.cols >= 1);
      CHECK(grid.blocks() <= threads);
      std::vector<int> covered(static_cast<size_t>(m * n), 0);
      for (int i = 0; i < grid.rows; ++i)
        for (int j = 0; j < grid.cols; ++j) {
          const cpu::Range r = cpu::block_range(m, grid.rows, i, cpu::kGemmRowAlign);
          const cpu::Range c = cpu::block_range(n, grid.cols, j, cpu::kGemmColAlign);
          CHECK(r.begin % cpu::kGemmRowAlign == 0);
          CHECK(c.begin % cpu::kGemmColAlign == 0);
          for (int64_t x = r.begin; x < r.end; ++x)
            for (int64_t y = c.begin; y < c.end; ++y) ++covered[x * n + y];
        }
      CHECK(std::count(covered.begin(), covered.end(), 1) == m * n);
    }
  // Square outputs get square-ish blocks: 16 threads over 256 x 256 is 4 x 4.
  const cpu::GemmGrid sq = cpu::gemm_grid(256, 256, 16);
  CHECK(sq.rows == 4);
  CHECK(sq.cols == 4);
  // Parts differ by at most one unit of alignment.
  for (int i = 0; i < 7; ++i) {
    const cpu::Range r = cpu::block_range(100, 7, i, 4);
    CHECK(r.end - r.begin >= 12);
    CHECK(r.end - r.begin <= 16);
  }
}

TEST_CASE("cpu gemm threads: products on one thread, split, and on the BLAS's threads") {
  ThreadsGuard guard;
  // More threads than this machine may have, so the split runs several blocks here too; the small
  // loop rule forgotten before each product, so a busy machine does not keep blocks on the caller.
  for (int threads : {1, 3, 8}) {
    tl::set_num_threads(threads);
    for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
      CAPTURE(threads);
      CAPTURE(dtype);
      // m, k, n: one thread (< 2 grains), a few threads, column blocks (few rows), every thread.
      for (const auto& [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {48, 48, 48}, {64, 64, 64}, {100, 100, 100}, {37, 150, 300}, {200, 150, 170}}) {
        CAPTURE(m);
        CAPTURE(n);
        tl::Tensor a = random_tensor({m, k}, dtype), b = random_tensor({k, n}, dtype);
        cpu::reset_small_loop_admission();
        tl::Tensor c = tl::matmul(a, b);
        check_product(c, a, b);
        // The same shape runs the same way every call: the same bits.
        cpu::reset_small_loop_admission();
        CHECK(bits_of(tl::matmul(a, b)) == bits_of(c));
        // Transposed operands (CBLAS's Trans in each block) and a padded one (its leading
        // dimension kept in each block).
        tl::Tensor at = random_tensor({k, m}, dtype), bt = random_tensor({n, k}, dtype);
        tl::Tensor wide = random_tensor({m, k + 9}, dtype).slice(1, 3, k + 3);
        cpu::reset_small_loop_admission();
        check_product(tl::matmul(at.t(), bt.t()), at.t().contiguous(), bt.t().contiguous());
        cpu::reset_small_loop_admission();
        check_product(tl::matmul(wide, b), wide.contiguous(), b);
        // addmm: beta and alpha applied to each block of the output once.
        tl::Tensor input = random_tensor({m, n}, dtype);
        cpu::reset_small_loop_admission();
        check_product(tl::addmm(input, a, b, 0.5, -1.5), a, b, 0, -1.5, 0.5, &input);
      }
    }
  }
  // Past kGemmSplitMax every thread is the BLAS's own (sampled: a naive loop is slow here).
  tl::Tensor a = random_tensor({1040, 1030}), b = random_tensor({1030, 1040});
  check_product(tl::matmul(a, b), a, b, 2000);
}

TEST_CASE("cpu gemm threads: batches of mid-size products, spread or one after another") {
  ThreadsGuard guard;
  for (int threads : {2, 8}) {
    tl::set_num_threads(threads);
    CAPTURE(threads);
    // 100^3 gets 7 threads: a batch of 8 spreads whole products over the threads, one of 3 runs
    // them one after another, each split.
    for (int64_t batch : {3, 8}) {
      CAPTURE(batch);
      tl::Tensor a = random_tensor({batch, 100, 100}), b = random_tensor({batch, 100, 100});
      cpu::reset_small_loop_admission();
      check_product(tl::bmm(a, b), a, b);
      tl::Tensor input = random_tensor({batch, 100, 100});
      cpu::reset_small_loop_admission();
      check_product(tl::baddbmm(input, a, b, 2.0, 0.25), a, b, 0, 0.25, 2.0, &input);
    }
  }
}

TEST_CASE("threads: a container's CPU quota in whole CPUs, which caps the default count") {
  CHECK(tl::cpus_of_cpu_max("max 100000") == 0);
  CHECK(tl::cpus_of_cpu_max("800000 100000") == 8);
  CHECK(tl::cpus_of_cpu_max("250000 100000") == 3);
  CHECK(tl::cpus_of_cpu_max("50000 100000\n") == 1);
  CHECK(tl::cpus_of_cpu_max("") == 0);
  CHECK(tl::cpus_of_cpu_max("lots 100000") == 0);
  CHECK(tl::cpus_of_cpu_max("800000 0") == 0);
  CHECK(tl::cgroup_cpu_limit() >= 0);
}

// The optimized BLAS under float32/float64 products: which one the build has (tl::cpu_blas), one
// thread knob for it (set_num_threads), and the operand layouts it is handed in place, copied or
// folded, against a naive double-precision loop. TL_CPU_GEMM=blas sends the other suites' products
// through it too.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#if TL_TEST_BLAS_OPENBLAS
#include <cblas.h>
#endif

#include "test_util.h"

namespace {

namespace tl = tensorlet;
using tl_test::check_values;
using tl_test::random_tensor;
using tl_test::values_of;

// beta * c + alpha * (a @ b) for [*batch, m, k] @ [*batch, k, n] (same batch shape, or b 2-D),
// in double from the tensors' values; c (same shape as the result) is ignored when beta is 0.
std::vector<double> naive(const tl::Tensor& a, const tl::Tensor& b, double alpha = 1,
                          double beta = 0, const tl::Tensor* c = nullptr) {
  const std::vector<double> av = values_of(a), bv = values_of(b);
  const int64_t m = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1], n = b.shape().back();
  const int64_t batch = a.numel() / (m * k);
  const bool shared_b = b.dim() == 2;
  std::vector<double> out(batch * m * n);
  const std::vector<double> cv = beta != 0 ? values_of(*c) : std::vector<double>{};
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += av[(i * m + r) * k + p] * bv[((shared_b ? 0 : i) * k + p) * n + j];
        const int64_t o = (i * m + r) * n + j;
        out[o] = alpha * s + (beta != 0 ? beta * cv[o] : 0.0);
      }
  return out;
}

// float32 sums of k terms of size up to 4 stay well within this; float64 much closer.
double tol(tl::DType dtype) { return dtype == tl::kFloat32 ? 2e-4 : 1e-10; }

}  // namespace

TEST_CASE("blas: cpu_blas names what float products run on") {
  const std::string name = tl::cpu_blas();
  CAPTURE(name);
#if TL_TEST_BLAS_OPENBLAS
  CHECK(name.rfind("openblas ", 0) == 0);
  CHECK(name.find("(") != std::string::npos);  // its threading: openmp, pthread or sequential
#elif TL_TEST_BLAS_BLIS
  CHECK(name.rfind("blis ", 0) == 0);
#else
  CHECK(name == "eigen");
#endif
}

TEST_CASE("blas: set_num_threads sets the BLAS's thread count") {
#if TL_TEST_BLAS_OPENBLAS
  const int before = tl::get_num_threads();
  // At load the BLAS took OpenMP's count (OMP_NUM_THREADS when set), and every set_num_threads
  // since kept them equal (up to OpenBLAS's MAX_THREADS, 64 in Debian's build).
  if (before <= 64) CHECK(openblas_get_num_threads() == before);
  for (int n : {1, 3, 2}) {
    CAPTURE(n);
    tl::set_num_threads(n);
    CHECK(openblas_get_num_threads() == n);
    CHECK(tl::get_num_threads() == n);
    // And a product still agrees with the reference at that count.
    tl::Tensor a = random_tensor({70, 90}, tl::kFloat64), b = random_tensor({90, 50}, tl::kFloat64);
    check_values(tl::matmul(a, b), naive(a, b), 1e-10, 1e-10);
  }
  tl::set_num_threads(before);
  CHECK(openblas_get_num_threads() == before);
#else
  MESSAGE("skipped: this build has no OpenBLAS");
#endif
}

TEST_CASE("blas: padded, transposed and broadcast operands") {
  for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
    CAPTURE(dtype);
    const int64_t m = 45, k = 70, n = 38;
    tl::Tensor wide_a = random_tensor({m + 3, k + 11}, dtype);
    tl::Tensor wide_b = random_tensor({k + 2, n + 9}, dtype);
    // Rows longer than the matrix (leading dimension > columns), read in place.
    tl::Tensor a = wide_a.slice(0, 1, m + 1).slice(1, 5, k + 5);
    tl::Tensor b = wide_b.slice(0, 2, k + 2).slice(1, 0, n);
    check_values(tl::matmul(a, b), naive(a.contiguous(), b.contiguous()), tol(dtype), tol(dtype));
    // Transposed views (CBLAS's Trans with the stored matrix's leading dimension).
    tl::Tensor at = wide_a.t().slice(0, 2, k + 2).slice(1, 0, m);  // [k, m], column-major
    tl::Tensor bt = wide_b.t().slice(0, 1, n + 1).slice(1, 0, k);  // [n, k], column-major
    check_values(tl::matmul(at.t(), bt.t()), naive(at.t().contiguous(), bt.t().contiguous()),
                 tol(dtype), tol(dtype));
    check_values(tl::matmul(a, bt.t()), naive(a.contiguous(), bt.t().contiguous()), tol(dtype),
                 tol(dtype));
    // A broadcast row (stride 0 between rows: no valid leading dimension) is copied first.
    tl::Tensor row = random_tensor({1, k}, dtype).expand({m, k});
    check_values(tl::matmul(row, b), naive(row.contiguous(), b.contiguous()), tol(dtype),
                 tol(dtype));
    // Steps in both dims: packed once, then multiplied.
    tl::Tensor stepped = wide_a.slice(0, 0, std::nullopt, 2).slice(1, 0, std::nullopt, 2);
    tl::Tensor right = random_tensor({stepped.shape()[1], n}, dtype);
    check_values(tl::matmul(stepped, right), naive(stepped.contiguous(), right), tol(dtype),
                 tol(dtype));
    // Matrix @ vector: a column with a step, and a broadcast column (stride 0 everywhere).
    tl::Tensor tall = random_tensor({120, k}, dtype);
    tl::Tensor stepped_v = random_tensor({2 * k}, dtype).slice(0, 0, std::nullopt, 2);
    check_values(tl::matmul(tall, stepped_v), naive(tall, stepped_v.unsqueeze(1).contiguous()),
                 tol(dtype), tol(dtype));
    tl::Tensor same = random_tensor({1, 1}, dtype).expand({k, 1});
    check_values(tl::matmul(tall, same), naive(tall, same.contiguous()), tol(dtype), tol(dtype));
  }
}

TEST_CASE("blas: batches folded into rows, and large batched products") {
  for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
    CAPTURE(dtype);
    // [batch, m, k] @ [k, n]: one product of batch * m rows (linear's 3-D activations).
    tl::Tensor x = random_tensor({3, 20, 33}, dtype), w = random_tensor({41, 33}, dtype);
    check_values(tl::matmul(x, w.t()), naive(x, w.t().contiguous()), tol(dtype), tol(dtype));
    tl::Tensor bias = random_tensor({41}, dtype);
    std::vector<double> expected = naive(x, w.t().contiguous());
    const std::vector<double> bv = values_of(bias);
    for (size_t i = 0; i < expected.size(); ++i) expected[i] += bv[i % 41];
    check_values(tl::linear(x, w, bias), expected, tol(dtype), tol(dtype));
    // Rows evenly spaced across the batch but padded: still one product.
    tl::Tensor padded = random_tensor({3, 20, 40}, dtype).slice(2, 0, 33);
    check_values(tl::matmul(padded, w.t()), naive(padded.contiguous(), w.t().contiguous()),
                 tol(dtype), tol(dtype));
    // A batch of rows that does not fold (batch dims permuted): one product per matrix.
    tl::Tensor perm = random_tensor({20, 3, 33}, dtype).permute({1, 0, 2});
    check_values(tl::matmul(perm, w.t()), naive(perm.contiguous(), w.t().contiguous()), tol(dtype),
                 tol(dtype));
    // bmm of large matrices: one threaded BLAS call per matrix.
    tl::Tensor ba = random_tensor({3, 70, 65}, dtype), bb = random_tensor({3, 65, 66}, dtype);
    check_values(tl::bmm(ba, bb), naive(ba, bb), tol(dtype), tol(dtype));
    check_values(tl::bmm(ba, bb.transpose(1, 2).contiguous().transpose(1, 2)), naive(ba, bb),
                 tol(dtype), tol(dtype));
  }
}

TEST_CASE("blas: addmm and baddbmm scale on the BLAS; beta 0 never reads the destination") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
    CAPTURE(dtype);
    tl::Tensor a = random_tensor({40, 50}, dtype), b = random_tensor({50, 30}, dtype);
    tl::Tensor c = random_tensor({40, 30}, dtype);
    check_values(tl::addmm(c, a, b, 0.5, -1.5), naive(a, b, -1.5, 0.5, &c), tol(dtype), tol(dtype));
    check_values(tl::addmm(c, a.t().contiguous().t(), b, 1, 2), naive(a, b, 2, 1, &c), tol(dtype),
                 tol(dtype));
    // beta 0 with NaN in the destination: the NaN must not reach the result.
    tl::Tensor poisoned = tl::full({40, 30}, nan, dtype);
    tl::addmm_out(poisoned, poisoned, a, b, 0, 3);
    check_values(poisoned, naive(a, b, 3), tol(dtype), tol(dtype));
    tl::Tensor ba = random_tensor({2, 70, 65}, dtype), bb = random_tensor({2, 65, 66}, dtype);
    tl::Tensor bc = random_tensor({2, 70, 66}, dtype);
    check_values(tl::baddbmm(bc, ba, bb, 2, 0.25), naive(ba, bb, 0.25, 2, &bc), tol(dtype),
                 tol(dtype));
    tl::Tensor nan_in = tl::full({2, 70, 66}, nan, dtype);
    check_values(tl::baddbmm(nan_in, ba, bb, 0, 1), naive(ba, bb), tol(dtype), tol(dtype));
  }
}

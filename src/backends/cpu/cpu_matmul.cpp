// CPU matmul and gemm (alpha * a @ b + beta * out, for addmm/baddbmm): float32/float64 products
// on the optimized BLAS when the build has one (cpu_blas.h), on as many threads as their size
// calls for (gemm_threads.h), the rest on Eigen's GEMM, both reading strided operands in place (a
// transposed view is a transposed or column-major operand, never copied); a direct loop for tiny
// matrices, and batches of small matrices split across threads. A right operand shared by the
// whole batch folds the batch into the rows of one product.
// float16/bfloat16 and 8/16-bit integers are widened first (float, resp. 32-bit wrapping
// integers), multiplied there and narrowed once, as PyTorch's CPU GEMM accumulates.
#include <Eigen/Core>
#include <algorithm>
#include <type_traits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/cpu_blas.h"
#include "tensorlet/backends/cpu/gemm_threads.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/gemm_scalar.h"
#include "tensorlet/backends/math/wrapping_int.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// Up to this many multiply-adds (4x4x4) a direct strided loop is as fast as Eigen's small-product
// path and reads any strides in place; measured on the dev box, Eigen wins from 8x8x8 on.
constexpr int64_t kTinyFlops = 64;
// Batches of matrices smaller than this (in multiply-adds) run one matrix per task, in parallel
// over the batch, each product on one thread; larger ones run one after another with Eigen or
// the BLAS threading each product (on the BLAS, products that get fewer threads than there are
// spread over the threads when the batch has enough of them).
constexpr int64_t kEigenThreadedFlops = 64 * 64 * 64;
// Every float32/float64 product the direct loop does not take runs on the BLAS, when the build
// has one: on the dev box (AMD EPYC, OpenBLAS 0.3.21's AVX-512 kernels) it beats Eigen's
// baseline-x86-64 GEMM from 6x6x6 on (2x at 8x8x8, 3x at 32x32x32, 1.7x at 96x96x96).

// Where one call's products run.
enum class Path { Tiny, Eigen, Blas };

// One 2-D operand: element (i, j) lives at ptr[i * rs + j * cs].
template <typename T>
struct MatRef {
  const T* ptr;
  int64_t rows, cols, rs, cs;
};

// gemm's scaling: c = alpha * (a @ b) + beta * c, c not read when beta is 0. Plain matmul
// (scaled false) takes the unscaled paths below, unchanged.
template <typename T>
struct Scale {
  bool scaled = false;
  T alpha = T(1), beta = T(0);
};

// The scaled tiny product: each sum formed first, then scaled and added to beta * c once.
template <typename T>
void tiny_gemm(const MatRef<T>& a, const MatRef<T>& b, T* c, const Scale<T>& s) {
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = T(0);
      for (int64_t p = 0; p < k; ++p)
        acc += a.ptr[i * a.rs + p * a.cs] * b.ptr[p * b.rs + j * b.cs];
      T& out = c[i * n + j];
      out = s.beta == T(0) ? T(s.alpha * acc) : T(s.alpha * acc + s.beta * out);
    }
  }
}

// c (contiguous m x n) = a @ b, accumulating each c[i][j] over k in order.
template <typename T>
void tiny_matmul(const MatRef<T>& a, const MatRef<T>& b, T* c) {
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  for (int64_t i = 0; i < m; ++i) {
    T* crow = c + i * n;
    for (int64_t j = 0; j < n; ++j) crow[j] = T(0);
    for (int64_t p = 0; p < k; ++p) {
      const T aip = a.ptr[i * a.rs + p * a.cs];
      const T* brow = b.ptr + p * b.rs;
      for (int64_t j = 0; j < n; ++j) crow[j] += aip * brow[j * b.cs];
    }
  }
}

// How Eigen sees an operand: row-major when columns are adjacent, column-major when rows are,
// with `outer` the stride between rows (resp. columns). Packed means neither works.
enum class Order { Row, Col, Packed };
struct MapLayout {
  Order order;
  int64_t outer;
};

// A size-1 dim's stride never matters. Packed when both strides exceed 1: a slice with a step in
// both dims, a permuted batch, a broadcast scalar.
MapLayout layout_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cs == 1 || cols <= 1) return {Order::Row, rows <= 1 ? std::max<int64_t>(cols, 1) : rs};
  if (rs == 1 || rows <= 1) return {Order::Col, cs};
  return {Order::Packed, 0};
}

template <typename T, int Layout>
using ConstMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Layout>,
                            Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using OutMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <typename T, int LayoutA, int LayoutB>
void eigen_gemm(const MatRef<T>& a, int64_t outer_a, const MatRef<T>& b, int64_t outer_b, T* c,
                const Scale<T>& s) {
  ConstMap<T, LayoutA> ma(a.ptr, a.rows, a.cols, Eigen::OuterStride<>(outer_a));
  ConstMap<T, LayoutB> mb(b.ptr, b.rows, b.cols, Eigen::OuterStride<>(outer_b));
  OutMap<T> mc(c, a.rows, b.cols);
  if (!s.scaled) {
    mc.noalias() = ma * mb;
  } else if (s.beta == T(0)) {  // c is not read: NaN there must not propagate
    mc.noalias() = s.alpha * (ma * mb);
  } else {  // Eigen's GEMM takes alpha and accumulates into c
    if (s.beta != T(1)) mc *= s.beta;
    mc.noalias() += s.alpha * (ma * mb);
  }
}

// A mappable operand (layout_of not Packed) as CBLAS reads it: row-major as is, column-major as
// the transpose of a row-major matrix.
template <typename T>
BlasOperand<T> blas_operand(const MatRef<T>& x) {
  const MapLayout l = layout_of(x.rows, x.cols, x.rs, x.cs);
  return {x.ptr, l.order == Order::Col, l.outer};
}

// c has leading dimension ldc: a block of a larger output when our split runs it.
template <typename T>
void blas_matmul(const MatRef<T>& a, const MatRef<T>& b, T* c, int64_t ldc, const Scale<T>& s,
                 BlasStatement how = BlasStatement::RowMajor) {
  blas_gemm<T>(a.rows, b.cols, a.cols, s.scaled ? s.alpha : T(1), blas_operand(a), blas_operand(b),
               s.scaled ? s.beta : T(0), c, ldc, how);
}

// The blocks [begin, end) of `grid` over c = a @ b (contiguous, m x n), one BLAS call each.
template <typename T>
void blas_blocks(const MatRef<T>& a, const MatRef<T>& b, T* c, const Scale<T>& s,
                 const GemmGrid& grid, int64_t begin, int64_t end) {
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  for (int64_t i = begin; i < end; ++i) {
    const Range r = block_range(m, grid.rows, static_cast<int>(i / grid.cols), kGemmRowAlign);
    const Range j = block_range(n, grid.cols, static_cast<int>(i % grid.cols), kGemmColAlign);
    if (r.begin == r.end || j.begin == j.end) continue;
    // Stated column-major: the direct kernel a row-major block would take reads its operands
    // unpacked, which is slow for deep blocks (768^3, 1024^3) and where rows n floats apart
    // conflict in the caches; the packed path measured within a few percent of it up to 512^3 and
    // lets the split cover 768^3 and 1024^3 (C8 sweep, bench/RESULTS.md).
    blas_matmul<T>({a.ptr + r.begin * a.rs, r.end - r.begin, k, a.rs, a.cs},
                   {b.ptr + j.begin * b.cs, k, j.end - j.begin, b.rs, b.cs},
                   c + r.begin * n + j.begin, n, s, BlasStatement::ColMajor);
  }
}

// One product on the BLAS, on the threads its size calls for (gemm_threads.h): the calling thread
// alone, our split of its output into blocks (one single-threaded BLAS call per thread: OpenBLAS's
// OpenMP build runs on the calling thread inside a region), or, for products large enough to
// use every thread past gemm_split_max, the BLAS's own threads. A BLAS with a pool of its own
// (pthread OpenBLAS, BLIS) keeps its own count: it is global, not ours to change per call.
template <typename T>
void blas_product(const MatRef<T>& a, const MatRef<T>& b, T* c, const Scale<T>& s) {
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  const int max = max_threads();
  if (!blas_single_in_parallel() || in_parallel_region() || max <= 1)
    return blas_matmul(a, b, c, n, s);
  const int64_t macs = m * n * k;
  const int threads = gemm_threads(macs, gemm_grain(), max);
  if (threads == max && macs > gemm_split_max()) return blas_matmul(a, b, c, n, s);
  if (threads == 1) {
    BlasOnCallingThread one;
    return blas_matmul(a, b, c, n, s);
  }
  const GemmGrid grid = gemm_grid(m, n, threads);
  const int64_t blocks = grid.blocks();
  // One block a thread. parallel_for keeps a split that is small (under 16 blocks) on the caller
  // while the machine is busy (small_loops.h), and runs one block alone: then the whole product
  // goes to the BLAS in one call, on the caller alone.
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    if (in_parallel_region()) return blas_blocks(a, b, c, s, grid, begin, end);
    BlasOnCallingThread one;
    if (begin == 0 && end == blocks) return blas_matmul(a, b, c, n, s);
    blas_blocks(a, b, c, s, grid, begin, end);
  });
}

// Four layout combinations per dtype; operands reach here mappable (see mappable_operand), and
// for the BLAS with leading dimensions it takes (blas_ready).
template <typename T>
void one_matmul(const MatRef<T>& a, const MatRef<T>& b, T* c, const Scale<T>& s, Path path) {
  if constexpr (kBlasType<T>)
    if (path == Path::Blas) return blas_product(a, b, c, s);
  if (path == Path::Tiny) return s.scaled ? tiny_gemm(a, b, c, s) : tiny_matmul(a, b, c);
  const MapLayout la = layout_of(a.rows, a.cols, a.rs, a.cs);
  const MapLayout lb = layout_of(b.rows, b.cols, b.rs, b.cs);
  constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
  const bool ra = la.order == Order::Row, rb = lb.order == Order::Row;
  if (ra && rb) eigen_gemm<T, R, R>(a, la.outer, b, lb.outer, c, s);
  if (ra && !rb) eigen_gemm<T, R, C>(a, la.outer, b, lb.outer, c, s);
  if (!ra && rb) eigen_gemm<T, C, R>(a, la.outer, b, lb.outer, c, s);
  if (!ra && !rb) eigen_gemm<T, C, C>(a, la.outer, b, lb.outer, c, s);
}

// Whether CBLAS takes the operand's matrices in place: mappable, with a leading dimension of at
// least the row length of what it reads (a broadcast row, stride 0, is not) and fitting an int.
bool blas_ready(const Tensor& t) {
  const int64_t nd = t.dim();
  const int64_t rows = t.shape()[nd - 2], cols = t.shape()[nd - 1];
  const MapLayout l = layout_of(rows, cols, t.strides()[nd - 2], t.strides()[nd - 1]);
  if (l.order == Order::Packed) return false;
  const int64_t min_ld = std::max<int64_t>(1, l.order == Order::Row ? cols : rows);
  return l.outer >= min_ld && fits_blas_int(l.outer);
}

// An operand whose matrices Eigen cannot map (or, for_blas, CBLAS cannot read) is copied to
// contiguous memory once per call, not once per product: broadcast (stride-0) batch dims stay
// broadcast, so a matrix shared by the whole batch is copied once.
Tensor mappable_operand(const Tensor& t, bool for_blas = false) {
  const int64_t nd = t.dim();
  if (for_blas ? blas_ready(t)
               : layout_of(t.shape()[nd - 2], t.shape()[nd - 1], t.strides()[nd - 2],
                           t.strides()[nd - 1])
                         .order != Order::Packed)
    return t;
  Shape compact = t.shape();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.strides()[d] == 0) compact[d] = 1;
  Tensor copy = make_tensor(compact, t.dtype(), t.device());
  copy_strided(make_view(t, compact, t.strides(), t.offset()), copy);
  Shape strides = copy.strides();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.strides()[d] == 0) strides[d] = 0;
  return make_view(copy, t.shape(), strides, 0);
}

// Runs the products of a [*batch, m, k] @ [*batch, k, n] call into contiguous out on `path`.
template <typename T>
void batched_matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Scale<T>& s,
                    Path path) {
  const int64_t nd = out.dim();
  const int64_t nbatch_dims = nd - 2;
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pb = static_cast<const T*>(b.data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  const int64_t ars = a.strides()[nd - 2], acs = a.strides()[nd - 1];
  const int64_t brs = b.strides()[nd - 2], bcs = b.strides()[nd - 1];
  if (nbatch_dims == 0) {
    one_matmul<T>({pa, m, k, ars, acs}, {pb, k, n, brs, bcs}, pc, s, path);
    return;
  }
  int64_t batch = 1;
  for (int64_t d = 0; d < nbatch_dims; ++d) batch *= out.shape()[d];
  // Runs matrices [begin, end) of the batch; batch dims may have stride 0 (broadcast).
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t rest = i, off_a = 0, off_b = 0;
      for (int64_t d = nbatch_dims - 1; d >= 0; --d) {
        const int64_t idx = rest % out.shape()[d];
        rest /= out.shape()[d];
        off_a += idx * a.strides()[d];
        off_b += idx * b.strides()[d];
      }
      one_matmul<T>({pa + off_a, m, k, ars, acs}, {pb + off_b, k, n, brs, bcs}, pc + i * m * n, s,
                    path);
    }
  };
  const int64_t flops = m * n * k;
  const bool blas_splits = path == Path::Blas && blas_single_in_parallel();
  const int per_product = gemm_threads(flops, gemm_grain(), max_threads());
  if (flops < kEigenThreadedFlops && (path != Path::Blas || blas_splits)) {
    // Aim for roughly kGrainSize multiply-adds per task before waking the pool.
    parallel_for(batch, std::max<int64_t>(1, kGrainSize / flops), run);
  } else if (blas_splits && per_product < max_threads() && batch >= per_product) {
    // Products too small for every thread, at least as many as one of them would get threads:
    // whole products spread over the threads, each on one (no copies of a and b per block).
    parallel_for(batch, 1, run);
  } else {
    // One product after another, each threaded by Eigen or the BLAS as its size calls for: a BLAS
    // that would thread is never called from inside an OpenMP region.
    run(0, batch);
  }
}

// [*batch, m, k] @ [*batch, k, n] where b is one matrix for the whole batch (stride-0 batch dims:
// matmul's broadcast of a 2-D right operand, linear's weight) and a's rows are evenly spaced
// across the batch (a contiguous activation): as views, the single [batch·m, k] @ [k, n] product
// into out's [batch·m, n] (out is contiguous), as torch folds it. False when it does not fold.
bool fold_batch(const Tensor& a, const Tensor& b, const Tensor& out, Tensor& fa, Tensor& fb,
                Tensor& fout) {
  const int64_t nd = out.dim();
  if (nd <= 2) return false;
  int64_t rows = 1, row_stride = 0;
  bool any = false;
  // a's batch dims and its row dim must collapse into one, innermost first; size-1 dims never
  // matter.
  for (int64_t d = nd - 2; d >= 0; --d) {
    const int64_t size = a.shape()[d];
    if (d < nd - 2 && size != 1 && b.strides()[d] != 0) return false;
    if (size == 1) continue;
    if (!any) {
      row_stride = a.strides()[d];
      any = true;
    } else if (a.strides()[d] != row_stride * rows) {
      return false;
    }
    rows *= size;
  }
  const int64_t k = a.shape()[nd - 1], n = out.shape()[nd - 1];
  if (!any) row_stride = k;
  fa = make_view(a, {rows, k}, {row_stride, a.strides()[nd - 1]}, a.offset());
  fb = make_view(b, {k, n}, {b.strides()[nd - 2], b.strides()[nd - 1]}, b.offset());
  fout = make_view(out, {rows, n}, {n, 1}, out.offset());
  return true;
}

// Where a call's products run: the direct loop for tiny ones, else the BLAS for float32/float64
// (when CBLAS's int holds the sizes, and, for a batch of small products split over our threads or
// a call from inside an OpenMP region, only when the BLAS runs on one thread there), else Eigen.
template <typename T>
Path pick_path(int64_t m, int64_t n, int64_t k, int64_t batch) {
  const int64_t flops = m * n * k;
  if constexpr (kBlasType<T>) {
    const GemmChoice choice = gemm_choice();
    const bool fits = fits_blas_int(m) && fits_blas_int(n) && fits_blas_int(k);
    // A BLAS that threads on a pool of its own must not run inside an OpenMP region: not the
    // caller's, nor ours when a batch of small products is split over threads (TL_CPU_GEMM=blas
    // runs such batches one product after another instead).
    const bool split = batch > 1 && flops < kEigenThreadedFlops && choice != GemmChoice::Blas;
    const bool safe = blas_single_in_parallel() || (!in_parallel_region() && !split);
    if (fits && safe &&
        (choice == GemmChoice::Blas || (choice == GemmChoice::BySize && flops > kTinyFlops)))
      return Path::Blas;
  }
  return flops <= kTinyFlops ? Path::Tiny : Path::Eigen;
}

// alpha * a @ b (+ beta * out) into contiguous out, every operand of type T.
template <typename T>
void run_products(const Tensor& a, const Tensor& b, const Tensor& out, const Scale<T>& s = {}) {
  Tensor fa, fb, fout;
  if (fold_batch(a, b, out, fa, fb, fout)) return run_products<T>(fa, fb, fout, s);
  const int64_t nd = out.dim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  const Path path = pick_path<T>(m, n, k, out.numel() / (m * n));
  if (path == Path::Tiny)  // the direct loop reads any strides
    batched_matmul<T>(a, b, out, s, path);
  else
    batched_matmul<T>(mappable_operand(a, path == Path::Blas),
                      mappable_operand(b, path == Path::Blas), out, s, path);
}

// Operands of the widened path: a contiguous copy in `dtype` (dtype conversion included), with
// broadcast (stride-0) batch dims kept broadcast so a shared matrix is converted once.
Tensor widened_operand(const Tensor& t, DType dtype) {
  const int64_t nd = t.dim();
  Shape compact = t.shape();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.strides()[d] == 0) compact[d] = 1;
  Tensor copy = make_tensor(compact, dtype, t.device());
  copy_strided(make_view(t, compact, t.strides(), t.offset()), copy);
  Shape strides = copy.strides();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.strides()[d] == 0) strides[d] = 0;
  return make_view(copy, t.shape(), strides, 0);
}

// The type each dtype's products run in. Integers multiply and accumulate as an unsigned type
// (two's-complement wrap, as elementwise ops and the CUDA kernels: signed overflow would be
// undefined); 8/16-bit ones in 32 bits, since uint8/uint16 products promote to (signed) int, and
// the low bits of a 32-bit wrapping sum are those of the narrow one: Wide<T> (wrapping_int.h).
// Half types widen to float, their compute type.
template <typename T>
using GemmType = std::conditional_t<is_reduced_float_v<T>, compute_t<T>, Wide<T>>;

}  // namespace

void CpuBackend::matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  if (a.shape()[a.dim() - 1] == 0) {  // every output is an empty sum
    fill(out, 0);
    return;
  }
  dispatch_dtype<kNumericDTypes>(
      out.dtype(),
      [&]<typename T>() {
        using G = GemmType<T>;
        if constexpr (sizeof(G) == sizeof(T)) {
          // Same width: the data is read in place as G (int32 as uint32 and so on).
          run_products<G>(a, b, out);
        } else {
          // Narrow types: widen both operands once, multiply wide, narrow the result once.
          const DType wide = std::is_same_v<G, float> ? kFloat32 : kInt32;
          Tensor out_wide = make_tensor(out.shape(), wide, out.device());
          run_products<G>(widened_operand(a, wide), widened_operand(b, wide), out_wide);
          copy_strided(out_wide, out);
        }
      },
      "tl::matmul");
}

}  // namespace tensorlet::cpu

namespace tensorlet::cpu {

void CpuBackend::gemm(const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta,
                      const Tensor& out) {
  const bool keep = gemm_reads_out(beta);
  dispatch_dtype<kNumericDTypes>(
      out.dtype(),
      [&]<typename T>() {
        using G = GemmType<T>;
        const Scale<G> s{true, gemm_scalar<G>(alpha), keep ? gemm_scalar<G>(beta) : G(0)};
        if constexpr (sizeof(G) == sizeof(T)) {
          run_products<G>(a, b, out, s);
        } else {
          // Narrow types: out (when read) widened with the operands, narrowed once at the end.
          const DType wide = std::is_same_v<G, float> ? kFloat32 : kInt32;
          Tensor out_wide = make_tensor(out.shape(), wide, out.device());
          if (keep) copy_strided(out, out_wide);
          run_products<G>(widened_operand(a, wide), widened_operand(b, wide), out_wide, s);
          copy_strided(out_wide, out);
        }
      },
      "tl::gemm");
}

}  // namespace tensorlet::cpu

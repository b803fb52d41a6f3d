// CPU matmul and gemm (alpha * a @ b + beta * out, for addmm/baddbmm): Eigen GEMM on strided
// maps of each operand (transposed views as column-major maps, never copied), a direct loop for
// tiny matrices, and batches of small matrices split across threads. float16/bfloat16 and
// 8/16-bit integers are widened first (float, resp. 32-bit wrapping integers), multiplied there
// and narrowed once, as PyTorch's CPU GEMM accumulates.
#include <Eigen/Core>
#include <algorithm>
#include <type_traits>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/gemm_scalar.h"
#include "tensorlet/backends/math/wrapping_int.h"
#include "tensorlet/core/dispatch.h"

namespace tensorlet::cpu {
namespace {

// Up to this many multiply-adds (4x4x4) a direct strided loop is as fast as Eigen's small-product
// path and reads any strides in place; measured on the dev box, Eigen wins from 8x8x8 on.
constexpr int64_t kTinyFlops = 64;
// Batches of matrices smaller than this (in multiply-adds) run one matrix per task, in parallel
// over the batch; larger ones run one after another with Eigen threading each product.
constexpr int64_t kEigenThreadedFlops = 64 * 64 * 64;

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

// Four layout combinations per dtype; operands reach here mappable (see mappable_operand).
template <typename T>
void one_matmul(const MatRef<T>& a, const MatRef<T>& b, T* c, const Scale<T>& s) {
  if (a.rows * a.cols * b.cols <= kTinyFlops)
    return s.scaled ? tiny_gemm(a, b, c, s) : tiny_matmul(a, b, c);
  const MapLayout la = layout_of(a.rows, a.cols, a.rs, a.cs);
  const MapLayout lb = layout_of(b.rows, b.cols, b.rs, b.cs);
  constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
  const bool ra = la.order == Order::Row, rb = lb.order == Order::Row;
  if (ra && rb) eigen_gemm<T, R, R>(a, la.outer, b, lb.outer, c, s);
  if (ra && !rb) eigen_gemm<T, R, C>(a, la.outer, b, lb.outer, c, s);
  if (!ra && rb) eigen_gemm<T, C, R>(a, la.outer, b, lb.outer, c, s);
  if (!ra && !rb) eigen_gemm<T, C, C>(a, la.outer, b, lb.outer, c, s);
}

// An operand whose matrices Eigen cannot map is copied to contiguous memory once per call, not
// once per product: broadcast (stride-0) batch dims stay broadcast, so a matrix shared by the
// whole batch is copied once.
Tensor mappable_operand(const Tensor& t) {
  const int64_t nd = t.dim();
  if (layout_of(t.shape()[nd - 2], t.shape()[nd - 1], t.strides()[nd - 2], t.strides()[nd - 1])
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

template <typename T>
void batched_matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Scale<T>& s = {}) {
  const int64_t nd = out.dim();
  const int64_t nbatch_dims = nd - 2;
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pb = static_cast<const T*>(b.data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  const int64_t ars = a.strides()[nd - 2], acs = a.strides()[nd - 1];
  const int64_t brs = b.strides()[nd - 2], bcs = b.strides()[nd - 1];
  if (nbatch_dims == 0) {
    one_matmul<T>({pa, m, k, ars, acs}, {pb, k, n, brs, bcs}, pc, s);
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
      one_matmul<T>({pa + off_a, m, k, ars, acs}, {pb + off_b, k, n, brs, bcs}, pc + i * m * n, s);
    }
  };
  const int64_t flops = m * n * k;
  if (flops >= kEigenThreadedFlops) {
    run(0, batch);
  } else {
    // Aim for roughly kGrainSize multiply-adds per task before waking the pool.
    parallel_for(batch, std::max<int64_t>(1, kGrainSize / flops), run);
  }
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
  const int64_t nd = out.dim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  if (k == 0) {  // every output is an empty sum
    fill(out, 0);
    return;
  }
  dispatch_dtype<kNumericDTypes>(
      out.dtype(),
      [&]<typename T>() {
        using G = GemmType<T>;
        if constexpr (sizeof(G) == sizeof(T)) {
          // Same width: the data is read in place as G (int32 as uint32 and so on).
          if (m * n * k <= kTinyFlops)  // the direct loop reads any strides
            batched_matmul<G>(a, b, out);
          else
            batched_matmul<G>(mappable_operand(a), mappable_operand(b), out);
        } else {
          // Narrow types: widen both operands once, multiply wide, narrow the result once.
          const DType wide = std::is_same_v<G, float> ? kFloat32 : kInt32;
          Tensor out_wide = make_tensor(out.shape(), wide, out.device());
          batched_matmul<G>(widened_operand(a, wide), widened_operand(b, wide), out_wide);
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
        const int64_t nd = out.dim();
        const int64_t flops = out.shape()[nd - 2] * out.shape()[nd - 1] * a.shape()[nd - 1];
        if constexpr (sizeof(G) == sizeof(T)) {
          if (flops <= kTinyFlops)
            batched_matmul<G>(a, b, out, s);
          else
            batched_matmul<G>(mappable_operand(a), mappable_operand(b), out, s);
        } else {
          // Narrow types: out (when read) widened with the operands, narrowed once at the end.
          const DType wide = std::is_same_v<G, float> ? kFloat32 : kInt32;
          Tensor out_wide = make_tensor(out.shape(), wide, out.device());
          if (keep) copy_strided(out, out_wide);
          batched_matmul<G>(widened_operand(a, wide), widened_operand(b, wide), out_wide, s);
          copy_strided(out_wide, out);
        }
      },
      "tl::gemm");
}

}  // namespace tensorlet::cpu

// The CPU's own 2-D convolution (Backend::conv2d_*): im2col of a chunk of the batch into one
// column matrix and one GEMM per group and chunk, instead of one small GEMM per sample.
//
// Why: the front end's im2col + batched matmul runs one [O/g, K] x [K, Ho*Wo] product per sample,
// too small to split over threads and dominated by packing its operands (LeNet: 6 x 25 x 784).
// Here the columns of a chunk of samples sit side by side, [K, chunk * L], so each group's
// product is one GEMM the backend's gemm threads by its size; the output then moves into NCHW
// with one copy of each (sample, channel) row. Chunks bound the column buffer for big inputs.
#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/gemm_threads.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/convolution_args.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// The column buffer of one chunk stays under this many bytes (one sample's columns at least):
// large enough that LeNet's batch of 256 is one chunk, small enough not to double a big
// network's memory. TL_CPU_CONV_CHUNK_BYTES overrides it (tuning; read once).
constexpr int64_t kChunkBytes = int64_t{32} << 20;

int64_t chunk_bytes() {
  static const int64_t bytes =
      std::max<int64_t>(1, env_int64("TL_CPU_CONV_CHUNK_BYTES", kChunkBytes));
  return bytes;
}

// Sizes of one convolution: x [n, c, h, w], weight [o, c / groups, kh, kw], y [n, o, oh, ow].
struct Geometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups;
  Conv2dArgs a;
  int64_t taps() const { return kh * kw; }
  int64_t l() const { return oh * ow; }      // output positions per plane
  int64_t cg() const { return c / groups; }  // input channels per group
  int64_t og() const { return o / groups; }  // output channels per group
  int64_t k() const { return cg() * taps(); }
};

Geometry geometry_of(const Tensor& x, const Tensor& weight, const Tensor& y, const Conv2dArgs& a) {
  return {
      x.size(0), x.size(1), x.size(2), x.size(3), weight.size(0), weight.size(2), weight.size(3),
      y.size(2), y.size(3), a.groups,  a};
}

// What every pass needs of its operands: float32/float64 (has_conv2d), contiguous (the front
// end's promise, checked since the passes address raw memory), one dtype.
bool usable(std::initializer_list<const Tensor*> ts) {
  const DType dtype = (*ts.begin())->dtype();
  if (dtype != kFloat32 && dtype != kFloat64) return false;
  for (const Tensor* t : ts)
    if (t->dtype() != dtype || !t->is_contiguous() || !t->device().is_cpu() || t->numel() == 0)
      return false;
  return true;
}

// The columns of a chunk of `nb` samples: row (c * taps + tap), column (sample * L + position).
// A group's rows are then one [K, nb * L] block, the right operand of its GEMM.
int64_t chunk_samples(const Geometry& g, int64_t elem) {
  const int64_t per_sample = g.c * g.taps() * g.l() * elem;
  const int64_t most = std::clamp<int64_t>(chunk_bytes() / per_sample, 1, g.n);
  const int64_t chunks = (g.n + most - 1) / most;
  return (g.n + chunks - 1) / chunks;  // chunks of even size rather than a short last one
}

// Output positions o in [lo, hi) whose input index o * stride - pad + offset lies in [0, in);
// the rest read padding.
struct Span {
  int64_t lo, hi;
};
Span inside(int64_t out, int64_t in, int64_t stride, int64_t pad, int64_t offset) {
  const int64_t first = offset >= pad ? 0 : (pad - offset + stride - 1) / stride;
  const int64_t limit = in + pad - offset;  // o * stride < limit
  const int64_t end = limit <= 0 ? 0 : (limit + stride - 1) / stride;
  const int64_t lo = std::min(first, out);
  return {lo, std::clamp(end, lo, out)};
}

// One input plane [h, w] into its taps' rows of the columns (row stride ld): the padded parts
// filled with zeros, the rest copied (a plain copy at stride 1) with no per-element bounds test.
template <typename T>
void im2col_plane(const T* in, T* out, int64_t ld, const Geometry& g) {
  const Conv2dArgs& a = g.a;
  for (int64_t i = 0; i < g.kh; ++i) {
    const Span rows = inside(g.oh, g.h, a.stride[0], a.padding[0], i * a.dilation[0]);
    for (int64_t j = 0; j < g.kw; ++j) {
      const Span cols = inside(g.ow, g.w, a.stride[1], a.padding[1], j * a.dilation[1]);
      T* row = out + (i * g.kw + j) * ld;
      std::fill(row, row + rows.lo * g.ow, T(0));
      for (int64_t y = rows.lo; y < rows.hi; ++y) {
        T* o = row + y * g.ow;
        const T* src = in + (y * a.stride[0] - a.padding[0] + i * a.dilation[0]) * g.w;
        const int64_t shift = j * a.dilation[1] - a.padding[1];  // input column of output 0
        std::fill(o, o + cols.lo, T(0));
        if (a.stride[1] == 1) {
          if (cols.lo < cols.hi)
            std::memcpy(o + cols.lo, src + (cols.lo + shift),
                        static_cast<size_t>(cols.hi - cols.lo) * sizeof(T));
        } else {
          for (int64_t x = cols.lo; x < cols.hi; ++x) o[x] = src[x * a.stride[1] + shift];
        }
        std::fill(o + cols.hi, o + g.ow, T(0));
      }
      std::fill(row + rows.hi * g.ow, row + g.l(), T(0));
    }
  }
}

// The adjoint of im2col_plane: the plane zeroed, then each column added back where it was read,
// tap after tap (the order of the front end's col2im).
template <typename T>
void col2im_plane(const T* in, T* out, int64_t ld, const Geometry& g) {
  const Conv2dArgs& a = g.a;
  std::fill(out, out + g.h * g.w, T(0));
  for (int64_t i = 0; i < g.kh; ++i) {
    const Span rows = inside(g.oh, g.h, a.stride[0], a.padding[0], i * a.dilation[0]);
    for (int64_t j = 0; j < g.kw; ++j) {
      const Span cols = inside(g.ow, g.w, a.stride[1], a.padding[1], j * a.dilation[1]);
      if (cols.lo >= cols.hi) continue;
      const T* row = in + (i * g.kw + j) * ld;
      const int64_t shift = j * a.dilation[1] - a.padding[1];
      for (int64_t y = rows.lo; y < rows.hi; ++y) {
        const T* src = row + y * g.ow;
        T* dst = out + (y * a.stride[0] - a.padding[0] + i * a.dilation[0]) * g.w;
        if (a.stride[1] == 1) {
          T* d = dst + (cols.lo + shift);
          const T* s = src + cols.lo;
          for (int64_t x = 0, e = cols.hi - cols.lo; x < e; ++x) d[x] += s[x];
        } else {
          for (int64_t x = cols.lo; x < cols.hi; ++x) dst[x * a.stride[1] + shift] += src[x];
        }
      }
    }
  }
}

// Splits `planes` planes of `plane_elems` elements each over the threads, about kGrainSize
// elements a task at least.
template <typename F>
void for_planes(int64_t planes, int64_t plane_elems, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane_elems, 1));
  parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) f(p);
  });
}

// Samples [n0, n0 + nb) of x into the columns (row stride nb * L), one (sample, channel) plane
// a task: each writes its own taps' rows in its own columns.
template <typename T>
void im2col_chunk(const T* x, T* cols, int64_t n0, int64_t nb, const Geometry& g) {
  const int64_t ld = nb * g.l();
  for_planes(nb * g.c, g.taps() * g.l(), [&](int64_t p) {
    const int64_t s = p / g.c, ch = p % g.c;
    im2col_plane(x + ((n0 + s) * g.c + ch) * g.h * g.w, cols + ch * g.taps() * ld + s * g.l(), ld,
                 g);
  });
}

// The columns' gradient back into samples [n0, n0 + nb) of dx, one plane a task (no two tasks
// write one element).
template <typename T>
void col2im_chunk(const T* cols, T* dx, int64_t n0, int64_t nb, const Geometry& g) {
  const int64_t ld = nb * g.l();
  for_planes(nb * g.c, g.taps() * g.l(), [&](int64_t p) {
    const int64_t s = p / g.c, ch = p % g.c;
    col2im_plane(cols + ch * g.taps() * ld + s * g.l(), dx + ((n0 + s) * g.c + ch) * g.h * g.w, ld,
                 g);
  });
}

// Between NCHW [nb, o, L] (samples n0.. of a [n, o, L] tensor) and the GEMMs' [o, nb * L]:
// each (sample, channel) row of L elements copied whole.
enum class Move { ToNchw, FromNchw };
template <typename T>
void move_rows(T* nchw, T* mat, int64_t n0, int64_t nb, const Geometry& g, Move how) {
  const int64_t l = g.l(), ld = nb * l;
  for_planes(nb * g.o, l, [&](int64_t p) {
    const int64_t s = p / g.o, ch = p % g.o;
    T* a = nchw + ((n0 + s) * g.o + ch) * l;
    T* b = mat + ch * ld + s * l;
    if (how == Move::ToNchw)
      std::memcpy(a, b, static_cast<size_t>(l) * sizeof(T));
    else
      std::memcpy(b, a, static_cast<size_t>(l) * sizeof(T));
  });
}

// A row-major [rows, cols] matrix at element `offset` of t's storage, rows `ld` apart; transposed
// (a [cols, rows] view of the same elements) when `trans`.
Tensor matrix(const Tensor& t, int64_t offset, int64_t rows, int64_t cols, int64_t ld,
              bool trans = false) {
  if (trans) return make_view(t, {cols, rows}, {1, ld}, t.offset() + offset);
  return make_view(t, {rows, cols}, {ld, 1}, t.offset() + offset);
}

// A 1x1 kernel at stride 1 without padding reads each sample's [C, H * W] plane as its columns:
// no im2col, and per group one batched product straight between NCHW tensors.
bool pointwise(const Geometry& g) {
  const Conv2dArgs& a = g.a;
  return g.kh == 1 && g.kw == 1 && a.stride[0] == 1 && a.stride[1] == 1 && a.padding[0] == 0 &&
         a.padding[1] == 0;
}

}  // namespace

bool CpuBackend::has_conv2d(DType dtype) const { return dtype == kFloat32 || dtype == kFloat64; }

bool CpuBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Conv2dArgs& a,
                                const Tensor& y) {
  if (!usable({&x, &w, &y})) return false;
  const Geometry g = geometry_of(x, w, y, a);
  const int64_t l = g.l(), k = g.k(), og = g.og(), groups = g.groups;
  if (pointwise(g)) {
    // y [n, g, O/g, L] = w [g, O/g, C/g] (the same for every sample) @ x [n, g, C/g, L].
    const Tensor wv = make_view(w, {g.n, groups, og, k}, {0, og * k, k, 1}, w.offset());
    const Tensor xv =
        make_view(x, {g.n, groups, g.cg(), l}, {g.c * l, g.cg() * l, l, 1}, x.offset());
    const Tensor yv = make_view(y, {g.n, groups, og, l}, {g.o * l, og * l, l, 1}, y.offset());
    matmul(wv, xv, yv);
    return true;
  }
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(x.dtype(), [&]<typename T>() {
    const int64_t chunk = chunk_samples(g, sizeof(T));
    const Tensor cols = make_tensor({g.c * g.taps(), chunk * l}, x.dtype(), x.device());
    const Tensor out = make_tensor({g.o, chunk * l}, x.dtype(), x.device());
    for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
      const int64_t nb = std::min(chunk, g.n - n0), ld = nb * l;
      im2col_chunk(static_cast<const T*>(x.data_ptr()), static_cast<T*>(cols.data_ptr()), n0, nb,
                   g);
      // out_g [O/g, nb L] = w_g [O/g, K] @ cols_g [K, nb L]
      for (int64_t gi = 0; gi < groups; ++gi)
        gemm(matrix(w, gi * og * k, og, k, k), matrix(cols, gi * k * ld, k, ld, ld), 1.0, 0.0,
             matrix(out, gi * og * ld, og, ld, ld));
      move_rows(static_cast<T*>(y.data_ptr()), static_cast<T*>(out.data_ptr()), n0, nb, g,
                Move::ToNchw);
    }
  });
  return true;
}

bool CpuBackend::conv2d_backward_input(const Tensor& dy, const Tensor& w, const Conv2dArgs& a,
                                       const Tensor& dx) {
  if (!usable({&dy, &w, &dx})) return false;
  const Geometry g = geometry_of(dx, w, dy, a);
  const int64_t l = g.l(), k = g.k(), og = g.og(), groups = g.groups;
  if (pointwise(g)) {
    // dx [n, g, C/g, L] = w^T [g, C/g, O/g] (every sample) @ dy [n, g, O/g, L].
    const Tensor wt = make_view(w, {g.n, groups, k, og}, {0, og * k, 1, k}, w.offset());
    const Tensor dyv = make_view(dy, {g.n, groups, og, l}, {g.o * l, og * l, l, 1}, dy.offset());
    const Tensor dxv =
        make_view(dx, {g.n, groups, g.cg(), l}, {g.c * l, g.cg() * l, l, 1}, dx.offset());
    matmul(wt, dyv, dxv);
    return true;
  }
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(dy.dtype(), [&]<typename T>() {
    const int64_t chunk = chunk_samples(g, sizeof(T));
    const Tensor cols = make_tensor({g.c * g.taps(), chunk * l}, dy.dtype(), dy.device());
    const Tensor dys = make_tensor({g.o, chunk * l}, dy.dtype(), dy.device());
    for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
      const int64_t nb = std::min(chunk, g.n - n0), ld = nb * l;
      move_rows(static_cast<T*>(dy.data_ptr()), static_cast<T*>(dys.data_ptr()), n0, nb, g,
                Move::FromNchw);
      // cols_g [K, nb L] = w_g^T [K, O/g] @ dy_g [O/g, nb L]
      for (int64_t gi = 0; gi < groups; ++gi)
        gemm(matrix(w, gi * og * k, og, k, k, true), matrix(dys, gi * og * ld, og, ld, ld), 1.0,
             0.0, matrix(cols, gi * k * ld, k, ld, ld));
      col2im_chunk(static_cast<const T*>(cols.data_ptr()), static_cast<T*>(dx.data_ptr()), n0, nb,
                   g);
    }
  });
  return true;
}

bool CpuBackend::conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dArgs& a,
                                        const Tensor& dw) {
  if (!usable({&x, &dy, &dw})) return false;
  const Geometry g = geometry_of(x, dw, dy, a);
  const int64_t l = g.l(), k = g.k(), og = g.og(), groups = g.groups;
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(x.dtype(), [&]<typename T>() {
    const int64_t chunk = chunk_samples(g, sizeof(T));
    const Tensor cols = make_tensor({g.c * g.taps(), chunk * l}, x.dtype(), x.device());
    const Tensor dys = make_tensor({g.o, chunk * l}, x.dtype(), x.device());
    for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
      const int64_t nb = std::min(chunk, g.n - n0), ld = nb * l;
      im2col_chunk(static_cast<const T*>(x.data_ptr()), static_cast<T*>(cols.data_ptr()), n0, nb,
                   g);
      move_rows(static_cast<T*>(dy.data_ptr()), static_cast<T*>(dys.data_ptr()), n0, nb, g,
                Move::FromNchw);
      // dw_g [O/g, K] (+)= dy_g [O/g, nb L] @ cols_g^T [nb L, K]: the first chunk overwrites.
      const double beta = n0 == 0 ? 0.0 : 1.0;
      for (int64_t gi = 0; gi < groups; ++gi)
        gemm(matrix(dys, gi * og * ld, og, ld, ld), matrix(cols, gi * k * ld, k, ld, ld, true), 1.0,
             beta, matrix(dw, gi * og * k, og, k, k));
    }
  });
  return true;
}

}  // namespace tensorlet::cpu

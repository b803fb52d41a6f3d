// The CPU's own 2-D convolution (Backend::conv2d_*): im2col of a chunk of the batch into one
// column matrix and one GEMM per group and chunk, instead of one small GEMM per sample.
//
// Why: the front end's im2col + batched matmul runs one [O/g, K] x [K, Ho*Wo] product per sample,
// whose operand packing costs about as much as its arithmetic at LeNet's sizes (6 x 25 x 784),
// and whose columns for the whole batch go out to memory and back. Here the columns of a chunk of
// samples sit side by side, [K, chunk * L], so each group's product is one GEMM (the backend's
// gemm: the BLAS, or Eigen); the output then moves into NCHW one (sample, channel) row at a time.
// With enough chunks for every thread each chunk is one thread's task, from im2col to NCHW, in
// buffers its core's cache holds; else the chunks run one after another, each step split over
// the threads. Chunks bound the buffers for big inputs.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/gemm_threads.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/math/convolution_args.h"
#include "tensorlet/tensor/dispatch.h"

namespace tensorlet::cpu {
namespace {

// How the batch is cut. Enough chunks for every thread: whole chunks are tasks, each on one
// thread (im2col, GEMM and the copies of a chunk stay in its core's cache, and no thread waits
// for another between them), of at most kTileBytes of buffers each. Too few: the chunks, of up to
// kChunkBytes, run one after another, each step split over the threads. TL_CPU_CONV_TILE_BYTES
// and TL_CPU_CONV_CHUNK_BYTES override them (tuning; read once; a tile of 0 bytes: never tasks).
constexpr int64_t kTileBytes = int64_t{512} << 10;
constexpr int64_t kChunkBytes = int64_t{8} << 20;

int64_t tile_bytes() {
  static const int64_t bytes = env_int64("TL_CPU_CONV_TILE_BYTES", kTileBytes);
  return bytes;
}
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

// Whether the window reaches into the padding anywhere (then the planes are read from a padded
// copy).
bool padded(const Geometry& g) { return g.a.padding[0] > 0 || g.a.padding[1] > 0; }
int64_t padded_h(const Geometry& g) { return g.h + 2 * g.a.padding[0]; }
int64_t padded_w(const Geometry& g) { return g.w + 2 * g.a.padding[1]; }

// o[0, n) = s[0, n) for the short runs of im2col (LeNet's rows: 28 and 10 elements), as
// fixed-size pieces the compiler inlines as vector moves, the last piece overlapping the one
// before it: no library call and no scalar tail per run, which cost more than the copying did.
template <typename T>
inline void copy_run(T* o, const T* s, int64_t n) {
  const auto pieces = [&]<int64_t Bytes>() {
    constexpr int64_t v = Bytes / static_cast<int64_t>(sizeof(T));
    int64_t x = 0;
    for (; x + v <= n; x += v) std::memcpy(o + x, s + x, Bytes);
    if (x < n) std::memcpy(o + (n - v), s + (n - v), Bytes);
  };
  const int64_t bytes = n * static_cast<int64_t>(sizeof(T));
  if (bytes >= 64) return pieces.template operator()<64>();
  if (bytes >= 16) return pieces.template operator()<16>();
  for (int64_t x = 0; x < n; ++x) o[x] = s[x];
}

// A plane copied into the middle of a zeroed one with the padding around it: the windows then
// read whole rows without bounds tests or zero fills, which cost more than the copy on LeNet's
// short rows (28 elements: a library call for each run would dominate).
template <typename T>
const T* pad_plane(const T* in, T* scratch, const Geometry& g) {
  const int64_t wp = padded_w(g), top = g.a.padding[0], left = g.a.padding[1];
  std::fill(scratch, scratch + padded_h(g) * wp, T(0));
  for (int64_t r = 0; r < g.h; ++r) {
    copy_run(scratch + (r + top) * wp + left, in + r * g.w, g.w);
  }
  return scratch;
}

// One (padded) input plane into its taps' rows of the columns, row stride ld: tap (i, j) of
// output (y, x) reads plane row y * sh + i * dh, column x * sw + j * dw.
template <typename T>
void im2col_plane(const T* in, T* out, int64_t ld, const Geometry& g, T* scratch) {
  const Conv2dArgs& a = g.a;
  const T* src = padded(g) ? pad_plane(in, scratch, g) : in;
  const int64_t wp = padded(g) ? padded_w(g) : g.w, sw = a.stride[1];
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      T* row = out + (i * g.kw + j) * ld;
      for (int64_t y = 0; y < g.oh; ++y) {
        const T* s = src + (y * a.stride[0] + i * a.dilation[0]) * wp + j * a.dilation[1];
        T* o = row + y * g.ow;
        if (sw == 1)
          copy_run(o, s, g.ow);
        else
          for (int64_t x = 0; x < g.ow; ++x) o[x] = s[x * sw];
      }
    }
}

// The adjoint of im2col_plane: each column added back where it was read, tap after tap (the
// order of the front end's col2im), into a zeroed (padded) plane whose middle is the result.
template <typename T>
void col2im_plane(const T* in, T* out, int64_t ld, const Geometry& g, T* scratch) {
  const Conv2dArgs& a = g.a;
  T* dst = padded(g) ? scratch : out;
  const int64_t wp = padded(g) ? padded_w(g) : g.w, sw = a.stride[1];
  std::fill(dst, dst + (padded(g) ? padded_h(g) * wp : g.h * g.w), T(0));
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      const T* row = in + (i * g.kw + j) * ld;
      for (int64_t y = 0; y < g.oh; ++y) {
        T* d = dst + (y * a.stride[0] + i * a.dilation[0]) * wp + j * a.dilation[1];
        const T* s = row + y * g.ow;
        if (sw == 1)
          for (int64_t x = 0; x < g.ow; ++x) d[x] += s[x];
        else
          for (int64_t x = 0; x < g.ow; ++x) d[x * sw] += s[x];
      }
    }
  if (!padded(g)) return;
  for (int64_t r = 0; r < g.h; ++r) {
    const T* s = scratch + (r + a.padding[0]) * wp + a.padding[1];
    T* d = out + r * g.w;
    for (int64_t c = 0; c < g.w; ++c) d[c] = s[c];
  }
}

// Splits `planes` planes of `plane_elems` elements each over the threads, about kGrainSize
// elements a task at least; f(plane, scratch) with a padded plane's scratch of its task's own.
template <typename T, typename F>
void for_planes(int64_t planes, int64_t plane_elems, int64_t scratch_elems, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane_elems, 1));
  parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    std::vector<T> scratch(static_cast<size_t>(scratch_elems));
    for (int64_t p = begin; p < end; ++p) f(p, scratch.data());
  });
}

int64_t scratch_elems(const Geometry& g) { return padded(g) ? padded_h(g) * padded_w(g) : 0; }

// Samples [n0, n0 + nb) of x into the columns (row stride nb * L), one (sample, channel) plane
// a task: each writes its own taps' rows in its own columns.
template <typename T>
void im2col_chunk(const T* x, T* cols, int64_t n0, int64_t nb, const Geometry& g) {
  const int64_t ld = nb * g.l();
  for_planes<T>(nb * g.c, g.taps() * g.l(), scratch_elems(g), [&](int64_t p, T* scratch) {
    const int64_t s = p / g.c, ch = p % g.c;
    im2col_plane(x + ((n0 + s) * g.c + ch) * g.h * g.w, cols + ch * g.taps() * ld + s * g.l(), ld,
                 g, scratch);
  });
}

// The columns' gradient back into samples [n0, n0 + nb) of dx, one plane a task (no two tasks
// write one element).
template <typename T>
void col2im_chunk(const T* cols, T* dx, int64_t n0, int64_t nb, const Geometry& g) {
  const int64_t ld = nb * g.l();
  for_planes<T>(nb * g.c, g.taps() * g.l(), scratch_elems(g), [&](int64_t p, T* scratch) {
    const int64_t s = p / g.c, ch = p % g.c;
    col2im_plane(cols + ch * g.taps() * ld + s * g.l(), dx + ((n0 + s) * g.c + ch) * g.h * g.w, ld,
                 g, scratch);
  });
}

// Between NCHW [nb, o, L] (samples n0.. of a [n, o, L] tensor) and the GEMMs' [o, nb * L]:
// each (sample, channel) row of L elements copied whole.
enum class Move { ToNchw, FromNchw };
template <typename T>
void move_rows(T* nchw, T* mat, int64_t n0, int64_t nb, const Geometry& g, Move how) {
  const int64_t l = g.l(), ld = nb * l;
  for_planes<T>(nb * g.o, l, 0, [&](int64_t p, T*) {
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

// Samples [n0, n0 + nb) and their buffers: the columns [C * taps, nb * L] (row c * taps + tap,
// column sample * L + position, so a group's rows are one [K, nb * L] matrix) and the output or
// its gradient as [O, nb * L]. The buffers are sized for the largest chunk and reused.
struct Chunk {
  int64_t n0 = 0, nb = 0;
  Tensor cols, mat;
};

// Buffers for chunks of up to nb samples.
Chunk chunk_buffers(const Geometry& g, int64_t nb, DType dtype) {
  return {0, 0, make_tensor({g.c * g.taps(), nb * g.l()}, dtype, Device::cpu()),
          make_tensor({g.o, nb * g.l()}, dtype, Device::cpu())};
}

// One sample's share of the buffers, in bytes.
int64_t sample_bytes(const Geometry& g, int64_t elem) {
  return (g.c * g.taps() + g.o) * g.l() * elem;
}

// Chunks of at most `bytes` of buffers (one sample at least), as even as they go: their count.
int64_t chunk_count(const Geometry& g, int64_t elem, int64_t bytes) {
  const int64_t most = std::clamp<int64_t>(bytes / sample_bytes(g, elem), 1, g.n);
  return (g.n + most - 1) / most;
}

// Chunk i of `chunks` over the batch.
void place(Chunk& c, int64_t n, int64_t chunks, int64_t i) {
  c.n0 = n * i / chunks;
  c.nb = n * (i + 1) / chunks - c.n0;
}

// How the batch runs: `chunks` chunks, as tasks of one thread each (per_thread) or one after
// another with each step over every thread.
struct Plan {
  int64_t chunks;
  bool per_thread;
};

Plan plan_of(const Geometry& g, int64_t elem) {
  const int64_t threads = in_parallel_region() ? 1 : max_threads();
  if (tile_bytes() > 0 && g.n >= threads) {
    // At least one task per thread, and a multiple of the threads where the batch allows (the
    // tasks then split evenly), while a task's buffers stay within a chunk's: every thread holds
    // one task's at a time.
    const int64_t tiles = chunk_count(g, elem, tile_bytes());
    const int64_t chunks =
        std::min((std::max(tiles, threads) + threads - 1) / threads * threads, g.n);
    if ((g.n + chunks - 1) / chunks * sample_bytes(g, elem) <=
        std::max(chunk_bytes(), tile_bytes()))
      return {chunks, true};
  }
  return {chunk_count(g, elem, chunk_bytes()), false};
}

// Runs step(chunk) over every chunk of the plan, with buffers for its largest chunk.
template <typename Step>
void for_chunks(const Geometry& g, DType dtype, const Plan& plan, const Step& step) {
  const int64_t largest = (g.n + plan.chunks - 1) / plan.chunks;
  if (!plan.per_thread) {
    Chunk c = chunk_buffers(g, largest, dtype);
    for (int64_t i = 0; i < plan.chunks; ++i) {
      place(c, g.n, plan.chunks, i);
      step(c);
    }
    return;
  }
  parallel_for(plan.chunks, 1, [&](int64_t begin, int64_t end) {
    Chunk c = chunk_buffers(g, largest, dtype);
    for (int64_t i = begin; i < end; ++i) {
      place(c, g.n, plan.chunks, i);
      step(c);
    }
  });
}

// The weight's gradient sums over the batch. Per thread: `tiles` tiles (sizes as the other
// passes' tasks) dealt in order to `slots` partial sums of the weight's shape, each slot on one
// thread; the partials then add up in slot order. slots 0: chunks one after another, each step
// over every thread, accumulating into the result (too few tiles for the threads, or partials
// too large: over kChunkBytes together).
struct WeightPlan {
  int64_t tiles = 0, slots = 0;
};
constexpr int64_t kMaxSlots = 32;

WeightPlan weight_plan_of(const Geometry& g, int64_t elem, int64_t weight_numel) {
  const int64_t threads = in_parallel_region() ? 1 : max_threads();
  if (tile_bytes() <= 0) return {};
  const int64_t tiles = chunk_count(g, elem, tile_bytes());
  const int64_t slots = std::min({tiles, kMaxSlots, chunk_bytes() / (weight_numel * elem)});
  if (slots < threads || slots < 1 || sample_bytes(g, elem) > chunk_bytes()) return {};
  return {tiles, slots};
}

template <typename T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
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
    for_chunks(g, x.dtype(), plan_of(g, sizeof(T)), [&](const Chunk& c) {
      const int64_t ld = c.nb * l;
      im2col_chunk(ptr<T>(x), ptr<T>(c.cols), c.n0, c.nb, g);
      // out_g [O/g, nb L] = w_g [O/g, K] @ cols_g [K, nb L]
      for (int64_t gi = 0; gi < groups; ++gi)
        gemm(matrix(w, gi * og * k, og, k, k), matrix(c.cols, gi * k * ld, k, ld, ld), 1.0, 0.0,
             matrix(c.mat, gi * og * ld, og, ld, ld));
      move_rows(ptr<T>(y), ptr<T>(c.mat), c.n0, c.nb, g, Move::ToNchw);
    });
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
    for_chunks(g, dy.dtype(), plan_of(g, sizeof(T)), [&](const Chunk& c) {
      const int64_t ld = c.nb * l;
      move_rows(ptr<T>(dy), ptr<T>(c.mat), c.n0, c.nb, g, Move::FromNchw);
      // cols_g [K, nb L] = w_g^T [K, O/g] @ dy_g [O/g, nb L]
      for (int64_t gi = 0; gi < groups; ++gi)
        gemm(matrix(w, gi * og * k, og, k, k, true), matrix(c.mat, gi * og * ld, og, ld, ld), 1.0,
             0.0, matrix(c.cols, gi * k * ld, k, ld, ld));
      col2im_chunk(ptr<T>(c.cols), ptr<T>(dx), c.n0, c.nb, g);
    });
  });
  return true;
}

bool CpuBackend::conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dArgs& a,
                                        const Tensor& dw) {
  if (!usable({&x, &dy, &dw})) return false;
  const Geometry g = geometry_of(x, dw, dy, a);
  const int64_t l = g.l(), k = g.k(), og = g.og(), groups = g.groups;
  dispatch_dtype<DTypeSet{kFloat32, kFloat64}>(x.dtype(), [&]<typename T>() {
    // dw_g [O/g, K] (+)= dy_g [O/g, nb L] @ cols_g^T [nb L, K] of one chunk into out (dw's
    // shape), overwriting it (first) or adding to it.
    const auto accumulate = [&](const Chunk& c, const Tensor& out, bool first) {
      const int64_t ld = c.nb * l;
      im2col_chunk(ptr<T>(x), ptr<T>(c.cols), c.n0, c.nb, g);
      move_rows(ptr<T>(dy), ptr<T>(c.mat), c.n0, c.nb, g, Move::FromNchw);
      for (int64_t gi = 0; gi < groups; ++gi)
        gemm(matrix(c.mat, gi * og * ld, og, ld, ld), matrix(c.cols, gi * k * ld, k, ld, ld, true),
             1.0, first ? 0.0 : 1.0, matrix(out, gi * og * k, og, k, k));
    };
    const WeightPlan plan = weight_plan_of(g, sizeof(T), dw.numel());
    if (plan.slots == 0) {
      const int64_t chunks = chunk_count(g, sizeof(T), chunk_bytes());
      Chunk c = chunk_buffers(g, (g.n + chunks - 1) / chunks, x.dtype());
      for (int64_t i = 0; i < chunks; ++i) {
        place(c, g.n, chunks, i);
        accumulate(c, dw, i == 0);
      }
      return;
    }
    // Each slot's tiles summed into its own partial on one thread, then the partials in slot
    // order: the slots and tiles depend on the sizes only, so the bits do not change with the
    // thread count.
    const Tensor partials = make_tensor({plan.slots, dw.numel()}, x.dtype(), x.device());
    const int64_t largest = (g.n + plan.tiles - 1) / plan.tiles;
    parallel_for(plan.slots, 1, [&](int64_t begin, int64_t end) {
      Chunk c = chunk_buffers(g, largest, x.dtype());
      for (int64_t s = begin; s < end; ++s) {
        const Tensor out = make_view(partials, dw.shape(), dw.strides(), s * dw.numel());
        const int64_t first = plan.tiles * s / plan.slots, last = plan.tiles * (s + 1) / plan.slots;
        for (int64_t i = first; i < last; ++i) {
          place(c, g.n, plan.tiles, i);
          accumulate(c, out, i == first);
        }
      }
    });
    const T* p = ptr<T>(partials);
    T* d = ptr<T>(dw);
    const int64_t m = dw.numel();
    parallel_for(m, kGrainSize, [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) d[e] = p[e];
      for (int64_t s = 1; s < plan.slots; ++s)
        for (int64_t e = begin; e < end; ++e) d[e] += p[s * m + e];
    });
  });
  return true;
}

}  // namespace tensorlet::cpu

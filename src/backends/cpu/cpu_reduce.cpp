// CPU reductions (sum, prod, mean, max, min, all, any) and arg reductions (argmax, argmin).
//
// Every reduction is planned as kept dims (outer, one per output) and reduced dims (inner), each
// list coalesced. Two loop shapes cover the layouts that matter:
//  - inner: each output walks its reduced elements; a unit-stride run is a tight multi-lane loop;
//  - outer: when adjacent outputs are closer in memory than adjacent reduced elements (summing a
//    leading dim of [N, M]), a block of outputs accumulates whole rows, so memory is read in order.
// Work is split over outputs when there are many, else over the reduced range with per-chunk
// partials combined in chunk order (so results do not depend on scheduling).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/cpu/simd/cpu_capability.h"
#include "tensorlet/backends/math/reduce_ops.h"

namespace tensorlet::cpu {

namespace {

// Outputs handled per accumulator block. Row accumulation (outer) takes wide blocks so each input
// row is read as one long contiguous run (the hardware prefetcher stops at page boundaries).
constexpr int64_t kInnerBlock = 1024;
constexpr int64_t kOuterBlock = 8192;
// Reductions this short are done by row accumulation too: per-output loops would be all overhead.
constexpr int64_t kShortReduction = 16;
// Above this many bytes of accumulators (about half of L1), rows are folded four at a time so the
// accumulators travel to L2 and back once per four rows.
constexpr size_t kL1Accumulators = 16384;
// Accumulators of the wide periodic fold used for short contiguous rows.
constexpr int64_t kWide = 1024;

// A coalesced list of (size, stride) dims, outermost first, strides in elements.
struct DimList {
  int n = 0;
  int64_t size[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};

  int64_t numel() const {
    int64_t total = 1;
    for (int i = 0; i < n; ++i) total *= size[i];
    return total;
  }
  int64_t inner_stride() const { return n ? stride[n - 1] : 0; }

  void push(int64_t s, int64_t st) {
    size[n] = s;
    stride[n] = st;
    ++n;
  }

  // Merges each dim into the next inner one when the pair steps like a single dim.
  void coalesce() {
    int m = 0;
    for (int i = 0; i < n; ++i) {
      if (m > 0 && stride[m - 1] == stride[i] * size[i]) {
        size[m - 1] *= size[i];
        stride[m - 1] = stride[i];
      } else {
        size[m] = size[i];
        stride[m] = stride[i];
        ++m;
      }
    }
    n = m;
  }

  // Calls f(offset, count, first) for runs along the innermost dim covering the row-major
  // positions [b, e); `first` is the row-major position of the run's first element.
  template <typename F>
  void for_runs(int64_t b, int64_t e, const F& f) const {
    if (b >= e) return;
    if (n == 0) {  // a single element
      f(int64_t{0}, int64_t{1}, int64_t{0});
      return;
    }
    const int64_t inner = size[n - 1], is = stride[n - 1];
    int64_t index[kMaxDims] = {};
    int64_t offset = 0, pos = b;
    if (b != 0) {
      int64_t outer = b / inner;
      pos = b % inner;
      for (int d = n - 2; d >= 0; --d) {
        index[d] = outer % size[d];
        outer /= size[d];
        offset += index[d] * stride[d];
      }
    }
    for (int64_t linear = b; linear < e;) {
      const int64_t count = std::min(inner - pos, e - linear);
      f(offset + pos * is, count, linear);
      linear += count;
      pos = 0;
      for (int d = n - 2; d >= 0; --d) {
        offset += stride[d];
        if (++index[d] < size[d]) break;
        offset -= stride[d] * size[d];
        index[d] = 0;
      }
    }
  }
};

using namespace reduce_ops;

// Ops whose lanes track NaN separately (float max/min).
template <typename Op>
concept HasNanLanes = requires(typename Op::Acc a) {
  Op::combine_ignoring_nan(a, a);
}
&&std::is_floating_point_v<typename Op::Acc>;

// Independent accumulators per reduced run: enough to hide add latency on 128-bit vectors.
constexpr int kLanes = 16;

// float32/float64 sums (and means) go through the SIMD table's leaves, compiled for the CPU's
// target; they add in exactly the order of the generic loops below, so the bits are the same.
template <typename Op>
constexpr bool kSimdSum = std::is_same_v<Op, SumOp<float>> || std::is_same_v<Op, SumOp<double>>;
static_assert(kLanes == 16, "the SIMD sum leaves fold sixteen lanes");

// The table's entry for T (float or double) of a pair of leaves.
template <typename T, typename F32, typename F64>
auto leaf_for(F32 f32, F64 f64) {
  if constexpr (std::is_same_v<T, float>)
    return f32;
  else
    return f64;
}

// acc[r] += the n elements at p + r * stride, for r < rows (each a contiguous run).
template <typename T>
void simd_sum_rows(double* acc, const T* p, int64_t stride, int64_t rows, int64_t n) {
  const simd::SimdKernels& table = simd::kernels();
  leaf_for<T>(table.sum_rows_f32, table.sum_rows_f64)(acc, p, stride, rows, n);
}

// acc[j] += rows[r * stride + j] for r < nrows, j < n.
template <typename T>
void simd_add_rows(double* acc, const T* rows, int64_t stride, int64_t nrows, int64_t n) {
  const simd::SimdKernels& table = simd::kernels();
  leaf_for<T>(table.add_rows_f32, table.add_rows_f64)(acc, rows, stride, nrows, n);
}

// Reduces n elements p[0], p[stride], ... into `a`; independent lanes hide add latency and let
// the compiler vectorize (the lane order is fixed, so results are reproducible).
template <typename Op, typename T>
typename Op::Acc reduce_values(typename Op::Acc a, const T* p, int64_t n, int64_t stride) {
  using Acc = typename Op::Acc;
  if constexpr (kSimdSum<Op>) {
    if (stride == 1 && n >= 2 * kLanes) {
      simd_sum_rows(&a, p, 0, 1, n);
      return a;
    }
  }
  int64_t i = 0;
  if (n >= 2 * kLanes) {
    Acc lane[kLanes];
    for (int l = 0; l < kLanes; ++l) lane[l] = Op::identity();
    [[maybe_unused]] Acc nan[kLanes] = {};
    // A compile-time unit stride lets the compiler use plain vector loads.
    auto lanes = [&](auto st) {
      for (; i + kLanes <= n; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          if constexpr (HasNanLanes<Op>) {
            const Acc v = static_cast<Acc>(p[(i + l) * st]);
            lane[l] = Op::combine_ignoring_nan(lane[l], v);
            nan[l] = v != v ? Acc(1) : nan[l];
          } else {
            lane[l] = Op::step(lane[l], p[(i + l) * st]);
          }
        }
      }
    };
    if (stride == 1)
      lanes(std::integral_constant<int64_t, 1>{});
    else
      lanes(stride);
    if constexpr (HasNanLanes<Op>) {
      for (int l = 0; l < kLanes; ++l)
        if (nan[l] != Acc(0)) return std::numeric_limits<Acc>::quiet_NaN();
    }
    for (int w = kLanes / 2; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) lane[l] = Op::combine(lane[l], lane[l + w]);
    a = Op::combine(a, lane[0]);
  }
  for (; i < n; ++i) a = Op::step(a, p[i * stride]);
  return a;
}

// Arg reductions of a run go block by block: the block's best value comes from the vectorized
// max/min, and only a block that improves on the running best is scanned for its first position.
// S is the stored element type (Op::In).
template <typename Op, typename S>
typename Op::Acc reduce_run(typename Op::Acc a, const S* p, int64_t n, int64_t stride,
                            int64_t first) {
  if constexpr (Op::kIndexed) {
    using V = typename Op::Value;
    using Values = typename Op::Values;
    constexpr int64_t kArgBlock = 2048;
    for (int64_t b = 0; b < n; b += kArgBlock) {
      const S* q = p + b * stride;
      const int64_t m = std::min(kArgBlock, n - b);
      const V best = reduce_values<Values>(Values::identity(), q, m, stride);
      if (a.index >= 0 && !Op::better(best, a.value)) continue;
      for (int64_t i = 0; i < m; ++i) {
        const V v = static_cast<V>(q[i * stride]);
        if (is_nan(best) ? is_nan(v) : v == best) {
          a = {best, first + b + i};
          break;
        }
      }
    }
    return a;
  } else {
    (void)first;
    return reduce_values<Op>(a, p, n, stride);
  }
}

template <typename Op>
class Reducer {
 public:
  using T = typename Op::In;
  using Acc = typename Op::Acc;
  using Out = typename Op::Out;

  // kept: one output per element, row-major = out's order; reduced: row-major positions are the
  // indices reported by arg reductions.
  Reducer(const T* in, const DimList& kept, const DimList& reduced, bool mean)
      : in_(in), kept_(kept), reduced_(reduced), mean_(mean) {
    n_out_ = kept.numel();
    n_red_ = reduced.numel();
    outer_ = kept.n > 0 && reduced.n > 0 &&
             (std::abs(kept.inner_stride()) < std::abs(reduced.inner_stride()) ||
              n_red_ <= kShortReduction);
    block_ = outer_ ? kOuterBlock : kInnerBlock;
  }

  void run(Out* out) const {
    const int64_t total = n_out_ * n_red_;
    const int threads = in_parallel_region() ? 1 : max_threads();
    const bool few_outputs = n_out_ < 8 * threads || (outer_ && n_out_ <= kOuterBlock);
    if (threads > 1 && total >= kGrainSize && few_outputs && n_red_ >= 2 * threads)
      run_split(out, std::min<int64_t>(threads, (total + kGrainSize - 1) / kGrainSize));
    else
      run_by_output(out);
  }

 private:
  // Folds reduced positions [rb, re) into acc[0 .. oe - ob) for outputs [ob, oe).
  // Not inlined: it is the bulk of the code and both schedules call it.
  [[gnu::noinline]] void accumulate(int64_t ob, int64_t oe, int64_t rb, int64_t re,
                                    Acc* acc) const {
    const int64_t rs = reduced_.inner_stride();
    if (!outer_) {
      Acc* a = acc;
      kept_.for_runs(ob, oe, [&](int64_t koff, int64_t kcount, int64_t) {
        const int64_t ks = kept_.inner_stride();
        if constexpr (kSimdSum<Op>) {
          // Each output's elements are one contiguous run: the leaf sums several at once.
          if (reduced_.n == 1 && rs == 1 && re - rb >= 2 * kLanes) {
            simd_sum_rows(a, in_ + koff + rb, ks, kcount, re - rb);
            a += kcount;
            return;
          }
        }
        for (int64_t k = 0; k < kcount; ++k, ++a) {
          const T* base = in_ + koff + k * ks;
          reduced_.for_runs(rb, re, [&](int64_t roff, int64_t rcount, int64_t first) {
            *a = reduce_run<Op>(*a, base + roff, rcount, rs, first);
          });
        }
      });
      return;
    }
    kept_.for_runs(ob, oe, [&](int64_t koff, int64_t kcount, int64_t kfirst) {
      Acc* a = acc + (kfirst - ob);
      const int64_t ks = kept_.inner_stride();
      reduced_.for_runs(rb, re, [&](int64_t roff, int64_t rcount, int64_t first) {
        const T* base = in_ + koff + roff;
        int64_t r = 0;
        if constexpr (kSimdSum<Op>) {
          if (ks == 1 && kcount >= kLanes) {
            simd_add_rows(a, base, rs, rcount, kcount);
            return;
          }
        }
        if constexpr (!Op::kIndexed) {
          if (ks == 1 && rs == kcount && kLanes % kcount == 0)
            r = accumulate_lanes(a, base, kcount, rcount);
          else if (ks == 1 && rs == kcount && kcount < kLanes)
            r = accumulate_wide(a, base, kcount, rcount);
          else if (ks == 1 && (rcount <= kShortReduction || kcount * sizeof(Acc) > kL1Accumulators))
            for (; r + 4 <= rcount; r += 4) accumulate_rows4(a, base + r * rs, rs, kcount);
        }
        for (; r < rcount; ++r) accumulate_row(a, base + r * rs, kcount, ks, first + r);
      });
    });
  }

  // Short contiguous rows ([N, 4] reduced over N) laid end to end form one long run. When the row
  // width divides the lane count, lane l always holds column l % width, so the run is reduced with
  // register lanes like a full reduction. Returns how many rows were consumed.
  static int64_t accumulate_lanes(Acc* a, const T* rows, int64_t width, int64_t count) {
    const int64_t n = count * width / kLanes * kLanes;
    if (n < 4 * kLanes) return 0;
    Acc lane[kLanes];
    for (int l = 0; l < kLanes; ++l) lane[l] = Op::identity();
    for (int64_t i = 0; i < n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] = Op::step(lane[l], rows[i + l]);
    for (int l = 0; l < kLanes; ++l) a[l % width] = Op::combine(a[l % width], lane[l]);
    return n / width;
  }

  // Other narrow widths: the same idea with a periodic accumulator in L1.
  static int64_t accumulate_wide(Acc* a, const T* rows, int64_t width, int64_t count) {
    const int64_t per_group = kWide / width, length = per_group * width;
    const int64_t groups = count / per_group;
    if (groups < 2) return 0;
    Acc wide[kWide];
    for (int64_t i = 0; i < length; ++i) wide[i] = Op::identity();
    for (int64_t g = 0; g < groups; ++g) {
      const T* p = rows + g * length;
      for (int64_t i = 0; i < length; ++i) wide[i] = Op::step(wide[i], p[i]);
    }
    for (int64_t w = 0; w < per_group; ++w)
      for (int64_t j = 0; j < width; ++j) a[j] = Op::combine(a[j], wide[w * width + j]);
    return groups * per_group;
  }

  // Four rows in one pass: each accumulator is read and written once instead of four times (for
  // short reductions, and for accumulators that do not fit in L1).
  static void accumulate_rows4(Acc* a, const T* row, int64_t row_stride, int64_t n) {
    const T *r0 = row, *r1 = row + row_stride, *r2 = row + 2 * row_stride,
            *r3 = row + 3 * row_stride;
    for (int64_t j = 0; j < n; ++j)
      a[j] = Op::step(Op::step(Op::step(Op::step(a[j], r0[j]), r1[j]), r2[j]), r3[j]);
  }

  static void accumulate_row(Acc* a, const T* row, int64_t n, int64_t stride, int64_t position) {
    if constexpr (Op::kIndexed) {
      for (int64_t j = 0; j < n; ++j) a[j] = Op::step(a[j], row[j * stride], position);
    } else if (stride == 1) {
      for (int64_t j = 0; j < n; ++j) a[j] = Op::step(a[j], row[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) a[j] = Op::step(a[j], row[j * stride]);
    }
  }

  Out finalize(Acc a) const { return Op::finalize(a, mean_ ? static_cast<double>(n_red_) : 0.0); }

  void run_by_output(Out* out) const {
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n_red_, 1));
    parallel_for(n_out_, grain, [&](int64_t begin, int64_t end) {
      std::unique_ptr<Acc[]> buffer(new Acc[std::min(block_, end - begin)]);
      Acc* acc = buffer.get();
      for (int64_t ob = begin; ob < end; ob += block_) {
        const int64_t oe = std::min(end, ob + block_);
        for (int64_t i = 0; i < oe - ob; ++i) acc[i] = Op::identity();
        accumulate(ob, oe, 0, n_red_, acc);
        for (int64_t i = 0; i < oe - ob; ++i) out[ob + i] = finalize(acc[i]);
      }
    });
  }

  // Few outputs: each chunk reduces a slice of the reduced range for all outputs.
  void run_split(Out* out, int64_t chunks) const {
    // Not std::vector: Acc may be bool, and the chunks need real Acc* pointers.
    std::unique_ptr<Acc[]> partial(new Acc[chunks * n_out_]);
    std::fill(partial.get(), partial.get() + chunks * n_out_, Op::identity());
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static, 1)
    for (int64_t c = 0; c < chunks; ++c)
      accumulate(0, n_out_, n_red_ * c / chunks, n_red_ * (c + 1) / chunks, &partial[c * n_out_]);
    for (int64_t o = 0; o < n_out_; ++o) {
      Acc a = partial[o];
      for (int64_t c = 1; c < chunks; ++c) a = Op::combine(a, partial[c * n_out_ + o]);
      out[o] = finalize(a);
    }
  }

  const T* in_;
  DimList kept_, reduced_;
  int64_t n_out_ = 0, n_red_ = 0, block_ = kInnerBlock;
  bool outer_ = false, mean_ = false;
};

// Splits in's dims into kept and reduced lists (dropping extent-1 dims). Reduced dims are sorted
// by stride when their visiting order does not matter, so a permuted input still reads in order.
void plan(const Tensor& in, const std::vector<bool>& reduce_dims, bool order_matters, DimList& kept,
          DimList& reduced) {
  std::vector<int64_t> red;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (in.shape()[d] == 1) continue;
    if (reduce_dims[d])
      red.push_back(d);
    else
      kept.push(in.shape()[d], in.strides()[d]);
  }
  if (!order_matters)
    std::stable_sort(red.begin(), red.end(), [&](int64_t x, int64_t y) {
      return std::abs(in.strides()[x]) > std::abs(in.strides()[y]);
    });
  for (int64_t d : red) reduced.push(in.shape()[d], in.strides()[d]);
  kept.coalesce();
  reduced.coalesce();
}

template <typename Op>
void run_op(const Tensor& in, const DimList& kept, const DimList& reduced, const Tensor& out,
            const char* name, bool mean = false) {
  using Out = typename Op::Out;
  if (!writes_dtype<Op>(out.dtype()))
    fail<DTypeError>(name, "CPU kernel expected output dtype ", dtype_of_v<Out>, ", got ",
                     out.dtype());
  Reducer<Op>(static_cast<const typename Op::In*>(in.data_ptr()), kept, reduced, mean)
      .run(static_cast<Out*>(out.data_ptr()));
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& in, const std::vector<bool>& reduce_dims,
                        const Tensor& out) {
  if (in.numel() == 0 || out.numel() == 0) return;  // the front-end fills empty reductions
  DimList kept, reduced;
  plan(in, reduce_dims, false, kept, reduced);
  const char* name = reduce_op_name(op);
  dispatch_reduce(op, in.dtype(), [&]<typename F>() {
    run_op<F>(in, kept, reduced, out, name, op == ReduceOp::Mean);
  });
}

void CpuBackend::arg_reduce(ArgReduceOp op, const Tensor& in, std::optional<int64_t> dim,
                            const Tensor& out) {
  if (in.numel() == 0 || out.numel() == 0) return;  // validated by the front-end
  // Without a dim every element is reduced in row-major order, so positions are flat indices.
  std::vector<bool> reduce_dims(in.dim(), !dim.has_value() || in.dim() == 0);
  if (dim && in.dim() > 0) reduce_dims[*dim] = true;
  DimList kept, reduced;
  plan(in, reduce_dims, true, kept, reduced);
  const char* name = reduce_op_name(op);
  dispatch_arg_reduce(op, in.dtype(),
                      [&]<typename F>() { run_op<F>(in, kept, reduced, out, name); });
}

}  // namespace tensorlet::cpu

// CPU reductions (sum, prod, mean, max, min, all, any) and arg reductions (argmax, argmin).
//
// Every reduction is planned as kept dims (outer, one per output) and reduced dims (inner), each
// list coalesced. Two loop shapes cover the layouts that matter:
//  - inner: each output walks its reduced elements; a unit-stride run is reduced in vector lanes
//    (reduce_lanes.h for float sums and float max/min, several accumulators otherwise);
//  - outer: when adjacent outputs are closer in memory than adjacent reduced elements (summing a
//    leading dim of [N, M]), a tile of outputs accumulates whole rows, so memory is read in order.
// The work is a grid of tasks fixed by the shape alone: tiles of outputs times slices of the
// reduced range, about kTaskWork elements each, so a long reduction with few outputs is split
// over its reduced range and many outputs are split over outputs. Threads take whole tasks, and a
// slice's partial results are folded with the others in a fixed pairwise order: results depend
// on the data and the shape, never on the thread count or on scheduling.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/parallel.h"
#include "tensorlet/backends/cpu/reduce_lanes.h"
#include "tensorlet/backends/math/reduce_ops.h"

namespace tensorlet::cpu {

namespace {

// Elements per task of a large reduction (half a MB of float32): enough to amortize a task's
// set-up, small enough that a slice's partials cost little next to its input.
constexpr int64_t kTaskWork = 131072;
// At most this many slices of one tile (the pairwise fold of a tile's partials is on the stack).
constexpr int64_t kMaxSlices = 256;
// Outputs per tile of the outer shape: their accumulators stay in L1 while rows stream past.
constexpr int64_t kOuterTile = 1024;
// Rows the outer shape folds per pass over a tile's accumulators.
constexpr int64_t kRowBlock = 8;
// Reductions this short are done by row accumulation too: per-output loops would be all overhead.
constexpr int64_t kShortReduction = 16;
// Accumulators of the wide periodic fold used for short contiguous rows.
constexpr int64_t kWide = 1024;
// Rows per block of an outer arg reduction: the block's best values come first, positions after.
constexpr int64_t kArgRows = 16;

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
    // Only the first n - 1 entries are read; clearing all kMaxDims would cost a `rep stos` per
    // output of a row reduction.
    int64_t index[kMaxDims];
    for (int d = 0; d < n - 1; ++d) index[d] = 0;
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

// float32 sums (and means): reduce_lanes.h's float32 partials feeding float64 accumulators.
template <typename Op>
inline constexpr bool kIsFloatSum = std::is_same_v<Op, SumOp<float>>;
// float32/float64 max and min: reduce_lanes.h's NaN-propagating vector lanes.
template <typename Op>
inline constexpr bool kIsFloatExtremum =
    std::is_same_v<Op, ExtremumOp<float, true>> || std::is_same_v<Op, ExtremumOp<float, false>> ||
    std::is_same_v<Op, ExtremumOp<double, true>> || std::is_same_v<Op, ExtremumOp<double, false>>;

// argmax/argmin of float32/float64: reduce_lanes.h's lanes of values and row numbers.
template <typename Op>
constexpr bool is_float_arg() {
  if constexpr (Op::kIndexed)
    return kIsFloatExtremum<typename Op::Values>;
  else
    return false;
}

// Independent accumulators per reduced run: enough to hide add latency on 128-bit vectors.
constexpr int kLanes = 16;

// Reduces n elements p[0], p[stride], ... into `a`; independent lanes hide add latency and let
// the compiler vectorize (the lane order is fixed, so results are reproducible).
template <typename Op, typename T>
typename Op::Acc reduce_values(typename Op::Acc a, const T* p, int64_t n, int64_t stride) {
  using Acc = typename Op::Acc;
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

// A run of a value reduction: unit-stride float sums and float max/min take the vector lanes for
// their whole blocks, and everything else (and the tail) the generic lanes.
template <typename Op>
typename Op::Acc fold_run(typename Op::Acc a, const typename Op::In* p, int64_t n, int64_t stride) {
  if (stride == 1) {
    if constexpr (kIsFloatSum<Op>) {
      const int64_t m = n / kFloatSumBlock * kFloatSumBlock;
      a = sum_float_blocks(p, m, a);
      p += m;
      n -= m;
    } else if constexpr (kIsFloatExtremum<Op>) {
      using T = typename Op::In;
      const int64_t m = n / kExtremumBlock<T> * kExtremumBlock<T>;
      if (m > 0) a = extremum_lanes<Op::kMax>(p, m, a);
      p += m;
      n -= m;
    }
  }
  return reduce_values<Op>(a, p, n, stride);
}

// Arg reductions of a run go block by block: the block's best value comes from the vectorized
// max/min, and only a block that improves on the running best is scanned for its first position.
// S is the stored element type (Op::In).
template <typename Op, typename S>
typename Op::Acc reduce_run(typename Op::Acc a, const S* p, int64_t n, int64_t stride,
                            int64_t first) {
  if constexpr (is_float_arg<Op>()) {
    if (stride == 1) {
      // float32/float64: the run as rows of kArgLanes lanes, each lane keeping its best value
      // and row in vector selects; lanes then combine (ties to the smaller position).
      using V = typename Op::Value;
      constexpr int64_t kArgLanes = 16, kRows = kExactRows<V>;
      V best[kArgLanes];
      LaneIndex<V> at[kArgLanes];
      const int64_t rows = n / kArgLanes;
      for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
        for (int64_t l = 0; l < kArgLanes; ++l) {
          best[l] = Op::Values::identity();
          at[l] = 0;
        }
        static_assert(kArgLanes % kArgChunk<V> == 0);
        arg_extremum_rows<Op::kMax, true>(best, at, p + r0 * kArgLanes, kArgLanes,
                                          std::min(kRows, rows - r0), kArgLanes);
        for (int64_t l = 0; l < kArgLanes; ++l)
          a = Op::combine(a, {best[l], first + (r0 + static_cast<int64_t>(at[l])) * kArgLanes + l});
      }
      for (int64_t i = rows * kArgLanes; i < n; ++i) a = Op::step(a, p[i], first + i);
      return a;
    }
  }
  if constexpr (Op::kIndexed) {
    using V = typename Op::Value;
    using Values = typename Op::Values;
    constexpr int64_t kArgBlock = 2048;
    for (int64_t b = 0; b < n; b += kArgBlock) {
      const S* q = p + b * stride;
      const int64_t m = std::min(kArgBlock, n - b);
      const V best = fold_run<Values>(Values::identity(), q, m, stride);
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
    return fold_run<Op>(a, p, n, stride);
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
    plan_tasks();
  }

  void run(Out* out) const {
    if (slices_ == 1) {
      // Whole reductions per output: outputs (inner) or tiles (outer) split across threads.
      if (!outer_) {
        const int64_t grain = std::max<int64_t>(1, kGrainSize / n_red_);
        parallel_for(n_out_, grain, [&](int64_t b, int64_t e) { inner_outputs(b, e, out); });
      } else {
        const int64_t grain = std::max<int64_t>(1, kGrainSize / (tile_ * n_red_));
        parallel_for(tiles_, grain, [&](int64_t b, int64_t e) {
          std::unique_ptr<Acc[]> acc(new Acc[tile_]);
          for (int64_t t = b; t < e; ++t) outer_task(t, 0, acc.get(), out, nullptr);
        });
      }
      return;
    }
    // Each task leaves one partial per output of its tile, for its slice; the fold combines them.
    std::unique_ptr<Acc[]> partial(new Acc[n_out_ * slices_]);
    const int64_t work = (outer_ ? tile_ : 1) * slice_;
    parallel_for(tiles_ * slices_, std::max<int64_t>(1, kGrainSize / work),
                 [&](int64_t b, int64_t e) {
                   std::unique_ptr<Acc[]> acc(outer_ ? new Acc[tile_] : nullptr);
                   for (int64_t task = b; task < e; ++task) {
                     const int64_t tile = task / slices_, slice = task % slices_;
                     if (outer_)
                       outer_task(tile, slice, acc.get(), nullptr, partial.get());
                     else
                       partial[tile * slices_ + slice] = inner_slice(tile, slice);
                   }
                 });
    // Inner partials lie output-major, outer ones slice-major (a tile writes a contiguous run).
    const int64_t step = outer_ ? n_out_ : 1, stride = outer_ ? 1 : slices_;
    parallel_for(n_out_, std::max<int64_t>(1, kGrainSize / slices_), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = finalize(fold(&partial[o * stride], step));
    });
  }

 private:
  // Tiles of outputs and slices of the reduced range, from the shape alone (never the thread
  // count: a different split would fold partials in a different order).
  void plan_tasks() {
    const int64_t total = n_out_ * n_red_;
    const int64_t target = std::clamp<int64_t>(total / kTaskWork, 1, kMaxSlices);
    int64_t slices;
    if (outer_) {
      // Tiles hold whole kept runs when those are short (the narrow-row folds below need them).
      const int64_t run = kept_.size[kept_.n - 1];
      tile_ = n_out_ <= kOuterTile ? n_out_
              : run < kOuterTile   ? kOuterTile / run * run
                                   : kOuterTile;
      tiles_ = (n_out_ + tile_ - 1) / tile_;
      slices = (target + tiles_ - 1) / tiles_;
      slice_ = round_up((n_red_ + slices - 1) / slices, kRowBlock);
    } else {
      tile_ = 1;
      tiles_ = n_out_;
      slices = (target + n_out_ - 1) / n_out_;
      slice_ = round_up((n_red_ + slices - 1) / slices, kFloatSumBlock);
    }
    slice_ = std::min(slice_, n_red_);
    slices_ = (n_red_ + slice_ - 1) / slice_;
  }

  static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

  // The reduced positions [rb, re) of the output whose elements start at `base`.
  Acc reduce_range(const T* base, int64_t rb, int64_t re) const {
    Acc a = Op::identity();
    const int64_t rs = reduced_.inner_stride();
    reduced_.for_runs(rb, re, [&](int64_t roff, int64_t rcount, int64_t first) {
      a = reduce_run<Op>(a, base + roff, rcount, rs, first);
    });
    return a;
  }

  // Inner shape, one slice: outputs [ob, oe) reduced whole, straight into out.
  void inner_outputs(int64_t ob, int64_t oe, Out* out) const {
    const int64_t ks = kept_.inner_stride();
    kept_.for_runs(ob, oe, [&](int64_t koff, int64_t kcount, int64_t kfirst) {
      for (int64_t k = 0; k < kcount; ++k)
        out[kfirst + k] = finalize(reduce_range(in_ + koff + k * ks, 0, n_red_));
    });
  }

  // Inner shape: output o's partial over slice s.
  Acc inner_slice(int64_t o, int64_t s) const {
    Acc a = Op::identity();
    kept_.for_runs(o, o + 1, [&](int64_t koff, int64_t, int64_t) {
      a = reduce_range(in_ + koff, s * slice_, std::min(n_red_, (s + 1) * slice_));
    });
    return a;
  }

  // Outer shape: tile t over slice s, into out (finalized) or into its partials.
  void outer_task(int64_t t, int64_t s, Acc* acc, Out* out, Acc* partial) const {
    const int64_t ob = t * tile_, oe = std::min(n_out_, ob + tile_);
    for (int64_t i = 0; i < oe - ob; ++i) acc[i] = Op::identity();
    accumulate(ob, oe, s * slice_, std::min(n_red_, (s + 1) * slice_), acc);
    if (out)
      for (int64_t i = 0; i < oe - ob; ++i) out[ob + i] = finalize(acc[i]);
    else
      std::copy(acc, acc + (oe - ob), partial + s * n_out_ + ob);
  }

  // The slices' partials p[0], p[step], ... combined pairwise (a fixed tree).
  Acc fold(const Acc* p, int64_t step) const {
    Acc buf[kMaxSlices];
    int64_t m = slices_;
    for (int64_t i = 0; i < m; ++i) buf[i] = p[i * step];
    while (m > 1) {
      const int64_t half = m / 2;
      for (int64_t i = 0; i < half; ++i) buf[i] = Op::combine(buf[2 * i], buf[2 * i + 1]);
      if (m % 2) buf[half] = buf[m - 1];
      m = half + m % 2;
    }
    return buf[0];
  }

  // Outer shape: folds reduced positions [rb, re) into acc[0 .. oe - ob) for outputs [ob, oe).
  // Not inlined: it is the bulk of the code and both schedules call it.
  [[gnu::noinline]] void accumulate(int64_t ob, int64_t oe, int64_t rb, int64_t re,
                                    Acc* acc) const {
    const int64_t rs = reduced_.inner_stride();
    kept_.for_runs(ob, oe, [&](int64_t koff, int64_t kcount, int64_t kfirst) {
      Acc* a = acc + (kfirst - ob);
      const int64_t ks = kept_.inner_stride();
      reduced_.for_runs(rb, re, [&](int64_t roff, int64_t rcount, int64_t first) {
        const T* base = in_ + koff + roff;
        if constexpr (Op::kIndexed) {
          accumulate_arg_rows(a, base, kcount, ks, rcount, rs, first);
        } else {
          int64_t r = 0;
          if (ks == 1 && rs == kcount && kLanes % kcount == 0)
            r = accumulate_lanes(a, base, kcount, rcount);
          else if (ks == 1 && rs == kcount && kcount < kLanes)
            r = accumulate_wide(a, base, kcount, rcount);
          if (ks == 1)
            for (; r + kRowBlock <= rcount; r += kRowBlock)
              accumulate_rows8(a, base + r * rs, rs, kcount);
          for (; r < rcount; ++r) accumulate_row(a, base + r * rs, kcount, ks);
        }
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

  // Eight rows in one pass: each accumulator is read and written once instead of eight times. A
  // float32 sum adds the eight values pairwise in float32 first (as the inner shape's float32
  // partials), other ops fold them in row order.
  static void accumulate_rows8(Acc* a, const T* row, int64_t rs, int64_t n) {
    const T *r0 = row, *r1 = row + rs, *r2 = row + 2 * rs, *r3 = row + 3 * rs, *r4 = row + 4 * rs,
            *r5 = row + 5 * rs, *r6 = row + 6 * rs, *r7 = row + 7 * rs;
    if constexpr (kIsFloatSum<Op>) {
      for (int64_t j = 0; j < n; ++j)
        a[j] += static_cast<double>(((r0[j] + r1[j]) + (r2[j] + r3[j])) +
                                    ((r4[j] + r5[j]) + (r6[j] + r7[j])));
    } else if constexpr (kIsFloatExtremum<Op>) {  // the select-based fold needs vector types
      extremum_rows<Op::kMax>(a, row, rs, kRowBlock, n);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        Acc x = Op::step(Op::step(Op::step(Op::step(a[j], r0[j]), r1[j]), r2[j]), r3[j]);
        a[j] = Op::step(Op::step(Op::step(Op::step(x, r4[j]), r5[j]), r6[j]), r7[j]);
      }
    }
  }

  static void accumulate_row(Acc* a, const T* row, int64_t n, int64_t stride) {
    if constexpr (kIsFloatExtremum<Op>) {
      if (stride == 1) return extremum_rows<Op::kMax>(a, row, 0, 1, n);
    }
    if (stride == 1) {
      for (int64_t j = 0; j < n; ++j) a[j] = Op::step(a[j], row[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) a[j] = Op::step(a[j], row[j * stride]);
    }
  }

  // Outer arg reductions, kArgRows rows at a time: each column's best value in the block comes
  // from the value reduction (a loop the compiler vectorizes), and only the columns where it beats
  // the running best are scanned for the first row holding it.
  static void accumulate_arg_rows(Acc* a, const T* base, int64_t n, int64_t ks, int64_t rows,
                                  int64_t rs, int64_t first) {
    if constexpr (is_float_arg<Op>()) {
      if (ks == 1) {
        // float32/float64: values and row numbers updated in vector lanes, row by row.
        using V = typename Op::Value;
        V best[kOuterTile];
        LaneIndex<V> at[kOuterTile];
        constexpr int64_t kRows = kExactRows<V>;
        for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
          for (int64_t j = 0; j < n; ++j) {
            best[j] = Op::Values::identity();
            at[j] = 0;
          }
          arg_extremum_rows<Op::kMax>(best, at, base + r0 * rs, rs, std::min(kRows, rows - r0), n);
          for (int64_t j = 0; j < n; ++j)
            a[j] = Op::combine(a[j], {best[j], first + r0 + static_cast<int64_t>(at[j])});
        }
        return;
      }
    }
    if constexpr (Op::kIndexed) {
      using V = typename Op::Value;
      using Values = typename Op::Values;
      V best[kOuterTile];
      for (int64_t r0 = 0; r0 < rows; r0 += kArgRows) {
        const int64_t m = std::min(kArgRows, rows - r0);
        for (int64_t j = 0; j < n; ++j) best[j] = Values::identity();
        for (int64_t r = r0; r < r0 + m; ++r) {
          const T* row = base + r * rs;
          if (ks == 1)
            for (int64_t j = 0; j < n; ++j) best[j] = Values::step(best[j], row[j]);
          else
            for (int64_t j = 0; j < n; ++j) best[j] = Values::step(best[j], row[j * ks]);
        }
        for (int64_t j = 0; j < n; ++j) {
          if (a[j].index >= 0 && !Op::better(best[j], a[j].value)) continue;
          for (int64_t r = r0; r < r0 + m; ++r) {
            const V v = static_cast<V>(base[r * rs + j * ks]);
            if (is_nan(best[j]) ? is_nan(v) : v == best[j]) {
              a[j] = {best[j], first + r};
              break;
            }
          }
        }
      }
    } else {
      (void)a, (void)base, (void)n, (void)ks, (void)rows, (void)rs, (void)first;
    }
  }

  Out finalize(Acc a) const { return Op::finalize(a, mean_ ? static_cast<double>(n_red_) : 0.0); }

  const T* in_;
  DimList kept_, reduced_;
  int64_t n_out_ = 0, n_red_ = 0;
  int64_t tile_ = 1, tiles_ = 1, slice_ = 1, slices_ = 1;
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

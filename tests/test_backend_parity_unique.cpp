// Backend parity of unique, unique_consecutive, bincount, searchsorted and histc: every dtype
// they take, every layout (contiguous, transposed, sliced, offset, expanded), odd and zero sizes,
// NaN and the other specials, lengths on each side of the device paths (one element per row vs
// rows of several; bins privatized in shared memory vs global). Results must match the CPU
// exactly, except float32 weight sums in bincount (atomics add in another order).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

// Few distinct values (unique has groups to find), NaN, infinity and both zeros among floats.
Tensor tied(const Shape& s, DType d) {
  if (d == tl::kBool) return tl::randint(0, 2, s) != 0;
  if (!tl::is_floating_point(d)) return tl::randint(-4, 5, s).to(d);
  Tensor x = tl::randint(-3, 4, s).to(tl::kFloat64) * 0.5;
  Tensor u = tl::rand(s);
  x = tl::where(u < 0.06, tl::full({}, std::nan(""), tl::kFloat64), x);
  x = tl::where((u >= 0.06) & (u < 0.1), tl::full({}, INFINITY, tl::kFloat64), x);
  x = tl::where((u >= 0.1) & (u < 0.2), tl::full({}, -0.0, tl::kFloat64), x);
  return x.to(d);
}

// values in every layout, plus a stride-0 one (the first row of values expanded).
std::vector<Layout> all_layouts(const Tensor& values) {
  std::vector<Layout> out = layouts_of(values);
  if (values.dim() >= 1 && values.shape()[0] > 1)
    out.push_back({"expanded", values.narrow(0, 0, 1).contiguous().expand(values.shape())});
  return out;
}

// unique (or unique_consecutive) flattened and along every dim: values, inverse and counts.
void check_unique_all(tl::Device dev, const std::string& what, const Tensor& x) {
  std::vector<std::optional<int64_t>> dims{std::nullopt};
  for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  for (bool consecutive : {false, true}) {
    for (const auto& dim : dims) {
      const std::string how = what + (consecutive ? " consecutive" : "") +
                              (dim ? " dim " + std::to_string(*dim) : std::string(" flat"));
      auto run = [=](const Tensor& t) {
        return consecutive ? tl::unique_consecutive(t, true, true, dim)
                           : tl::unique(t, true, true, true, dim);
      };
      check_op(dev, "tl::unique values" + how, {x},
               [&](std::vector<Tensor>& in) { return run(in[0]).values; });
      check_op(dev, "tl::unique inverse" + how, {x},
               [&](std::vector<Tensor>& in) { return run(in[0]).inverse; });
      check_op(dev, "tl::unique counts" + how, {x},
               [&](std::vector<Tensor>& in) { return run(in[0]).counts; });
    }
  }
}

}  // namespace

TL_PARITY_CASE("backend parity: unique and unique_consecutive over dtypes, layouts, dims") {
  const std::vector<Shape> shapes{{}, {1}, {17}, {6, 5}, {3, 4, 5}, {0, 3}, {2, 0}};
  for (DType d : all_dtypes()) {
    for (const Shape& s : shapes) {
      for (const Layout& l : all_layouts(tied(s, d)))
        check_unique_all(dev, describe("", d, s, l.name), l.tensor);
    }
    const Tensor specials = tl::is_floating_point(d) ? float_specials(d)
                            : d == tl::kBool         ? tl::randint(0, 2, {9}) != 0
                                                     : int_specials(d);
    check_unique_all(dev, describe(" specials", d, specials.shape(), "contiguous"), specials);
    check_unique_all(dev, describe(" specials", d, {2, specials.numel() / 2}, "rows"),
                     specials.narrow(0, 0, specials.numel() / 2 * 2).view({2, -1}));
  }
  // Longer inputs: the device's radix sort of single elements, and its merge sort of rows.
  for (DType d : {tl::kFloat32, tl::kInt64, tl::kFloat16}) {
    check_unique_all(dev, describe(" long", d, {4099}, "contiguous"), tied({4099}, d));
    check_unique_all(dev, describe(" long rows", d, {2050, 3}, "contiguous"),
                     tl::randint(0, 3, {2050, 3}).to(d));
  }
}

TL_PARITY_CASE("backend parity: bincount with and without weights, minlength, layouts") {
  for (DType d : dtypes_of(tl::kIntegralDTypes)) {
    for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{3001}}) {
      // Values up to 99 (small bins, privatized on a device) or 9999 (past the shared memory).
      for (int64_t top : {int64_t{100}, int64_t{10000}}) {
        if (top > 127 && d != tl::kInt16 && d != tl::kInt32 && d != tl::kInt64) continue;
        const Tensor x = tl::randint(0, top, {n}).to(d);
        for (const Layout& l : all_layouts(x)) {
          const std::string what = describe(" top " + std::to_string(top), d, {n}, l.name);
          for (int64_t minlength : {int64_t{0}, top + 3}) {
            check_op(dev, "tl::bincount" + what, {l.tensor},
                     [&](std::vector<Tensor>& in) { return tl::bincount(in[0], {}, minlength); });
          }
          for (DType wd : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kFloat16}) {
            const Tensor w = (tl::randint(-50, 51, {n}).to(tl::kFloat64) * 0.125).to(wd);
            // float32 sums in another order: not exact (float64 sums of eighths are).
            const Tol tol = wd == tl::kFloat32 ? sum_tol(tl::kFloat32, n) : kExact;
            check_op(
                dev, "tl::bincount weights " + std::string(tl::dtype_name(wd)) + what,
                {l.tensor, w}, [&](std::vector<Tensor>& in) { return tl::bincount(in[0], in[1]); },
                tol);
          }
        }
      }
    }
    // Empty, negative values, 2-D: errors (or the empty result) the same everywhere.
    check_op(dev, describe("tl::bincount empty", d, {0}, ""), {tl::zeros({0}, d)},
             [](std::vector<Tensor>& in) { return tl::bincount(in[0], {}, 4); });
    if (d != tl::kUInt8)
      check_op(dev, describe("tl::bincount negative", d, {3}, ""),
               {tl::from_vector<int64_t>({1, -2, 3}).to(d)},
               [](std::vector<Tensor>& in) { return tl::bincount(in[0]); });
  }
}

TL_PARITY_CASE("backend parity: searchsorted over dtypes, layouts, sides, sorter, NaN") {
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    const bool fl = tl::is_floating_point(d);
    for (const Shape& vs : {Shape{13}, Shape{4, 7}, Shape{4, 0}, Shape{2, 3, 5}}) {
      // A sorted 1-D sequence and one of values' leading dims (with NaN last for floats).
      Shape bs = vs;
      bs[bs.size() - 1] = 9;
      const Tensor seq1 = tl::sort(tied({9}, d)).values;
      const Tensor seqn = tl::sort(tied(bs, d), -1).values;
      for (const Layout& l : all_layouts(tied(vs, d))) {
        for (bool right : {false, true}) {
          const std::string what = describe(right ? " right" : " left", d, vs, l.name);
          check_op(dev, "tl::searchsorted 1-D" + what, {seq1, l.tensor},
                   [&](std::vector<Tensor>& in) {
                     return tl::searchsorted(in[0], in[1], false, right);
                   });
          check_op(dev, "tl::searchsorted batched int32" + what, {seqn, l.tensor},
                   [&](std::vector<Tensor>& in) {
                     return tl::searchsorted(in[0], in[1], true, false, right ? "right" : "left");
                   });
          // The sequence shuffled, with its order as the sorter.
          const Tensor shuffled = tl::gather(seqn, -1, tl::argsort(tl::rand(bs), -1));
          const Tensor sorter = tl::argsort(shuffled, -1, false, true);
          check_op(dev, "tl::searchsorted sorter" + what, {shuffled, l.tensor, sorter},
                   [&](std::vector<Tensor>& in) {
                     return tl::searchsorted(in[0], in[1], false, right, "", in[2]);
                   });
        }
      }
    }
    // Mixed dtypes promote; a number; a transposed sequence.
    check_op(dev, describe("tl::searchsorted mixed", d, {6}, ""),
             {tl::sort(tied({5}, d)).values, tied({6}, tl::kFloat64)},
             [](std::vector<Tensor>& in) { return tl::searchsorted(in[0], in[1]); });
    check_op(dev, describe("tl::searchsorted number", d, {}, ""), {tl::sort(tied({5}, d)).values},
             [](std::vector<Tensor>& in) { return tl::searchsorted(in[0], 1, false, true); });
    check_op(dev, describe("tl::searchsorted transposed sequence", d, {3, 4}, ""),
             {tl::sort(tied({4, 3}, d), 0).values.t(), tied({3, 2}, d)},
             [](std::vector<Tensor>& in) { return tl::searchsorted(in[0], in[1]); });
    if (fl) {
      const Tensor s = float_specials(d);
      check_op(dev, describe("tl::searchsorted specials", d, s.shape(), ""),
               {tl::sort(s).values, s},
               [](std::vector<Tensor>& in) { return tl::searchsorted(in[0], in[1]); });
      // A sequence with NaN in the middle (not sorted as torch.sort would): the same bisection.
      check_op(dev, describe("tl::searchsorted NaN inside", d, s.shape(), ""), {s, s},
               [](std::vector<Tensor>& in) { return tl::searchsorted(in[0], in[1], false, true); });
    }
  }
}

TL_PARITY_CASE("backend parity: histc over dtypes, layouts, bins, ranges, specials") {
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    // The CPU runs half-type arithmetic rounded at each step (as torch); the float32 reference
    // of check_op would not, so the functions convert their input back to d first.
    for (const Shape& s : {Shape{1}, Shape{333}, Shape{17, 9}, Shape{4, 5, 6}, Shape{0}}) {
      for (const Layout& l : all_layouts(make_values(s, d))) {
        for (int64_t bins : {int64_t{1}, int64_t{10}, int64_t{1000}, int64_t{7000}}) {
          const std::string what = describe(" bins " + std::to_string(bins), d, s, l.name);
          check_op(dev, "tl::histc range" + what, {l.tensor}, [&](std::vector<Tensor>& in) {
            return tl::histc(in[0].to(d), bins, -1.25, 1.5);
          });
          check_op(dev, "tl::histc data range" + what, {l.tensor},
                   [&](std::vector<Tensor>& in) { return tl::histc(in[0].to(d), bins); });
        }
      }
    }
    const Tensor sp = float_specials(d);
    // With NaN and infinities: ignored in a given range; the data's range is not finite (error).
    check_op(dev, describe("tl::histc specials range", d, sp.shape(), ""), {sp},
             [&](std::vector<Tensor>& in) { return tl::histc(in[0].to(d), 50, -100, 100); });
    check_op(dev, describe("tl::histc specials data range", d, sp.shape(), ""), {sp},
             [&](std::vector<Tensor>& in) { return tl::histc(in[0].to(d), 50); });
    // Values on every bin edge, and a constant tensor (the range widened by 1).
    check_op(dev, describe("tl::histc edges", d, {41}, ""),
             {(tl::arange(41, tl::kFloat64) * 0.25 - 5.0).to(d)},
             [&](std::vector<Tensor>& in) { return tl::histc(in[0].to(d), 40, -5, 5); });
    check_op(dev, describe("tl::histc constant", d, {5}, ""), {tl::full({5}, 3.0, d)},
             [&](std::vector<Tensor>& in) { return tl::histc(in[0].to(d), 7); });
  }
}

TL_PARITY_CASE("backend parity: unique, bincount, searchsorted, histc of long inputs (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  const int64_t n = (int64_t{1} << 22) + 5;
  check_op(dev, "tl::unique long float32", {tied({n}, tl::kFloat32)},
           [](std::vector<Tensor>& in) { return tl::unique(in[0], true, true, true).counts; });
  check_op(dev, "tl::unique long int64 inverse", {tl::randint(0, 100000, {n})},
           [](std::vector<Tensor>& in) { return tl::unique(in[0], true, true).inverse; });
  check_op(dev, "tl::unique long rows", {tl::randint(0, 4, {n / 8, 8})},
           [](std::vector<Tensor>& in) { return tl::unique(in[0], true, false, true, 0).values; });
  check_op(dev, "tl::bincount long", {tl::randint(0, 1000, {n})},
           [](std::vector<Tensor>& in) { return tl::bincount(in[0]); });
  check_op(dev, "tl::bincount long wide", {tl::randint(0, 1000000, {n})},
           [](std::vector<Tensor>& in) { return tl::bincount(in[0]); });
  check_op(dev, "tl::histc long", {make_values({n}, tl::kFloat32)},
           [](std::vector<Tensor>& in) { return tl::histc(in[0], 256); });
  check_op(dev, "tl::searchsorted long",
           {tl::sort(make_values({100000}, tl::kFloat32)).values, make_values({n}, tl::kFloat32)},
           [](std::vector<Tensor>& in) { return tl::searchsorted(in[0], in[1]); });
}

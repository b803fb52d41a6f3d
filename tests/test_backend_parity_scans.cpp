// Backend parity of cumsum, cumprod, cummax, cummin and median: every dtype and layout, row
// lengths on each side of the device kernels' limits (warp rows, block rows, CUB's device-wide
// scan, column kernel, columns transposed into rows), odd sizes, specials, long 1-D scans.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

// Both backends keep running sums in acc_t (double for float32): results differ only by the
// order of double operations (a tree on the device), which may move a float32 output by an ulp;
// a long sum's absolute error grows with its length. float16/bfloat16 run in float (and the
// float32 reference in double), so near a crossing of zero a long half sum keeps float's error.
Tol scan_tol(DType result, int64_t n, bool prod) {
  if (!tl::is_floating_point(result)) return kExact;
  const double k = static_cast<double>(n);
  if (result == tl::kFloat64)
    return prod ? Tol{1e-12 + 4e-16 * k, 1e-300} : Tol{1e-12, 1e-15 * (1 + k)};
  if (is_half(result)) return widen_for(Tol{1e-6, prod ? 1e-7 : 1e-5 + 5e-7 * k}, result);
  return prod ? Tol{1e-6, 1e-40} : Tol{1e-6, 1e-12 + 1e-15 * k};
}

void check_scans(tl::Device dev, const Variant& v, int64_t dim) {
  const DType d = v.t.dtype();
  const std::string what = describe("", d, v.t.shape(), v.name) + " dim " + std::to_string(dim);
  const int64_t n = v.t.dim() == 0 ? 1 : v.t.size(dim);
  const DType result = tl::is_integral(d, true) ? tl::kInt64 : d;
  check_op(
      dev, "tl::cumsum" + what, {v.t},
      [&](std::vector<Tensor>& in) { return tl::cumsum(in[0], dim); }, scan_tol(result, n, false));
  check_op(
      dev, "tl::cumprod" + what, {v.t},
      [&](std::vector<Tensor>& in) { return tl::cumprod(in[0], dim); }, scan_tol(result, n, true));
  for (const bool max : {true, false}) {
    const std::string name = max ? "tl::cummax" : "tl::cummin";
    auto run = [&](const Tensor& x) { return max ? tl::cummax(x, dim) : tl::cummin(x, dim); };
    check_op(dev, name + " values" + what, {v.t},
             [&](std::vector<Tensor>& in) { return run(in[0]).values; });
    check_op(dev, name + " indices" + what, {v.t},
             [&](std::vector<Tensor>& in) { return run(in[0]).indices; });
  }
}

void check_median(tl::Device dev, const Variant& v, int64_t dim) {
  const std::string what =
      describe("", v.t.dtype(), v.t.shape(), v.name) + " dim " + std::to_string(dim);
  for (bool keepdim : {false, true}) {
    check_op(dev, "tl::median values" + what, {v.t},
             [&](std::vector<Tensor>& in) { return tl::median(in[0], dim, keepdim).values; });
    check_op(dev, "tl::median indices" + what, {v.t},
             [&](std::vector<Tensor>& in) { return tl::median(in[0], dim, keepdim).indices; });
  }
}

}  // namespace

TL_PARITY_CASE("backend parity: scans over widths, dims, layouts and dtypes") {
  // Rows of 1, 31 (warp rows), 1000 and 4097 (block rows, a partial tile); a dim with elements
  // after it (column kernel); 0-dim and zero-size.
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{1}, {0}},          {{31}, {0}},      {{1000}, {-1}},   {{4097}, {0}},
      {{5, 31}, {1, 0}},   {{3, 1000}, {1}}, {{2, 4097}, {1}}, {{3, 4, 5}, {0, 1, 2}},
      {{300, 70}, {0, 1}}, {{}, {0, -1}},    {{0, 7}, {0, 1}}, {{7, 0}, {1}},
  };
  for (DType d : all_dtypes()) {
    for (const auto& [shape, dims] : cases) {
      for (const Variant& v : variants(shape, d)) {
        for (int64_t dim : dims) check_scans(dev, v, dim);
      }
    }
  }
  // NaN, infinities, signed zeros, denormals as rows and as columns.
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    const Variant grid{"specials", float_specials(d).view({2, 14})};
    for (int64_t dim : {0, 1}) check_scans(dev, grid, dim);
  }
  for (DType d : dtypes_of(tl::kIntegralDTypes)) {
    const Tensor s = int_specials(d);
    const Variant row{"specials", s.view({1, s.numel()})};
    for (int64_t dim : {0, 1}) check_scans(dev, row, dim);
  }
}

TL_PARITY_CASE("backend parity: scans past the kernels' limits") {
  // [70001] and [3, 70001]: CUB's device-wide scan per row; [20, 70001]: too many rows for it,
  // block rows; [5000, 2] over dim 0 and [3, 70001, 2] over dim 1: few long columns, transposed
  // into rows (block rows, CUB); [300, 9000] over dim 0: the column kernel with many columns.
  const std::vector<std::pair<Shape, int64_t>> cases{
      {{70001}, 0},   {{3, 70001}, 1},    {{20, 70001}, 1},
      {{5000, 2}, 0}, {{3, 70001, 2}, 1}, {{300, 9000}, 0},
  };
  for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kFloat16}) {
    for (const auto& [shape, dim] : cases) {
      const Variant v{"contiguous", make_values(shape, d)};
      check_scans(dev, v, dim);
    }
  }
}

TL_PARITY_CASE("backend parity: cumsum of long rows across the single-pass scan's tiles") {
  // CUDA's cumsum of few rows of 65536 or more (cuda_scan_single_pass.cuh) runs in tiles of
  // 16 KiB of T (2048 float64 to 16384 int8 elements): lengths on each side of tile ends (65535
  // stays on the block-row kernel), a partial last tile, lengths not a multiple of the 16-byte
  // vector, a view one element past an aligned address (element loads), rows whose starts break
  // the alignment ([3, n]), and the dtype argument's narrow integer sums.
  const std::vector<int64_t> lengths{65535, 65536, 65537, 65538, 65539, 67583, 67584,
                                     67585, 69631, 69632, 69633, 81919, 81921};
  const std::vector<std::pair<DType, std::optional<DType>>> types{
      {tl::kFloat32, std::nullopt},  {tl::kFloat64, std::nullopt}, {tl::kFloat16, std::nullopt},
      {tl::kBFloat16, std::nullopt}, {tl::kInt64, std::nullopt},   {tl::kInt32, tl::kInt32},
      {tl::kInt8, tl::kInt8}};
  for (const auto& [d, arg] : types) {
    const DType result = arg ? *arg : d;
    auto run_cumsum = [arg](int64_t dim) {
      return [arg, dim](std::vector<Tensor>& in) { return tl::cumsum(in[0], dim, arg); };
    };
    for (int64_t n : lengths) {
      const Tensor x = make_values({n + 1}, d);
      for (const Variant& v :
           {Variant{"contiguous", x.slice(0, 0, n)}, Variant{"offset", x.slice(0, 1)}})
        check_op(dev, "tl::cumsum" + describe("", d, {n}, v.name), {v.t}, run_cumsum(0),
                 scan_tol(result, n, false));
    }
    for (int64_t n : {int64_t{65537}, int64_t{69633}}) {
      const Variant v{"contiguous", make_values({3, n}, d)};
      check_op(dev, "tl::cumsum" + describe("", d, {3, n}, v.name), {v.t}, run_cumsum(1),
               scan_tol(result, n, false));
    }
  }
  // Element loads (the offset view) and 16-byte loads (its aligned copy) give the same bits: they
  // add in the same order, and these values (multiples of 2^-22) sum exactly in double anyway, so
  // the look-back's timing-dependent grouping of tile prefixes cannot move a bit either.
  const Tensor x = make_values({69634}, tl::kFloat32).to(dev).slice(0, 1);
  check_same(tl::cumsum(x.clone(), 0), tl::cumsum(x, 0), kExact, dev, "the aligned copy");
  // Nothing before the first element (the kernels' identity is -0.0, not +0.0): a row of -0.0
  // sums to -0.0 everywhere, as the CPU's loop.
  const Tensor zeros = tl::full({69633}, -0.0, tl::TensorOptions(tl::kFloat32).device(dev));
  const std::vector<float> sums = tl::cumsum(zeros, 0).cpu().to_vector<float>();
  int64_t not_negative_zero = 0;
  for (float s : sums) not_negative_zero += (s != 0.0f || !std::signbit(s)) ? 1 : 0;
  CHECK(not_negative_zero == 0);
}

TL_PARITY_CASE("backend parity: cumsum of 64M float32 and other long scans (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  const std::vector<std::pair<Shape, DType>> sums{
      {{int64_t{64} << 20}, tl::kFloat32}, {{int64_t{1} << 24}, tl::kFloat64},
      {{int64_t{1} << 24}, tl::kFloat16},  {{int64_t{1} << 24}, tl::kInt32},
      {{4096, 4096}, tl::kFloat32},
  };
  for (const auto& [shape, d] : sums) {
    const Variant v{"contiguous", make_values(shape, d)};
    const int64_t dim = shape.size() - 1;
    const DType result = tl::is_integral(d, true) ? tl::kInt64 : d;
    check_op(
        dev, "tl::cumsum" + describe("", d, shape, v.name), {v.t},
        [&](std::vector<Tensor>& in) { return tl::cumsum(in[0], dim); },
        scan_tol(result, shape[dim], false));
  }
  // The index-carrying scan through CUB, a column scan of a square and few long columns.
  check_scans(dev, Variant{"contiguous", make_values({int64_t{1} << 22}, tl::kFloat32)}, 0);
  check_scans(dev, Variant{"contiguous", make_values({4096, 4096}, tl::kFloat32)}, 0);
  check_scans(dev, Variant{"contiguous", make_values({int64_t{1} << 22, 3}, tl::kFloat32)}, 0);
}

TL_PARITY_CASE("backend parity: median over widths, dims, layouts and dtypes") {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{1}, {0}},          {{31}, {0}},         {{1000}, {0}},          {{4097}, {-1}},
      {{4, 1000}, {0, 1}}, {{300, 70}, {0, 1}}, {{3, 4, 5}, {0, 1, 2}}, {{}, {0}},
      {{0, 7}, {1}},
  };
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    for (const auto& [shape, dims] : cases) {
      // Integral values: many ties, which must rank by position on every device.
      for (const Variant& v : variants(shape, d, Fill::Integral)) {
        for (int64_t dim : dims) check_median(dev, v, dim);
        check_op(dev, "tl::median" + describe("", d, shape, v.name), {v.t},
                 [](std::vector<Tensor>& in) { return tl::median(in[0]); });
      }
    }
  }
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    const Variant grid{"specials", float_specials(d).view({2, 14})};
    for (int64_t dim : {0, 1}) check_median(dev, grid, dim);
    const Variant random{"random", make_values({7, 333}, d)};
    check_median(dev, random, 1);
  }
  // bool is refused on every device.
  CHECK_FALSE(check_op(dev, "tl::median bool", {make_values({4}, tl::kBool)},
                       [](std::vector<Tensor>& in) { return tl::median(in[0]); }));
}

TL_PARITY_CASE("backend parity: median of long rows (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  check_op(dev, "tl::median of 4M float32", {make_values({int64_t{1} << 22}, tl::kFloat32)},
           [](std::vector<Tensor>& in) { return tl::median(in[0]); });
  check_median(dev, Variant{"contiguous", make_values({4096, 4096}, tl::kFloat32)}, 1);
  check_median(dev, Variant{"contiguous", make_values({2048, 1000}, tl::kInt64, Fill::Integral)},
               0);
}

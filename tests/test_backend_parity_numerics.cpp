// Backend parity of softmax, log_softmax, logsumexp, var and std: every floating dtype, every
// layout, row widths on each side of the device kernels' vector and register limits, specials.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;

// A few ulp of exp/log and of a row sum accumulated in float on one side and double on the other.
Tol softmax_tol(DType d) {
  if (d == tl::kFloat64) return {1e-12, 1e-14};
  return widen_for(Tol{2e-5, 1e-6}, d);
}

void check_softmax(tl::Device dev, const Variant& v, int64_t dim) {
  const DType d = v.t.dtype();
  const std::string what = describe("", d, v.t.shape(), v.name) + " dim " + std::to_string(dim);
  check_op(
      dev, "tl::softmax" + what, {v.t},
      [&](std::vector<Tensor>& in) { return tl::softmax(in[0], dim); }, softmax_tol(d));
  check_op(
      dev, "tl::log_softmax" + what, {v.t},
      [&](std::vector<Tensor>& in) { return tl::log_softmax(in[0], dim); }, softmax_tol(d));
}

}  // namespace

TL_PARITY_CASE("backend parity: softmax and log_softmax over widths, dims, layouts and dtypes") {
  // Widths 1, 31 (no vector loads), 1000, 4097 (odd), 20000 (several loads per thread; with few
  // rows, split over a cluster on sm_90), and dims with elements after them.
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{3, 1}, {1, 0}},  {{5, 31}, {-1, 0}},     {{4, 1000}, {1}}, {{3, 4097}, {1}},
      {{2, 20000}, {1}}, {{3, 4, 5}, {0, 1, 2}}, {{}, {0, -1}},    {{0, 7}, {0, 1}},
      {{300, 70}, {0}},  {{7, 0}, {1}},
  };
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    for (const auto& [shape, dims] : cases) {
      for (const Variant& v : variants(shape, d)) {
        for (int64_t dim : dims) check_softmax(dev, v, dim);
      }
    }
  }
  // Integer inputs are refused on every device, or converted by the dtype argument.
  for (DType d : {tl::kInt32, tl::kInt64, tl::kBool}) {
    const Variant v{"contiguous", make_values({4, 9}, d)};
    CHECK_FALSE(check_op(dev, "tl::softmax int", {v.t},
                         [](std::vector<Tensor>& in) { return tl::softmax(in[0], 1); }));
    check_op(
        dev, "tl::softmax int dtype float32", {v.t},
        [](std::vector<Tensor>& in) { return tl::softmax(in[0], 1, tl::kFloat32); },
        softmax_tol(tl::kFloat32));
  }
  // Rows of -inf, a NaN, a +inf, as rows (dim 1) and as columns (dim 0).
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    const Variant grid{"specials", float_specials(d).view({2, 14})};
    for (int64_t dim : {0, 1}) check_softmax(dev, grid, dim);
    const double inf = std::numeric_limits<double>::infinity();
    const Variant rows{"inf rows",
                       tl::from_vector<double>(
                           {-inf, -inf, -inf, -inf, 1.0, -inf, inf, 2.0, std::nan(""), 1.0}, {5, 2})
                           .to(d)};
    for (int64_t dim : {0, 1}) check_softmax(dev, rows, dim);
  }
}

TL_PARITY_CASE("backend parity: softmax of long rows, few or many (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  // On an H100/H200 (132 SMs, sm_90): [64, 128256] float32 (32.8 MB, more than the registers of
  // all SMs hold) and [64, 128260] (slices of unequal length) take the split kernel, rows over
  // clusters of 2 blocks with registers and shared memory; [32, 128256] float64 over clusters of
  // 4; [128, 128256] float16 / bfloat16 one block a row (no cluster); [8, 300000] (too long for
  // the register kernel) clusters of 16 or 8, [1, 1000000] one cluster of 16 where the device
  // allows it (else looped). [2, 4000000] is too long for the split kernel too:
  // the looped kernel, as are the odd [16, 70001] and the unaligned "offset" [64, 128256].
  // [4096, 4096]: one block per row; [2048, 1000] float16: vector loads of 8; [64, 128256]
  // bfloat16 (16.4 MB): clusters of the register kernel.
  const std::vector<std::pair<Shape, DType>> cases{
      {{64, 128256}, tl::kFloat32},  {{64, 128260}, tl::kFloat32},   {{32, 128256}, tl::kFloat64},
      {{128, 128256}, tl::kFloat16}, {{128, 128256}, tl::kBFloat16}, {{8, 300000}, tl::kFloat32},
      {{1, 1000000}, tl::kFloat32},  {{2, 4000000}, tl::kFloat32},   {{4096, 4096}, tl::kFloat32},
      {{2048, 1000}, tl::kFloat16},  {{64, 128256}, tl::kBFloat16},  {{16, 70001}, tl::kFloat64},
      {{5, 4096, 3}, tl::kFloat32},
  };
  for (const auto& [shape, d] : cases) {
    const Variant v{"contiguous", make_values(shape, d)};
    check_softmax(dev, v, 1);
  }
  const Shape o1{64, 128256};
  const Variant offset{"offset", make_values({o1.numel() + 1}, tl::kFloat32).slice(0, 1).view(o1)};
  check_softmax(dev, offset, 1);
}

TL_PARITY_CASE("backend parity: softmax of long rows with -inf, NaN and +inf (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  // [8, 300000] takes the split kernel on sm_90 in every dtype: each row's slices are reduced per
  // thread and per part (registers, shared memory) and combined with the row's max, so a part of
  // only -inf must add nothing when the row's max is finite, also far below 0, and every
  // non-finite row must come out NaN as on the CPU.
  constexpr int64_t kRows = 8, kN = 300000;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> noise = values_of(make_values({kRows, kN}, tl::kFloat64));
  auto value = [&](int64_t r, int64_t i, double v) {
    switch (r) {
      case 0:  // all -inf: NaN
        return -inf;
      case 1:  // whole slices of -inf, the max near -200 (exp(0 - max) overflows)
        return i < kN / 3 ? -200 + v : -inf;
      case 2:  // one NaN: NaN
        return i == kN / 2 ? std::nan("") : v;
      case 3:  // one +inf: NaN
        return i == kN - 5 ? inf : v;
      case 4:  // scattered -inf: 0 (log: -inf) there
        return i % 1001 == 0 ? -inf : v;
      case 5:  // constant: 1 / n
        return 1.5;
      case 6:  // wide: most exp underflow
        return v * 1000;
      default:  // only the end of the last slice finite
        return i > kN - 3000 ? v : -inf;
    }
  };
  std::vector<double> x(kRows * kN);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t i = 0; i < kN; ++i) x[r * kN + i] = value(r, i, noise[r * kN + i]);
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    const Variant v{"long specials", tl::from_vector<double>(x, {kRows, kN}).to(d)};
    check_softmax(dev, v, 1);
  }
}

TL_PARITY_CASE("backend parity: logsumexp, var and std over dims, layouts and dtypes") {
  const std::vector<std::pair<Shape, std::vector<std::vector<int64_t>>>> cases{
      {{3, 4, 5}, {{}, {0}, {-1}, {0, 2}}},
      {{7, 33}, {{1}}},
      {{}, {{}}},
      {{0, 3}, {{0}, {1}}},
  };
  for (DType d : all_dtypes()) {
    const bool floating = tl::is_floating_point(d);
    const Tol tol =
        widen_for(floating && d == tl::kFloat64 ? Tol{1e-12, 1e-12} : Tol{2e-5, 2e-6}, d);
    for (const auto& [shape, dim_sets] : cases) {
      for (const Variant& v : variants(shape, d)) {
        for (const std::vector<int64_t>& dims : dim_sets) {
          for (bool keepdim : {false, true}) {
            const std::string what = describe("", d, shape, v.name) + " dims " + str(Shape(dims)) +
                                     (keepdim ? " keepdim" : "");
            check_op(
                dev, "tl::logsumexp" + what, {v.t},
                [&](std::vector<Tensor>& in) { return tl::logsumexp(in[0], dims, keepdim); }, tol);
            for (double correction : {0.0, 1.0}) {
              const bool ran = check_op(
                  dev, "tl::var" + what, {v.t},
                  [&](std::vector<Tensor>& in) {
                    return tl::var(in[0], dims, correction, keepdim);
                  },
                  tol);
              CHECK(ran == floating);
              check_op(
                  dev, "tl::std_mean" + what, {v.t},
                  [&](std::vector<Tensor>& in) {
                    auto [s, m] = tl::std_mean(in[0], dims, correction, keepdim);
                    return tl::stack({s, m});
                  },
                  tol);
            }
          }
        }
      }
    }
  }
}

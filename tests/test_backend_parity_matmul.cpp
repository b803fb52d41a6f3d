// Backend parity of matmul, mm, bmm, dot and linear on every dtype (bool refused on both) and
// every operand layout pair.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

// ---- matmul ----

// The layouts of an [r, c] operand a matmul must read: contiguous, offset, sliced (a column
// step of 2), transposed (column-major).
std::vector<Variant> matrix_variants(int64_t r, int64_t c, DType d, Fill f) {
  std::vector<Variant> out;
  for (Variant& v : variants({r, c}, d, f))
    if (v.name != "expanded") out.push_back(std::move(v));
  return out;
}

Tol matmul_tol(tl::Device dev, DType d, int64_t k, Fill f) {
  const double kk = static_cast<double>(k);
  // The half types accumulate in float and round once (cuBLAS perhaps its partial sums too),
  // bounded per element by the product of absolute values: a fixed tolerance fails where a dot
  // product cancels. An integral product is exact in float, but not in bfloat16 past 256, so
  // the same bound.
  if (is_half(d)) return half_accumulation_tol(d, k, partial_roundings(dev, d));
  if (f == Fill::Integral) return kExact;
  return d == tl::kFloat32 ? Tol{1e-4, 1e-5 * (1 + kk)} : Tol{1e-10, 1e-12 * (1 + kk)};
}

// linear = x @ w.T + b rounds the product before the bias add: for the half types two chained
// roundings (the float32 reference's single one is within them), bounded by the magnitude.
Tol linear_tol(tl::Device dev, DType d, int64_t k, Fill f) {
  if (is_half(d)) return half_chain_tol(d, 2, k, partial_roundings(dev, d));
  return matmul_tol(dev, d, k, f);
}

}  // namespace

TL_PARITY_CASE("backend parity: matmul and mm of every layout pair, small and odd sizes, K = 0") {
  // CUDA floats take the tiled kernel up to 128 a side (128^3), cuBLAS past it.
  const std::vector<std::array<int64_t, 3>> sizes{
      {3, 3, 3}, {10, 10, 10}, {33, 17, 65},    {1, 1, 1},       {1, 7, 1},
      {7, 1, 4}, {32, 32, 32}, {33, 33, 33},    {4, 0, 5},       {0, 3, 4},
      {3, 4, 0}, {2, 300, 3},  {100, 100, 100}, {128, 128, 128}, {129, 64, 50}};
  auto mm = [](std::vector<Tensor>& in) { return tl::matmul(in[0], in[1]); };
  for (DType d : all_dtypes()) {  // bool is refused on both
    for (auto [m, k, n] : sizes) {
      for (Fill f : {Fill::Integral, Fill::Random}) {
        if (f == Fill::Random && !tl::is_floating_point(d)) continue;
        std::vector<Variant> va = matrix_variants(m, k, d, f), vb = matrix_variants(k, n, d, f);
        const Tol tol = matmul_tol(dev, d, k, f);
        for (const Variant& a : va) {
          for (const Variant& b : vb) {
            const std::string what = describe("matmul", d, {m, k, n}, a.name + " @ " + b.name) +
                                     (f == Fill::Integral ? " integral" : " random");
            check_op(dev, what, {a.t, b.t}, mm, tol);
          }
        }
        check_op(
            dev, describe("mm", d, {m, k, n}, "contiguous"), {va[0].t, vb[0].t},
            [](std::vector<Tensor>& in) { return tl::mm(in[0], in[1]); }, tol);
      }
    }
  }
}

TL_PARITY_CASE(
    "backend parity: batched matmul, bmm, broadcast batches, 1-D operands, linear and dot") {
  const std::vector<std::pair<Shape, Shape>> cases{{{4, 3, 5}, {4, 5, 2}},
                                                   {{2, 1, 3, 4}, {5, 4, 6}},
                                                   {{3, 4}, {2, 4, 5}},
                                                   {{2, 3, 4}, {4, 5}},
                                                   {{1, 3, 4}, {6, 4, 2}},
                                                   {{300, 10, 10}, {300, 10, 10}},
                                                   {{3, 40, 33}, {3, 33, 70}},
                                                   {{5}, {2, 5, 3}},
                                                   {{3, 2, 4, 5}, {5}},
                                                   {{7}, {7}},
                                                   {{7}, {7, 3}},
                                                   {{4, 7}, {7}},
                                                   {{2, 0, 3}, {3, 4}},
                                                   {{3, 3, 0}, {3, 0, 4}}};
  auto mm = [](std::vector<Tensor>& in) { return tl::matmul(in[0], in[1]); };
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    for (const auto& [sa, sb] : cases) {
      for (Fill f : {Fill::Integral, Fill::Random}) {
        if (f == Fill::Random && !tl::is_floating_point(d)) continue;
        std::vector<Variant> va = variants(sa, d, f), vb = variants(sb, d, f);
        const Tol tol = matmul_tol(dev, d, sa.back(), f);
        for (const Variant& a : va)
          check_op(dev, describe("matmul", d, sa, a.name) + " @ " + str(sb), {a.t, vb[0].t}, mm,
                   tol);
        for (size_t k = 1; k < vb.size(); ++k)
          check_op(dev,
                   describe("matmul", d, sa, "contiguous") + " @ " + str(sb) + " " + vb[k].name,
                   {va[0].t, vb[k].t}, mm, tol);
      }
    }
    // bmm with a transposed batch operand and with an expanded (stride-0) batch.
    Tensor a = make_values({6, 3, 4}, d, Fill::Integral);
    Tensor bt = make_values({6, 5, 4}, d, Fill::Integral).transpose(1, 2);
    Tensor one = make_values({1, 3, 4}, d, Fill::Integral).expand({6, 3, 4});
    auto bmm = [](std::vector<Tensor>& in) { return tl::bmm(in[0], in[1]); };
    check_op(dev, std::string("bmm transposed b ") + tl::dtype_name(d), {a, bt}, bmm);
    check_op(dev, std::string("bmm expanded a ") + tl::dtype_name(d), {one, bt}, bmm);
    check_op(dev, std::string("bmm transposed a ") + tl::dtype_name(d),
             {make_values({6, 4, 3}, d, Fill::Integral).transpose(1, 2),
              make_values({6, 4, 5}, d, Fill::Integral)},
             bmm);
    // A batch larger than a grid's y or z dimension holds, small matrices.
    check_op(dev, std::string("bmm 70000 batches ") + tl::dtype_name(d),
             {make_values({70000, 2, 3}, d, Fill::Integral),
              make_values({70000, 3, 2}, d, Fill::Integral)},
             bmm);
    check_op(dev, std::string("dot sliced ") + tl::dtype_name(d),
             {make_values({9}, d, Fill::Integral), variants({9}, d, Fill::Integral)[2].t},
             [](std::vector<Tensor>& in) { return tl::dot(in[0], in[1]); });
  }
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    for (Fill f : {Fill::Integral, Fill::Random}) {
      const Tol tol = linear_tol(dev, d, 3, f);
      Tensor x = make_values({2, 4, 3}, d, f), w = make_values({5, 3}, d, f),
             b = make_values({5}, d, f);
      auto linear = [](std::vector<Tensor>& in) { return tl::linear(in[0], in[1], in[2]); };
      check_op(dev, std::string("linear ") + tl::dtype_name(d), {x, w, b}, linear, tol);
      check_op(
          dev, std::string("linear no bias ") + tl::dtype_name(d), {x, w},
          [](std::vector<Tensor>& in) { return tl::linear(in[0], in[1]); }, tol);
      check_op(dev, std::string("linear transposed w ") + tl::dtype_name(d),
               {x, make_values({3, 5}, d, f).t(), b}, linear, tol);
      check_op(dev, std::string("linear 1-D x ") + tl::dtype_name(d),
               {make_values({3}, d, f), w, b}, linear, tol);
      check_op(
          dev, std::string("linear 64x300 ") + tl::dtype_name(d),
          {make_values({64, 300}, d, f), make_values({70, 300}, d, f), make_values({70}, d, f)},
          linear, linear_tol(dev, d, 300, f));
    }
  }
}

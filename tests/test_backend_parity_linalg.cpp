// Backend parity of addmm (with addmm_ and addmm_out into poisoned views), baddbmm, outer and
// einsum: every dtype (bool refused where matmul refuses it), every operand layout, odd sizes on
// both sides of the small-matrix kernels, zero sizes, NaN inputs with beta 0.
#include <array>
#include <cmath>
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

// beta * input + alpha * a @ b: the half types accumulate the k products, the scalings and the
// add in float and round once (cuBLAS perhaps its partial sums too), bounded per element by the
// same on absolute values (check_op's magnitude, addmm_fn's absolute form): where the result
// cancels a fixed tolerance fails on some inputs.
Tol gemm_tol(tl::Device dev, DType d, int64_t k, Fill f) {
  const double kk = static_cast<double>(k);
  if (is_half(d)) return half_accumulation_tol(d, k + 3, partial_roundings(dev, d));
  if (f == Fill::Integral || !tl::is_floating_point(d)) return kExact;
  return d == tl::kFloat32 ? Tol{1e-4, 1e-5 * (1 + kk)} : Tol{1e-10, 1e-12 * (1 + kk)};
}

// alpha and beta of the dtype's kind: integers for integer dtypes (torch's rule).
std::pair<Scalar, Scalar> coefficients(DType d, int which) {
  const bool integral = !tl::is_floating_point(d);
  switch (which) {
    case 0:
      return {Scalar(1), Scalar(1)};
    case 1:
      return integral ? std::pair{Scalar(2), Scalar(-3)} : std::pair{Scalar(0.5), Scalar(1.5)};
    default:
      return {Scalar(0), integral ? Scalar(2) : Scalar(-0.75)};
  }
}

Scalar absolute(Scalar s) {
  return s.is_floating_point() ? Scalar(std::abs(s.to<double>()))
                               : Scalar(std::abs(s.to<int64_t>()));
}

// addmm (baddbmm when batched) with beta and alpha; with absolute, |beta| and |alpha|: the op's
// magnitude for gemm_tol (check_op makes the inputs absolute).
Fn addmm_fn(Scalar beta, Scalar alpha, bool batched = false, bool absolute_coefficients = false) {
  if (absolute_coefficients) beta = absolute(beta), alpha = absolute(alpha);
  return [beta, alpha, batched](std::vector<Tensor>& in) {
    return batched ? tl::baddbmm(in[0], in[1], in[2], beta, alpha)
                   : tl::addmm(in[0], in[1], in[2], beta, alpha);
  };
}

// addmm_out into in[0] (a poisoned view) of in[1] + in[2] @ in[3]; its whole storage.
Fn addmm_out_fn(Scalar beta, Scalar alpha, bool absolute_coefficients = false) {
  if (absolute_coefficients) beta = absolute(beta), alpha = absolute(alpha);
  return [beta, alpha](std::vector<Tensor>& in) {
    tl::addmm_out(in[0], in[1], in[2], in[3], beta, alpha);
    return whole_storage(in[0]);
  };
}

// addmm_ (baddbmm_ when batched) on in[0] (a poisoned view) holding in[1]; its whole storage.
Fn addmm_inplace_fn(Scalar beta, Scalar alpha, bool batched = false,
                    bool absolute_coefficients = false) {
  if (absolute_coefficients) beta = absolute(beta), alpha = absolute(alpha);
  return [beta, alpha, batched](std::vector<Tensor>& in) {
    in[0].copy_(in[1]);
    if (batched)
      in[0].baddbmm_(in[2], in[3], beta, alpha);
    else
      in[0].addmm_(in[2], in[3], beta, alpha);
    return whole_storage(in[0]);
  };
}

}  // namespace

TL_PARITY_CASE("backend parity: addmm over layouts, sizes, broadcast inputs, alpha and beta") {
  const std::vector<std::array<int64_t, 3>> sizes{{3, 4, 5},    {1, 1, 1},   {33, 17, 65},
                                                  {32, 32, 32}, {4, 0, 5},   {0, 3, 4},
                                                  {40, 70, 3},  {2, 300, 3}, {129, 40, 66}};
  for (DType d : all_dtypes()) {  // bool refused on both
    for (auto [n, k, m] : sizes) {
      const Fill f = tl::is_floating_point(d) ? Fill::Random : Fill::Integral;
      std::vector<Variant> va = variants({n, k}, d, f), vb = variants({k, m}, d, f);
      const Tol tol = gemm_tol(dev, d, k, f);
      for (int which = 0; which < 3; ++which) {
        const auto [beta, alpha] = coefficients(d, which);
        const Fn addmm = addmm_fn(beta, alpha), mag = addmm_fn(beta, alpha, false, true);
        // A row input ([m], [1, m], and [m] at an odd offset) is nn.Linear's bias, which CUDA
        // adds in cuBLASLt's epilogue when the product goes to cuBLAS (129 x 40 x 66).
        for (const Shape& is : {Shape{n, m}, Shape{m}, Shape{n, 1}, Shape{1, m}, Shape{m + 1}}) {
          const Tensor input = is.size() == 1 && is[0] == m + 1
                                   ? make_values(is, d, f).slice(0, 1, m + 1)
                                   : make_values(is, d, f);
          for (const Variant& a : va)
            check_op(dev,
                     describe("addmm", d, {n, k, m}, a.name + " @ contiguous") + " input " +
                         str(is) + " case " + std::to_string(which),
                     {input, a.t, vb[0].t}, addmm, tol, true, mag);
          for (size_t j = 1; j < vb.size(); ++j)
            check_op(dev,
                     describe("addmm", d, {n, k, m}, "contiguous @ " + vb[j].name) + " input " +
                         str(is) + " case " + std::to_string(which),
                     {input, va[0].t, vb[j].t}, addmm, tol, true, mag);
        }
        // Input in every layout, expanded included.
        for (const Variant& in : variants({n, m}, d, f))
          check_op(dev, describe("addmm input", d, {n, k, m}, in.name), {in.t, va[0].t, vb[0].t},
                   addmm, tol, true, mag);
      }
    }
  }
}

TL_PARITY_CASE("backend parity: addmm_out and addmm_ into poisoned views; beta 0 with NaN") {
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    for (auto [n, k, m] : {std::array<int64_t, 3>{3, 4, 5}, {33, 40, 35}}) {
      const Fill f = tl::is_floating_point(d) ? Fill::Random : Fill::Integral;
      const Tol tol = gemm_tol(dev, d, k, f);
      const auto [beta, alpha] = coefficients(d, 1);
      const Tensor a = make_values({n, k}, d, f), b = make_values({k, m}, d, f);
      const Tensor input = make_values({m}, d, f);
      for (const std::string& layout : kViewLayouts) {
        check_op(dev, describe("addmm_out", d, {n, k, m}, layout),
                 {poisoned_view({n, m}, d, layout), input, a, b}, addmm_out_fn(beta, alpha), tol,
                 true, addmm_out_fn(beta, alpha, true));
        // addmm_: self is the (poisoned-around) view, holding the input.
        check_op(dev, describe("addmm_", d, {n, k, m}, layout),
                 {poisoned_view({n, m}, d, layout), make_values({n, m}, d, f), a, b},
                 addmm_inplace_fn(beta, alpha), tol, true,
                 addmm_inplace_fn(beta, alpha, false, true));
      }
    }
  }
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    for (auto [n, k, m] : {std::array<int64_t, 3>{3, 4, 5}, {33, 40, 35}}) {
      Tensor nan = tl::full({n, m}, std::nan(""), d);
      check_op(
          dev, describe("addmm beta 0 NaN input", d, {n, k, m}, "contiguous"),
          {nan, make_values({n, k}, d), make_values({k, m}, d)},
          [](std::vector<Tensor>& in) { return tl::addmm(in[0], in[1], in[2], 0, 2); },
          gemm_tol(dev, d, k, Fill::Random));
      check_op(
          dev, describe("addmm NaN input", d, {n, k, m}, "contiguous"),
          {nan, make_values({n, k}, d), make_values({k, m}, d)},
          [](std::vector<Tensor>& in) { return tl::addmm(in[0], in[1], in[2]); },
          gemm_tol(dev, d, k, Fill::Random));
    }
  }
}

TL_PARITY_CASE("backend parity: baddbmm and baddbmm_ over layouts, sizes and batches") {
  const std::vector<std::array<int64_t, 4>> sizes{{3, 4, 5, 6}, {1, 1, 1, 1}, {5, 33, 17, 40},
                                                  {2, 3, 0, 4}, {0, 3, 4, 5}, {300, 3, 4, 3}};
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    for (auto [bt, n, k, m] : sizes) {
      const Fill f = tl::is_floating_point(d) ? Fill::Random : Fill::Integral;
      const Tol tol = gemm_tol(dev, d, k, f);
      std::vector<Variant> va = variants({bt, n, k}, d, f);
      const Tensor b = make_values({bt, k, m}, d, f);
      for (int which = 0; which < 3; ++which) {
        const auto [beta, alpha] = coefficients(d, which);
        const Fn baddbmm = addmm_fn(beta, alpha, true), mag = addmm_fn(beta, alpha, true, true);
        for (const Shape& is : {Shape{bt, n, m}, Shape{n, m}, Shape{1, 1, m}}) {
          const Tensor input = make_values(is, d, f);
          for (const Variant& a : va)
            check_op(dev,
                     describe("baddbmm", d, {bt, n, k, m}, a.name) + " input " + str(is) +
                         " case " + std::to_string(which),
                     {input, a.t, b}, baddbmm, tol, true, mag);
        }
        check_op(
            dev, describe("baddbmm_", d, {bt, n, k, m}, "sliced self"),
            {poisoned_view({bt, n, m}, d, "sliced"), make_values({bt, n, m}, d, f), va[0].t, b},
            addmm_inplace_fn(beta, alpha, true), tol, true,
            addmm_inplace_fn(beta, alpha, true, true));
      }
    }
  }
}

TL_PARITY_CASE("backend parity: outer over dtype pairs and layouts") {
  for (DType da : all_dtypes()) {
    for (DType db : {tl::kBool, tl::kInt32, tl::kFloat32, tl::kBFloat16, da}) {
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{130}}) {
        const std::vector<Variant> va = variants({n}, da), vb = variants({5}, db);
        for (const Variant& a : va)
          check_op(dev,
                   describe("outer", da, {n}, a.name) + " x " + tl::dtype_name(db) + " " +
                       vb[(&a - va.data()) % vb.size()].name,
                   {a.t, vb[(&a - va.data()) % vb.size()].t},
                   [](std::vector<Tensor>& in) { return tl::outer(in[0], in[1]); });
      }
    }
  }
}

TL_PARITY_CASE("backend parity: einsum equations over dtypes and layouts") {
  // No operand below holds a label of its own that is summed out, so a contraction of n
  // operands is n - 1 rounded matmuls (one sum for a single operand), of at most 165 terms.
  const std::vector<std::pair<std::string, std::vector<Shape>>> cases{
      {"ii", {{5, 5}}},
      {"ij->j", {{4, 33}}},
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"ij,jk->ik", {{40, 33}, {33, 50}}},
      {"bij,bjk->bik", {{3, 4, 5}, {3, 5, 2}}},
      {"...ij,...jk", {{2, 1, 3, 4}, {5, 4, 2}}},
      {"bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
      {"ij,jk,kl,lm->im", {{2, 3}, {3, 4}, {4, 5}, {5, 2}}},
      {"i,j->ij", {{7}, {9}}},
      {"iij->ij", {{3, 3, 4}}},
      {"ij,ij->i", {{1, 4}, {3, 4}}},
      {"ij,jk->ik", {{3, 0}, {0, 4}}},
      {"ijk,jil->kl", {{2, 3, 4}, {3, 2, 5}}},
  };
  for (DType d : dtypes_of(tl::kNumericDTypes)) {
    const Fill f = tl::is_floating_point(d) ? Fill::Random : Fill::Integral;
    for (const auto& [eq, shapes] : cases) {
      std::vector<Tensor> contiguous;
      for (const Shape& s : shapes) contiguous.push_back(make_values(s, d, f));
      auto einsum = [eq](std::vector<Tensor>& in) { return tl::einsum(eq, in).contiguous(); };
      Tol tol = gemm_tol(dev, d, 33 * 5, f);
      // Three or four operands: each pairwise result is rounded to the half type before the
      // next product, where the float32 reference rounds once; the error of the chain scales
      // with the einsum of absolute values (intermediates of tens), not with the result.
      const int steps = static_cast<int>(shapes.size()) - 1;
      if (is_half(d) && steps > 1)
        tol = half_chain_tol(d, steps, 33 * 5, partial_roundings(dev, d));
      check_op(dev, describe("einsum " + eq, d, shapes[0], "contiguous"), contiguous, einsum, tol);
      // Each operand in turn in every layout.
      for (size_t i = 0; i < shapes.size(); ++i) {
        for (const Variant& v : variants(shapes[i], d, f)) {
          if (v.name == "contiguous") continue;
          std::vector<Tensor> in = contiguous;
          in[i] = v.t;
          check_op(dev, describe("einsum " + eq, d, shapes[i], v.name), in, einsum, tol);
        }
      }
    }
  }
  // NaN in a contracted operand; bool refused for two operands on both.
  Tensor x = make_values({3, 4}, tl::kFloat32);
  x.select(0, 1).select(0, 2).fill_(std::nan(""));
  check_op(
      dev, "einsum NaN", {x, make_values({4, 5}, tl::kFloat32)},
      [](std::vector<Tensor>& in) { return tl::einsum("ij,jk->ik", in); },
      gemm_tol(dev, tl::kFloat32, 4, Fill::Random));
  check_op(dev, "einsum bool", {make_values({3, 4}, tl::kBool), make_values({4, 5}, tl::kBool)},
           [](std::vector<Tensor>& in) { return tl::einsum("ij,jk->ik", in); });
}

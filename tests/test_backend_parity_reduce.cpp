// Backend parity of every row of the reduction list x every dtype, and argmax/argmin, over dim
// sets, layouts, keepdim, ties, specials and large inputs.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend_parity.h"
#include "tensorlet/backends/math/reduce_ops.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Scalar;
using tl::Shape;
using tl::Tensor;

// ---- reductions ----

// The public function of each row of TL_REDUCE_OPS. No default: a row added to the list fails to
// compile here (-Werror=switch) until it has its function, then runs on every dtype of its row.
using ReduceFn = Tensor (*)(const Tensor&, const tl::DimList&, bool);
ReduceFn reduce_fn(tl::ReduceOp op) {
  switch (op) {
    case tl::ReduceOp::Sum:
      return tl::sum;
    case tl::ReduceOp::Prod:
      return tl::prod;
    case tl::ReduceOp::Mean:
      return tl::mean;
    case tl::ReduceOp::Max:  // over a list of dims, max is amax (max(x, dim) also gives indices)
      return tl::amax;
    case tl::ReduceOp::Min:
      return tl::amin;
    case tl::ReduceOp::All:
      return tl::all;
    case tl::ReduceOp::Any:
      return tl::any;
  }
  return nullptr;
}

struct ReduceOpCase {
  const char* name;
  ReduceFn fn;
  tl::DTypeSet dtypes;
  bool exact;  // max/min/all/any pick an element: exact whatever the order
};

// Every row of the list, plus amax/amin (max/min's dtypes, not rows of their own).
std::vector<ReduceOpCase> make_reduce_ops() {
  std::vector<ReduceOpCase> out;
  for (int i = 0; i < tl::kNumReduceOps; ++i) {
    const auto op = static_cast<tl::ReduceOp>(i);
    const bool picks = op == tl::ReduceOp::Max || op == tl::ReduceOp::Min ||
                       op == tl::ReduceOp::All || op == tl::ReduceOp::Any;
    out.push_back({tl::reduce_op_name(op), reduce_fn(op), tl::reduce_op_dtypes(op), picks});
  }
  out.push_back({"tl::amax", tl::amax, tl::reduce_op_dtypes(tl::ReduceOp::Max), true});
  out.push_back({"tl::amin", tl::amin, tl::reduce_op_dtypes(tl::ReduceOp::Min), true});
  return out;
}
const std::vector<ReduceOpCase> kReduceOps = make_reduce_ops();

const ReduceOpCase& reduce_op(const std::string& name) {
  for (const ReduceOpCase& c : kReduceOps)
    if (name == c.name) return c;
  FAIL("no reduction " << name);
  return reduce_op("tl::sum");
}

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& dims) {
  if (dims.empty()) return shape.numel();
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.size() == 0 ? 1 : shape[d < 0 ? d + shape.size() : d];
  return n;
}

bool check_reduce(tl::Device dev, const ReduceOpCase& op, const Variant& v,
                  const std::vector<int64_t>& dims, bool keepdim, Tol tol) {
  return check_op(
      dev,
      describe(op.name, v.t.dtype(), v.t.shape(), v.name) + " dims " + str(Shape(dims)) +
          (keepdim ? " keepdim" : ""),
      {v.t}, [&](std::vector<Tensor>& in) { return op.fn(in[0], dims, keepdim); },
      op.exact ? kExact : tol);
}

static_assert(tl::kNumArgReduceOps == 2, "a new arg reduction: add it to check_arg");

void check_arg(tl::Device dev, const Variant& v, std::optional<int64_t> dim, bool keepdim) {
  const std::string what = describe("", v.t.dtype(), v.t.shape(), v.name) + " dim " +
                           (dim ? std::to_string(*dim) : "none") + (keepdim ? " keepdim" : "");
  check_op(dev, "argmax" + what, {v.t},
           [&](std::vector<Tensor>& in) { return tl::argmax(in[0], dim, keepdim); });
  check_op(dev, "argmin" + what, {v.t},
           [&](std::vector<Tensor>& in) { return tl::argmin(in[0], dim, keepdim); });
}

}  // namespace

TL_PARITY_CASE("backend parity: every reduction over several dim sets, layouts and keepdim") {
  const std::vector<std::pair<Shape, std::vector<std::vector<int64_t>>>> cases{
      {{3, 4, 5}, {{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}}},
      {{7, 33}, {{}, {0}, {1}}},
      {{1025}, {{}, {0}}},
      {{}, {{}, {0}, {-1}}},
      {{0, 3}, {{}, {0}, {1}}},
      {{2, 3, 4, 6}, {{1, 3}, {0, 2}}},
      {{1, 1}, {{}, {0}}},
  };
  for (const ReduceOpCase& op : kReduceOps) {
    for (DType d : all_dtypes()) {
      for (const auto& [shape, dim_sets] : cases) {
        std::vector<Variant> vs = variants(shape, d);
        for (const auto& dims : dim_sets) {
          const Tol tol =
              sum_tol(tl::is_floating_point(d) ? d : tl::kFloat32, reduced_count(shape, dims));
          for (size_t k = 0; k < vs.size(); ++k) {
            const bool ran = check_reduce(dev, op, vs[k], dims, false, tol);
            if (!op.dtypes.contains(d))
              CHECK_MESSAGE(!ran, op.name << " ran on a dtype outside its row");
            if (k == 0 || k == 2) check_reduce(dev, op, vs[k], dims, true, tol);
          }
        }
      }
    }
  }
}

TL_PARITY_CASE(
    "backend parity: argmax and argmin over every dim, layout and dtype, ties included") {
  const std::vector<std::pair<Shape, std::vector<std::optional<int64_t>>>> cases{
      {{3, 4, 5}, {std::nullopt, 0, 1, 2, -1}},
      {{7, 33}, {std::nullopt, 0, 1}},
      {{1025}, {std::nullopt, 0}},
      {{}, {std::nullopt, 0}},
      {{0, 3}, {std::nullopt, 0, 1}},
  };
  for (DType d : all_dtypes()) {
    for (const auto& [shape, dims] : cases) {
      for (const Variant& v : variants(shape, d)) {
        for (std::optional<int64_t> dim : dims) {
          check_arg(dev, v, dim, false);
          if (v.name == "contiguous") check_arg(dev, v, dim, true);
        }
      }
    }
  }
  // NaN wins (the first one), infinities are ordinary values.
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    Variant specials{"specials", float_specials(d)};
    check_arg(dev, specials, std::nullopt, false);
    Variant grid{"specials 2-D", float_specials(d).view({2, 14})};
    check_arg(dev, grid, 0, false);
    check_arg(dev, grid, 1, true);
    for (const ReduceOpCase& op : kReduceOps)
      check_reduce(dev, op, grid, {1}, false, sum_tol(d, 14));
  }
}

TL_PARITY_CASE("backend parity: reductions of large inputs are exact on integer values (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  // Integer-valued floats: every summation order gives the same, exact result (all partial sums
  // stay below 2^24), so the device's float32 accumulation is compared exactly.
  // Half types too: their float accumulation is exact here, and the result is rounded once.
  for (DType d : {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kFloat16, tl::kInt8}) {
    for (const Variant& v : variants({1000, 1000}, d, Fill::Integral)) {
      if (v.name == "expanded" && d != tl::kFloat32) continue;
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
        for (const ReduceOpCase& op : kReduceOps) {
          if (std::string(op.name) == "tl::prod") continue;
          const bool mean = std::string(op.name) == "tl::mean";
          check_reduce(dev, op, v, dims, false, mean ? Tol{1e-6, 0} : kExact);
        }
      }
      // Many ties: the first index of the max/min must win.
      check_arg(dev, v, std::nullopt, false);
      check_arg(dev, v, 0, false);
      check_arg(dev, v, 1, false);
    }
    Variant flat{"flat", make_values({kBig}, d, Fill::Integral)};
    check_reduce(dev, reduce_op("tl::sum"), flat, {}, false, kExact);
    check_reduce(dev, reduce_op("tl::max"), flat, {}, false, kExact);
    check_arg(dev, flat, std::nullopt, false);
  }
  // Products of +-1 are exact too.
  Variant signs{"signs", tl::randint(0, 2, {1000, 1000}).to(tl::kFloat32) * 2 - 1};
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}})
    check_reduce(dev, reduce_op("tl::prod"), signs, dims, false, kExact);
  // Integer sums and products wrap in int64 identically in any order.
  Tensor ints_with_zeros = make_values({300, 700}, tl::kInt64);
  Variant ints{"int64",
               tl::where(ints_with_zeros == 0, tl::scalar_tensor(3, tl::kInt64), ints_with_zeros)};
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
    check_reduce(dev, reduce_op("tl::sum"), ints, dims, false, kExact);
    check_reduce(dev, reduce_op("tl::prod"), ints, dims, false, kExact);
  }
  // all/any decided by a single element at the very end.
  Tensor ones = tl::ones({kBig}, tl::kBool);
  ones.slice(0, kBig - 1).fill_(false);
  check_op(dev, "all with last false", {ones},
           [](std::vector<Tensor>& in) { return tl::all(in[0]); });
  check_op(dev, "any with last true", {tl::logical_not(ones)},
           [](std::vector<Tensor>& in) { return tl::any(in[0]); });
  check_op(dev, "argmax at the end", {tl::logical_not(ones)},
           [](std::vector<Tensor>& in) { return tl::argmax(in[0]); });
}

TL_PARITY_CASE("backend parity: reductions of large random inputs within float tolerance (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  for (DType d : dtypes_of(tl::kFloatingDTypes)) {
    for (const Variant& v : variants({1000, 1000}, d)) {
      if (v.name != "contiguous" && v.name != "transposed" && v.name != "sliced") continue;
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
        const Tol tol = sum_tol(d, reduced_count({1000, 1000}, dims));
        for (const ReduceOpCase& op : kReduceOps)
          if (std::string(op.name) != "tl::prod") check_reduce(dev, op, v, dims, false, tol);
      }
    }
    Variant flat{"flat", make_values({kBig}, d)};
    check_reduce(dev, reduce_op("tl::sum"), flat, {}, false, sum_tol(d, kBig));
    check_reduce(dev, reduce_op("tl::mean"), flat, {}, false, sum_tol(d, kBig));
    check_arg(dev, flat, std::nullopt, false);
  }
  // More outputs than a grid's y or z dimension holds, and a long reduction into few outputs.
  for (DType d : {tl::kFloat32, tl::kInt32}) {
    Variant tall{"tall", make_values({70001, 3}, d, Fill::Integral)};
    for (int64_t dim : {0, 1}) {
      for (const ReduceOpCase& op : kReduceOps)
        if (std::string(op.name) != "tl::prod")
          check_reduce(dev, op, tall, {dim}, false, {1e-6, 0});
      check_arg(dev, tall, dim, false);
    }
    Variant wide{"wide", make_values({3, 70001}, d, Fill::Integral)};
    check_reduce(dev, reduce_op("tl::sum"), wide, {1}, true, kExact);
    check_arg(dev, wide, 1, true);
  }
}

// Backend parity of sort, argsort, topk and kthvalue: every dtype, every layout, row lengths on
// each side of the device kernels' limits (one block's sort: 4096; selection vs sorting in
// topk), specials. Values must match the CPU exactly; indices must point at those values (any
// order of equal elements), and match the CPU's exactly for stable sorts.
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Shape;
using tl::Tensor;
using tl::ValuesIndices;

using OrderFn = std::function<ValuesIndices(const Tensor&)>;

enum class Indices { Exact, Consistent, AnyOrder };

// Runs fn on x (CPU) and on its same-layout twin on dev. Exact: values and indices as the CPU's.
// Consistent: values as the CPU's, dev's indices pick its values out of x. AnyOrder (topk not
// sorted): the same, after sorting both results' values along dim. `dim` must be wrapped; the
// results keep x's rank (kthvalue with keepdim).
void check_ordering(tl::Device dev, const std::string& what, const Tensor& x, int64_t dim,
                    Indices mode, const OrderFn& fn) {
  INFO(what << " [device " << dev.str() << "]");
  const Tensor xd = same_layout_on(x, dev);
  ValuesIndices cpu, got;
  std::string cpu_error, dev_error;
  try {
    cpu = fn(x);
  } catch (const tl::Error& e) {
    cpu_error = e.what();
  }
  try {
    got = fn(xd);
  } catch (const tl::Error& e) {
    dev_error = e.what();
  }
  INFO("cpu: " << (cpu_error.empty() ? "no error" : cpu_error));
  INFO(dev.str() << ": " << (dev_error.empty() ? "no error" : dev_error));
  REQUIRE(cpu_error.empty() == dev_error.empty());
  if (!cpu_error.empty()) return;
  CHECK(got.indices.dtype() == tl::kInt64);
  // A full-length result's indices are a permutation of each row: the same set as the CPU's.
  if (x.dim() > 0 && got.indices.shape() == x.shape() && mode != Indices::Exact)
    check_same(tl::sort(cpu.indices, dim).values, tl::sort(got.indices, dim).values, kExact, dev);
  if (mode == Indices::AnyOrder) {
    const int64_t d = x.dim() == 0 ? 0 : dim;
    check_same(tl::sort(cpu.values, d).values, tl::sort(got.values, d).values, kExact, dev);
  } else {
    check_same(cpu.values, got.values, kExact, dev);
  }
  if (mode == Indices::Exact) check_same(cpu.indices, got.indices, kExact, dev);
  if (x.dim() > 0 && got.indices.numel() > 0)
    check_same(tl::gather(xd, dim, got.indices), got.values, kExact, dev,
               "gather(x, dim, indices)");
}

// Sort (every order), argsort, topk (several k, both directions, sorted or not) and kthvalue
// (first, middle, last) of x along dim.
void check_all(tl::Device dev, const std::string& what, const Tensor& x, int64_t dim,
               const std::vector<int64_t>& ks) {
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[dim];
  for (bool descending : {false, true}) {
    const std::string how = what + " dim " + std::to_string(dim) + (descending ? " desc" : "");
    check_ordering(dev, "tl::sort stable" + how, x, dim, Indices::Exact,
                   [&](const Tensor& t) { return tl::sort(t, dim, descending, true); });
    check_ordering(dev, "tl::sort" + how, x, dim, Indices::Consistent,
                   [&](const Tensor& t) { return tl::sort(t, dim, descending); });
    check_ordering(dev, "tl::argsort stable" + how, x, dim, Indices::Exact, [&](const Tensor& t) {
      Tensor i = tl::argsort(t, dim, descending, true);
      return ValuesIndices{tl::sort(t, dim, descending, true).values, i};
    });
  }
  for (int64_t k : ks) {
    if (k > n) continue;
    for (bool largest : {true, false}) {
      for (bool sorted : {true, false}) {
        const std::string how = what + " dim " + std::to_string(dim) + " k " + std::to_string(k) +
                                (largest ? " largest" : " smallest") + (sorted ? " sorted" : "");
        check_ordering(dev, "tl::topk" + how, x, dim,
                       sorted ? Indices::Consistent : Indices::AnyOrder,
                       [&](const Tensor& t) { return tl::topk(t, k, dim, largest, sorted); });
      }
    }
  }
  for (int64_t k : {int64_t{1}, (n + 1) / 2, n}) {
    if (n == 0) break;
    check_ordering(dev, "tl::kthvalue" + what + " k " + std::to_string(k), x, dim,
                   Indices::Consistent,
                   [&](const Tensor& t) { return tl::kthvalue(t, k, dim, true); });
  }
}

// Floats from a small set (many ties) with NaN and infinities among them; integers and bools
// from make_values (ties in any row longer than their range).
Tensor tied(const Shape& s, DType d) {
  if (!tl::is_floating_point(d)) return make_values(s, d);
  Tensor x = tl::randint(-20, 21, s).to(tl::kFloat64) * 0.25;
  Tensor u = tl::rand(s);
  x = tl::where(u < 0.03, tl::full({}, std::nan(""), tl::kFloat64), x);
  x = tl::where((u >= 0.03) & (u < 0.05), tl::full({}, INFINITY, tl::kFloat64), x);
  return x.to(d);
}

}  // namespace

TL_PARITY_CASE("backend parity: sort, topk and kthvalue over lengths, dims, layouts, dtypes") {
  // Lengths 1, 31, 1000 (one block's sort), 4097 and 5000 (past it: the device's radix sorts,
  // two rows regrouped, one row on its own; topk of k = 100 selects, kthvalue's k = 2500 sorts),
  // and dims with elements after them.
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{1}, {0}},    {{31}, {0}}, {{3, 31}, {1, 0}}, {{2, 1000}, {1}},       {{2, 4097}, {-1}},
      {{5000}, {0}}, {{}, {0}},   {{0, 7}, {0, 1}},  {{3, 4, 5}, {0, 1, 2}},
  };
  for (DType d : all_dtypes()) {
    for (const auto& [shape, dims] : cases) {
      for (const Variant& v : variants(shape, d)) {
        const Variant t{v.name,
                        tl::is_floating_point(d) && v.name == "contiguous" ? tied(shape, d) : v.t};
        for (int64_t dim : dims) {
          const int64_t wrapped = shape.size() == 0 ? 0 : (dim + shape.size()) % shape.size();
          check_all(dev, describe("", d, shape, t.name), t.t, wrapped, {0, 1, 3, 100});
        }
      }
    }
  }
  // Specials: NaN (two), infinities, signed zeros, denormals; integer extremes.
  for (DType d : all_dtypes()) {
    if (d == tl::kBool) continue;
    const Tensor s = tl::is_floating_point(d) ? float_specials(d) : int_specials(d);
    check_all(dev, describe(" specials", d, s.shape(), "contiguous"), s, 0, {1, 5});
    check_all(dev, describe(" specials", d, {2, s.numel() / 2}, "rows"), s.view({2, -1}), 1, {2});
  }
}

TL_PARITY_CASE("backend parity: sort and topk of long rows (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  // 16M keys in one row (one device-wide radix sort; 4M float64: 8-byte keys); [4096, 4096] (one
  // block per row); [300, 70000] and [200, 5000] (a segment per row); [2, 8M] (one sort, then
  // regrouped by row); topk of [1024, 32768] with k = 100 (selection) and of the 16M row.
  const int64_t m16 = int64_t{1} << 24;
  const std::vector<std::pair<Shape, DType>> sorts{
      {{m16}, tl::kFloat32},        {{m16}, tl::kInt32},           {{4096, 4096}, tl::kFloat32},
      {{300, 70000}, tl::kFloat32}, {{2, m16 / 2}, tl::kBFloat16}, {{64, 5000}, tl::kFloat64},
      {{4096, 4096}, tl::kFloat16}, {{200, 5000}, tl::kFloat16},   {{m16 / 4}, tl::kFloat64},
  };
  for (const auto& [shape, d] : sorts) {
    const Tensor x = tied(shape, d);
    for (bool descending : {false, true}) {
      check_ordering(dev, describe("tl::sort", d, shape, descending ? "desc" : "asc"), x,
                     shape.size() - 1, Indices::Exact,
                     [&](const Tensor& t) { return tl::sort(t, -1, descending, true); });
    }
  }
  const std::vector<std::tuple<Shape, DType, int64_t>> topks{
      {{1024, 32768}, tl::kFloat32, 100},  {{1024, 32768}, tl::kFloat32, 1},
      {{m16}, tl::kFloat32, 1000},         {{256, 100000}, tl::kInt64, 50},
      {{1024, 32768}, tl::kFloat16, 3000},
  };
  for (const auto& [shape, d, k] : topks) {
    const Tensor x = tied(shape, d);
    for (bool largest : {true, false}) {
      check_ordering(dev, describe("tl::topk", d, shape, "k " + std::to_string(k)), x,
                     shape.size() - 1, Indices::Consistent,
                     [&](const Tensor& t) { return tl::topk(t, k, -1, largest); });
    }
  }
  check_ordering(dev, "tl::kthvalue [1024, 32768] k 20000", tied({1024, 32768}, tl::kFloat32), 1,
                 Indices::Consistent,
                 [](const Tensor& t) { return tl::kthvalue(t, 20000, 1, true); });
}

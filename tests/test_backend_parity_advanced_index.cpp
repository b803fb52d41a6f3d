// Backend parity of advanced indexing, take and put_: every dtype, self in every layout
// (contiguous, offset, sliced, transposed, expanded, permuted), index tensors int64/int32 with
// negative values, masks, 0-size results; writes compared over the whole storage.
#include <cstdint>
#include <string>
#include <vector>

#include "backend_parity.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Ellipsis;
using tl::None;
using tl::Shape;
using tl::Slice;
using tl::Tensor;

// n distinct positions in [-size, size) (every other one negative): put without accumulate has
// no duplicate whose winner would be undefined.
Tensor distinct_index(int64_t n, int64_t size, const Shape& shape) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = (i * 11 + 3) % size;  // size is never a multiple of 11 here
    v.push_back(i % 2 ? p - size : p);
  }
  return tl::from_vector<int64_t>(v, shape);
}

// Random positions in [-size, size), duplicates likely.
Tensor random_index(const Shape& shape, int64_t size, DType d = tl::kInt64) {
  return tl::randint(-size, size, shape, d);
}

}  // namespace

TL_PARITY_CASE("parity: advanced index reads") {
  for (DType d : all_dtypes()) {
    for (const Variant& v : variants({6, 5, 9}, d)) {
      const std::string what = describe("tl::index", d, {6, 5, 9}, v.name);
      const Tensor a = random_index({4}, 5), a0 = random_index({4}, 6);
      const Tensor b = random_index({2, 1}, 9, tl::kInt32);
      const Tensor mask = make_values({6, 5}, tl::kBool, Fill::Sparse);
      check_op(dev, what + " adjacent", {v.t, a, b}, [](std::vector<Tensor>& in) {
        return in[0].index({Slice(), in[1], in[2]});
      });
      check_op(dev, what + " separated", {v.t, a0, b}, [](std::vector<Tensor>& in) {
        return in[0].index({in[1], Slice(), in[2]});
      });
      check_op(dev, what + " mask", {v.t, mask}, [](std::vector<Tensor>& in) {
        return in[0].index({in[1], Slice(1, None, 3)});
      });
      check_op(dev, what + " none/ellipsis", {v.t, b}, [](std::vector<Tensor>& in) {
        return in[0].index({None, Ellipsis, in[1], true});
      });
      check_op(dev, what + " 0-size", {v.t, tl::zeros({0}, tl::kInt64)},
               [](std::vector<Tensor>& in) {
                 return in[0].index({Slice(), Slice(), in[1]});
               });
      check_op(dev, what + " take", {v.t, random_index({3, 7}, 270)},
               [](std::vector<Tensor>& in) { return tl::take(in[0], in[1]); });
    }
  }
}

TL_PARITY_CASE("parity: advanced index writes") {
  for (DType d : all_dtypes()) {
    for (const std::string& layout : kViewLayouts) {
      const Shape s{5, 7, 3};
      const std::string what = describe("tl::index_put_", d, s, layout);
      // A fresh destination per case: the CPU run writes into its input.
      auto self = [&] { return poisoned_view(s, d, layout); };
      // Distinct positions: without accumulate the result is defined.
      const Tensor rows = distinct_index(5, 5, {5}), cols = distinct_index(5, 7, {5});
      check_op(dev, what, {self(), rows, cols, make_values({5, 3}, d)},
               [](std::vector<Tensor>& in) {
                 in[0].index_put_({in[1], in[2]}, in[3]);
                 return whole_storage(in[0]);
               });
      check_op(dev, what + " separated",
               {self(), rows, distinct_index(5, 3, {5}), make_values({5, 7}, d)},
               [](std::vector<Tensor>& in) {
                 in[0].index_put_({in[1], Slice(), in[2]}, in[3]);
                 return whole_storage(in[0]);
               });
      // Accumulate with duplicates: integral values add exactly in any order.
      check_op(dev, what + " accumulate",
               {self(), random_index({40}, 7), make_values({40, 1}, d, Fill::Integral)},
               [](std::vector<Tensor>& in) {
                 in[0].index_put_({Slice(), in[1]}, in[2], true);
                 return whole_storage(in[0]);
               });
      check_op(dev, what + " mask scalar", {self(), make_values(s, tl::kBool, Fill::Sparse)},
               [](std::vector<Tensor>& in) {
                 in[0].index_put_({in[1]}, 1);
                 return whole_storage(in[0]);
               });
      check_op(dev, "tl::put_ " + what,
               {self(), distinct_index(20, 105, {4, 5}), make_values({20}, d)},
               [](std::vector<Tensor>& in) {
                 in[0].put_(in[1], in[2]);
                 return whole_storage(in[0]);
               });
      check_op(dev, "tl::put_ accumulate " + what,
               {self(), random_index({300}, 105), make_values({300}, d, Fill::Integral)},
               [](std::vector<Tensor>& in) {
                 in[0].put_(in[1], in[2], true);
                 return whole_storage(in[0]);
               });
    }
  }
}

TL_PARITY_CASE("parity: advanced index on an expanded self is refused") {
  const Tensor x = make_values({1, 4}, tl::kFloat32).expand({3, 4});
  check_op(dev, "tl::index_put_ expanded", {x, tl::from_vector<int64_t>({0})},
           [](std::vector<Tensor>& in) { return in[0].index_put_({in[1]}, 1.0); });
  // Reading an expanded self is fine.
  check_op(dev, "tl::index expanded", {x, tl::from_vector<int64_t>({2, -1, 0})},
           [](std::vector<Tensor>& in) {
             return in[0].index({Slice(), in[1]});
           });
}

TL_PARITY_CASE("parity: advanced index (large)") {
  TL_PARITY_SKIP_LARGE_ON_CPU();
  const Tensor x = make_values({kBig / 64, 64}, tl::kFloat32).t();  // [64, kBig / 64]
  check_op(dev, "tl::index large", {x, random_index({3000}, kBig / 64)},
           [](std::vector<Tensor>& in) {
             return in[0].index({Slice(), in[1]});
           });
  check_op(dev, "tl::put_ accumulate large",
           {make_values({kBig}, tl::kFloat32, Fill::Integral), random_index({kBig}, 1000),
            make_values({kBig}, tl::kFloat32, Fill::Integral)},
           [](std::vector<Tensor>& in) {
             in[0].put_(in[1], in[2], true);
             return in[0];
           });
}

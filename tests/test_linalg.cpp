// Matrix products (matmul, mm, bmm, dot, linear) against a naive triple loop, on every device.
#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>

#include "test_util.h"

namespace {

namespace tl = tensorlet;
using tl_test::check_throws;
using tl_test::check_values;
using tl_test::random_tensor;
using tl_test::values_of;

// PyTorch's matmul written out independently: 1-D operands become [1, K] / [K, 1], batch dims
// broadcast, and the added dims are dropped from the result shape.
struct Reference {
  tl::Shape shape;
  std::vector<double> values;
};

Reference naive_matmul(const tl::Tensor& a, const tl::Tensor& b) {
  std::vector<double> av = values_of(a), bv = values_of(b);
  tl::Shape as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(0, 1);
  if (b_vec) bs.push_back(1);
  const int64_t na = as.size() - 2, nb = bs.size() - 2, n_batch = std::max(na, nb);
  tl::Shape batch;
  for (int64_t d = 0; d < n_batch; ++d) {
    int64_t da = d - (n_batch - na) >= 0 ? as[d - (n_batch - na)] : 1;
    int64_t db = d - (n_batch - nb) >= 0 ? bs[d - (n_batch - nb)] : 1;
    batch.push_back(std::max(da, db));
  }
  const int64_t m = as[as.size() - 2], k = as[as.size() - 1], n = bs[bs.size() - 1];
  Reference r;
  r.shape = batch;
  if (!a_vec) r.shape.push_back(m);
  if (!b_vec) r.shape.push_back(n);
  r.values.assign(batch.numel() * m * n, 0.0);
  for (int64_t i = 0; i < batch.numel(); ++i) {
    std::vector<int64_t> idx = tl_test::unravel(i, batch);
    // Linear matrix index of this batch element in a and in b (size-1 dims broadcast).
    int64_t ia = 0, ib = 0;
    for (int64_t d = 0; d < na; ++d) ia = ia * as[d] + (as[d] == 1 ? 0 : idx[d + n_batch - na]);
    for (int64_t d = 0; d < nb; ++d) ib = ib * bs[d] + (bs[d] == 1 ? 0 : idx[d + n_batch - nb]);
    for (int64_t r_ = 0; r_ < m; ++r_)
      for (int64_t c = 0; c < n; ++c) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += av[ia * m * k + r_ * k + p] * bv[ib * k * n + p * n + c];
        r.values[(i * m + r_) * n + c] = s;
      }
  }
  return r;
}

void check_product(const tl::Tensor& got, const tl::Tensor& a, const tl::Tensor& b) {
  Reference r = naive_matmul(a, b);
  CHECK(got.shape() == r.shape);
  CHECK(got.dtype() == a.dtype());
  CHECK(got.device() == a.device());
  CHECK(got.is_contiguous());
  if (tl::is_floating_point(a.dtype()))
    check_values(got, r.values, 1e-4, 1e-4);
  else
    check_values(got, r.values, 0, 0);
}

const tl::DType kMatmulDTypes[] = {tl::kFloat32, tl::kFloat64, tl::kInt32, tl::kInt64};

}  // namespace

TEST_CASE("matmul 2-D @ 2-D in every layout and dtype") {
  // Tiny (direct loop), mid-size and large (Eigen GEMM) products, including vector-like shapes.
  const std::vector<std::array<int64_t, 3>> sizes = {
      {3, 3, 3},   {1, 1, 1},   {2, 5, 3},    {7, 1, 4},   {1, 9, 1},
      {17, 33, 9}, {1, 80, 70}, {64, 70, 65}, {90, 1, 80}, {33, 100, 1}};
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : kMatmulDTypes)
      for (auto [m, k, n] : sizes) {
        tl::Tensor a = random_tensor({m, k}, dtype, dev), b = random_tensor({k, n}, dtype, dev);
        for (const auto& la : tl_test::layouts_of(a))
          for (const auto& lb : tl_test::layouts_of(b)) {
            CAPTURE(dev);
            CAPTURE(dtype);
            CAPTURE(m);
            CAPTURE(k);
            CAPTURE(n);
            CAPTURE(la.name);
            CAPTURE(lb.name);
            check_product(tl::matmul(la.tensor, lb.tensor), a, b);
            check_product(tl::mm(la.tensor, lb.tensor), a, b);
            check_product(la.tensor.matmul(lb.tensor), a, b);
          }
      }
}

TEST_CASE("matmul of transposed views and strided slices") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : {tl::kFloat32, tl::kInt64})
      for (int64_t size : {4, 60}) {
        CAPTURE(dtype);
        CAPTURE(size);
        // x.t() views: the column-major case of each operand.
        tl::Tensor x = random_tensor({size, size + 3}, dtype, dev);
        tl::Tensor y = random_tensor({size + 5, size + 3}, dtype, dev);
        check_product(tl::matmul(x, y.t()), x, y.t().contiguous());
        check_product(tl::matmul(x.t(), x), x.t().contiguous(), x);
        check_product(tl::matmul(y.t().t(), x.t()), y, x.t().contiguous());
        // Steps in both dims: no stride is 1, so the operand is packed before Eigen sees it.
        tl::Tensor big = random_tensor({2 * size, 2 * size + 2}, dtype, dev);
        tl::Tensor s = big.slice(0, 0, std::nullopt, 2).slice(1, 1, std::nullopt, 2);
        check_product(tl::matmul(s, s.t()), s.contiguous(), s.t().contiguous());
        // Broadcast (stride 0 in both dims) and broadcast rows (stride 0 in one).
        tl::Tensor one = random_tensor({1, 1}, dtype, dev);
        tl::Tensor e = one.expand({size, size + 1});
        tl::Tensor row = random_tensor({1, size + 1}, dtype, dev).expand({size, size + 1});
        check_product(tl::matmul(e, row.t()), e.contiguous(), row.t().contiguous());
        check_product(tl::matmul(row, row.t()), row.contiguous(), row.t().contiguous());
      }
}

TEST_CASE("matmul 1-D rules: dot, vector @ matrix, matrix @ vector") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : kMatmulDTypes) {
      CAPTURE(dtype);
      tl::Tensor v = random_tensor({5}, dtype, dev), w = random_tensor({5}, dtype, dev);
      tl::Tensor d = tl::matmul(v, w);
      CHECK(d.dim() == 0);
      check_product(d, v, w);
      check_product(tl::dot(v, w), v, w);
      tl::Tensor m = random_tensor({5, 3}, dtype, dev), mt = random_tensor({4, 5}, dtype, dev);
      CHECK(tl::matmul(v, m).shape() == tl::Shape{3});
      check_product(tl::matmul(v, m), v, m);
      CHECK(tl::matmul(mt, v).shape() == tl::Shape{4});
      check_product(tl::matmul(mt, v), mt, v);
      // Sliced vectors and a transposed matrix.
      for (const auto& lv : tl_test::layouts_of(v))
        for (const auto& lm : tl_test::layouts_of(m)) {
          check_product(tl::matmul(lv.tensor, lm.tensor), v, m);
          check_product(tl::matmul(lm.tensor.t(), lv.tensor), m.t().contiguous(), v);
        }
      // 1-D against batched operands.
      tl::Tensor batched = random_tensor({2, 5, 3}, dtype, dev);
      check_product(tl::matmul(v, batched), v, batched);
      tl::Tensor batched2 = random_tensor({3, 2, 4, 5}, dtype, dev);
      check_product(tl::matmul(batched2, w), batched2, w);
      CHECK(tl::matmul(batched2, w).shape() == tl::Shape{3, 2, 4});
    }
}

TEST_CASE("matmul batched with broadcast batch dims") {
  const std::vector<std::pair<tl::Shape, tl::Shape>> cases = {
      {{4, 2, 3}, {4, 3, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}},
      {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 5}},
      {{1, 3, 4}, {6, 4, 2}},
      {{2, 1, 1, 3, 4}, {3, 1, 4, 2}},
      {{300, 10, 10}, {300, 10, 10}},
      {{3, 70, 80}, {3, 80, 90}},
      {{2, 70, 80}, {80, 64}},
  };
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : kMatmulDTypes)
      for (const auto& [sa, sb] : cases) {
        CAPTURE(dtype);
        CAPTURE(sa);
        CAPTURE(sb);
        tl::Tensor a = random_tensor(sa, dtype, dev), b = random_tensor(sb, dtype, dev);
        for (const auto& la : tl_test::layouts_of(a))
          for (const auto& lb : tl_test::layouts_of(b)) {
            CAPTURE(la.name);
            CAPTURE(lb.name);
            check_product(tl::matmul(la.tensor, lb.tensor), a, b);
          }
      }
  // An operand expanded to a batch (stride-0 batch dim) is read, never materialised.
  for (tl::Device dev : tl_test::test_devices()) {
    tl::Tensor m = random_tensor({1, 6, 7}, tl::kFloat32, dev);
    tl::Tensor batch = random_tensor({5, 7, 3}, tl::kFloat32, dev);
    tl::Tensor ex = m.expand({5, 6, 7});
    check_product(tl::matmul(ex, batch), ex.contiguous(), batch);
    check_product(tl::bmm(ex, batch), ex.contiguous(), batch);
    // Broadcast batch dims over matrices Eigen cannot map (steps in both dims, permuted).
    tl::Tensor holder = random_tensor({1, 24, 14}, tl::kFloat32, dev);
    tl::Tensor stepped =
        holder.slice(1, 0, std::nullopt, 2).slice(2, 0, std::nullopt, 2);  // [1, 12, 7]
    tl::Tensor sex = stepped.expand({5, 12, 7});
    check_product(tl::matmul(sex, batch), sex.contiguous(), batch);
    tl::Tensor perm = random_tensor({7, 3, 5}, tl::kFloat32, dev).permute({2, 0, 1});  // [5, 7, 3]
    check_product(tl::matmul(sex, perm), sex.contiguous(), perm.contiguous());
    check_product(tl::matmul(stepped[0], perm), stepped[0].contiguous(), perm.contiguous());
  }
}

TEST_CASE("matmul with zero-size dims and K = 0") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : kMatmulDTypes) {
      CAPTURE(dtype);
      auto opts = tl::TensorOptions(dtype).device(dev);
      CHECK(tl::matmul(tl::empty({0, 3}, opts), random_tensor({3, 4}, dtype, dev)).shape() ==
            tl::Shape{0, 4});
      CHECK(tl::matmul(random_tensor({3, 4}, dtype, dev), tl::empty({4, 0}, opts)).shape() ==
            tl::Shape{3, 0});
      CHECK(tl::matmul(tl::empty({2, 0, 3}, opts), random_tensor({3, 4}, dtype, dev)).shape() ==
            tl::Shape{2, 0, 4});
      CHECK(tl::matmul(tl::empty({0, 2, 3}, opts), tl::empty({0, 3, 4}, opts)).shape() ==
            tl::Shape{0, 2, 4});
      // K = 0: an empty sum is zero, even though the output memory starts uninitialised.
      tl::Tensor z = tl::matmul(tl::empty({3, 0}, opts), tl::empty({0, 4}, opts));
      CHECK(z.shape() == tl::Shape{3, 4});
      check_values(z, std::vector<double>(12, 0.0));
      check_values(tl::matmul(tl::empty({2, 3, 0}, opts), tl::empty({0, 5}, opts)),
                   std::vector<double>(30, 0.0));
      tl::Tensor zd = tl::dot(tl::empty({0}, opts), tl::empty({0}, opts));
      CHECK(zd.dim() == 0);
      check_values(zd, {0.0});
      check_values(tl::matmul(tl::empty({5, 0}, opts), tl::empty({0}, opts)),
                   std::vector<double>(5, 0.0));
    }
}

TEST_CASE("matmul results do not depend on the thread count") {
  tl::Tensor a = random_tensor({64, 3, 20}, tl::kFloat64),
             b = random_tensor({64, 20, 9}, tl::kFloat64);
  tl::Tensor big_a = random_tensor({200, 150}, tl::kFloat64),
             big_b = random_tensor({150, 170}, tl::kFloat64);
  const int before = tl::get_num_threads();
  tl::set_num_threads(1);
  tl::Tensor one = tl::matmul(a, b), big_one = tl::matmul(big_a, big_b);
  tl::set_num_threads(std::max(2, before));
  check_values(tl::matmul(a, b), values_of(one), 1e-12, 1e-12);
  check_values(tl::matmul(big_a, big_b), values_of(big_one), 1e-12, 1e-12);
  tl::set_num_threads(before);
  check_product(big_one, big_a, big_b);
}

TEST_CASE("matmul variants: mm, bmm and dot") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : {tl::kFloat64, tl::kInt32}) {
      tl::Tensor a = random_tensor({6, 3, 4}, dtype, dev), b = random_tensor({6, 4, 5}, dtype, dev);
      check_product(tl::bmm(a, b), a, b);
      check_product(tl::bmm(a, b.transpose(1, 2).contiguous().transpose(1, 2)), a, b);
      check_product(tl::mm(a[2], b[3]), a[2].contiguous(), b[3].contiguous());
      check_product(a[1].mm(b[0]), a[1].contiguous(), b[0].contiguous());
      tl::Tensor v = random_tensor({7}, dtype, dev), w = random_tensor({14}, dtype, dev);
      tl::Tensor ws = w.slice(0, 0, std::nullopt, 2);
      check_product(tl::dot(v, ws), v, ws.contiguous());
    }
}

TEST_CASE("linalg linear = x @ w.T + b") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : {tl::kFloat32, tl::kFloat64}) {
      CAPTURE(dtype);
      tl::Tensor x = random_tensor({2, 4, 3}, dtype, dev), w = random_tensor({5, 3}, dtype, dev);
      tl::Tensor bias = random_tensor({5}, dtype, dev);
      tl::Tensor no_bias = tl::linear(x, w);
      check_product(no_bias, x, w.t().contiguous());
      tl::Tensor y = tl::linear(x, w, bias);
      CHECK(y.shape() == tl::Shape{2, 4, 5});
      Reference r = naive_matmul(x, w.t().contiguous());
      std::vector<double> bv = values_of(bias);
      for (size_t i = 0; i < r.values.size(); ++i) r.values[i] += bv[i % 5];
      check_values(y, r.values, 1e-4, 1e-4);
      // 1-D input.
      tl::Tensor x1 = random_tensor({3}, dtype, dev);
      tl::Tensor y1 = tl::linear(x1, w, bias);
      CHECK(y1.shape() == tl::Shape{5});
      Reference r1 = naive_matmul(x1, w.t().contiguous());
      for (size_t i = 0; i < 5; ++i) r1.values[i] += bv[i];
      check_values(y1, r1.values, 1e-4, 1e-4);
    }
}

// Integer matmul wraps in two's complement, as elementwise integer ops do: the reference sums
// products in the unsigned type of the same width.
template <typename T>
void check_int_matmul_wraps(tl::Device dev, int64_t m, int64_t k, int64_t n) {
  using U = std::make_unsigned_t<T>;
  const tl::DType dtype = sizeof(T) == 4 ? tl::kInt32 : tl::kInt64;
  CAPTURE(dtype);
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  // Values near the top of the range, so that nearly every product overflows.
  std::vector<T> av(m * k), bv(k * n);
  const T big = std::numeric_limits<T>::max() / 3;
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<T>(big - 7 * i);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<T>((i % 2 ? -big : big) + 5 * i);
  tl::Tensor a = tl::from_vector(av, {m, k}, dev), b = tl::from_vector(bv, {k, n}, dev);
  std::vector<T> expected(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      U acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += static_cast<U>(av[i * k + p]) * static_cast<U>(bv[p * n + j]);
      expected[i * n + j] = static_cast<T>(acc);
    }
  CHECK(tl::matmul(a, b).template to_vector<T>() == expected);
  // A transposed operand takes the other layout path.
  CHECK(tl::matmul(a, b.t().contiguous().t()).template to_vector<T>() == expected);
}

TEST_CASE("matmul: integer products wrap in two's complement on every path") {
  for (tl::Device dev : tl_test::test_devices()) {
    CAPTURE(dev);
    for (auto [m, k, n] : {std::array<int64_t, 3>{2, 3, 2}, {4, 4, 4}, {17, 33, 9}, {64, 70, 65}}) {
      check_int_matmul_wraps<int32_t>(dev, m, k, n);
      check_int_matmul_wraps<int64_t>(dev, m, k, n);
    }
  }
}

TEST_CASE("matmul errors") {
  using tl::kFloat32;
  tl::Tensor a23 = random_tensor({2, 3}, kFloat32), b45 = random_tensor({4, 5}, kFloat32);
  check_throws<tl::ShapeError>([&] { tl::matmul(a23, b45); },
                               "[tl::matmul] inner dimensions differ: [2, 3] @ [4, 5]");
  check_throws<tl::DTypeError>(
      [&] {
        tl::matmul(a23, random_tensor({3, 2}, tl::kFloat64));
      },
      "[tl::matmul] expected both inputs to have the same dtype, got float32 and float64");
  tl::Tensor bools = tl::ones({2, 2}, tl::kBool);
  check_throws<tl::DTypeError>([&] { tl::matmul(bools, bools); }, "tl::matmul");
  tl::Tensor scalar = tl::scalar_tensor(2.0f);
  check_throws<tl::ShapeError>([&] { tl::matmul(scalar, a23); }, "tl::matmul");
  check_throws<tl::ShapeError>([&] { tl::matmul(a23, scalar); }, "tl::matmul");
  check_throws<tl::ShapeError>(
      [&] { tl::matmul(random_tensor({3}, kFloat32), random_tensor({4}, kFloat32)); },
      "[tl::matmul] inner dimensions differ: [3] @ [4]");
  check_throws<tl::ShapeError>(
      [&] {
        tl::matmul(random_tensor({2, 2, 3}, kFloat32), random_tensor({3, 3, 4}, kFloat32));
      },
      "tl::matmul");
  check_throws<tl::ShapeError>(
      [&] {
        tl::matmul(random_tensor({2, 3, 4}, kFloat32), random_tensor({5}, kFloat32));
      },
      "[tl::matmul] inner dimensions differ: [2, 3, 4] @ [5]");
  check_throws<tl::Error>([&] { tl::matmul(tl::Tensor(), a23); }, "tl::matmul");

  check_throws<tl::ShapeError>(
      [&] {
        tl::mm(random_tensor({2, 2, 3}, kFloat32), random_tensor({3, 4}, kFloat32));
      },
      "tl::mm");
  check_throws<tl::ShapeError>([&] { tl::mm(a23, b45); }, "[tl::mm] inner dimensions differ");
  check_throws<tl::ShapeError>([&] { tl::bmm(a23, b45); }, "tl::bmm");
  check_throws<tl::ShapeError>(
      [&] {
        tl::bmm(random_tensor({2, 2, 3}, kFloat32), random_tensor({3, 3, 4}, kFloat32));
      },
      "tl::bmm");
  check_throws<tl::ShapeError>(
      [&] {
        tl::bmm(random_tensor({2, 2, 3}, kFloat32), random_tensor({2, 4, 4}, kFloat32));
      },
      "[tl::bmm] inner dimensions differ");
  check_throws<tl::DTypeError>(
      [&] {
        tl::bmm(tl::ones({1, 2, 2}, tl::kInt32), tl::ones({1, 2, 2}, tl::kInt64));
      },
      "tl::bmm");
  check_throws<tl::ShapeError>([&] { tl::dot(a23, a23); }, "tl::dot");
  check_throws<tl::ShapeError>(
      [&] { tl::dot(random_tensor({3}, kFloat32), random_tensor({4}, kFloat32)); }, "tl::dot");
  check_throws<tl::ShapeError>(
      [&] {
        tl::linear(random_tensor({4, 3}, kFloat32), random_tensor({5, 4}, kFloat32));
      },
      "tl::linear");
  check_throws<tl::ShapeError>(
      [&] {
        tl::linear(random_tensor({4, 3}, kFloat32), random_tensor({2, 5, 3}, kFloat32));
      },
      "tl::linear");
  check_throws<tl::ShapeError>(
      [&] {
        tl::linear(random_tensor({4, 3}, kFloat32), random_tensor({5, 3}, kFloat32),
                   random_tensor({4}, kFloat32));
      },
      "tl::linear");
  check_throws<tl::DTypeError>(
      [&] {
        tl::linear(random_tensor({4, 3}, kFloat32), random_tensor({5, 3}, kFloat32),
                   random_tensor({5}, tl::kFloat64));
      },
      "tl::linear");

  // Inputs on two different devices, when this machine has a second one.
  for (tl::Device dev : tl_test::test_devices()) {
    if (dev == a23.device()) continue;
    tl::Tensor other = a23.to(dev);
    check_throws<tl::DeviceError>([&] { tl::matmul(a23, other.t()); }, "tl::matmul");
    check_throws<tl::DeviceError>([&] { tl::mm(a23, other.t()); }, "tl::mm");
  }
}

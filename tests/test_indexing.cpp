// Indexing (nonzero, nonzero_tuple, masked_select, index_select, gather) against reference loops.
#include <cstdint>
#include <optional>

#include "test_util.h"

using namespace tl_test;

namespace {

const std::vector<tl::DType> kAllDTypes = {tl::kBool, tl::kInt32, tl::kInt64, tl::kFloat32,
                                           tl::kFloat64};

// Random values with about a third of them zeroed (random floats are never exactly zero).
tl::Tensor sparse_random(const tl::Shape& shape, tl::DType dtype, tl::Device device) {
  std::vector<double> v = values_of(random_tensor(shape, dtype));
  for (size_t i = 0; i < v.size(); ++i)
    if ((i * 7919) % 3 == 0) v[i] = 0;
  return tl::from_vector(v, shape).to(dtype).to(device);
}

// Row-major multi-indices of the non-zero elements, flattened.
std::vector<double> nonzero_reference(const tl::Tensor& t, int64_t* count) {
  std::vector<double> v = values_of(t), out;
  *count = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0) continue;
    ++*count;
    for (int64_t d : unravel(static_cast<int64_t>(i), t.shape()))
      out.push_back(static_cast<double>(d));
  }
  return out;
}

// Row-major linear index into `shape` of a multi-index of a (broadcast) shape of at least as many
// dims.
int64_t broadcast_index(const std::vector<int64_t>& idx, const tl::Shape& shape) {
  const int64_t lead = static_cast<int64_t>(idx.size()) - shape.size();
  int64_t linear = 0;
  for (int64_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + (shape[d] == 1 ? 0 : idx[lead + d]);
  return linear;
}

// NumPy broadcasting of two shapes (assumed compatible).
tl::Shape broadcast(const tl::Shape& a, const tl::Shape& b) {
  const int64_t n = std::max(a.size(), b.size());
  tl::Shape out = tl::Shape::filled(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t linear_index(const std::vector<int64_t>& idx, const tl::Shape& shape) {
  int64_t linear = 0;
  for (int64_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + idx[d];
  return linear;
}

}  // namespace

TEST_CASE("index: nonzero matches a reference on every dtype and layout") {
  for (tl::Device device : test_devices()) {
    for (const tl::Shape& shape : {tl::Shape{3, 4, 5}, tl::Shape{17}, tl::Shape{1025},
                                   tl::Shape{7, 1, 13}, tl::Shape{301, 401}}) {
      for (tl::DType dtype : kAllDTypes) {
        if (shape.numel() > 100000 && dtype != tl::kFloat32 && dtype != tl::kBool) continue;
        tl::Tensor values = sparse_random(shape, dtype, device);
        int64_t n = 0;
        std::vector<double> expected = nonzero_reference(values, &n);
        for (const Layout& layout : layouts_of(values)) {
          INFO(layout.name << " " << shape << " " << tl::dtype_name(dtype));
          tl::Tensor nz = tl::nonzero(layout.tensor);
          CHECK(nz.dtype() == tl::kInt64);
          CHECK(nz.device() == device);
          CHECK(nz.shape() == tl::Shape{n, shape.size()});
          check_values(nz, expected, 0, 0);
          CHECK(values_of(layout.tensor.nonzero()) == expected);
          std::vector<tl::Tensor> columns = tl::nonzero_tuple(layout.tensor);
          REQUIRE(static_cast<int64_t>(columns.size()) == shape.size());
          for (int64_t d = 0; d < shape.size(); ++d) {
            CHECK(columns[d].shape() == tl::Shape{n});
            CHECK(columns[d].dtype() == tl::kInt64);
            std::vector<double> col;
            for (int64_t i = 0; i < n; ++i) col.push_back(expected[i * shape.size() + d]);
            CHECK(values_of(columns[d]) == col);
          }
        }
      }
    }
  }
}

TEST_CASE("index: nonzero of 0-dim, empty, all-zero and expanded inputs") {
  for (tl::Device device : test_devices()) {
    tl::TensorOptions f32 = tl::TensorOptions(tl::kFloat32).device(device);
    CHECK(tl::nonzero(tl::scalar_tensor(5, f32)).shape() == tl::Shape{1, 0});
    CHECK(tl::nonzero(tl::scalar_tensor(0, f32)).shape() == tl::Shape{0, 0});
    std::vector<tl::Tensor> t = tl::nonzero_tuple(tl::scalar_tensor(5, f32));
    REQUIRE(t.size() == 1);  // as torch: a 0-dim input counts as 1-D
    CHECK(values_of(t[0]) == std::vector<double>{0});
    REQUIRE(tl::nonzero_tuple(tl::scalar_tensor(0, f32)).size() == 1);
    CHECK(tl::nonzero_tuple(tl::scalar_tensor(0, f32))[0].shape() == tl::Shape{0});
    CHECK(tl::nonzero(tl::empty({0, 3}, f32)).shape() == tl::Shape{0, 2});
    CHECK(tl::nonzero(tl::zeros({4, 5}, f32)).shape() == tl::Shape{0, 2});
    CHECK(tl::nonzero(tl::zeros({300000}, f32)).shape() == tl::Shape{0, 1});
    CHECK(tl::nonzero_tuple(tl::empty({2, 0, 3}, f32)).size() == 3);
    tl::Tensor ones = tl::ones({200001}, f32);
    CHECK(values_of(tl::nonzero(ones).view({-1})) == values_of(tl::arange(200001)));
    tl::Tensor row = tl::from_vector(std::vector<int32_t>{0, 3, 0}).to(device);
    tl::Tensor nz = tl::nonzero(row.expand({2, 3}));
    CHECK(values_of(nz) == std::vector<double>{0, 1, 1, 1});
  }
}

TEST_CASE("index: masked_select with equal and broadcast shapes") {
  struct Case {
    tl::Shape a, mask;
  };
  const std::vector<Case> cases = {
      {{3, 4, 5}, {3, 4, 5}}, {{3, 1, 5}, {4, 1}},      {{5}, {3, 4, 5}}, {{3, 4, 5}, {}},
      {{}, {2, 3}},           {{301, 401}, {301, 401}}, {{0, 3}, {3}},
  };
  for (tl::Device device : test_devices()) {
    for (const Case& c : cases) {
      for (tl::DType dtype : kAllDTypes) {
        tl::Tensor a = random_tensor(c.a, dtype, device);
        tl::Tensor mask = random_tensor(c.mask, tl::kBool, device);
        const tl::Shape shape = broadcast(c.a, c.mask);
        const std::vector<double> av = values_of(a), mv = values_of(mask);
        std::vector<double> expected;
        std::vector<int64_t> idx(shape.size(), 0);
        for (int64_t i = 0; i < shape.numel(); ++i) {
          if (mv[broadcast_index(idx, c.mask)] != 0)
            expected.push_back(av[broadcast_index(idx, c.a)]);
          for (int64_t d = shape.size() - 1; d >= 0; --d) {  // next row-major multi-index
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
          }
        }
        std::vector<Layout> a_layouts = layouts_of(a), m_layouts = layouts_of(mask);
        for (size_t k = 0; k < std::max(a_layouts.size(), m_layouts.size()); ++k) {
          const Layout& al = a_layouts[std::min(k, a_layouts.size() - 1)];
          const Layout& ml = m_layouts[m_layouts.size() - 1 - std::min(k, m_layouts.size() - 1)];
          INFO(c.a << " " << al.name << " masked by " << c.mask << " " << ml.name << " "
                   << tl::dtype_name(dtype));
          tl::Tensor got = tl::masked_select(al.tensor, ml.tensor);
          CHECK(got.dtype() == dtype);
          CHECK(got.device() == device);
          CHECK(got.shape() == tl::Shape{static_cast<int64_t>(expected.size())});
          check_values(got, expected, 0, 0);
          CHECK(values_of(al.tensor.masked_select(ml.tensor)) == expected);
        }
      }
    }
  }
}

TEST_CASE("index: index_select on every dim, layout and dtype, with int32 and int64 indices") {
  for (tl::Device device : test_devices()) {
    for (tl::DType dtype : kAllDTypes) {
      tl::Tensor a = random_tensor({5, 6, 7}, dtype, device);
      const std::vector<double> av = values_of(a);
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        const int64_t d = dim < 0 ? dim + 3 : dim;
        for (const std::vector<int64_t>& idx :
             {std::vector<int64_t>{4, 0, 2, 2}, std::vector<int64_t>{3}, std::vector<int64_t>{},
              std::vector<int64_t>{1, 0, 4, 3, 2, 1, 0}}) {
          tl::Shape out_shape = a.shape();
          out_shape[d] = static_cast<int64_t>(idx.size());
          std::vector<double> expected;
          for (int64_t i = 0; i < out_shape.numel(); ++i) {
            std::vector<int64_t> m = unravel(i, out_shape);
            m[d] = idx[m[d]];
            expected.push_back(av[linear_index(m, a.shape())]);
          }
          tl::Tensor i64 = tl::from_vector(idx).to(device);
          std::vector<tl::Tensor> indices = {i64, i64.to(tl::kInt32)};
          if (idx.size() > 1) {
            // A strided index: every other element of a larger one.
            tl::Tensor holder = tl::full({static_cast<int64_t>(idx.size()) * 2}, 99, i64.options());
            holder.slice(0, 0, std::nullopt, 2).copy_(i64);
            indices.push_back(holder.slice(0, 0, std::nullopt, 2));
          }
          for (const Layout& layout : layouts_of(a)) {
            for (const tl::Tensor& index : indices) {
              INFO(layout.name << " " << tl::dtype_name(dtype) << " dim " << dim << " index "
                               << tl::Shape(idx) << " " << tl::dtype_name(index.dtype()));
              tl::Tensor got = tl::index_select(layout.tensor, dim, index);
              CHECK(got.shape() == out_shape);
              CHECK(got.dtype() == dtype);
              check_values(got, expected, 0, 0);
            }
          }
        }
      }
      // A 0-dim index selects one entry and keeps the dim (size 1).
      tl::Tensor one = tl::scalar_tensor(3, tl::TensorOptions(tl::kInt64).device(device));
      CHECK(tl::index_select(a, 1, one).shape() == tl::Shape{5, 1, 7});
      CHECK(values_of(tl::index_select(a, 1, one)) == values_of(a.slice(1, 3, 4)));
      CHECK(values_of(a.index_select(0, one)) == values_of(a.slice(0, 3, 4)));
    }
  }
}

TEST_CASE("index: index_select of 0-dim, empty and large inputs") {
  for (tl::Device device : test_devices()) {
    tl::TensorOptions i64 = tl::TensorOptions(tl::kInt64).device(device);
    tl::Tensor s = tl::scalar_tensor(2.5, tl::TensorOptions(tl::kFloat64).device(device));
    tl::Tensor r = tl::index_select(s, 0, tl::zeros({1}, i64));
    CHECK(r.dim() == 0);
    CHECK(r.item<double>() == 2.5);
    CHECK(tl::index_select(s, -1, tl::zeros({}, i64)).item<double>() == 2.5);
    // Empty inputs: zero-size other dims, and an empty index on an empty dim.
    tl::Tensor e = tl::empty({0, 4}, tl::TensorOptions(tl::kFloat32).device(device));
    CHECK(tl::index_select(e, 1, tl::from_vector(std::vector<int64_t>{3, 1}).to(device)).shape() ==
          tl::Shape{0, 2});
    CHECK(tl::index_select(e, 0, tl::empty({0}, i64)).shape() == tl::Shape{0, 4});
    // Large: many slices per index, and many indices into a 1-D input (both parallel splits).
    tl::Tensor big = random_tensor({1000, 203}, tl::kFloat32, device);
    tl::Tensor rows = tl::randint(0, 1000, {301}, i64);
    tl::Tensor cols = tl::randint(0, 203, {450}, i64);
    const std::vector<double> bv = values_of(big), rv = values_of(rows), cv = values_of(cols);
    std::vector<double> by_rows, by_cols;
    for (double i : rv)
      for (int64_t j = 0; j < 203; ++j) by_rows.push_back(bv[static_cast<int64_t>(i) * 203 + j]);
    for (int64_t i = 0; i < 1000; ++i)
      for (double j : cv) by_cols.push_back(bv[i * 203 + static_cast<int64_t>(j)]);
    for (const Layout& layout : layouts_of(big)) {
      INFO(layout.name);
      check_values(tl::index_select(layout.tensor, 0, rows), by_rows, 0, 0);
      check_values(tl::index_select(layout.tensor, 1, cols), by_cols, 0, 0);
    }
    tl::Tensor line = random_tensor({5000}, tl::kInt32, device);
    tl::Tensor many = tl::randint(0, 5000, {200000}, i64);
    const std::vector<double> lv = values_of(line), mv = values_of(many);
    std::vector<double> picked;
    for (double i : mv) picked.push_back(lv[static_cast<int64_t>(i)]);
    check_values(tl::index_select(line, 0, many), picked, 0, 0);
  }
}

TEST_CASE("index: gather on every dim, layout and dtype") {
  for (tl::Device device : test_devices()) {
    tl::TensorOptions i64 = tl::TensorOptions(tl::kInt64).device(device);
    for (tl::DType dtype : kAllDTypes) {
      tl::Tensor a = random_tensor({4, 5, 6}, dtype, device);
      const std::vector<double> av = values_of(a);
      for (int64_t dim : {0, 1, 2, -1}) {
        const int64_t d = dim < 0 ? dim + 3 : dim;
        for (const tl::Shape& ishape :
             {tl::Shape{4, 5, 6}, tl::Shape{3, 2, 9}, tl::Shape{1, 5, 1}, tl::Shape{2, 0, 3}}) {
          tl::Shape index_shape = ishape;
          for (int64_t k = 0; k < 3; ++k)
            if (k != d) index_shape[k] = std::min(index_shape[k], a.shape()[k]);
          tl::Tensor index = tl::randint(0, a.shape()[d], index_shape, i64);
          const std::vector<double> iv = values_of(index);
          std::vector<double> expected;
          for (int64_t i = 0; i < index_shape.numel(); ++i) {
            std::vector<int64_t> m = unravel(i, index_shape);
            m[d] = static_cast<int64_t>(iv[i]);
            expected.push_back(av[linear_index(m, a.shape())]);
          }
          std::vector<Layout> index_layouts = layouts_of(index);
          std::vector<Layout> a_layouts = layouts_of(a);
          for (const Layout& al : a_layouts) {
            for (const Layout& il : index_layouts) {
              INFO(al.name << " " << tl::dtype_name(dtype) << " dim " << dim << " index "
                           << index_shape << " " << il.name);
              tl::Tensor got = tl::gather(al.tensor, dim, il.tensor);
              CHECK(got.shape() == index_shape);
              CHECK(got.dtype() == dtype);
              check_values(got, expected, 0, 0);
              // int32 indices give the same result, as in torch.
              check_values(tl::gather(al.tensor, dim, il.tensor.to(tl::kInt32)), expected, 0, 0);
            }
          }
        }
      }
    }
    // 0-dim input and index.
    tl::Tensor s = tl::scalar_tensor(4.5, tl::TensorOptions(tl::kFloat32).device(device));
    CHECK(tl::gather(s, 0, tl::zeros({}, i64)).item<float>() == 4.5f);
    // Large (multi-threaded path), gathering along the last dim.
    tl::Tensor big = random_tensor({400, 301}, tl::kFloat64, device);
    tl::Tensor index = tl::randint(0, 301, {400, 500}, i64);
    tl::Tensor got = big.gather(1, index);
    const std::vector<double> bv = values_of(big), iv = values_of(index);
    std::vector<double> expected;
    for (int64_t i = 0; i < 400 * 500; ++i)
      expected.push_back(bv[(i / 500) * 301 + static_cast<int64_t>(iv[i])]);
    check_values(got, expected, 0, 0);
  }
}

TEST_CASE("index: errors name the op and nothing is written") {
  tl::Tensor a = tl::ones({3, 4});
  tl::Tensor idx = tl::from_vector(std::vector<int64_t>{0, 2});
  // nonzero
  check_throws<tl::Error>([] { tl::nonzero(tl::Tensor()); }, "tl::nonzero");
  // masked_select
  check_throws<tl::DTypeError>(
      [&] {
        tl::masked_select(a, tl::ones({3, 4}));
      },
      "tl::masked_select");
  check_throws<tl::DTypeError>([&] { tl::masked_select(a, tl::ones({3, 4}, tl::kInt32)); }, "bool");
  check_throws<tl::ShapeError>([&] { tl::masked_select(a, tl::ones({3}, tl::kBool)); },
                               "tl::masked_select");
  check_throws<tl::ShapeError>(
      [&] {
        tl::masked_select(a, tl::ones({2, 3, 4}, tl::kBool).slice(1, 0, 2));
      },
      "tl::masked_select");
  // index_select
  check_throws<tl::DTypeError>([&] { tl::index_select(a, 0, tl::ones({2})); }, "tl::index_select");
  check_throws<tl::DTypeError>([&] { tl::index_select(a, 0, tl::ones({2}, tl::kBool)); }, "bool");
  check_throws<tl::ShapeError>(
      [&] {
        tl::index_select(a, 0, tl::zeros({2, 1}, tl::kInt64));
      },
      "tl::index_select");
  check_throws<tl::IndexError>([&] { tl::index_select(a, 2, idx); }, "tl::index_select");
  check_throws<tl::IndexError>([&] { tl::index_select(a, -3, idx); }, "tl::index_select");
  check_throws<tl::IndexError>(
      [&] {
        tl::index_select(a, 0, tl::from_vector(std::vector<int64_t>{0, 3}));
      },
      "tl::index_select");
  check_throws<tl::IndexError>(
      [&] { tl::index_select(a, 1, tl::from_vector(std::vector<int32_t>{4})); }, "4");
  check_throws<tl::IndexError>(
      [&] {
        tl::index_select(a, 1, tl::from_vector(std::vector<int64_t>{1, -1}));
      },
      "-1");
  check_throws<tl::IndexError>(
      [&] {
        tl::index_select(tl::empty({0, 2}), 0, idx);
      },
      "tl::index_select");
  check_throws<tl::IndexError>([&] { tl::index_select(tl::scalar_tensor(1.0), 0, idx); },
                               "tl::index_select");
  check_throws<tl::IndexError>(
      [&] { tl::index_select(tl::scalar_tensor(1.0), 0, tl::ones({1}, tl::kInt64)); },
      "tl::index_select");
  check_throws<tl::Error>([&] { tl::index_select(tl::Tensor(), 0, idx); }, "tl::index_select");
  // gather
  tl::Tensor gi = tl::zeros({3, 2}, tl::kInt64);
  check_throws<tl::DTypeError>([&] { tl::gather(a, 1, gi.to(tl::kFloat32)); }, "int64");
  check_throws<tl::ShapeError>([&] { tl::gather(a, 1, tl::zeros({3}, tl::kInt64)); }, "tl::gather");
  check_throws<tl::ShapeError>(
      [&] {
        tl::gather(a, 1, tl::zeros({4, 2}, tl::kInt64));
      },
      "tl::gather");
  check_throws<tl::ShapeError>(
      [&] {
        tl::gather(a, 0, tl::zeros({2, 5}, tl::kInt64));
      },
      "tl::gather");
  check_throws<tl::IndexError>([&] { tl::gather(a, 2, gi); }, "tl::gather");
  check_throws<tl::IndexError>(
      [&] {
        tl::gather(a, 1, tl::full({3, 2}, 4, tl::kInt64));
      },
      "tl::gather");
  check_throws<tl::IndexError>([&] { tl::gather(a, 0, tl::full({3, 2}, -1, tl::kInt64)); }, "-1");
  check_throws<tl::IndexError>([&] { tl::gather(tl::empty({3, 0}), 1, gi); }, "tl::gather");
  check_throws<tl::Error>([&] { tl::gather(a, 0, tl::Tensor()); }, "tl::gather");
  // Different devices, when a second device exists.
  for (tl::Device device : test_devices()) {
    if (device.is_cpu()) continue;
    check_throws<tl::DeviceError>([&] { tl::index_select(a, 0, idx.to(device)); },
                                  "tl::index_select");
    check_throws<tl::DeviceError>(
        [&] {
          tl::gather(a, 0, tl::zeros({1, 1}, tl::kInt64).to(device));
        },
        "tl::gather");
    check_throws<tl::DeviceError>(
        [&] {
          tl::masked_select(a, tl::ones({3, 4}, tl::kBool).to(device));
        },
        "tl::masked_select");
  }
  // Failed calls left the input untouched.
  CHECK(values_of(a) == std::vector<double>(12, 1));
}

namespace {

// A bool tensor on `device` holding these bytes as they are: an uninitialised tl::empty(..., kBool)
// may hold any byte, and every op must read a non-zero one as true.
tl::Tensor bool_bytes(const std::vector<uint8_t>& bytes, tl::Device device) {
  tl::Tensor t = tl::empty({static_cast<int64_t>(bytes.size())}, tl::kBool);
  auto* raw = static_cast<unsigned char*>(t.data_ptr());
  for (size_t i = 0; i < bytes.size(); ++i) raw[i] = bytes[i];
  return t.to(device);
}

std::vector<int64_t> int64s(const tl::Tensor& t) { return t.to(tl::kInt64).to_vector<int64_t>(); }

}  // namespace

TEST_CASE("indexing: a mask byte other than 0/1 is true in masked_select, nonzero and where") {
  const std::vector<uint8_t> bytes{0, 190, 1, 255, 0, 2, 128, 0};
  for (tl::Device d : test_devices()) {
    CAPTURE(d);
    const tl::Tensor mask = bool_bytes(bytes, d);
    const tl::Tensor x = tl::arange(8, tl::TensorOptions(tl::kInt64).device(d));
    CHECK(int64s(tl::masked_select(x, mask)) == std::vector<int64_t>{1, 2, 3, 5, 6});
    CHECK(int64s(tl::masked_select(x.to(tl::kFloat32), mask)) ==
          std::vector<int64_t>{1, 2, 3, 5, 6});
    CHECK(int64s(tl::nonzero(mask)) == std::vector<int64_t>{1, 2, 3, 5, 6});
    CHECK(int64s(tl::nonzero(mask.view({2, 4}))) ==
          std::vector<int64_t>{0, 1, 0, 2, 0, 3, 1, 1, 1, 2});
    CHECK(int64s(tl::where(mask, x, -1)) == std::vector<int64_t>{-1, 1, 2, 3, -1, 5, 6, -1});
    // Strided: bytes 0, 1, 0, 128.
    const tl::Tensor every_other = mask.slice(0, 0, 8, 2);
    CHECK(int64s(tl::masked_select(x.slice(0, 0, 8, 2), every_other)) ==
          std::vector<int64_t>{2, 6});
    CHECK(int64s(tl::nonzero(every_other)) == std::vector<int64_t>{1, 3});
    CHECK(int64s(tl::where(every_other, x.slice(0, 0, 8, 2), -1)) ==
          std::vector<int64_t>{-1, 2, -1, 6});
  }
}

TEST_CASE("indexing: large masks of arbitrary bytes select every non-zero byte (threads, tiles)") {
  const int64_t n = 200003;
  std::vector<uint8_t> bytes(n);
  int64_t count = 0, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    bytes[i] = static_cast<uint8_t>((i % 7) * 40);  // 0, 40, ..., 240
    if (bytes[i] != 0) {
      ++count;
      sum += i;
    }
  }
  for (tl::Device d : test_devices()) {
    CAPTURE(d);
    const tl::Tensor mask = bool_bytes(bytes, d);
    const tl::Tensor x = tl::arange(n, tl::TensorOptions(tl::kInt64).device(d));
    const tl::Tensor selected = tl::masked_select(x, mask);
    CHECK(selected.numel() == count);
    CHECK(tl::sum(selected).item<int64_t>() == sum);
    CHECK(tl::nonzero(mask).size(0) == count);
    CHECK(tl::sum(tl::where(mask, x, 0)).item<int64_t>() == sum);
  }
}

// Joining (cat, stack, vstack, hstack, dstack, atleast_Nd) against an independent index mapping.

#include "test_util.h"

namespace {

namespace tl = tensorlet;
using tl_test::check_throws;
using tl_test::check_values;
using tl_test::random_tensor;
using tl_test::values_of;

// The expected cat: output element idx comes from the input whose range along `dim` holds
// idx[dim], at that index shifted by the sizes of the inputs before it.
std::vector<double> naive_cat(const std::vector<tl::Tensor>& ts, int64_t dim,
                              const tl::Shape& out_shape) {
  std::vector<std::vector<double>> vals;
  for (const auto& t : ts) vals.push_back(values_of(t));
  std::vector<double> out(out_shape.numel());
  for (int64_t i = 0; i < out_shape.numel(); ++i) {
    std::vector<int64_t> idx = tl_test::unravel(i, out_shape);
    size_t which = 0;
    while (idx[dim] >= ts[which].shape()[dim]) idx[dim] -= ts[which++].shape()[dim];
    int64_t lin = 0;
    for (int64_t d = 0; d < out_shape.size(); ++d) lin = lin * ts[which].shape()[d] + idx[d];
    out[i] = vals[which][lin];
  }
  return out;
}

// Each input in one of three layouts, cycling, so a single cat mixes them.
std::vector<tl::Tensor> mixed_layouts(const std::vector<tl::Tensor>& ts) {
  std::vector<tl::Tensor> out;
  for (size_t i = 0; i < ts.size(); ++i) {
    auto layouts = tl_test::layouts_of(ts[i]);
    out.push_back(layouts[i % layouts.size()].tensor);
  }
  return out;
}

}  // namespace

TEST_CASE("cat along every dim, contiguous and strided inputs") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : {tl::kFloat32, tl::kInt64, tl::kBool, tl::kInt32, tl::kFloat64})
      for (int64_t dim = -3; dim < 3; ++dim) {
        CAPTURE(dtype);
        CAPTURE(dim);
        const int64_t d = dim < 0 ? dim + 3 : dim;
        std::vector<tl::Tensor> ts;
        for (int64_t len : {2, 1, 3}) {
          tl::Shape s{3, 4, 5};
          s[d] = len;
          ts.push_back(random_tensor(s, dtype, dev));
        }
        tl::Shape expect_shape{3, 4, 5};
        expect_shape[d] = 6;
        for (int variant = 0; variant < 2; ++variant) {
          std::vector<tl::Tensor> in = variant == 0 ? ts : mixed_layouts(ts);
          tl::Tensor out = tl::cat(in, dim);
          CHECK(out.shape() == expect_shape);
          CHECK(out.dtype() == dtype);
          CHECK(out.device() == dev);
          CHECK(out.is_contiguous());
          check_values(out, naive_cat(ts, d, expect_shape), 0, 0);
        }
      }
}

TEST_CASE("cat of a single input, of many inputs, and of large inputs") {
  for (tl::Device dev : tl_test::test_devices()) {
    tl::Tensor a = random_tensor({4, 5}, tl::kFloat32, dev);
    tl::Tensor one = tl::cat({a.t()}, 1);
    CHECK(one.shape() == tl::Shape{5, 4});
    CHECK(!one.is_same(a));
    check_values(one, values_of(a.t()), 0, 0);

    std::vector<tl::Tensor> many;
    for (int i = 0; i < 100; ++i) many.push_back(random_tensor({2, 1 + i % 3}, tl::kInt32, dev));
    tl::Tensor m = tl::cat(many, 1);
    int64_t total = 0;
    for (const auto& t : many) total += t.shape()[1];
    CHECK(m.shape() == tl::Shape{2, total});
    check_values(m, naive_cat(many, 1, m.shape()), 0, 0);

    // dstack of many matrices: one-element pieces, several row blocks, split across threads.
    std::vector<tl::Tensor> mats;
    for (int i = 0; i < 50; ++i) mats.push_back(random_tensor({40, 30}, tl::kFloat32, dev));
    tl::Tensor ds = tl::dstack(mats);
    CHECK(ds.shape() == tl::Shape{40, 30, 50});
    std::vector<tl::Tensor> mats3;
    for (const auto& t : mats) mats3.push_back(t.unsqueeze(2));
    check_values(ds, naive_cat(mats3, 2, ds.shape()), 0, 0);

    // Large enough to split across threads; pieces straddle the chunk boundaries.
    std::vector<tl::Tensor> big = {random_tensor({300, 257}, tl::kFloat64, dev),
                                   random_tensor({300, 3}, tl::kFloat64, dev),
                                   random_tensor({256, 300}, tl::kFloat64, dev).t()};
    for (int64_t dim : {0, 1}) {
      std::vector<tl::Tensor> in = big;
      if (dim == 0) in = {big[0].t(), big[1].t(), big[2].t()};
      tl::Tensor out = tl::cat(in, dim);
      check_values(out, naive_cat(in, dim, out.shape()), 0, 0);
    }
    // A broadcast (stride-0) input is read element by element.
    tl::Tensor row = random_tensor({1, 7}, tl::kFloat32, dev);
    std::vector<tl::Tensor> with_expand = {row.expand({4, 7}),
                                           random_tensor({2, 7}, tl::kFloat32, dev)};
    tl::Tensor ex = tl::cat(with_expand, 0);
    check_values(ex, naive_cat(with_expand, 0, ex.shape()), 0, 0);
  }
}

TEST_CASE("cat promotes mixed dtypes") {
  for (tl::Device dev : tl_test::test_devices()) {
    struct Case {
      tl::DType a, b, c, result;
    };
    for (Case cs : {Case{tl::kInt32, tl::kFloat64, tl::kInt32, tl::kFloat64},
                    Case{tl::kInt32, tl::kInt64, tl::kInt32, tl::kInt64},
                    Case{tl::kBool, tl::kInt32, tl::kBool, tl::kInt32},
                    Case{tl::kFloat32, tl::kInt64, tl::kBool, tl::kFloat32},
                    Case{tl::kFloat32, tl::kFloat64, tl::kFloat32, tl::kFloat64}}) {
      CAPTURE(cs.result);
      std::vector<tl::Tensor> ts = {random_tensor({2, 3}, cs.a, dev),
                                    random_tensor({1, 3}, cs.b, dev).t().t(),
                                    random_tensor({3, 2}, cs.c, dev).t()};
      tl::Tensor out = tl::cat(ts, 0);
      CHECK(out.dtype() == cs.result);
      CHECK(out.shape() == tl::Shape{5, 3});
      check_values(out, naive_cat(ts, 0, out.shape()), 0, 0);
      tl::Tensor st = tl::stack({ts[0], ts[1].expand({2, 3})}, 1);
      CHECK(st.dtype() == tl::promote_types(cs.a, cs.b));
    }
  }
}

TEST_CASE("cat with empty inputs") {
  for (tl::Device dev : tl_test::test_devices()) {
    auto f32 = tl::TensorOptions(tl::kFloat32).device(dev);
    tl::Tensor a = random_tensor({2, 3}, tl::kFloat32, dev),
               b = random_tensor({4, 3}, tl::kFloat32, dev);
    // Legacy rule: 1-D [0] tensors are skipped whatever the others' ndim, but still promote.
    tl::Tensor skip = tl::cat(
        {tl::empty({0}, f32), a, tl::empty({0}, tl::TensorOptions(tl::kFloat64).device(dev)), b},
        0);
    CHECK(skip.shape() == tl::Shape{6, 3});
    CHECK(skip.dtype() == tl::kFloat64);
    check_values(skip, naive_cat({a, b}, 0, skip.shape()));
    CHECK(tl::cat({tl::empty({0}, f32), a}, -1).shape() == tl::Shape{2, 3});
    // Only empty 1-D inputs: a [0] result.
    tl::Tensor none = tl::cat(
        {tl::empty({0}, f32), tl::empty({0}, tl::TensorOptions(tl::kInt64).device(dev))}, 0);
    CHECK(none.shape() == tl::Shape{0});
    CHECK(none.dtype() == tl::kFloat32);
    // Zero-size along the cat dim and along another dim.
    tl::Tensor z = tl::cat({a, tl::empty({2, 0}, f32), a}, 1);
    CHECK(z.shape() == tl::Shape{2, 6});
    check_values(z, naive_cat({a, a}, 1, z.shape()), 0, 0);
    CHECK(tl::cat({tl::empty({0, 3}, f32), tl::empty({0, 2}, f32)}, 1).shape() == tl::Shape{0, 5});
    CHECK(tl::cat({tl::empty({0, 3}, f32), a}, 0).shape() == tl::Shape{2, 3});
    CHECK(tl::stack({tl::empty({0}, f32), tl::empty({0}, f32)}).shape() == tl::Shape{2, 0});
  }
}

TEST_CASE("cat errors") {
  tl::Tensor a = random_tensor({2, 3}, tl::kFloat32), b = random_tensor({2, 4}, tl::kFloat32);
  check_throws<tl::ShapeError>([] { tl::cat({}, 0); }, "tl::cat");
  check_throws<tl::ShapeError>(
      [&] {
        tl::cat({a, random_tensor({2, 3, 1}, tl::kFloat32)}, 0);
      },
      "tl::cat");
  check_throws<tl::ShapeError>([&] { tl::cat({a, a, b}, 0); }, "for tensor 2");
  check_throws<tl::ShapeError>(
      [&] {
        tl::cat({a, b}, 0);
      },
      "[tl::cat] sizes of tensors must match");
  check_throws<tl::ShapeError>(
      [&] {
        tl::cat({tl::scalar_tensor(1.0f), tl::scalar_tensor(2.0f)}, 0);
      },
      "zero-dimensional");
  check_throws<tl::ShapeError>(
      [&] {
        tl::cat({a, tl::scalar_tensor(2.0f)}, 0);
      },
      "(at position 1)");
  check_throws<tl::IndexError>([&] { tl::cat({a, a}, 2); }, "tl::cat");
  check_throws<tl::IndexError>([&] { tl::cat({a, a}, -3); }, "tl::cat");
  check_throws<tl::Error>([&] { tl::cat({a, tl::Tensor()}, 0); }, "tl::cat");
  for (tl::Device dev : tl_test::test_devices())
    if (!(dev == a.device()))
      check_throws<tl::DeviceError>([&] { tl::cat({a, a.to(dev)}, 0); }, "tl::cat");
}

TEST_CASE("stack along every dim") {
  for (tl::Device dev : tl_test::test_devices())
    for (tl::DType dtype : {tl::kFloat32, tl::kInt64}) {
      std::vector<tl::Tensor> ts;
      for (int i = 0; i < 3; ++i) ts.push_back(random_tensor({2, 3}, dtype, dev));
      std::vector<tl::Tensor> strided = mixed_layouts(ts);
      for (int64_t dim = -3; dim <= 2; ++dim) {
        CAPTURE(dim);
        const int64_t d = dim < 0 ? dim + 3 : dim;
        tl::Tensor out = tl::stack(strided, dim);
        tl::Shape expect{2, 3};
        expect.insert(d, 3);
        CHECK(out.shape() == expect);
        // out[..., i, ...] (i at position d) is input i.
        std::vector<std::vector<double>> vals;
        for (const auto& t : ts) vals.push_back(values_of(t));
        std::vector<double> want(out.numel());
        for (int64_t k = 0; k < out.numel(); ++k) {
          std::vector<int64_t> idx = tl_test::unravel(k, expect);
          int64_t which = idx[d];
          idx.erase(idx.begin() + d);
          want[k] = vals[which][idx[0] * 3 + idx[1]];
        }
        check_values(out, want, 0, 0);
      }
      // 0-dim inputs stack into a vector.
      tl::Tensor s =
          tl::stack({tl::scalar_tensor(1, dtype).to(dev), tl::scalar_tensor(2, dtype).to(dev)});
      CHECK(s.shape() == tl::Shape{2});
      check_values(s, {1, 2});
    }
}

TEST_CASE("stack errors") {
  tl::Tensor a = random_tensor({2, 3}, tl::kFloat32);
  check_throws<tl::ShapeError>([] { tl::stack({}, 0); }, "tl::stack");
  check_throws<tl::ShapeError>([&] { tl::stack({a, a, a.t()}, 0); }, "at entry 2");
  check_throws<tl::ShapeError>(
      [&] {
        tl::stack({a, random_tensor({2, 3, 1}, tl::kFloat32)}, 0);
      },
      "tl::stack");
  check_throws<tl::IndexError>([&] { tl::stack({a, a}, 3); }, "tl::stack");
  check_throws<tl::IndexError>([&] { tl::stack({a, a}, -4); }, "tl::stack");
}

TEST_CASE("join helpers atleast_1d, atleast_2d, atleast_3d") {
  tl::Tensor s = tl::scalar_tensor(3.0f);
  tl::Tensor v = random_tensor({4}, tl::kFloat32);
  tl::Tensor m = random_tensor({2, 5}, tl::kFloat32);
  tl::Tensor c = random_tensor({2, 3, 4}, tl::kFloat32);
  CHECK(tl::atleast_1d(s).shape() == tl::Shape{1});
  CHECK(tl::atleast_1d(v).shape() == tl::Shape{4});
  CHECK(tl::atleast_2d(s).shape() == tl::Shape{1, 1});
  CHECK(tl::atleast_2d(v).shape() == tl::Shape{1, 4});
  CHECK(tl::atleast_2d(m).shape() == tl::Shape{2, 5});
  CHECK(tl::atleast_3d(s).shape() == tl::Shape{1, 1, 1});
  CHECK(tl::atleast_3d(v).shape() == tl::Shape{1, 4, 1});
  CHECK(tl::atleast_3d(m).shape() == tl::Shape{2, 5, 1});
  CHECK(tl::atleast_3d(c).shape() == tl::Shape{2, 3, 4});
  // They are views: same storage, same values.
  CHECK(tl::atleast_3d(m).storage() == m.storage());
  check_values(tl::atleast_3d(m.t()), values_of(m.t()), 0, 0);
  check_values(tl::atleast_2d(s), {3.0});
}

TEST_CASE("vstack, hstack and dstack") {
  for (tl::Device dev : tl_test::test_devices()) {
    tl::Tensor s = tl::scalar_tensor(7.0f).to(dev);
    tl::Tensor v = random_tensor({3}, tl::kFloat32, dev), w = random_tensor({3}, tl::kInt32, dev);
    tl::Tensor m = random_tensor({2, 3}, tl::kFloat32, dev),
               n = random_tensor({4, 3}, tl::kFloat64, dev);

    // vstack: rows, 1-D inputs become rows.
    tl::Tensor vs = tl::vstack({v, m, w});
    CHECK(vs.shape() == tl::Shape{4, 3});
    CHECK(vs.dtype() == tl::kFloat32);
    check_values(vs, naive_cat({v.unsqueeze(0), m, w.unsqueeze(0)}, 0, vs.shape()));
    tl::Tensor vs2 = tl::vstack({m.t().t(), n});
    CHECK(vs2.dtype() == tl::kFloat64);
    check_values(vs2, naive_cat({m, n}, 0, vs2.shape()));
    CHECK(tl::vstack({s, s}).shape() == tl::Shape{2, 1});

    // hstack: 1-D inputs join end to end, others along dim 1.
    tl::Tensor hv = tl::hstack({v, w, s});
    CHECK(hv.shape() == tl::Shape{7});
    check_values(hv, naive_cat({v, w, s.reshape({1})}, 0, hv.shape()));
    tl::Tensor hm =
        tl::hstack({m, m.t().contiguous().t(), random_tensor({2, 1}, tl::kFloat32, dev)});
    CHECK(hm.shape() == tl::Shape{2, 7});
    tl::Tensor c = random_tensor({2, 2, 3}, tl::kFloat32, dev);
    CHECK(tl::hstack({c, c}).shape() == tl::Shape{2, 4, 3});

    // dstack: 1-D [n] -> [1, n, 1], 2-D [m, n] -> [m, n, 1], joined along dim 2.
    tl::Tensor dv = tl::dstack({v, w, v});
    CHECK(dv.shape() == tl::Shape{1, 3, 3});
    check_values(dv, naive_cat({v.reshape({1, 3, 1}), w.reshape({1, 3, 1}), v.reshape({1, 3, 1})},
                               2, dv.shape()));
    tl::Tensor m2 = random_tensor({2, 3}, tl::kFloat32, dev);
    tl::Tensor dm =
        tl::dstack({m, m2.t().contiguous().t(), random_tensor({2, 3, 2}, tl::kFloat32, dev)});
    CHECK(dm.shape() == tl::Shape{2, 3, 4});
    CHECK(tl::dstack({s, s, s}).shape() == tl::Shape{1, 1, 3});

    check_throws<tl::ShapeError>([] { tl::vstack({}); }, "tl::vstack");
    check_throws<tl::ShapeError>([] { tl::hstack({}); }, "tl::hstack");
    check_throws<tl::ShapeError>([] { tl::dstack({}); }, "tl::dstack");
    check_throws<tl::ShapeError>(
        [&] {
          tl::vstack({v, random_tensor({4}, tl::kFloat32, dev)});
        },
        "tl::vstack");
    check_throws<tl::ShapeError>([&] { tl::hstack({m, n}); }, "tl::hstack");
    check_throws<tl::ShapeError>([&] { tl::hstack({v, m}); }, "tl::hstack");
    check_throws<tl::ShapeError>([&] { tl::dstack({m, v}); }, "tl::dstack");
  }
}

// Gradchecks of the indexing and scatter ops (take/put, advanced index, index_put, the scatter
// family, index_add/copy/fill, masked_fill/select/scatter) and einsum, on every test device; their
// in-place forms with an input in a graph raise, and ops without a gradient make no grad_fn.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <string>
#include <vector>

#include "gradcheck.h"
#include "test_util.h"

using tl_test::check_throws;
using tl_test::gradcheck;
using tl_test::random_tensor;
using Ts = std::vector<tl::Tensor>;

namespace {

tl::Tensor any(const tl::Shape& shape) { return random_tensor(shape, tl::kFloat64); }
tl::Tensor ints(std::vector<int64_t> v, const tl::Shape& shape, tl::Device device) {
  return tl::from_vector(v, shape).to(device);
}
tl::Tensor mask_of(std::vector<int> v, const tl::Shape& shape, tl::Device device) {
  return tl::ne(tl::from_vector(std::vector<int64_t>(v.begin(), v.end()), shape), 0).to(device);
}

}  // namespace

TEST_CASE("autograd ops: take, put, advanced index and index_put") {
  using tl::indexing::Slice;
  for (const tl::Device device : tl_test::test_devices()) {
    const tl::Tensor flat = ints({5, -1, 0, 5, 2, 7}, {2, 3}, device);
    CHECK(gradcheck(
        "take (repeated, negative)", [&](const Ts& t) { return tl::take(t[0].t(), flat); },
        {any({4, 3})}, device));
    const tl::Tensor where_to = ints({1, 4, 6}, {3}, device);
    CHECK(gradcheck(
        "put", [&](const Ts& t) { return tl::put(t[0], where_to, t[1]); }, {any({3, 3}), any({3})},
        device));
    const tl::Tensor again = ints({1, 4, 1}, {3}, device);
    CHECK(gradcheck(
        "put accumulate", [&](const Ts& t) { return tl::put(t[0], again, t[1], true); },
        {any({2, 3}), any({3, 1})}, device));
    const tl::Tensor rows = ints({2, 0, 2}, {3}, device), cols = ints({1, 3, 0}, {3}, device);
    CHECK(gradcheck(
        "index rows", [&](const Ts& t) { return t[0].index({rows}); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "index rows, cols of a transposed slice",
        [&](const Ts& t) {
          return t[0].t().index({Slice(), rows}).index({cols});
        },
        {any({5, 4})}, device));
    CHECK(gradcheck(
        "index pairs",
        [&](const Ts& t) {
          return t[0].index({rows, cols});
        },
        {any({3, 4})}, device));
    const tl::Tensor m = mask_of({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1}, {3, 4}, device);
    CHECK(gradcheck(
        "index mask", [&](const Ts& t) { return t[0].index({m}); }, {any({3, 4})}, device));
    const tl::Tensor distinct = ints({2, 0}, {2}, device);
    CHECK(gradcheck(
        "index_put", [&](const Ts& t) { return tl::index_put(t[0], {distinct}, t[1]); },
        {any({3, 4}), any({2, 4})}, device));
    CHECK(gradcheck(
        "index_put broadcast values, accumulate",
        [&](const Ts& t) { return tl::index_put(t[0], {rows}, t[1], true); },
        {any({3, 4}), any({1, 1, 4})}, device));
    CHECK(gradcheck(
        "index_put number", [&](const Ts& t) { return tl::index_put(t[0], {m}, 2.5); },
        {any({3, 4})}, device));
    CHECK(gradcheck(
        "index_put with a slice",
        [&](const Ts& t) {
          return tl::index_put(t[0], {Slice(), distinct}, t[1]);
        },
        {any({3, 4}), any({3, 2})}, device));
  }
  tl::Tensor x = any({3, 4});
  x.requires_grad_();
  const tl::Tensor idx = tl::from_vector(std::vector<int64_t>{0, 2});
  CHECK(x.index({idx}).grad_fn()->name() == "IndexBackward0");
  CHECK(tl::take(x, idx).grad_fn()->name() == "TakeBackward0");
  CHECK(tl::index_put(x, {idx}, 1.0).grad_fn()->name() == "IndexPutBackward0");
}

TEST_CASE("autograd ops: scatter, scatter_add, scatter_reduce, index_add/copy/fill") {
  for (const tl::Device device : tl_test::test_devices()) {
    // Distinct targets per column for scatter (the winner among duplicates is unspecified).
    const tl::Tensor perm = ints({2, 0, 1, 1, 2, 0}, {2, 3}, device);
    CHECK(gradcheck(
        "scatter src (index smaller than src)",
        [&](const Ts& t) { return tl::scatter(t[0], 0, perm, t[1]); }, {any({3, 3}), any({3, 4})},
        device));
    CHECK(gradcheck(
        "scatter value", [&](const Ts& t) { return tl::scatter(t[0].t(), 0, perm, 1.5); },
        {any({4, 3})}, device));
    const tl::Tensor dup = ints({1, 1, 0, 2, 1, 2, 0, 0}, {2, 4}, device);
    CHECK(gradcheck(
        "scatter_add", [&](const Ts& t) { return tl::scatter_add(t[0], 1, dup, t[1]); },
        {any({2, 3}), any({2, 4})}, device));
    for (const char* reduce : {"sum", "mean", "amax", "amin"})
      for (bool include_self : {true, false}) {
        INFO(reduce << " include_self " << include_self);
        CHECK(gradcheck(
            "scatter_reduce",
            [&](const Ts& t) {
              return tl::scatter_reduce(t[0], 1, dup, t[1], reduce, include_self);
            },
            {any({2, 3}), any({2, 4})}, device));
      }
    const tl::Tensor rows = ints({2, 0, 2}, {3}, device), once = ints({3, 0, 1}, {3}, device);
    CHECK(gradcheck(
        "index_add alpha", [&](const Ts& t) { return tl::index_add(t[0], 0, rows, t[1], 0.5); },
        {any({4, 2}), any({3, 2})}, device));
    CHECK(gradcheck(
        "index_copy", [&](const Ts& t) { return tl::index_copy(t[0].t(), 0, once, t[1]); },
        {any({3, 4}), any({3, 3})}, device));
    CHECK(gradcheck(
        "index_fill", [&](const Ts& t) { return tl::index_fill(t[0], 1, rows, -1.0); },
        {any({2, 3})}, device));
    // An empty index scatters nothing (its dtype and shape go unchecked, as torch's): self's
    // gradient passes through and src gets zeros (found by the fuzzer: the backward raised).
    for (const char* reduce : {"sum", "amax"}) {
      INFO(reduce);
      const tl::Tensor none = tl::empty({0, 0, 0}, tl::kFloat32).to(device);
      tl::Tensor self = any({0}).to(device).requires_grad_(), src = any({0}).to(device);
      src.requires_grad_();
      tl::scatter_reduce(self, -1, none, src, reduce).sum().backward();
      CHECK(self.grad().shape() == tl::Shape{0});
      CHECK(src.grad().shape() == tl::Shape{0});
    }
    tl::Tensor self = any({2, 3}).to(device).requires_grad_(), src = any({3}).to(device);
    src.requires_grad_();
    tl::scatter_add(self, 0, tl::empty({0, 0}, tl::kInt64).to(device), src).sum().backward();
    CHECK(tl::equal(self.grad(), tl::ones_like(self)));
    CHECK(tl::equal(src.grad(), tl::zeros_like(src)));
  }
  tl::Tensor x = any({3}), s = any({2});
  s.requires_grad_();
  const tl::Tensor i = tl::from_vector(std::vector<int64_t>{0, 2});
  CHECK(tl::scatter(x, 0, i, s).grad_fn()->name() == "ScatterBackward0");
  CHECK(tl::scatter_add(x, 0, i, s).grad_fn()->name() == "ScatterAddBackward0");
  CHECK(tl::index_add(x, 0, i, s).grad_fn()->name() == "IndexAddBackward0");
  check_throws<tl::Error>([&] { tl::scatter_reduce(x, 0, i, s, "prod"); }, "not implemented");
  // In place into a tensor outside the graph from a source in it: raises, never drops.
  check_throws<tl::Error>([&] { x.clone().scatter_add_(0, i, s); }, "not implemented");
  check_throws<tl::Error>([&] { x.clone().index_add_(0, i, s); }, "not implemented");
  check_throws<tl::Error>([&] { x.clone().put_(i, s); }, "not implemented");
  check_throws<tl::Error>([&] { x.clone().index_put_({i}, s); }, "not implemented");
  check_throws<tl::Error>([&] { x.clone().masked_scatter_(x > 0.0, s); }, "not implemented");
}

TEST_CASE("autograd ops: masked_fill, masked_select, masked_scatter, einsum") {
  for (const tl::Device device : tl_test::test_devices()) {
    const tl::Tensor m = mask_of({1, 0, 0, 1}, {4}, device);
    CHECK(gradcheck(
        "masked_fill number, broadcast mask",
        [&](const Ts& t) { return tl::masked_fill(t[0], m, 0.5); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "masked_fill 0-dim tensor", [&](const Ts& t) { return tl::masked_fill(t[0].t(), m, t[1]); },
        {any({4, 2}), any({})}, device));
    CHECK(gradcheck(
        "masked_select broadcast", [&](const Ts& t) { return tl::masked_select(t[0], m); },
        {any({2, 1})}, device));
    CHECK(gradcheck(
        "masked_scatter", [&](const Ts& t) { return tl::masked_scatter(t[0], m, t[1]); },
        {any({3, 4}), any({2, 5})}, device));
    CHECK(gradcheck(
        "einsum ij,jk->ik",
        [](const Ts& t) {
          return tl::einsum("ij,jk->ik", {t[0], t[1].t()});
        },
        {any({3, 4}), any({5, 4})}, device));
    CHECK(gradcheck(
        "einsum diagonal and sum", [](const Ts& t) { return tl::einsum("ii->", {t[0]}); },
        {any({3, 3})}, device));
    CHECK(gradcheck(
        "einsum batched, broadcast, ellipsis",
        [](const Ts& t) {
          return tl::einsum("...ij,...jk->...ki", {t[0], t[1]});
        },
        {any({2, 3, 4}), any({1, 4, 2})}, device));
    CHECK(gradcheck(
        "einsum three operands",
        [](const Ts& t) {
          return tl::einsum("i,ij,j->i", {t[0], t[1], t[2]});
        },
        {any({3}), any({3, 4}), any({4})}, device));
  }
  tl::Tensor x = any({4});
  x.requires_grad_();
  CHECK(tl::masked_fill(x, x > 0.0, 1.0).grad_fn()->name() == "MaskedFillBackward0");
  CHECK(tl::masked_select(x, x > 0.0).grad_fn()->name() == "MaskedSelectBackward0");
}

TEST_CASE("autograd ops: ops without a gradient make no grad_fn and never raise") {
  tl::Tensor x = any({3, 4});
  x.requires_grad_();
  const std::vector<tl::Tensor> results = {
      x > 0.0,           tl::eq(x, x),        tl::argmax(x, 1),
      tl::argmin(x),     x.nonzero(),         tl::unique(x).values,
      tl::argsort(x),    tl::isnan(x),        tl::count_nonzero(x),
      tl::isclose(x, x), tl::sort(x).indices, tl::topk(x, 2).indices};
  for (const tl::Tensor& r : results) {
    CHECK_FALSE(r.requires_grad());
    CHECK(r.grad_fn() == nullptr);
  }
}

TEST_CASE("autograd ops: lerp, nan_to_num, clamp with tensor bounds, diagonal, diag, diag_embed") {
  for (const tl::Device device : tl_test::test_devices()) {
    CHECK(gradcheck(
        "lerp number", [](const Ts& t) { return tl::lerp(t[0], t[1], 0.3); },
        {any({3, 4}), any({4})}, device));
    CHECK(gradcheck(
        "lerp tensor weight", [](const Ts& t) { return tl::lerp(t[0].t(), t[1], t[2]); },
        {any({4, 3}), any({3, 1}), any({4})}, device));
    CHECK(gradcheck(
        "nan_to_num", [](const Ts& t) { return tl::nan_to_num(t[0] * 2.0); }, {any({3, 5})},
        device));
    CHECK(gradcheck(
        "clamp tensor bounds",
        [](const Ts& t) {
          return tl::clamp(t[0], std::optional<tl::Tensor>(t[1]), std::optional<tl::Tensor>(t[2]));
        },
        {any({3, 4}), any({4}) - 0.5, any({3, 1}) + 0.5}, device));
    CHECK(gradcheck(
        "clamp tensor min only",
        [](const Ts& t) { return tl::clamp(t[0], std::optional<tl::Tensor>(t[1]), std::nullopt); },
        {any({3, 4}), any({3, 4})}, device));
    CHECK(gradcheck(
        "diagonal", [](const Ts& t) { return tl::diagonal(t[0], 1); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "diagonal dims of a transpose",
        [](const Ts& t) { return tl::diagonal(t[0].transpose(0, 2), -1, 0, 2); }, {any({3, 2, 4})},
        device));
    CHECK(gradcheck(
        "diag vector", [](const Ts& t) { return tl::diag(t[0], -1); }, {any({3})}, device));
    CHECK(gradcheck(
        "diag matrix", [](const Ts& t) { return tl::diag(t[0]); }, {any({3, 4})}, device));
    CHECK(gradcheck(
        "diag_embed", [](const Ts& t) { return tl::diag_embed(t[0], 1, 0, 2); }, {any({2, 3})},
        device));
    CHECK(gradcheck(
        "tril/triu", [](const Ts& t) { return tl::tril(t[0], 1) + tl::triu(t[0].t(), -1); },
        {any({4, 4})}, device));
    CHECK(gradcheck(
        "flip/roll/repeat/tile",
        [](const Ts& t) {
          return tl::flip(t[0], {0, 1}).roll({2}, {1}).repeat({2, 1}) + tl::tile(t[0], {2, 1});
        },
        {any({3, 5})}, device));
  }
  tl::Tensor x = any({3, 3});
  x.requires_grad_();
  CHECK(tl::lerp(x, x, 0.5).grad_fn()->name() == "LerpBackward0");
  CHECK(tl::nan_to_num(x).grad_fn()->name() == "NanToNumBackward0");
  CHECK(tl::diagonal(x).grad_fn()->name() == "DiagonalBackward0");
}

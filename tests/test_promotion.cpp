// Type promotion tests: torch.result_type's categories (dimensioned tensors > 0-dim tensors >
// scalars), the promote_types table through real ops, and each op family's result dtype.
#include "test_util.h"

namespace {

using namespace tl_test;
using tl::DType;
using tl::Tensor;

Tensor dimmed(DType d) { return random_tensor({3}, d); }
Tensor zero_dim(DType d) { return random_tensor({}, d); }

const DType B = tl::kBool, I = tl::kInt32, L = tl::kInt64, F = tl::kFloat32, D = tl::kFloat64;

TEST_CASE("promotion of two dimensioned tensors follows promote_types") {
  const std::vector<DType> order{B, I, L, F, D};
  // Row/column order as `order`; kinds first (bool < integer < floating), then width.
  const DType table[5][5] = {
      {B, I, L, F, D}, {I, I, L, F, D}, {L, L, L, F, D}, {F, F, F, F, D}, {D, D, D, D, D},
  };
  for (size_t r = 0; r < order.size(); ++r) {
    for (size_t c = 0; c < order.size(); ++c) {
      INFO(order[r] << " with " << order[c]);
      Tensor a = dimmed(order[r]), b = dimmed(order[c]);
      CHECK(tl::promote_types(order[r], order[c]) == table[r][c]);
      CHECK(tl::result_type(a, b) == table[r][c]);
      CHECK(tl::add(a, b).dtype() == table[r][c]);
      CHECK(tl::maximum(a, b).dtype() == table[r][c]);
      CHECK(tl::where(a != b, a, b).dtype() == table[r][c]);
      CHECK(tl::eq(a, b).dtype() == B);
      CHECK(tl::div(a, b).dtype() == (tl::is_floating_point(table[r][c]) ? table[r][c] : F));
    }
  }
}

TEST_CASE("promotion ranks dimensioned tensors above 0-dim tensors above scalars") {
  struct Case {
    const char* what;
    DType got, want;
  };
  const std::vector<Case> cases{
      // Python scalars do not widen a tensor of the same kind...
      {"int32 + 2.5", tl::result_type(dimmed(I), 2.5), F},
      {"int64 + 2.5", tl::result_type(dimmed(L), 2.5), F},
      {"int32 + 7", tl::result_type(dimmed(I), 7), I},
      {"float32 + 2.5", tl::result_type(dimmed(F), 2.5), F},
      {"float64 + 2", tl::result_type(dimmed(D), 2), D},
      {"bool + 1", tl::result_type(dimmed(B), 1), L},
      {"bool + true", tl::result_type(dimmed(B), true), B},
      {"bool + 1.5", tl::result_type(dimmed(B), 1.5), F},
      {"int32 + true", tl::result_type(dimmed(I), true), I},
      // ...neither do 0-dim tensors of the same kind...
      {"int32 + int64 0-dim", tl::result_type(dimmed(I), zero_dim(L)), I},
      {"float32 + float64 0-dim", tl::result_type(dimmed(F), zero_dim(D)), F},
      {"int64 0-dim + int32", tl::result_type(zero_dim(L), dimmed(I)), I},
      // ...but a higher kind promotes, keeping the 0-dim tensor's width.
      {"int32 + float64 0-dim", tl::result_type(dimmed(I), zero_dim(D)), D},
      {"bool + int32 0-dim", tl::result_type(dimmed(B), zero_dim(I)), I},
      {"int32 + bool 0-dim", tl::result_type(dimmed(I), zero_dim(B)), I},
      // Between 0-dim tensors and scalars the same ranking applies.
      {"int32 0-dim + int64 0-dim", tl::result_type(zero_dim(I), zero_dim(L)), L},
      {"int32 0-dim + 2.5", tl::result_type(zero_dim(I), 2.5), F},
      {"float64 0-dim + 2.5", tl::result_type(zero_dim(D), 2.5), D},
      {"int32 0-dim + 5", tl::result_type(zero_dim(I), 5), I},
      {"bool 0-dim + 5", tl::result_type(zero_dim(B), 5), L},
      // Dimensioned tensors of different kinds promote normally.
      {"float32 + float64", tl::result_type(dimmed(F), dimmed(D)), D},
      {"int64 + float32", tl::result_type(dimmed(L), dimmed(F)), F},
  };
  for (const Case& c : cases) {
    INFO(c.what << ": got " << c.got << ", want " << c.want);
    CHECK(c.got == c.want);
  }
}

TEST_CASE("promotion gives each op family its PyTorch result dtype") {
  for (tl::Device device : test_devices()) {
    Tensor i = random_tensor({2, 3}, I, device), l0 = random_tensor({}, L, device);
    Tensor f = random_tensor({2, 3}, F, device), d0 = random_tensor({}, D, device);
    Tensor b = random_tensor({2, 3}, B, device);
    CHECK((i + l0).dtype() == I);
    CHECK((i + d0).dtype() == D);
    CHECK((f + d0).dtype() == F);
    CHECK((i + 2.5).dtype() == F);
    CHECK((2.5 * i).dtype() == F);
    CHECK((b + 1).dtype() == L);
    CHECK((b + b).dtype() == B);
    CHECK((b * b).dtype() == B);
    CHECK((i / i).dtype() == F);
    CHECK((l0 / l0).dtype() == F);
    CHECK((b / b).dtype() == F);
    CHECK((f / 2).dtype() == F);
    CHECK(tl::pow(i, 2).dtype() == I);
    CHECK(tl::pow(i, 0.5).dtype() == F);
    CHECK(tl::pow(2.5, i).dtype() == F);
    CHECK(tl::pow(b, 2).dtype() == L);
    CHECK(tl::maximum(i, d0).dtype() == D);
    for (DType in : {B, I, L, F, D}) {
      Tensor x = random_tensor({4}, in, device);
      DType floaty = tl::is_floating_point(in) ? in : F;
      INFO(in);
      CHECK(tl::exp(x).dtype() == floaty);
      CHECK(tl::log(x).dtype() == floaty);
      CHECK(tl::sqrt(x).dtype() == floaty);
      CHECK(tl::sin(x).dtype() == floaty);
      CHECK(tl::cos(x).dtype() == floaty);
      CHECK(tl::tanh(x).dtype() == floaty);
      CHECK(tl::sigmoid(x).dtype() == floaty);
      if (in == B)  // torch refuses abs on bool
        CHECK_THROWS_AS(tl::abs(x), tl::DTypeError);
      else
        CHECK(tl::abs(x).dtype() == in);
      CHECK(tl::logical_not(x).dtype() == B);
      CHECK((x > 0).dtype() == B);
      CHECK((x == x).dtype() == B);
      CHECK(tl::logical_and(x, x).dtype() == B);
      CHECK(tl::logical_or(x, 1.5).dtype() == B);
      if (in != B) {
        CHECK(tl::neg(x).dtype() == in);
        CHECK(tl::relu(x).dtype() == in);
        CHECK((x - x).dtype() == in);
      }
    }
    CHECK(tl::clamp(i, 0, 5).dtype() == I);
    CHECK(tl::clamp(i, 0.5, std::nullopt).dtype() == F);
    CHECK(tl::clamp(f, std::optional<Tensor>(d0), std::nullopt).dtype() == F);
    CHECK(tl::clamp(i, std::optional<Tensor>(d0), std::nullopt).dtype() == D);
    CHECK(tl::where(b, i, 2.5).dtype() == F);
    CHECK(tl::where(b, i, l0).dtype() == I);
    CHECK(tl::where(b, 1, 0).dtype() == L);
    CHECK(tl::where(b, 1.0, 0).dtype() == F);
    CHECK(tl::where(b, true, false).dtype() == B);
  }
}

TEST_CASE("promotion computes mixed-dtype values in the promoted dtype") {
  for (tl::Device device : test_devices()) {
    Tensor i = tl::from_vector<int32_t>({1, -2, 3, 7}, {4}, device);
    Tensor f = tl::from_vector<float>({0.5f, 0.25f, -1.5f, 2.0f}, {4}, device);
    Tensor d0 = tl::scalar_tensor(0.1, tl::TensorOptions(D).device(device));
    check_values(i + f, {1.5, -1.75, 1.5, 9});
    check_values(i / 2, {0.5, -1, 1.5, 3.5});
    check_values(i + 2.5, {3.5, 0.5, 5.5, 9.5});
    check_values(i * d0, {0.1, -0.2, 0.3, 0.7}, 1e-12, 0);  // computed in float64
    CHECK((i * d0).dtype() == D);
    check_values(i > 1.5, {0, 0, 1, 1});
    check_values(i == f * 2, {1, 0, 0, 0});
    Tensor b = tl::from_vector<bool>({true, false, true, false}, {4}, device);
    check_values(b + 1, {2, 1, 2, 1});
    check_values(b * 2.5, {2.5, 0, 2.5, 0});
  }
}

}  // namespace

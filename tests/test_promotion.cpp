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

namespace {
// Tensors of the new dtypes made without elementwise math (random_tensor scales floats).
Tensor ten_dimmed(DType d) { return tl::randint(1, 9, {3}).to(d); }
Tensor ten_zero_dim(DType d) { return tl::randint(1, 9, {}).to(d); }
const DType U8 = tl::kUInt8, I8 = tl::kInt8, I16 = tl::kInt16, H = tl::kFloat16, BF = tl::kBFloat16;
}  // namespace

TEST_CASE("promotion: the full 10x10 promote_types table is torch's") {
  const std::vector<DType> order{B, U8, I8, I16, I, L, H, BF, F, D};
  // torch.promote_types(row, column), generated with torch 2.15; order as `order`.
  const DType table[10][10] = {
      {B, U8, I8, I16, I, L, H, BF, F, D},   {U8, U8, I16, I16, I, L, H, BF, F, D},
      {I8, I16, I8, I16, I, L, H, BF, F, D}, {I16, I16, I16, I16, I, L, H, BF, F, D},
      {I, I, I, I, I, L, H, BF, F, D},       {L, L, L, L, L, L, H, BF, F, D},
      {H, H, H, H, H, H, H, F, F, D},        {BF, BF, BF, BF, BF, BF, F, BF, F, D},
      {F, F, F, F, F, F, F, F, F, D},        {D, D, D, D, D, D, D, D, D, D},
  };
  for (size_t r = 0; r < order.size(); ++r)
    for (size_t c = 0; c < order.size(); ++c) {
      INFO(tl::dtype_name(order[r]) << " with " << tl::dtype_name(order[c]));
      CHECK(tl::promote_types(order[r], order[c]) == table[r][c]);
      CHECK(tl::result_type(ten_dimmed(order[r]), ten_dimmed(order[c])) == table[r][c]);
    }
}

TEST_CASE("promotion: scalars and 0-dim tensors with the new dtypes, as torch.result_type") {
  struct Case {
    const char* what;
    DType got, want;
  };
  const std::vector<Case> cases{
      {"uint8 + 7", tl::result_type(ten_dimmed(U8), 7), U8},
      {"uint8 + -300", tl::result_type(ten_dimmed(U8), -300), U8},
      {"float16 + 2.5", tl::result_type(ten_dimmed(H), 2.5), H},
      {"bfloat16 + 10000000000.0", tl::result_type(ten_dimmed(BF), 10000000000.0), BF},
      {"int8 + 2.5", tl::result_type(ten_dimmed(I8), 2.5), F},
      {"int16 + true", tl::result_type(ten_dimmed(I16), true), I16},
      {"uint8 + true", tl::result_type(ten_dimmed(U8), true), U8},
      {"bool + 1", tl::result_type(ten_dimmed(B), 1), L},
      {"int8 + float16 0-dim", tl::result_type(ten_dimmed(I8), ten_zero_dim(H)), H},
      {"uint8 + int64 0-dim", tl::result_type(ten_dimmed(U8), ten_zero_dim(L)), U8},
      {"uint8 + int8 0-dim", tl::result_type(ten_dimmed(U8), ten_zero_dim(I8)), U8},
      {"float16 + float64 0-dim", tl::result_type(ten_dimmed(H), ten_zero_dim(D)), H},
      {"bfloat16 + float16 0-dim", tl::result_type(ten_dimmed(BF), ten_zero_dim(H)), BF},
      {"int16 + float32 0-dim", tl::result_type(ten_dimmed(I16), ten_zero_dim(F)), F},
      {"uint8 0-dim + int8 0-dim", tl::result_type(ten_zero_dim(U8), ten_zero_dim(I8)), I16},
      {"float16 0-dim + bfloat16 0-dim", tl::result_type(ten_zero_dim(H), ten_zero_dim(BF)), F},
      {"int8 0-dim + uint8", tl::result_type(ten_zero_dim(I8), ten_dimmed(U8)), U8},
      {"float16 0-dim + int32", tl::result_type(ten_zero_dim(H), ten_dimmed(I)), H},
      {"bfloat16 + float16", tl::result_type(ten_dimmed(BF), ten_dimmed(H)), F},
      {"uint8 + int8", tl::result_type(ten_dimmed(U8), ten_dimmed(I8)), I16},
      {"int16 0-dim + float16 0-dim", tl::result_type(ten_zero_dim(I16), ten_zero_dim(H)), H},
      {"bool + uint8 0-dim", tl::result_type(ten_dimmed(B), ten_zero_dim(U8)), U8},
  };
  for (const Case& c : cases) {
    INFO(c.what << ": got " << tl::dtype_name(c.got) << ", want " << tl::dtype_name(c.want));
    CHECK(c.got == c.want);
  }
}

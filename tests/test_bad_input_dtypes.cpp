// The bad-input table of dtypes, generated from the op lists: every unary, binary and reduce op on
// every dtype outside its supported set must throw DTypeError "[tl::<op>] ... <dtype>", and every
// dtype inside it must work.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "tensorlet/backends/math/binary_ops.h"
#include "tensorlet/backends/math/reduce_ops.h"
#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensorlet.h"
#include "test_util.h"

namespace {

using tl::Tensor;
using tl_test::all_dtypes;

// One op of a list: its public name, supported set and a call of the public function on inputs
// of one dtype.
struct OpRow {
  const char* name;
  tl::DTypeSet dtypes;
  Tensor (*call)(const Tensor&);
};

// The unary and binary rows are generated from the lists themselves: an op added to a list gets a
// row, and one whose public function is missing does not compile.
#define TL_TEST_UNARY_ROW(e, name, rule, dtypes, Fn)        \
  OpRow{"tl::" #name, tl::supported_dtypes(tl::UnaryOp::e), \
        [](const Tensor& a) { return tl::name(a); }},
const OpRow kUnaryRows[] = {TL_UNARY_OPS(TL_TEST_UNARY_ROW)};
#undef TL_TEST_UNARY_ROW

// Binary ops take the input twice: the dtype under test is then the promoted dtype too.
#define TL_TEST_BINARY_ROW(e, name, rule, dtypes, Fn)        \
  OpRow{"tl::" #name, tl::supported_dtypes(tl::BinaryOp::e), \
        [](const Tensor& a) { return tl::name(a, a); }},
const OpRow kBinaryRows[] = {TL_BINARY_OPS(TL_TEST_BINARY_ROW)};
#undef TL_TEST_BINARY_ROW

// The reduce lists name ops by string, so their public functions are mapped by hand; the
// static_asserts below fail to compile when a list gains an op without a row here.
constexpr std::array<std::pair<tl::ReduceOp, Tensor (*)(const Tensor&)>, tl::kNumReduceOps>
    kReduceCalls{{
        {tl::ReduceOp::Sum, [](const Tensor& a) { return tl::sum(a); }},
        {tl::ReduceOp::Prod, [](const Tensor& a) { return tl::prod(a); }},
        {tl::ReduceOp::Mean, [](const Tensor& a) { return tl::mean(a); }},
        {tl::ReduceOp::Max, [](const Tensor& a) { return tl::max(a); }},
        {tl::ReduceOp::Min, [](const Tensor& a) { return tl::min(a); }},
        {tl::ReduceOp::All, [](const Tensor& a) { return tl::all(a); }},
        {tl::ReduceOp::Any, [](const Tensor& a) { return tl::any(a); }},
    }};
constexpr std::array<std::pair<tl::ArgReduceOp, Tensor (*)(const Tensor&)>, tl::kNumArgReduceOps>
    kArgReduceCalls{{
        {tl::ArgReduceOp::ArgMax, [](const Tensor& a) { return tl::argmax(a); }},
        {tl::ArgReduceOp::ArgMin, [](const Tensor& a) { return tl::argmin(a); }},
    }};

// Row k must map enumerator k (a row left out leaves a default-initialised pair behind).
template <typename Table>
constexpr bool rows_in_enum_order(const Table& t) {
  for (size_t k = 0; k < t.size(); ++k)
    if (static_cast<size_t>(t[k].first) != k || t[k].second == nullptr) return false;
  return true;
}
static_assert(rows_in_enum_order(kReduceCalls), "one row per ReduceOp, in enum order");
static_assert(rows_in_enum_order(kArgReduceCalls), "one row per ArgReduceOp, in enum order");

std::vector<OpRow> all_rows() {
  std::vector<OpRow> rows(std::begin(kUnaryRows), std::end(kUnaryRows));
  rows.insert(rows.end(), std::begin(kBinaryRows), std::end(kBinaryRows));
  for (const auto& [op, call] : kReduceCalls)
    rows.push_back({tl::reduce_op_name(op), tl::reduce_op_dtypes(op), call});
  for (const auto& [op, call] : kArgReduceCalls)
    rows.push_back({tl::reduce_op_name(op), tl::reduce_op_dtypes(op), call});
  return rows;
}

// Small random positive values (log and sqrt stay finite), in dtype d.
Tensor small_random(tl::DType d) { return tl::randint(1, 5, {2, 3}, tl::kFloat32).to(d); }

}  // namespace

TEST_CASE("bad input dtypes: every op refuses the dtypes outside its list's set, naming both") {
  tl::manual_seed(12);
  int refused = 0;
  for (const OpRow& row : all_rows())
    for (tl::DType d : all_dtypes()) {
      if (row.dtypes.contains(d)) continue;
      const std::string dname = tl::dtype_name(d);
      CAPTURE(row.name);
      CAPTURE(dname);
      const Tensor a = small_random(d);
      bool threw = false;
      try {
        row.call(a);
      } catch (const tl::DTypeError& e) {
        threw = true;
        const std::string msg = e.what();
        CHECK_MESSAGE(msg.rfind(std::string("[") + row.name + "] ", 0) == 0, msg);
        CHECK_MESSAGE(msg.find(dname) != std::string::npos, msg);
      } catch (const std::exception& e) {
        FAIL_CHECK("threw something other than tl::DTypeError: " << e.what());
        threw = true;
      }
      if (!threw) FAIL_CHECK("no DTypeError");
      ++refused;
    }
  // neg abs relu floor sub pow argmax argmin refuse bool; mean refuses bool and five integers.
  CHECK(refused >= 14);
}

TEST_CASE("bad input dtypes: every op takes every dtype of its list's set") {
  tl::manual_seed(12);
  for (const OpRow& row : all_rows())
    for (tl::DType d : all_dtypes()) {
      if (!row.dtypes.contains(d)) continue;
      const std::string dname = tl::dtype_name(d);
      CAPTURE(row.name);
      CAPTURE(dname);
      const Tensor a = small_random(d);
      CHECK_NOTHROW(row.call(a));
    }
}

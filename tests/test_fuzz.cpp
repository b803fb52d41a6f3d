// The short run of the differential fuzzer (tests/fuzz): fixed seed (or TL_TEST_SEED), 2 000 cases
// on all ten dtypes, CPU against the naive reference; the long runs are scripts/fuzz.
#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "fuzz/fuzz.h"
#include "fuzz/generator.h"
#include "fuzz/reference.h"
#include "fuzz/runner.h"
#include "test_util.h"

TEST_CASE("fuzz: 2000 random cases agree with the naive reference (seed 20261125)") {
  fuzz::Options o;
  // TL_TEST_SEED runs 2000 other cases (the seed a loop over it gives the rest of the suite).
  o.seed = tl_test::test_seed().value_or(20261125);
  INFO("fuzz seed " << o.seed);
  o.cases = 2000;
  std::ostringstream log;
  const fuzz::Stats st = fuzz::run_fuzz(o, log);
  INFO(log.str());
  CHECK(st.cases == 2000);
  CHECK(st.mismatches == 0);
}

TEST_CASE("fuzz: a seed gives the same cases every time") {
  fuzz::Known known;
  for (uint64_t i = 0; i < 50; ++i) {
    const auto a = fuzz::generate_case(fuzz::case_seed(7, i), known);
    const auto b = fuzz::generate_case(fuzz::case_seed(7, i), known);
    CHECK(a.op == b.op);
    REQUIRE(a.inputs.size() == b.inputs.size());
    for (size_t k = 0; k < a.inputs.size(); ++k)
      CHECK(a.inputs[k].base_shape == b.inputs[k].base_shape);
  }
}

TEST_CASE("fuzz: the generator makes inputs of all ten dtypes") {
  fuzz::Known known;
  std::set<tl::DType> seen;
  for (uint64_t i = 0; i < 2000; ++i)
    for (const auto& in : fuzz::generate_case(fuzz::case_seed(20261125, i), known).inputs)
      seen.insert(in.dtype);
#define TL_FUZZ_SEEN(e, T, name, kind) CHECK_MESSAGE(seen.count(tl::DType::e) == 1, name);
  TL_DTYPES(TL_FUZZ_SEEN)
#undef TL_FUZZ_SEEN
}

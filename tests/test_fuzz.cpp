// The short run of the differential fuzzer (tests/fuzz): fixed seed, 2 000 cases, CPU against the
// naive reference; the long runs are scripts/fuzz.
#include <doctest/doctest.h>

#include <sstream>

#include "fuzz/fuzz.h"
#include "fuzz/generator.h"
#include "fuzz/reference.h"
#include "fuzz/runner.h"

TEST_CASE("fuzz: 2000 random cases agree with the naive reference (seed 20261125)") {
  fuzz::Options o;
  o.seed = 20261125;
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

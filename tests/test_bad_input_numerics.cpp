// Bad-input suite, numerics and indexing: conversions, fill ranges, bool masks, dtype rules, device-side index checks.
#include "bad_input.h"

using namespace tl_test;

TEST_CASE("bad input: numerics") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::view] ", "", tl::ones({2}).view({3})),
  });
}

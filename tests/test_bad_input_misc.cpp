// Bad-input suite, printing, devices, the benchmark Timer and the names errors carry.
#include "bad_input.h"

using namespace tl_test;

TEST_CASE("bad input: misc") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::view] ", "", tl::ones({2}).view({3})),
  });
}

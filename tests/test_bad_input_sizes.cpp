// Bad-input suite, sizes, views and factories: overflow-checked shapes, checked views, 0-d tensors, undefined tensors.
#include "bad_input.h"

using namespace tl_test;

TEST_CASE("bad input: sizes") {
  run_bad_inputs({
      TL_BAD(tl::ShapeError, "[tl::view] ", "", tl::ones({2}).view({3})),
  });
}

// Gradient checks of the fuzzer's differentiable cases (CUDA against the CPU, finite differences).
#pragma once

#include <optional>
#include <string>

#include "fuzz/case.h"

namespace fuzz {

// For a case of a differentiable op with floating inputs (each input's base a leaf, its views
// recorded): the gradient of sum(out * w), w fixed, computed on `device` when it is CUDA matches
// the CPU's; and for an op smooth everywhere, a central difference in float64 on the CPU matches
// autograd's on a few elements of each input. nullopt when they agree or the case is not one
// (no floating input, an as_strided view, a result that is not floating, non-finite values).
std::optional<std::string> check_gradients(const Case& c, tl::Device device);

}  // namespace fuzz

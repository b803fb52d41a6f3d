// Shrinks a mismatching case to a smaller one that still mismatches.
#pragma once

#include <string>

#include "fuzz/case.h"

namespace fuzz {

// Greedy: drops view steps, shrinks base dims, simplifies values and scalars while the case still
// mismatches (any mismatch); returns the smallest case found and its mismatch in `mismatch`.
Case shrink(const Case& c, const Known& known, tl::Device device, std::string& mismatch,
            int budget = 3000);

}  // namespace fuzz

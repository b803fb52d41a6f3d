// Writes cases and their reference results as JSON lines (checked against PyTorch by
// torch_check.py).
#pragma once

#include <ostream>

#include "fuzz/case.h"
#include "fuzz/reference.h"

namespace fuzz {

void dump_case(std::ostream& os, uint64_t index, const Case& c, const RefResult& ref);

}  // namespace fuzz

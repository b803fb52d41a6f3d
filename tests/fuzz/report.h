// Prints a fuzz case as a C++ reproducer.
#pragma once

#include <ostream>
#include <string>

#include "fuzz/case.h"

namespace fuzz {

// Writes the case as compilable C++ statements (inputs, views, the op) under a comment header.
void print_reproducer(std::ostream& os, const Case& c, const std::string& mismatch);

}  // namespace fuzz

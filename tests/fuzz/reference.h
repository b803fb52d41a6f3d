// The naive reference: every op in plain loops over host arrays, with torch's promotion and error
// rules.
#pragma once

#include <string>
#include <vector>

#include "fuzz/case.h"

namespace fuzz {

struct RefResult {
  bool skip = false;         // the case falls in a known-bug family: not checked
  bool raises = false;       // the library must raise a typed tl:: error
  std::string why;           // the rule that makes it raise
  HostArray out;             // for copy_/fill_: the destination's whole base after the op
  std::vector<double> atol;  // per-element absolute tolerance (floating outputs), may be empty
  double rtol = 0;           // relative tolerance (floating outputs)
  // Where the library must raise: the start its message must have when not empty (beyond the
  // "[tl::" every error has), and whether it must be an IndexError.
  std::string error_prefix;
  bool index_error = false;
};

// The geometry of an input after its view chain; false when a step is invalid for the input.
bool input_geom(const Input& in, Geom& g);
// The input's logical values (bool bytes read as "non-zero").
HostArray input_values(const Input& in, const Geom& g);

RefResult run_reference(const Case& c, const Known& known);

}  // namespace fuzz

// The fuzz loop shared by the doctest short run and the tl_fuzz binary.
#pragma once

#include <cstdint>
#include <ostream>

#include "fuzz/case.h"

namespace fuzz {

struct Options {
  uint64_t seed = 1;
  int64_t cases = 2000;
  int64_t first = 0;  // index of the first case (to rerun one case: first = i, cases = 1)
  tl::Device device = tl::Device::cpu();  // cuda: each case also runs there, against the CPU
  Known known;
  int64_t max_reports = 5;  // reproducers printed (each shrunk); later mismatches are counted
};

struct Stats {
  int64_t cases = 0, skipped = 0, raised = 0, mismatches = 0;  // raised: errors expected
};

// Runs the cases, printing a shrunk reproducer for each of the first mismatches to `log`.
Stats run_fuzz(const Options& o, std::ostream& log);

}  // namespace fuzz

// Seeded generation of fuzz cases (mt19937_64 with the fuzzer's own distributions, so a seed gives
// the same cases with every standard library).
#pragma once

#include <cstdint>
#include <random>

#include "fuzz/case.h"

namespace fuzz {

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t next() { return g_(); }
  // Uniform in [lo, hi] (inclusive); the tiny modulo bias does not matter here.
  int64_t uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return real() < p; }

 private:
  std::mt19937_64 g_;
};

// The seed of case `index` of a run: each case can be regenerated alone.
uint64_t case_seed(uint64_t run_seed, uint64_t index);

// A random case (its inputs may be invalid on purpose: the reference then expects an error).
Case generate_case(uint64_t seed, const Known& known);

}  // namespace fuzz

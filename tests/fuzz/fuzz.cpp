// The fuzz loop: generate, check, shrink and report each case of a seeded run.
#include "fuzz/fuzz.h"

#include "fuzz/generator.h"
#include "fuzz/reference.h"
#include "fuzz/report.h"
#include "fuzz/runner.h"
#include "fuzz/shrinker.h"

namespace fuzz {

Stats run_fuzz(const Options& o, std::ostream& log) {
  Stats st;
  for (int64_t i = o.first; i < o.first + o.cases; ++i) {
    const Case c = generate_case(case_seed(o.seed, static_cast<uint64_t>(i)), o.known);
    ++st.cases;
    bool skipped = false, raises = false;
    auto m = check_case(c, o.known, o.device, &skipped, &raises);
    st.raised += raises;
    if (skipped) {
      ++st.skipped;
      continue;
    }
    if (!m) continue;
    if (++st.mismatches > o.max_reports) continue;
    std::string small_mismatch = *m;
    Case small = shrink(c, o.known, o.device, small_mismatch);
    log << "\n==== mismatch in case " << i << " (rerun: tl_fuzz --seed " << o.seed << " --first "
        << i << " --cases 1): " << *m << "\n";
    print_reproducer(log, small, small_mismatch);
  }
  return st;
}

}  // namespace fuzz

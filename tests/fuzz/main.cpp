// tl_fuzz: the long differential fuzz run (scripts/fuzz); the last line is "N cases, M mismatches".
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "fuzz/dump.h"
#include "fuzz/fuzz.h"
#include "fuzz/generator.h"
#include "fuzz/reference.h"

namespace {

int usage(int rc) {
  std::cerr << "usage: tl_fuzz [--cases N] [--seed S] [--first I] [--device cpu|cuda|both]\n"
               "               [--check NAME]... [--reports N]\n"
               "  --device cuda|both  run every case on the CPU (against the reference) and on\n"
               "                      cuda:0 (against the reference and the CPU)\n"
               "  --dump              print the cases and the reference's results as JSON lines\n"
               "                      instead (for tests/fuzz/torch_check.py)\n"
               "  --check NAME        also fuzz a known-bug family (skipped by default); 'all'\n"
               "                      for every one; --known NAME skips it again. Families:";
  for (const auto& n : fuzz::known_names()) std::cerr << " " << n;
  std::cerr << "\n";
  return rc;
}

bool parse_int(const char* s, int64_t& out) {
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (!s[0] || *end || v < 0) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  fuzz::Options o;
  o.cases = 10000;
  bool dump = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    int64_t n = 0;
    if (a == "-h" || a == "--help") return usage(0);
    if (a == "--dump") {
      dump = true;
      continue;
    }
    if (!v) return usage(2);
    ++i;
    if (a == "--cases" && parse_int(v, n))
      o.cases = n;
    else if (a == "--seed" && parse_int(v, n))
      o.seed = static_cast<uint64_t>(n);
    else if (a == "--first" && parse_int(v, n))
      o.first = n;
    else if (a == "--reports" && parse_int(v, n))
      o.max_reports = n;
    else if (a == "--check" && fuzz::set_known(o.known, v, false))
      continue;
    else if (a == "--known" && fuzz::set_known(o.known, v, true))
      continue;
    else if (a == "--device" && std::strcmp(v, "cpu") == 0)
      o.device = tl::Device::cpu();
    else if (a == "--device" && (std::strcmp(v, "cuda") == 0 || std::strcmp(v, "both") == 0)) {
      if (!tl::cuda::is_available()) {
        std::cerr << "tl_fuzz: --device " << v << " needs a CUDA device (none usable here)\n";
        return 2;
      }
      o.device = tl::Device::cuda(0);
    } else {
      return usage(2);
    }
  }
  if (dump) {  // the reference's view of each case, for checking the reference against torch
    for (int64_t i = o.first; i < o.first + o.cases; ++i) {
      const fuzz::Case c = fuzz::generate_case(fuzz::case_seed(o.seed, i), o.known);
      const fuzz::RefResult ref = fuzz::run_reference(c, o.known);
      if (!ref.skip) fuzz::dump_case(std::cout, i, c, ref);
    }
    return 0;
  }
  std::cout << "tl_fuzz: seed " << o.seed << ", cases " << o.first << ".." << o.first + o.cases - 1
            << ", device " << (o.device.is_cuda() ? "cpu and cuda:0" : "cpu") << "\n";
  const fuzz::Stats st = fuzz::run_fuzz(o, std::cout);
  std::cout << st.skipped << " cases skipped (known-bug families), " << st.raised
            << " checked errors\n";
  std::cout << st.cases << " cases, " << st.mismatches << " mismatches" << std::endl;
  return st.mismatches == 0 ? 0 : 1;
}

// doctest runner for the tensorlet suites.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <optional>
#include <string_view>

#if defined(__GLIBC__)
#include <execinfo.h>
#include <unistd.h>
#endif

#include "test_util.h"

namespace {

// TL_TEST_SEED=<n> draws the suite's random inputs from seed n: every test case (and every pass
// through it for its next subcase) starts from tl::manual_seed(mix of n and the case's name). So
// a loop over seeds feeds every case new data, while a failure repeats with the same seed and any
// -tc/-sc filter: a case's inputs then depend on neither the cases run before it nor the number
// of GPUs. Unset, nothing is reseeded and the default generators run on from kDefaultSeed through
// the whole run, as before. Cases that call tl::manual_seed themselves keep their own seeds.
class SeedListener : public doctest::IReporter {
 public:
  explicit SeedListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override { reseed(tc); }
  void test_case_reenter(const doctest::TestCaseData& tc) override { reseed(tc); }
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  static void reseed(const doctest::TestCaseData& tc) {
    const std::optional<uint64_t> seed = tl_test::test_seed();
    if (!seed) return;
    // FNV-1a of the name, then splitmix64's finalizer, so that nearby seeds and names give
    // unrelated Philox seeds.
    uint64_t h = 14695981039346656037ull ^ *seed;
    for (char c : std::string_view(tc.m_name))
      h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    tensorlet::manual_seed(h ^ (h >> 31));
  }
};

DOCTEST_REGISTER_LISTENER("tl_test_seed", 1, SeedListener);

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
// A crash prints the stack before dying (library frames resolve: its symbols are exported), so a
// segfault seen only on the GPU machine, which has no debugger, says where it happened.
[[noreturn]] void print_stack_and_die(int sig) {
  const char header[] = "\ntl_tests: fatal signal; stack:\n";
  (void)!write(STDERR_FILENO, header, sizeof(header) - 1);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(128 + sig);
}

// Installed before main runs (not under AddressSanitizer, whose report says more).
const bool g_stack_on_crash = [] {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, print_stack_and_die);
  return true;
}();
#endif

}  // namespace

// The bad-input suite's table format: each row is a hostile call, the exception type and message
// prefix it must raise, and the runner proves the library still works after every row.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include <tensorlet/tensorlet.h>

namespace tl_test {

namespace tl = tensorlet;

struct BadInput {
  std::string call;           // the C++ of the call, as printed in a failure report
  std::function<void()> run;  // makes the bad call
  std::string expected_type;  // "tl::ShapeError", ...
  std::function<bool(const std::exception&)> has_expected_type;
  std::string prefix;       // the message must start with this, e.g. "[tl::zeros] "
  std::string contains;     // and contain this (the argument at fault), when not empty
  bool needs_cuda = false;  // the row runs only when a CUDA device is usable
};

template <typename E>
BadInput make_bad_input(std::string call, std::string type_name, std::string prefix,
                        std::string contains, std::function<void()> run, bool needs_cuda) {
  return BadInput{std::move(call),
                  std::move(run),
                  std::move(type_name),
                  [](const std::exception& e) { return dynamic_cast<const E*>(&e) != nullptr; },
                  std::move(prefix),
                  std::move(contains),
                  needs_cuda};
}

// A row: TL_BAD(tl::ShapeError, "[tl::zeros] ", "overflow", tl::zeros({int64_t(1) << 62}))
// The prefix is the whole "[tl::op] " head; `contains` names the argument at fault ("" for none).
#define TL_BAD(E, prefix, contains, ...) \
  ::tl_test::make_bad_input<E>(          \
      #__VA_ARGS__, #E, prefix, contains, [] { (void)(__VA_ARGS__); }, false)
// The same for a row that needs a CUDA device (skipped without one).
#define TL_BAD_CUDA(E, prefix, contains, ...) \
  ::tl_test::make_bad_input<E>(               \
      #__VA_ARGS__, #E, prefix, contains, [] { (void)(__VA_ARGS__); }, true)

// A small op on every usable device with a known answer: after a bad call the library must
// still compute correctly (no state left broken by the error).
inline void check_library_still_works(const std::string& after) {
  std::vector<tl::Device> devices{tl::Device::cpu()};
  if (tl::cuda::is_available()) devices.push_back(tl::Device::cuda(0));
  for (tl::Device d : devices) {
    tl::Tensor a = tl::arange(6, tl::TensorOptions(tl::kFloat32).device(d)).view({2, 3});
    double got = (a * 2 + 1).sum().item<double>();
    if (got != 36.0)
      FAIL_CHECK("after " << after << ": (arange(6)*2+1).sum() on " << d << " gave " << got
                          << ", expected 36");
  }
}

// Runs every row: the call throws the expected type with the expected message head, then the
// library still works.
inline void run_bad_inputs(const std::vector<BadInput>& rows) {
  const bool have_cuda = tl::cuda::is_available();
  for (const BadInput& row : rows) {
    if (row.needs_cuda && !have_cuda) continue;
    std::string what, type = "no exception";
    bool right_type = false;
    try {
      row.run();
    } catch (const std::exception& e) {
      what = e.what();
      type = typeid(e).name();
      right_type = row.has_expected_type(e);
    } catch (...) {
      type = "a non-std exception";
    }
    INFO("call:     " << row.call);
    INFO("expected: " << row.expected_type << " starting \"" << row.prefix << "\""
                      << (row.contains.empty() ? "" : " and naming \"" + row.contains + "\""));
    INFO("got:      " << type << ": " << what);
    CHECK(right_type);
    CHECK(what.rfind(row.prefix, 0) == 0);
    if (!row.contains.empty()) CHECK(what.find(row.contains) != std::string::npos);
    check_library_still_works(row.call);
  }
}

}  // namespace tl_test

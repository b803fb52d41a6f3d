// Runs a fuzz case through tensorlet and compares it with the reference (and CUDA with the CPU).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuzz/case.h"
#include "fuzz/reference.h"

namespace fuzz {

// A built input: its contiguous base and the view of it the op reads.
struct Built {
  tl::Tensor base, view;
};

// One step of an input's view chain.
tl::Tensor apply_view(const tl::Tensor& t, const ViewStep& s);
// The input's base (its values written byte for byte, then moved to `device`) and its view.
Built build_input(const Input& in, tl::Device device);
// Runs the case's op on built inputs; for copy_/fill_/in-place ops the result is in[0]'s base.
tl::Tensor run_op(const Case& c, std::vector<Built>& in);

// What tensorlet did with a case.
struct LibResult {
  bool raised = false;
  std::string error;         // the exception's type and message
  bool index_error = false;  // the exception is a tl::IndexError
  HostArray out;
  bool contiguous = true;  // clone/contiguous results must be contiguous
};

LibResult run_library(const Case& c, tl::Device device);

// The first difference between the reference and the library (nullopt: they agree).
std::optional<std::string> compare(const Case& c, const RefResult& ref, const LibResult& lib);
// The same between two library runs (CUDA against the CPU), with the reference's tolerances.
std::optional<std::string> compare_runs(const RefResult& ref, const LibResult& cpu,
                                        const LibResult& dev);

// Runs the case on `device` (and, for CUDA, on the CPU too); a description of any mismatch.
// Sets `skipped` when the case is in a known-bug family, `raises` when the op must raise.
std::optional<std::string> check_case(const Case& c, const Known& known, tl::Device device,
                                      bool* skipped = nullptr, bool* raises = nullptr);

}  // namespace fuzz

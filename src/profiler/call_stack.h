// C++ call sites for with_stack: capturing an op's return addresses when it opens (cheap, raw)
// and folding them, at stop, into the user's `file:line function` frames. Internal to the profiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensorlet/profiler/symbolize.h"

namespace tensorlet::profiler::detail {

// Return addresses kept per op: enough for the user's frames above the library's few (the
// innermost frames are kept; a deeper stack loses its outermost ones).
constexpr int kMaxFrames = 32;

// Writes up to `max` return addresses of the calling thread, innermost first, leaving out the
// capturing function itself and the `skip` frames above it; returns how many it wrote. No
// allocation. libunwind (dlopen'd libunwind.so.8) where present, else libgcc's unwinder;
// TL_PROFILER_UNWINDER=libgcc picks libgcc's. call_stack_capture.cpp.
int capture_call_stack(uintptr_t* pcs, int max, int skip);
// The two unwinders, for tests: the same contract; the libunwind one returns -1 where libunwind
// is not there.
int capture_call_stack_libgcc(uintptr_t* pcs, int max, int skip);
int capture_call_stack_libunwind(uintptr_t* pcs, int max, int skip);
bool capture_uses_libunwind();

// Raw stacks of one thread's recording: contiguous runs of addresses in fixed-size blocks, so a
// capture writes in place and appending never moves what was captured.
class FramePool {
 public:
  static constexpr size_t kBlock = 64 * 1024;
  // Room for kMaxFrames addresses at the end of the pool; commit(n) keeps the first n.
  uintptr_t* reserve() {
    if (blocks_.empty() || used_ + kMaxFrames > kBlock) {
      blocks_.push_back(std::make_unique_for_overwrite<uintptr_t[]>(kBlock));
      used_ = 0;
    }
    return blocks_.back().get() + used_;
  }
  void commit(int n) { used_ += static_cast<size_t>(n); }

 private:
  std::vector<std::unique_ptr<uintptr_t[]>> blocks_;
  size_t used_ = 0;
};

// One captured stack: the record it belongs to (index in its buffer) and its addresses.
struct RawStack {
  int32_t event;
  int32_t count;
  const uintptr_t* pcs;
};

// Turns raw stacks into the user's frames, outermost first ("test.cpp:42 helper()"): each address
// is expanded into its inlined calls, then library frames (libtensorlet's module, and code from
// its headers compiled into the user's), runtime frames (libc, libstdc++, ...) and everything
// outside main are folded away. Addresses and whole stacks are cached: a loop's ops share theirs.
// call_stack_fold.cpp.
class StackFolder {
 public:
  explicit StackFolder(Symbolizer& symbolizer);
  std::vector<std::string> fold(const uintptr_t* pcs, int count);

 private:
  struct Frame {
    std::string text;  // "file.cpp:42 function()"
    bool keep;         // user code
    bool is_main;      // the program's main: frames outside it are the runtime's
  };
  const std::vector<Frame>& frames_of(uintptr_t pc);

  Symbolizer& symbolizer_;
  std::string library_module_;  // libtensorlet's module
  std::string library_source_;  // its source root ("/path/src/"), for inlined library headers
  std::unordered_map<uintptr_t, std::vector<Frame>> by_pc_;
  std::unordered_map<std::string, std::vector<std::string>> by_stack_;
};

// "tensorlet::Tensor ns::f<float>(tensorlet::Tensor const&) const" -> "ns::f<float>()": the
// demangled name without its return type, arguments, qualifiers and anonymous namespaces, so
// frames stay readable.
std::string readable_function(const std::string& demangled);

}  // namespace tensorlet::profiler::detail

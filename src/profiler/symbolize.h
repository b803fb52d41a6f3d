// Symbolizer: a return address of this process to its source frames (function, file, line,
// module), inlined calls expanded. libdw (elfutils) in symbolize_libdw.cpp; a build without it
// compiles symbolize_unavailable.cpp, whose symbolizer says why it cannot. Internal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tensorlet::profiler::detail {

// One source-level frame at an address; an address inside inlined code gives several, innermost
// first (the inlined function at the address, then each caller it was inlined into).
struct SourceFrame {
  std::string function;  // demangled ("ns::f(int)"), "" when unknown
  std::string file;      // as the debug info names it, "" without line information
  int line = 0;
  std::string module;  // the ELF file's path ("/usr/lib/libtensorlet.so", the executable)
};

class Symbolizer {
 public:
  Symbolizer();  // reads this process's modules; check ok()
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  bool ok() const;
  // Why ok() is false: the note the table prints ("C++ call sites need libdw ...").
  const std::string& error() const;
  // `pc` is a return address: the call it returns from is looked up (pc - 1). Empty when the
  // address is in no module.
  std::vector<SourceFrame> frames(uintptr_t pc);
  // The frames of a code address itself (not a return address), e.g. a function's entry.
  std::vector<SourceFrame> frames_at(uintptr_t address);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensorlet::profiler::detail

// StackFolder: raw return addresses to the user's frames ("test.cpp:42 helper()"), library and
// runtime frames folded away, as torch's stacks show the user's Python frames only.
#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <string_view>

#include "tensorlet/profiler/call_stack.h"

namespace tensorlet::profiler::detail {

namespace {

std::string_view base_name(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string normal_path(const std::string& path) {
  return path.empty() ? path : std::filesystem::path(path).lexically_normal().string();
}

// Shared libraries of the C/C++ runtime and of tensorlet's own dependencies: their frames (thread
// start, std::function's out-of-line parts, the unwinder) are never the user's code.
bool runtime_module(std::string_view module) {
  static constexpr std::array<std::string_view, 17> kPrefixes = {
      "libc.so",  "libc-",     "libstdc++", "libgcc_s",  "ld-linux", "libm.so",
      "libgomp",  "libdl.so",  "libdw",     "libelf",    "libz.so",  "libpthread",
      "libcuda.", "libcudart", "libcupti",  "libcublas", "libnccl"};
  const std::string_view name = base_name(module);
  if (name.empty() || name.front() == '[') return true;  // [vdso], anonymous mappings
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return name.substr(0, p.size()) == p; });
}

// Code from the system's headers (the standard library's templates: std::function's invoker,
// std::thread's trampoline) compiled into the user's module.
bool system_header(const std::string& file) {
  return file.rfind("/usr/include/", 0) == 0 || file.find("/include/c++/") != std::string::npos;
}

// Where "operator" ends, with the operator's symbol ("operator<<", "operator()"): its brackets
// are not nesting. A conversion or "operator new" keeps the space that follows.
size_t skip_operator(const std::string& s, size_t i) {
  static constexpr std::string_view kOperator = "operator";
  if (s.compare(i, kOperator.size(), kOperator) != 0) return i;
  if (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_')) return i;
  size_t j = i + kOperator.size();
  while (j < s.size() && std::string_view("<>=!+-*/%^&|~,[]()").find(s[j]) != std::string::npos)
    ++j;
  return j;
}

}  // namespace

std::string readable_function(const std::string& demangled) {
  std::string s = demangled;
  // "(anonymous namespace)::" says nothing the file name does not: dropped, as torch shows a
  // Python function by its bare name.
  static constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  for (size_t at; (at = s.find(kAnonymous)) != std::string::npos;) s.erase(at, kAnonymous.size());
  // GCC's clones ("f(int) [clone .cold]") are the same function.
  for (size_t clone; (clone = s.find(" [clone ")) != std::string::npos;) s.erase(clone);
  // Qualifiers after the argument list.
  for (bool trimmed = true; trimmed;) {
    trimmed = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (s.size() > q.size() && s.compare(s.size() - q.size(), q.size(), q) == 0) {
        s.resize(s.size() - q.size());
        trimmed = true;
      }
    }
  }
  // The argument list: the parentheses that close the name (not those of a bare "operator()",
  // as debug information names an inlined call operator).
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        if (!s.substr(0, i).ends_with("operator")) s.resize(i);
        break;
      }
    }
  }
  // A lambda is its closure's name: "f()::{lambda()#1}" rather than "...::operator()".
  if (s.ends_with("}::operator()")) s.resize(s.size() - std::string_view("::operator()").size());
  // The return type of a template instance: everything before the last space outside brackets.
  size_t name_start = 0;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t after = skip_operator(s, i);
    if (after != i) {
      i = after;
      if (i >= s.size()) break;
      if (s[i] == ' ') continue;  // "operator new", "operator bool": part of the name
    }
    const char c = s[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == '}' || c == ']') --depth;
    if (c == ' ' && depth == 0) name_start = i + 1;
  }
  s.erase(0, name_start);
  return s.empty() ? std::string("??") : s + "()";
}

StackFolder::StackFolder(Symbolizer& symbolizer) : symbolizer_(symbolizer) {
  // A function of this library tells its module and its source root: code compiled from the
  // library's headers into the user's module is folded away as well.
  const auto here = symbolizer_.frames_at(reinterpret_cast<uintptr_t>(&capture_call_stack));
  if (here.empty()) return;
  library_module_ = here.back().module;
  const std::string file = normal_path(here.back().file);
  static constexpr std::string_view kSelf = "profiler/call_stack_capture.cpp";
  if (file.size() > kSelf.size() &&
      file.compare(file.size() - kSelf.size(), kSelf.size(), kSelf) == 0)
    library_source_ = file.substr(0, file.size() - kSelf.size());
}

const std::vector<StackFolder::Frame>& StackFolder::frames_of(uintptr_t pc) {
  auto [it, inserted] = by_pc_.try_emplace(pc);
  if (!inserted) return it->second;
  for (SourceFrame& f : symbolizer_.frames(pc)) {
    const std::string file = normal_path(f.file);
    // Without its return type: "std::vector<int> f()" is the user's f.
    const std::string function = readable_function(f.function);
    // The library's inline code compiled into the user's module is told by its file (when the
    // library has debug information) or by its namespace (always); the standard library's too.
    const bool library = f.module == library_module_ ||
                         (!library_source_.empty() && file.rfind(library_source_, 0) == 0) ||
                         file.find("/include/tensorlet/") != std::string::npos ||
                         function.rfind("tensorlet::", 0) == 0 || system_header(file) ||
                         function.rfind("std::", 0) == 0;
    Frame frame;
    frame.keep = !library && !runtime_module(f.module) && !f.function.empty();
    frame.is_main = f.function == "main";
    if (frame.keep) {
      // Appended piece by piece: GCC 12 at -O3 misreads "[" + std::string as an overlapping copy
      // (-Wrestrict).
      if (f.file.empty()) {
        frame.text += '[';
        frame.text += base_name(f.module);
        frame.text += "] ";
      } else {
        frame.text += base_name(f.file);
        frame.text += ':';
        frame.text += std::to_string(f.line);
        frame.text += ' ';
      }
      frame.text += function;
    }
    it->second.push_back(std::move(frame));
  }
  return it->second;
}

std::vector<std::string> StackFolder::fold(const uintptr_t* pcs, int count) {
  std::string key(reinterpret_cast<const char*>(pcs), sizeof(uintptr_t) * count);
  auto cached = by_stack_.find(key);
  if (cached != by_stack_.end()) return cached->second;
  std::vector<std::string> frames;  // innermost first
  bool outside_main = false;
  for (int i = 0; i < count && !outside_main; ++i) {
    for (const Frame& f : frames_of(pcs[i])) {
      if (f.keep) frames.push_back(f.text);
      if (f.is_main) {
        outside_main = true;  // the runtime's start-up code calls main
        break;
      }
    }
  }
  std::reverse(frames.begin(), frames.end());
  return by_stack_.emplace(std::move(key), std::move(frames)).first->second;
}

}  // namespace tensorlet::profiler::detail

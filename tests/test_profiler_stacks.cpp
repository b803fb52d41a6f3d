// with_stack's C++ call sites: an op called from a known line of this file shows that
// `file:line function` frame in key_averages grouped by stack, the chrome trace and the collapsed
// stacks; library frames are folded away; with_stack off records none; a build without libdw
// falls back to scope names and says so. Compiled with -g in every build (tests/meson.build).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tensorlet/tensorlet.h>

#include "tensorlet/profiler/call_stack.h"

namespace {

namespace tl = tensorlet;
namespace prof = tensorlet::profiler;
using prof::Event;
using prof::EventKind;

constexpr const char* kFile = "test_profiler_stacks.cpp";

// The op under test, called from a line the caller learns. Not inlined, and not a tail call (the
// barrier after the op), so its frame is on the stack in optimized builds too.
// clang-format off
[[gnu::noinline]] tl::Tensor stack_helper(const tl::Tensor& a, int& line) {
  line = __LINE__; tl::Tensor out = tl::add(a, a);
  asm volatile("" ::: "memory");
  return out;
}
// A library op that calls another library op (tl::zeros opens tl::empty inside itself).
[[gnu::noinline]] tl::Tensor zeros_helper(int& line) {
  line = __LINE__; tl::Tensor out = tl::zeros({4});
  asm volatile("" ::: "memory");
  return out;
}
// A member function defined in its class, which the compiler inlines into its caller: the caller
// must still show (libdw's scopes of an inlined member go on with its class, not its caller).
struct InlinedMember {
  tl::Tensor forward(const tl::Tensor& a, int& line) const {
    line = __LINE__; tl::Tensor out = tl::add(a, a);
    asm volatile("" ::: "memory");
    return out;
  }
};
[[gnu::noinline]] tl::Tensor member_caller(const tl::Tensor& a, int& line, int& outer_line) {
  const InlinedMember m;
  outer_line = __LINE__; tl::Tensor out = m.forward(a, line);
  asm volatile("" ::: "memory");
  return out;
}
// Both unwinders from one frame: their addresses must agree but for the first, which is where
// in this function each was called.
[[gnu::noinline]] void both_unwinders(uintptr_t* a, int& na, uintptr_t* b, int& nb) {
  na = prof::detail::capture_call_stack_libgcc(a, prof::detail::kMaxFrames, 0);
  nb = prof::detail::capture_call_stack_libunwind(b, prof::detail::kMaxFrames, 0);
  asm volatile("" ::: "memory");
}
// clang-format on

std::string helper_frame(int line) {
  return std::string(kFile) + ":" + std::to_string(line) + " stack_helper()";
}

const Event* find(const std::vector<Event>& events, const std::string& name) {
  for (const Event& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tl_profiler_stacks_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// No frame of the library or the runtime: tensorlet's functions, its modules, libc's start-up.
void check_user_frames_only(const std::vector<std::string>& stack) {
  for (const std::string& frame : stack) {
    INFO("frame: ", frame);
    CHECK(frame.find("tensorlet::") == std::string::npos);
    CHECK(frame.find("libtensorlet") == std::string::npos);
    CHECK(frame.find("recorder.cpp") == std::string::npos);
    CHECK(frame.find("op_scope.h") == std::string::npos);
    CHECK(frame.find("elementwise.cpp") == std::string::npos);
    CHECK(frame.find("__libc_start") == std::string::npos);
    CHECK(frame.find(" _start") == std::string::npos);
  }
}

}  // namespace

TEST_CASE("profiler stacks: an op shows the file:line function frame it was called from") {
  if (!prof::call_stacks_available()) {
    MESSAGE("skipped: this build has no libdw (C++ call sites unavailable)");
    return;
  }
  const tl::Tensor a = tl::rand({4});
  int line = 0;
  int call_line = 0;
  prof::Profile profile({.with_stack = true});
  {
    // clang-format off
    prof::RecordFunction scope("SCOPE");
    call_line = __LINE__; stack_helper(a, line);
    // clang-format on
  }
  profile.stop();
  const std::string frame = helper_frame(line);

  const Event* add = find(profile.events(), "tl::add");
  REQUIRE(add != nullptr);
  INFO("stack: ", nlohmann::json(add->stack).dump());
  REQUIRE(add->stack.size() >= 2);
  // Innermost last: the helper's line, then the line of this test that called it.
  CHECK(add->stack.back() == frame);
  CHECK(add->stack[add->stack.size() - 2].rfind(
            std::string(kFile) + ":" + std::to_string(call_line) + " ", 0) == 0);
  check_user_frames_only(add->stack);
  // The user scope has frames of its own, innermost where it was opened.
  const Event* scope = find(profile.events(), "SCOPE");
  REQUIRE(scope != nullptr);
  REQUIRE(!scope->stack.empty());
  CHECK(scope->stack.back().rfind(std::string(kFile) + ":" + std::to_string(call_line - 1) + " ",
                                  0) == 0);
  CHECK(scope->source == std::string(kFile) + ":" + std::to_string(call_line - 1));

  SUBCASE("key_averages grouped by stack: the frame is the row's innermost, and in the table") {
    const prof::KeyAverages grouped = profile.key_averages({.group_by_stack_n = 5});
    const auto& rows = grouped.rows();
    auto row = std::find_if(rows.begin(), rows.end(),
                            [](const prof::EventAverage& r) { return r.key == "tl::add"; });
    REQUIRE(row != rows.end());
    REQUIRE(!row->stack.empty());
    CHECK(row->stack.front() == frame);
    CHECK(row->stack.size() <= 5);
    const std::string table = grouped.table();
    CHECK(table.find(frame) != std::string::npos);
    CHECK(table.find("Source Location") != std::string::npos);
    CHECK(table.find("libdw") == std::string::npos);  // no fallback note
    // The scope's row says where it was opened once, not as "file:line" and again as a frame.
    const std::string opened = std::string(kFile) + ":" + std::to_string(call_line - 1) + " ";
    const size_t at = table.find(opened);
    CHECK(at != std::string::npos);
    CHECK(table.find(opened, at + 1) == std::string::npos);
  }

  SUBCASE("chrome trace: the op's Stack args end with the frame") {
    const std::string path = temp_path("trace.json");
    profile.export_chrome_trace(path);
    const auto doc = nlohmann::json::parse(read_all(path));
    std::filesystem::remove(path);
    bool found = false;
    for (const auto& e : doc["traceEvents"]) {
      if (!e.contains("name") || e["name"] != "tl::add") continue;
      REQUIRE(e["args"].contains("Stack"));
      const auto stack = e["args"]["Stack"].get<std::vector<std::string>>();
      REQUIRE(!stack.empty());
      CHECK(stack.back() == frame);
      found = true;
    }
    CHECK(found);
  }

  SUBCASE("export_stacks: the scope, then the frames from it to the op") {
    const std::string path = temp_path("stacks.txt");
    profile.export_stacks(path);
    const std::string text = read_all(path);
    std::filesystem::remove(path);
    INFO(text);
    // ...;SCOPE;<this test's call line>;<the helper's line>;tl::add <us>
    const std::string caller = add->stack[add->stack.size() - 2];
    CHECK(text.find("SCOPE;" + caller + ";" + frame + ";tl::add ") != std::string::npos);
    // The scope itself sits under the frame it was opened in.
    CHECK(text.find(scope->stack.back() + ";SCOPE ") != std::string::npos);
    CHECK(text.find("tensorlet::") == std::string::npos);
  }
}

TEST_CASE(
    "profiler stacks: an op called inside a library op gets the user's frames, not the "
    "library's") {
  if (!prof::call_stacks_available()) {
    MESSAGE("skipped: this build has no libdw (C++ call sites unavailable)");
    return;
  }
  int line = 0;
  prof::Profile profile({.with_stack = true});
  zeros_helper(line);
  profile.stop();
  const Event* zeros = find(profile.events(), "tl::zeros");
  const Event* empty = find(profile.events(), "tl::empty");
  REQUIRE(zeros != nullptr);
  REQUIRE(empty != nullptr);
  REQUIRE(empty->parent == zeros->id);
  REQUIRE(!zeros->stack.empty());
  CHECK(zeros->stack.back() == std::string(kFile) + ":" + std::to_string(line) + " zeros_helper()");
  // Every frame between the user's call and tl::empty is the library's: folded away.
  CHECK(empty->stack == zeros->stack);
  check_user_frames_only(empty->stack);
}

TEST_CASE("profiler stacks: an inlined member function keeps the frame of its caller") {
  if (!prof::call_stacks_available()) {
    MESSAGE("skipped: this build has no libdw (C++ call sites unavailable)");
    return;
  }
  const tl::Tensor a = tl::rand({4});
  int line = 0, outer_line = 0;
  prof::Profile profile({.with_stack = true});
  member_caller(a, line, outer_line);
  profile.stop();
  const Event* add = find(profile.events(), "tl::add");
  REQUIRE(add != nullptr);
  INFO("stack: ", nlohmann::json(add->stack).dump());
  REQUIRE(add->stack.size() >= 2);
  const std::string inner = add->stack.back(), outer = add->stack[add->stack.size() - 2];
  CHECK(inner.rfind(std::string(kFile) + ":" + std::to_string(line) + " ", 0) == 0);
  CHECK(inner.find("forward()") != std::string::npos);
  CHECK(outer == std::string(kFile) + ":" + std::to_string(outer_line) + " member_caller()");
  check_user_frames_only(add->stack);
}

TEST_CASE("profiler stacks: libunwind and libgcc's unwinder give the same return addresses") {
  if (!prof::detail::capture_uses_libunwind()) {
    MESSAGE("libunwind.so.8 not found here: stacks use libgcc's unwinder only");
    return;
  }
  uintptr_t a[prof::detail::kMaxFrames], b[prof::detail::kMaxFrames];
  int na = 0, nb = 0;
  both_unwinders(a, na, b, nb);
  REQUIRE(na >= 3);  // both_unwinders, this test case, doctest's runner at least
  CHECK(nb == na);
  CHECK(a[0] != b[0]);  // two call sites in both_unwinders
  for (int i = 1; i < std::min(na, nb); ++i) {
    INFO("frame ", i);
    CHECK(a[i] == b[i]);
  }
}

TEST_CASE("profiler stacks: with_stack off records no frames") {
  const tl::Tensor a = tl::rand({4});
  int line = 0;
  prof::Profile profile;
  {
    prof::RecordFunction scope("SCOPE");
    stack_helper(a, line);
  }
  profile.stop();
  REQUIRE(find(profile.events(), "tl::add") != nullptr);
  for (const Event& e : profile.events()) {
    CHECK(e.stack.empty());
    CHECK(e.source.empty());
  }
  const std::string table = profile.key_averages({.group_by_stack_n = 5}).table();
  CHECK(table.find("Source Location") == std::string::npos);
  CHECK(table.find(kFile) == std::string::npos);
}

TEST_CASE("profiler stacks: without call sites, stacks are scope names and the table says why") {
  const tl::Tensor a = tl::rand({4});
  int line = 0;
  prof::Profile profile({.with_stack = true});
  {
    prof::RecordFunction scope("SCOPE");
    stack_helper(a, line);
  }
  profile.stop();
  const Event* add = find(profile.events(), "tl::add");
  REQUIRE(add != nullptr);
  const std::string table = profile.key_averages({.group_by_stack_n = 5}).table();
  if (prof::call_stacks_available()) {
    CHECK(add->stack.back() == helper_frame(line));
    CHECK(table.find("libdw") == std::string::npos);
  } else {
    // This build's fallback: the enclosing scopes, and the note, once.
    CHECK(add->stack == std::vector<std::string>{"SCOPE"});
    const size_t note = table.find("C++ call sites need libdw");
    CHECK(note != std::string::npos);
    CHECK(table.find("C++ call sites need libdw", note + 1) == std::string::npos);
  }
  // The note itself, in any build: printed once above a table grouped by stack, not otherwise.
  std::vector<Event> events(1);
  events[0].name = "tl::add";
  events[0].id = 1;
  events[0].end_ns = 1000;
  events[0].stack = {"SCOPE"};
  const std::string why = "Stacks are RecordFunction scopes: C++ call sites need libdw";
  const std::string grouped =
      prof::key_averages(events, {.group_by_stack_n = 1}, false, false, false, true, false, "", why)
          .table();
  const size_t at = grouped.find(why);
  CHECK(at != std::string::npos);
  CHECK(grouped.find(why, at + 1) == std::string::npos);
  CHECK(
      prof::key_averages(events, {}, false, false, false, true, false, "", why).table().find(why) ==
      std::string::npos);
}

TEST_CASE("profiler stacks: demangled names are shown without return type, arguments, qualifiers") {
  using tensorlet::profiler::detail::readable_function;
  CHECK(readable_function("main") == "main()");
  CHECK(readable_function("(anonymous namespace)::stack_helper(tensorlet::Tensor const&, int&)") ==
        "stack_helper()");
  CHECK(readable_function("ns::(anonymous namespace)::Model::forward() const") ==
        "ns::Model::forward()");
  CHECK(readable_function("tensorlet::Tensor ns::f<float>(tensorlet::Tensor const&) const") ==
        "ns::f<float>()");
  CHECK(readable_function("Model::forward(tensorlet::Tensor const&) const &") ==
        "Model::forward()");
  CHECK(readable_function("run()::{lambda()#1}::operator()() const") == "run()::{lambda()#1}()");
  CHECK(readable_function("main::{lambda}::operator()") == "main::{lambda}()");
  CHECK(readable_function("std::ostream& operator<<(std::ostream&, Row const&)") == "operator<<()");
  CHECK(readable_function("Mask::operator bool() const") == "Mask::operator bool()");
  CHECK(readable_function("Mask::operator()(int)") == "Mask::operator()()");
  CHECK(readable_function("void step(int) [clone .cold]") == "step()");
  CHECK(readable_function("") == "??");
}

// Symbolizer on libdw (elfutils): this process's modules from /proc/self/maps (dwfl), the ELF
// symbol, line table and inline scopes at an address. Compiled when meson finds libdw.
#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "tensorlet/profiler/profile.h"
#include "tensorlet/profiler/symbolize.h"

namespace tensorlet::profiler {

bool call_stacks_available() { return true; }

namespace detail {

namespace {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// The DIE an inlined copy or a definition refers to (abstract_origin, then specification): the
// declaration, which sits inside its namespaces and classes.
Dwarf_Die declaration_of(Dwarf_Die* die) {
  Dwarf_Die at = *die;
  for (int link : {DW_AT_abstract_origin, DW_AT_specification}) {
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (dwarf_attr(&at, link, &attr) != nullptr && dwarf_formref_die(&attr, &target) != nullptr)
      at = target;
  }
  return at;
}

// A plain name qualified by the scopes that contain its declaration ("ns::Cls::f", or
// "main::<lambda()>::operator()" for a lambda, which has no linkage name).
std::string qualified_name(Dwarf_Die* die, const char* plain) {
  Dwarf_Die decl = declaration_of(die);
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes_die(&decl, &scopes);
  std::string name = plain;
  for (int i = 1; i < n; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
        tag != DW_TAG_union_type && tag != DW_TAG_subprogram)
      continue;
    const char* scope = dwarf_diename(&scopes[i]);
    // GCC leaves a lambda's closure type unnamed.
    const char* unnamed = tag == DW_TAG_namespace ? "(anonymous namespace)" : "{lambda}";
    name = std::string(scope != nullptr ? scope : unnamed) + "::" + name;
  }
  std::free(scopes);
  return name;
}

// A function DIE's name: its linkage name demangled (qualified, as the ELF symbol would give),
// else its plain name qualified by its scopes. dwarf_attr_integrate follows abstract_origin and
// specification links, so an inlined copy finds the name on the function's declaration.
std::string die_function(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name, &attr) != nullptr)
      if (const char* s = dwarf_formstring(&attr)) return demangle(s);
  }
  const char* plain = dwarf_diename(die);
  return plain != nullptr ? qualified_name(die, plain) : "";
}

bool is_function(Dwarf_Die* die) {
  const int tag = dwarf_tag(die);
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

}  // namespace

struct Symbolizer::Impl {
  Dwfl* dwfl = nullptr;
  char* debuginfo_path = nullptr;  // the default search path (dwfl_standard_find_debuginfo)
  Dwfl_Callbacks callbacks{};
  std::string error;

  ~Impl() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  std::vector<SourceFrame> lookup(Dwarf_Addr addr) {
    std::vector<SourceFrame> out;
    Dwfl_Module* mod = dwfl_addrmodule(dwfl, addr);
    if (mod == nullptr) return out;
    const char* module =
        dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    const char* symbol = dwfl_module_addrname(mod, addr);
    SourceFrame inner;
    inner.module = module != nullptr ? module : "";
    if (Dwfl_Line* line = dwfl_module_getsrc(mod, addr)) {
      int lineno = 0;
      if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
        inner.file = file;
        inner.line = lineno;
      }
    }
    Dwarf_Addr bias = 0;
    Dwarf_Die* cudie = dwfl_module_addrdie(mod, addr, &bias);
    Dwarf_Die* scopes = nullptr;
    int nscopes = cudie != nullptr ? dwarf_getscopes(cudie, addr - bias, &scopes) : 0;
    // The inline chain, innermost first: each inlined function shows at the line inside it, and
    // the function it was inlined into at the inlined call's call_file:call_line. What contains an
    // inlined copy is asked of its own DIE (dwarf_getscopes_die): after an inlined scope,
    // dwarf_getscopes may go on with the scopes of its abstract origin (for a member function
    // defined in its class: the class, not the caller), as elfutils' addr2line -i does too.
    Dwarf_Files* files = nullptr;
    SourceFrame next = inner;
    for (int i = 0; i < nscopes; ++i) {
      Dwarf_Die* scope = &scopes[i];
      if (!is_function(scope)) continue;
      const bool inlined = dwarf_tag(scope) == DW_TAG_inlined_subroutine;
      next.function = inlined || symbol == nullptr ? die_function(scope) : demangle(symbol);
      out.push_back(next);
      if (!inlined) break;
      next = SourceFrame{.function = {}, .file = {}, .line = 0, .module = inner.module};
      Dwarf_Attribute attr;
      Dwarf_Word value = 0;
      if (files == nullptr) dwarf_getsrcfiles(cudie, &files, nullptr);
      if (files != nullptr &&
          dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &attr), &value) == 0)
        if (const char* file = dwarf_filesrc(files, value, nullptr, nullptr)) next.file = file;
      if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &attr), &value) == 0)
        next.line = static_cast<int>(value);
      // Go on from this DIE's own containers: the new list starts with the DIE itself, which
      // the loop's ++i steps over.
      Dwarf_Die instance = *scope;
      Dwarf_Die* containers = nullptr;
      const int ncontainers = dwarf_getscopes_die(&instance, &containers);
      if (ncontainers <= 0) {
        std::free(containers);
        break;
      }
      std::free(scopes);
      scopes = containers;
      nscopes = ncontainers;
      i = 0;
    }
    std::free(scopes);
    if (out.empty()) {
      // No debug information for the address: the ELF symbol alone.
      inner.function = demangle(symbol);
      out.push_back(std::move(inner));
    }
    return out;
  }
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.callbacks.find_elf = dwfl_linux_proc_find_elf;
  s.callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  s.callbacks.debuginfo_path = &s.debuginfo_path;
  s.dwfl = dwfl_begin(&s.callbacks);
  if (s.dwfl == nullptr) {
    s.error = std::string("Stacks are RecordFunction scopes: C++ call sites unavailable (libdw: ") +
              dwfl_errmsg(-1) + ")";
    return;
  }
  dwfl_report_begin(s.dwfl);
  const int reported = dwfl_linux_proc_report(s.dwfl, getpid());
  dwfl_report_end(s.dwfl, nullptr, nullptr);
  if (reported != 0) {
    s.error =
        "Stacks are RecordFunction scopes: C++ call sites unavailable (libdw cannot read this "
        "process's modules from /proc/self/maps)";
    dwfl_end(s.dwfl);
    s.dwfl = nullptr;
  }
}

Symbolizer::~Symbolizer() = default;

bool Symbolizer::ok() const { return impl_->dwfl != nullptr; }
const std::string& Symbolizer::error() const { return impl_->error; }

std::vector<SourceFrame> Symbolizer::frames(uintptr_t pc) {
  // A return address points past its call, possibly at the next line or function: look up the
  // call instruction's last byte.
  return ok() && pc > 0 ? impl_->lookup(pc - 1) : std::vector<SourceFrame>{};
}

std::vector<SourceFrame> Symbolizer::frames_at(uintptr_t address) {
  return ok() ? impl_->lookup(address) : std::vector<SourceFrame>{};
}

}  // namespace detail

}  // namespace tensorlet::profiler

// tl::nn::Module: registration by name, the recursive listings, train/eval, moves through
// Tensor::set_data, zero_grad and the printed tree.
#include "tensorlet/nn/module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>
#include <unordered_set>

#include "tensorlet/autograd/node.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::nn {

namespace {

// "tensorlet::nn::LinearImpl" -> "Linear", "(anonymous namespace)::Net" -> "Net".
std::string class_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  const size_t template_at = name.find('<');
  const size_t scope = name.rfind("::", template_at);
  if (scope != std::string::npos) name = name.substr(scope + 2);
  constexpr std::string_view kImpl = "Impl";
  if (name.size() > kImpl.size() && name.ends_with(kImpl)) name.resize(name.size() - kImpl.size());
  return name;
}

std::string joined(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void print_tree(std::ostream& os, const Module& module, const std::string& indent) {
  module.pretty_print(os);
  const auto children = module.named_children();
  if (children.empty()) return;
  os << "(\n";
  for (const auto& child : children) {
    os << indent << "  (" << child.key() << "): ";
    print_tree(os, *child.value(), indent + "  ");
    os << "\n";
  }
  os << indent << ")";
}

}  // namespace

const std::string& Module::name() const {
  if (name_.empty()) name_ = class_name(typeid(*this));
  return name_;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix, bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  std::unordered_set<const Module*> seen;
  // Depth first, each module once (torch's named_modules), under the first path that reaches it.
  std::function<void(const std::shared_ptr<Module>&, const Module&, const std::string&, bool)>
      visit = [&](const std::shared_ptr<Module>& ptr, const Module& m, const std::string& path,
                  bool self) {
        if (!seen.insert(&m).second) return;
        if (self) out.insert(path, ptr);
        for (const auto& child : m.children_)
          visit(child.value(), *child.value(), joined(path, child.key()), true);
      };
  // Listing itself needs this module's shared pointer (LibTorch's rule).
  std::shared_ptr<Module> self_ptr = std::const_pointer_cast<Module>(weak_from_this().lock());
  if (include_self && !self_ptr)
    fail<Error>("tl::nn::Module::named_modules", name(),
                " is not owned by a std::shared_ptr (make it with std::make_shared or a holder), "
                "so it cannot list itself: pass include_self = false");
  visit(self_ptr, *this, name_prefix, include_self);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules({}, include_self).values();
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  for (const auto& child : children_) out.insert(child.key(), child.value());
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

namespace {

// The defined tensors of `member` in each module, keyed by path, each tensor once (torch's
// remove_duplicate: a parameter shared by two layers is listed, and updated, once).
template <typename Member>
OrderedDict<std::string, Tensor> named_tensors(const Module& root, bool recurse, Member member,
                                               const char* what) {
  OrderedDict<std::string, Tensor> out(what);
  std::unordered_set<const TensorImpl*> seen;
  auto add = [&](const Module& m, const std::string& path) {
    for (const auto& item : member(m))
      if (item.value().defined() && seen.insert(&item.value().impl()).second)
        out.insert(joined(path, item.key()), item.value());
  };
  if (!recurse) {
    add(root, {});
    return out;
  }
  add(root, {});
  for (const auto& item : root.named_modules({}, false)) add(*item.value(), item.key());
  return out;
}

}  // namespace

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  return named_tensors(
      *this, recurse, [](const Module& m) -> const auto& { return m.parameters_; }, "Parameter");
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters(recurse).values();
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  return named_tensors(
      *this, recurse, [](const Module& m) -> const auto& { return m.buffers_; }, "Buffer");
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

void Module::train(bool on) {
  is_training_ = on;
  for (auto& child : children_) child.value()->train(on);
}

void Module::apply_to(const std::function<Tensor(const Tensor&)>& fn) {
  NoGradGuard no_grad;
  std::unordered_set<const TensorImpl*> seen;
  auto move = [&](Tensor& t, bool with_grad) {
    if (!t.defined() || !seen.insert(&t.impl()).second) return;
    if (with_grad && t.grad().defined()) t.mutable_grad() = fn(t.grad());
    if (t.is_leaf())
      t.set_data(fn(t));
    else
      t = fn(t);  // a buffer computed by a recorded op: replaced, as torch's _apply does
  };
  std::unordered_set<const Module*> modules_seen;
  std::function<void(Module&)> visit = [&](Module& m) {
    if (!modules_seen.insert(&m).second) return;
    for (auto& item : m.parameters_) move(item.value(), true);
    for (auto& item : m.buffers_) move(item.value(), false);
    for (auto& child : m.children_) visit(*child.value());
  };
  visit(*this);
}

void Module::to(Device device, DType dtype, bool non_blocking) {
  apply_to([&](const Tensor& t) {
    const Tensor moved = t.to(device, non_blocking);
    return is_floating_point(t.dtype()) ? moved.to(dtype) : moved;
  });
}

void Module::to(DType dtype, bool /*non_blocking*/) {
  apply_to([&](const Tensor& t) { return is_floating_point(t.dtype()) ? t.to(dtype) : t; });
}

void Module::to(Device device, bool non_blocking) {
  apply_to([&](const Tensor& t) { return t.to(device, non_blocking); });
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
      continue;
    }
    g = g.grad_fn() ? g.detach() : g;
    g.zero_();
  }
}

void Module::pretty_print(std::ostream& stream) const { stream << name(); }

void Module::check_name(const std::string& name, const char* what, const char* op) const {
  if (name.empty()) fail<Error>(op, what, " name must not be empty");
  if (name.find('.') != std::string::npos)
    fail<Error>(op, what, " name must not contain a dot (got '", name, "')");
  if (parameters_.contains(name) || buffers_.contains(name) || children_.contains(name))
    fail<Error>(op, "'", name, "' is already defined in ", this->name(), " (a ",
                parameters_.contains(name) ? "parameter"
                : buffers_.contains(name)  ? "buffer"
                                           : "submodule",
                ")");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  constexpr const char* op = "tl::nn::Module::register_parameter";
  check_name(name, "Parameter", op);
  if (tensor.defined()) {
    if (requires_grad && !is_floating_point(tensor.dtype()))
      fail<DTypeError>(op, "parameter '", name,
                       "' requires grad, which needs a floating point "
                       "dtype, got ",
                       tensor.dtype());
    if (!tensor.is_leaf())
      fail<Error>(op, "parameter '", name, "' is the result of a recorded op (grad_fn ",
                  tensor.grad_fn()->name(), "): register a leaf, e.g. its detach()");
    tensor.requires_grad_(requires_grad);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_name(name, "Buffer", "tl::nn::Module::register_buffer");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::check_child(const std::string& name, const Module* module) const {
  constexpr const char* op = "tl::nn::Module::register_module";
  check_name(name, "Submodule", op);
  if (!module) fail<Error>(op, "submodule '", name, "' is empty (nullptr)");
  if (module == this) fail<Error>(op, "a module cannot be its own submodule ('", name, "')");
}

void Module::check_replace(const std::string& name, const Module* module) const {
  constexpr const char* op = "tl::nn::Module::replace_module";
  if (!children_.contains(name)) fail<Error>(op, "no submodule '", name, "' in ", this->name());
  if (!module) fail<Error>(op, "submodule '", name, "' is empty (nullptr)");
}

void Module::unregister_module(const std::string& name) {
  if (!children_.contains(name))
    fail<Error>("tl::nn::Module::unregister_module", "no submodule '", name, "' in ", this->name());
  children_.erase(name);
}

std::ostream& operator<<(std::ostream& stream, const Module& module) {
  print_tree(stream, module, "");
  return stream;
}

}  // namespace tensorlet::nn

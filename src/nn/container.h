// tl::nn::Sequential and tl::nn::ModuleList (torch.nn's containers): submodules registered as
// "0", "1", ...; Sequential chains the forwards of modules that map one tensor to one tensor.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/nn/module.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn {

namespace detail {
// The module a holder (or a TL_MODULE class deriving from one) or a shared_ptr holds, typed.
template <typename M>
auto typed_module_pointer(const M& m) {
  if constexpr (requires { m.ptr(); })
    return m.ptr();
  else
    return m;
}
}  // namespace detail

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  // Sequential(Linear(2, 3), ReLU(), ...): holders or shared pointers of modules whose
  // forward(const Tensor&) returns a Tensor.
  template <typename... Modules>
  requires(sizeof...(Modules) > 0) explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  template <typename M>
  void push_back(const M& module) {
    push_back(std::to_string(forwards_.size()), module);
  }
  // Under a name of the caller's (LibTorch's named push_back).
  template <typename M>
  void push_back(std::string name, const M& module) {
    auto held = detail::typed_module_pointer(module);
    register_module(std::move(name), held);
    forwards_.push_back([held](const Tensor& x) { return Tensor(held->forward(x)); });
  }

  // Each module's forward on the previous one's output (x itself when empty).
  Tensor forward(const Tensor& x) const;

  size_t size() const noexcept { return forwards_.size(); }
  bool is_empty() const noexcept { return forwards_.empty(); }
  // The index-th module (IndexError naming tl::nn::Sequential past the end).
  std::shared_ptr<Module> ptr(size_t index) const;
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  template <typename T>
  T& at(size_t index) const {
    auto* m = dynamic_cast<T*>(ptr(index).get());
    if (!m) fail<Error>("tl::nn::Sequential::at", "module ", index, " is not of the asked type");
    return *m;
  }

  void pretty_print(std::ostream& stream) const override { stream << "Sequential"; }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> forwards_;
};
TL_MODULE(Sequential);

// Holds submodules in order, with no forward of its own.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <typename... Modules>
  requires(sizeof...(Modules) > 0) explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <typename M>
  void push_back(const M& module) {
    std::shared_ptr<Module> held = detail::typed_module_pointer(module);
    register_module(std::to_string(modules_.size()), held);
    modules_.push_back(std::move(held));
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::shared_ptr<Module> ptr(size_t index) const;
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }
  void pretty_print(std::ostream& stream) const override { stream << "ModuleList"; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
TL_MODULE(ModuleList);

}  // namespace tensorlet::nn

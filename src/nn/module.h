// tl::nn::Module: LibTorch's module base (parameters, buffers and submodules registered by name,
// train/eval, moves that keep each parameter's identity, zero_grad, the printed tree), and
// ModuleHolder / TL_MODULE, LibTorch's shared-pointer holder (tl::nn::Linear holds a LinearImpl).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorlet/io/tensor_map.h"
#include "tensorlet/nn/ordered_dict.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::nn {

template <typename Contained>
class ModuleHolder;

// A module owns its parameters, buffers and submodules by name, in registration order. Modules
// are shared: register_module keeps a std::shared_ptr, and a holder (TL_MODULE) is one.
class Module : public std::enable_shared_from_this<Module> {
 public:
  // name(): the class's name, without namespaces or an "Impl" suffix ("Linear", "Net").
  Module() = default;
  explicit Module(std::string name) : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  const std::string& name() const;

  // Defined parameters (buffers) of this module, then of its submodules depth first when recurse;
  // names are dotted paths ("features.0.weight"), as torch's state_dict keys.
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  // This module (include_self: Error unless it is owned by a std::shared_ptr, as LibTorch's) and
  // every submodule, depth first, each once.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = {}, bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;

  // Sets training mode here and in every submodule (Dropout, BatchNorm read it).
  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }

  // Moves every parameter and buffer (and a parameter's grad) in place: each tensor keeps its
  // identity (Tensor::set_data), so handles held elsewhere (an optimizer's) still alias the
  // module. A dtype converts the floating tensors only, as torch's.
  virtual void to(Device device, DType dtype, bool non_blocking = false);
  virtual void to(DType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);
  // torch's state_dict: every defined parameter and buffer by its dotted key ("features.0.weight",
  // a module reached twice under each of its names), detached but sharing memory. A TensorMap, so
  // tl::save_safetensors(path, net->state_dict()) writes the file PyTorch's
  // safetensors.torch.save_file(model.state_dict()) writes, and load_state_dict reads it back.
  TensorMap state_dict() const;
  // Copies each tensor of `state` into the parameter or buffer of its key, in place (converting
  // dtype and device as copy_ does; every handle keeps aliasing the module). A shape that differs
  // is an Error; so are missing and unexpected keys when `strict` (PyTorch's default). The Error
  // names tl::nn::Module::load_state_dict and lists every problem, as torch's message; nothing is
  // copied then. Without strict, the keys left out are returned.
  struct LoadResult {
    std::vector<std::string> missing_keys, unexpected_keys;
  };
  LoadResult load_state_dict(const TensorMap& state, bool strict = true);
  // Clears every parameter's grad (set_to_none) or zeroes it in place.
  virtual void zero_grad(bool set_to_none = true);

  // This module as a T (a ModuleHolder's contained type or any Module subclass), or nullptr.
  template <typename T>
  auto* as() noexcept {
    if constexpr (requires { typename T::ContainedType; })
      return dynamic_cast<typename T::ContainedType*>(this);
    else
      return dynamic_cast<T*>(this);
  }

  // The module's own line in the printed tree: name() unless a layer says more
  // ("Linear(in_features=10, out_features=1, bias=True)").
  virtual void pretty_print(std::ostream& stream) const;

  // Registers a parameter: `tensor` (undefined allowed: a layer without bias), requiring grad
  // when asked. Error for an empty name, a name with a dot, or one already used here.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module takes a tl::nn::Module");
    check_child(name, module.get());
    children_.insert(std::move(name), module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, ModuleHolder<M> holder) {
    return register_module(std::move(name), holder.ptr());
  }
  // Replaces a registered submodule (Error if there is none by that name).
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    check_replace(name, module.get());
    children_[name] = module;
    return module;
  }
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, ModuleHolder<M> holder) {
    return replace_module(name, holder.ptr());
  }
  void unregister_module(const std::string& name);

 private:
  void check_name(const std::string& name, const char* what, const char* op) const;
  void check_child(const std::string& name, const Module* module) const;
  void check_replace(const std::string& name, const Module* module) const;
  void apply_to(const std::function<Tensor(const Tensor&)>& fn);

  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  mutable std::string name_;
  bool is_training_ = true;
};

// The module tree as torch prints it: "Net(\n  (fc): Linear(...)\n)".
std::ostream& operator<<(std::ostream& stream, const Module& module);

// LibTorch's ModuleHolder: a shared pointer to a module with its forward as operator() and its
// members through ->. TL_MODULE(Linear) makes Linear a holder of LinearImpl; a holder made from
// constructor arguments builds the module, one made from nullptr holds none.
template <typename Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  ModuleHolder() requires std::is_default_constructible_v<Contained>
      : impl_(std::make_shared<Contained>()) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: LibTorch's `Linear fc{nullptr}`
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT
  template <typename Head, typename... Tail>
  requires(!std::is_same_v<std::decay_t<Head>, ModuleHolder> &&
           !std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
           !std::is_same_v<std::decay_t<Head>, std::shared_ptr<Contained>> &&
           std::is_constructible_v<Contained, Head, Tail...>) explicit ModuleHolder(Head&& head,
                                                                                    Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  // The module (Error naming tl::nn::ModuleHolder for an empty holder).
  Contained* get() const {
    if (!impl_) fail<Error>("tl::nn::ModuleHolder", "accessing an empty ModuleHolder");
    return impl_.get();
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    return get()->forward(std::forward<Args>(args)...);
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }
  // The module's operator[] (Sequential's, ModuleList's), as LibTorch's holder forwards it.
  template <typename Arg>
  requires requires(Contained& c, Arg&& a) { c[std::forward<Arg>(a)]; }
  decltype(auto) operator[](Arg&& arg) const { return (*get())[std::forward<Arg>(arg)]; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return !is_empty(); }

 private:
  std::shared_ptr<Contained> impl_;
};

template <typename Contained>
std::ostream& operator<<(std::ostream& stream, const ModuleHolder<Contained>& holder) {
  return stream << *holder;
}

}  // namespace tensorlet::nn

// Declares `Name` as the holder of `NameImpl` (LibTorch's TORCH_MODULE).
#define TL_MODULE(Name)                                            \
  class Name : public ::tensorlet::nn::ModuleHolder<Name##Impl> {  \
   public:                                                         \
    using ::tensorlet::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
    using Impl = Name##Impl;                                       \
  }

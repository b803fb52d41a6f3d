// Custom autograd functions, as LibTorch's torch::autograd::Function<T>: a struct with static
// forward(ctx, args...) and backward(ctx, grad_outputs), applied with T::apply(args...).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tensorlet/autograd/ivalue.h"
#include "tensorlet/autograd/node.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::autograd {

// LibTorch's names for a list of tensors.
using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

// What forward hands backward (LibTorch's AutogradContext): saved tensors (with the version check
// of SavedVariable), other values by name, and how the outputs relate to the inputs.
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Values of any kind for backward: ctx->saved_data["scale"] = 2.0; ...toDouble().
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors backward reads (inputs or outputs of forward); an in-place write to one before
  // backward makes get_saved_variables raise torch's "modified by an inplace operation".
  void save_for_backward(variable_list to_save);
  // Inputs forward wrote in place: they come out with this function as their grad_fn (a leaf that
  // requires grad is an Error, as torch's in-place rule) and their version is bumped.
  void mark_dirty(const variable_list& inputs);
  // Outputs that get no gradient (indices, masks): they come out without a grad_fn.
  void mark_non_differentiable(const variable_list& outputs);
  // true (default): backward gets zeros for an output no gradient reached; false: undefined.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // The tensors save_for_backward kept, checked against later in-place writes.
  variable_list get_saved_variables() const;
  // Whether forward's tensor input `index` (counting tensor arguments only) needs a gradient.
  bool needs_input_grad(size_t index) const;

  const std::unordered_set<const TensorImpl*>& get_non_differentiable() const {
    return non_differentiable_;
  }
  const std::unordered_set<const TensorImpl*>& get_and_bump_dirty() const;

 private:
  friend class FunctionNode;
  variable_list to_save_;
  std::vector<SavedVariable> saved_variables_;
  std::unordered_set<const TensorImpl*> dirty_inputs_;
  std::unordered_set<const TensorImpl*> non_differentiable_;
  bool materialize_grads_ = true;
  bool has_freed_buffers_ = false;
  std::weak_ptr<Node> grad_fn_;
};

// The node of a custom Function's outputs: runs T::backward. Its name is the struct's (without
// namespaces) + "Backward", as Python names a custom Function's node ("Add2Backward"); LibTorch
// names it torch::autograd::CppNode<Add2>.
class FunctionNode final : public Node {
 public:
  using Backward = variable_list (*)(AutogradContext*, variable_list);
  FunctionNode(std::string name, Backward backward) : name_(std::move(name)), backward_(backward) {}

  std::string name() const override { return name_; }
  // backward's result has one entry per forward argument (undefined for one that is not a
  // tensor), as LibTorch's, or one per tensor argument; anything else is an Error.
  TensorList apply(TensorList&& grads) override;
  void release_variables() override;
  bool accepts_undefined_grads() const override { return true; }  // set_materialize_grads

  AutogradContext ctx;
  // One entry per forward argument (a tensor list: one per tensor): whether it is a tensor.
  std::vector<bool> is_variable_input;

  // Function<T>::apply's steps around forward: the inputs' edges (returns whether a graph is
  // recorded), then the outputs' history and the saved tensors.
  bool begin(const variable_list& inputs);
  variable_list finish(bool recording, const variable_list& inputs, variable_list outputs);

 private:
  std::string name_;
  Backward backward_;
  std::mutex mutex_;  // backward may run on several threads at once (torch locks it too)
};

namespace detail {
// "Add2Backward" from typeid(Add2).name().
std::string function_node_name(const char* mangled);

// Forward's arguments: tensors (and lists of them) are the node's inputs, anything else is not.
inline void extract(std::vector<bool>& is_var, variable_list& list, const Tensor& t) {
  is_var.push_back(true);
  list.push_back(t);
}
inline void extract(std::vector<bool>& is_var, variable_list& list, const variable_list& ts) {
  for (const Tensor& t : ts) extract(is_var, list, t);
}
inline void extract(std::vector<bool>& is_var, variable_list& list,
                    const std::optional<Tensor>& t) {
  if (t && t->defined())
    extract(is_var, list, *t);
  else
    is_var.push_back(false);
}
template <typename T>
void extract(std::vector<bool>& is_var, variable_list&, const T&) {
  is_var.push_back(false);
}

inline variable_list to_list(Tensor t) { return {std::move(t)}; }
inline variable_list to_list(variable_list v) { return v; }
}  // namespace detail

template <typename X, typename... Args>
using forward_t =
    decltype(X::forward(static_cast<AutogradContext*>(nullptr), std::declval<Args>()...));

// LibTorch's torch::autograd::Function<T>: `struct Add2 : Function<Add2> { static Tensor
// forward(AutogradContext*, Tensor a, Tensor b); static variable_list backward(AutogradContext*,
// variable_list grad_outputs); };` then `Add2::apply(a, b)`. forward runs without recording
// (grad mode off); its outputs get this function's node when an input requires grad in grad mode.
// With create_graph, backward's own ops are recorded (a second derivative goes through them).
template <class T>
struct Function {
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args)
      -> std::enable_if_t<std::is_same_v<X, T>, forward_t<X, Args...>> {
    using Result = forward_t<X, Args...>;
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "a custom Function's forward returns a Tensor or a variable_list");
    auto node = std::make_shared<FunctionNode>(
        detail::function_node_name(typeid(X).name()),
        [](AutogradContext* ctx, variable_list grads) -> variable_list {
          return X::backward(ctx, std::move(grads));
        });
    variable_list inputs;
    (detail::extract(node->is_variable_input, inputs, args), ...);
    const bool recording = node->begin(inputs);
    Result outputs;
    {
      AutoGradMode no_grad(false);
      outputs = X::forward(&node->ctx, std::forward<Args>(args)...);
    }
    variable_list wrapped = node->finish(recording, inputs, detail::to_list(std::move(outputs)));
    if constexpr (std::is_same_v<Result, Tensor>)
      return wrapped[0];
    else
      return wrapped;
  }
};

}  // namespace tensorlet::autograd

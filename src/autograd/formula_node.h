// The node every built-in derivative uses: a PyTorch name, a formula (a plain function), the
// tensors it saved and the forward inputs' metadata.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensorlet/autograd/autograd_meta.h"

namespace tensorlet::autograd {

class FormulaNode final : public Node {
 public:
  // grad: the gradient of the op's one output; returns one gradient per forward input (undefined
  // for an input that needs none).
  using Formula = TensorList (*)(const FormulaNode& node, const Tensor& grad);

  FormulaNode(const char* name, Formula formula) : name_(name), formula_(formula) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override { return formula_(*this, grads[0]); }
  void release_variables() override {
    for (SavedVariable& s : saved_) s.reset();
  }

  void save(const Tensor& t, bool is_output = false) { saved_.emplace_back(t, is_output); }
  bool saves(const Storage* storage) const override {
    for (const SavedVariable& s : saved_)
      if (s.aliases(storage)) return true;
    return false;
  }
  void rebind_saved(const Storage* storage, const Tensor& replacement) override {
    for (SavedVariable& s : saved_)
      if (s.aliases(storage)) s = SavedVariable(replacement, s.is_output());
  }
  Tensor saved(size_t i) const { return saved_[i].unpack(*this); }
  // Whether forward input i gets a gradient, and what it looked like.
  bool needs_grad(size_t i) const { return next_edges()[i].is_valid(); }
  const InputMeta& input(size_t i) const { return inputs_[i]; }
  void add_input(const Tensor* t) {
    inputs_.push_back(t ? InputMeta{t->shape(), t->dtype(), t->device()} : InputMeta{});
  }

  // Arguments of the forward the formula needs (dims, a scalar factor).
  std::vector<int64_t> ints;
  std::vector<double> reals;

 private:
  const char* name_;
  Formula formula_;
  std::vector<SavedVariable> saved_;
  std::vector<InputMeta> inputs_;
};

// Records a FormulaNode for `out` with these forward inputs (null: not a tensor); the caller then
// saves what the formula reads.
std::shared_ptr<FormulaNode> record_node(const char* name, FormulaNode::Formula formula,
                                         std::initializer_list<const Tensor*> inputs,
                                         const Tensor& out);
std::shared_ptr<FormulaNode> record_node(const char* name, FormulaNode::Formula formula,
                                         const std::vector<const Tensor*>& inputs,
                                         const Tensor& out);

// `g` summed over the dims `meta`'s shape broadcast along, in meta's dtype: the gradient of an
// input that was broadcast (and promoted) to the output.
Tensor reduce_to(const Tensor& g, const InputMeta& meta);

// A 2-D tensor whose transpose is contiguous (and that is not contiguous itself): linear's w.t().
// The product formulas give such a factor its gradient in the same layout, computed as the
// transposed product (torch's mm_mat2_backward does the same), so the view's backward hands the
// weight a contiguous gradient and AccumulateGrad copies nothing.
bool is_transposed_matrix(const Tensor& t);

// Zeros of `shape` (g's dtype and device) whose view `view_of` holds g: the backward of a view
// (select, slice, narrow, diagonal). Copied into the view, or, while a backward records
// (create_graph and g requiring grad), put at the view's flat positions out of place, so the
// result is differentiable in g (an in-place copy into a view of a graph tensor is refused).
Tensor embed_in_zeros(const Tensor& g, const Shape& shape,
                      const std::function<Tensor(const Tensor&)>& view_of);

}  // namespace tensorlet::autograd

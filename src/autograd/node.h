// The backward graph: a Node per recorded op, Edges to the nodes of its inputs, saved tensors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorlet/autograd/hooks.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

using TensorList = std::vector<Tensor>;

class Node;

// Where a gradient goes: input `input_nr` of `function` (the forward output it belongs to).
// An edge without a function leads nowhere (an input that needs no gradient).
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};

// What a forward output looked like: the gradient backward hands the node for it must match
// (and is zeros of this when no gradient reached it).
struct InputMeta {
  Shape shape;
  DType dtype = kFloat32;
  Device device;
};

// One recorded op's backward (torch::autograd::Node): apply() maps the gradients of the op's
// outputs to the gradients of its inputs, in the order of next_edges(). Names are PyTorch's
// ("MulBackward0"), so the profiler's backward rows and grad_fn()->name() read as torch's.
class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // grads[i] is the gradient of forward output i, shaped as input_meta(i); the result has one
  // entry per next edge (undefined where that input needs no gradient).
  virtual TensorList apply(TensorList&& grads) = 0;
  // Frees what the node saved, after a backward that does not retain the graph.
  virtual void release_variables() {}
  // In-place ops (autograd/inplace.cpp): whether the node saved a tensor in `storage`, and
  // rebinding those saved tensors to `replacement` (same values, other memory).
  virtual bool saves(const Storage* /*storage*/) const { return false; }
  virtual void rebind_saved(const Storage* /*storage*/, const Tensor& /*replacement*/) {}
  // False: the engine hands apply() zeros (of input_meta) for an output no gradient reached;
  // true: it hands an undefined tensor, which the node handles itself.
  virtual bool accepts_undefined_grads() const { return false; }
  // Runs the register_hook hooks of the forward outputs on their (defined) gradients before
  // apply(), as torch's tensor pre-hooks; `api` is the backward call, named in the errors.
  virtual void call_tensor_pre_hooks(TensorList& grads, const char* api);

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const std::vector<Edge>& next_functions() const { return next_edges_; }  // LibTorch's name
  size_t num_inputs() const { return input_meta_.size(); }
  const InputMeta& input_meta(size_t i) const { return input_meta_[i]; }
  // Increases with each node made on a thread: backward runs later nodes first (torch's order).
  uint64_t sequence_nr() const { return sequence_nr_; }

  // While recording: the edges to the inputs' nodes, and one forward output's metadata (its
  // position among the node's inputs is returned).
  void set_next_edges(std::vector<Edge> edges) { next_edges_ = std::move(edges); }
  uint32_t add_input_metadata(const Tensor& output);
  uint32_t add_input_metadata(const InputMeta& meta);

  // retain_grad() on forward output `nr`: backward stores that output's gradient in its grad().
  void retain_output(uint32_t nr, const std::shared_ptr<TensorImpl>& output) {
    retained_.push_back({nr, output});
  }
  const std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>>& retained_outputs() const {
    return retained_;
  }
  // The output was written in place and now belongs to another node.
  void forget_retained(const TensorImpl* output) {
    std::erase_if(retained_, [output](const auto& r) { return r.second.lock().get() == output; });
  }
  // A node that also runs inside another (an in-place op's node inside its base's CopySlices)
  // may run twice in one backward: the engine frees its saved tensors when that backward ends,
  // not when it first runs.
  void set_release_at_end() { release_at_end_ = true; }
  bool release_at_end() const { return release_at_end_; }
  // register_hook on forward output `nr`: the output's hook list, shared with its AutogradMeta.
  void add_tensor_pre_hook(uint32_t nr, std::shared_ptr<HookList> hooks) {
    tensor_pre_hooks_.emplace_back(nr, std::move(hooks));
  }

 private:
  std::vector<std::pair<uint32_t, std::shared_ptr<HookList>>> tensor_pre_hooks_;
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>> retained_;
  std::vector<Edge> next_edges_;
  std::vector<InputMeta> input_meta_;
  uint64_t sequence_nr_;
  bool release_at_end_ = false;
};

// A tensor a node keeps for backward. Unpacking checks that nothing wrote to it in place since
// (its storage's version), and that the graph was not freed by an earlier backward. An output of
// the node itself is kept without its autograd state (the node holding its own output's grad_fn
// would be a reference cycle) and a weak pointer to the node: unpacked in grad mode (a backward
// with create_graph) it gets its history back, so a second derivative flows through it (torch's
// SavedVariable does the same).
class SavedVariable {
 public:
  SavedVariable() = default;
  // An inference tensor cannot be saved (torch's rule): Error naming `api`, or the op the user
  // called when null.
  SavedVariable(const Tensor& tensor, bool is_output, const char* api = nullptr);
  // `node`: the node asking, named in the errors.
  Tensor unpack(const Node& node) const;
  void reset();
  // Whether the saved tensor is (a view of) `storage`'s memory, and rebinding it elsewhere: an
  // in-place op that writes that memory keeps what the node needs (autograd/inplace.cpp).
  bool aliases(const Storage* storage) const {
    return saved_ && !released_ && data_.storage().get() == storage;
  }
  bool is_output() const { return is_output_; }

 private:
  Tensor data_;
  std::weak_ptr<Node> grad_fn_;  // an output's node
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  uint32_t version_ = 0;
  bool saved_ = false;
  bool released_ = false;
};

// The node a leaf that requires grad feeds: it adds the incoming gradient into the leaf's grad()
// (the leaf's register_hook hooks run first, its post-accumulate hooks after). Nothing reached
// it (an undefined gradient): grad() is left as it was, as torch's.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  bool accepts_undefined_grads() const override { return true; }
  // The leaf's hooks live on the leaf (this node is made again for each graph).
  void call_tensor_pre_hooks(TensorList& grads, const char* api) override;
  const Tensor& variable() const { return leaf_; }

 private:
  Tensor leaf_;
};

}  // namespace tensorlet::autograd

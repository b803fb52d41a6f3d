// The backward engine: counts each node's dependencies from the roots, then runs nodes as their
// gradients complete, later nodes first (torch's order), on the calling thread. Kernels go to the
// streams the backward ops pick, as in the forward (asynchronous on CUDA).
#include "tensorlet/autograd/engine.h"

#include "tensorlet/tensor/autocast.h"

#include <map>
#include <mutex>
#include <string>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/formula_node.h"
#include "tensorlet/autograd/grad_sum.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::autograd {

namespace {

thread_local const char* t_backward_api = nullptr;

// Names the backward call in errors raised inside nodes while it runs (restored after: a hook may
// run a backward of its own).
class BackwardApiScope {
 public:
  explicit BackwardApiScope(const char* api) : previous_(t_backward_api) { t_backward_api = api; }
  ~BackwardApiScope() { t_backward_api = previous_; }
  BackwardApiScope(const BackwardApiScope&) = delete;
  BackwardApiScope& operator=(const BackwardApiScope&) = delete;

 private:
  const char* previous_;
};

struct ByLaterFirst {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

// The profiler's rows for a node (PyTorch's): "autograd::engine::evaluate_function: MulBackward0"
// around "MulBackward0", the ops of its formula under them. Recorded only while a profiler runs;
// unlike OpScope, it leaves the op named in errors alone (an error in a formula names its op).
class NodeScope {
 public:
  explicit NodeScope(const Node& node) {
    if (!profiler::detail::g_recording.load(std::memory_order_relaxed)) return;
    const std::string name = node.name();
    outer_ = profiler::detail::op_begin(interned("autograd::engine::evaluate_function: " + name));
    if (outer_ != 0)
      profiler::detail::op_sequence_nr(static_cast<int64_t>(node.sequence_nr()), true);
    inner_ = profiler::detail::op_begin(interned(name));
  }
  ~NodeScope() {
    if (inner_ != 0) profiler::detail::op_end(inner_);
    if (outer_ != 0) profiler::detail::op_end(outer_);
  }
  NodeScope(const NodeScope&) = delete;
  NodeScope& operator=(const NodeScope&) = delete;

 private:
  // The recorder keeps op names as const char*: node names live in a set that only grows (one
  // entry per node type seen while profiling).
  static const char* interned(std::string name) {
    static std::mutex mutex;
    static std::unordered_set<std::string> names;
    std::lock_guard guard(mutex);
    return names.insert(std::move(name)).first->c_str();
  }
  uint8_t outer_ = 0, inner_ = 0;
};

bool is_leaf_edge(const Edge& e) { return dynamic_cast<AccumulateGrad*>(e.function.get()); }

// The gradient a root starts with: the given one (checked against the root), or ones for a
// one-element root.
Tensor root_gradient(const char* api, const Tensor& root, const Tensor* given, size_t i) {
  if (!given || !given->defined()) {
    if (root.numel() != 1)
      fail<Error>(api, "grad can be implicitly created only for scalar outputs (output ", i,
                  " has shape ", root.shape(), ")");
    return ones_like(root);
  }
  if (given->shape() != root.shape())
    fail<ShapeError>(api, "Mismatch in shape: grad_output[", i, "] has a shape of ", given->shape(),
                     " and output[", i, "] has a shape of ", root.shape());
  if (given->device() != root.device())
    fail<DeviceError>(api, "grad_output[", i, "] is on ", given->device(), " but output[", i,
                      "] is on ", root.device());
  if (is_floating_point(root.dtype()) != is_floating_point(given->dtype()))
    fail<DTypeError>(api, "grad_output[", i, "] has dtype ", given->dtype(), " but output[", i,
                     "] has dtype ", root.dtype());
  return *given;
}

struct Capture {
  Edge edge;
  Tensor grad;
};

// One backward call over the graph reachable from `roots`.
class GraphTask {
 public:
  GraphTask(const char* api, bool keep_graph, bool create_graph)
      : api_(api), keep_graph_(keep_graph), create_graph_(create_graph) {}

  // captures: edges whose gradient is collected (autograd::grad, backward's inputs=); only the
  // nodes on a path to one of them run (and the captured leaves' accumulators, when
  // accumulate_captured). Empty: every reachable node runs.
  void run(const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads,
           std::vector<Capture>* captures, bool accumulate_captured) {
    count_dependencies(roots);
    if (captures) mark_needed(roots, *captures);
    for (size_t i = 0; i < roots.size(); ++i) deliver(roots[i], root_grads[i]);
    std::priority_queue<Node*, std::vector<Node*>, ByLaterFirst> ready;
    for (const Edge& r : roots)
      if (dependencies_[r.function.get()] == 0 && queued_.insert(r.function.get()).second)
        ready.push(r.function.get());
    AutoGradMode mode(create_graph_);
    BackwardApiScope naming(api_);
    // Gradients keep their forward dtypes: the formulas run with autocast off (a backward inside
    // an autocast region would otherwise cast them, e.g. a sum of float16 into float32).
    const autocast_detail::AutocastOff no_autocast;
    std::vector<Node*> release_at_end;  // alive: the roots hold the graph
    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      // Every gradient for the node has arrived (its dependencies are done): undefined entries
      // are outputs nothing reached.
      TensorList inputs = take_inputs(node);
      const bool captured = captures && is_captured(node, *captures);
      const bool leaf = dynamic_cast<AccumulateGrad*>(node) != nullptr;
      bool runs = !captures || needed_.count(node);
      if (captured && leaf) runs = accumulate_captured;  // grad() returns, never accumulates
      if (runs || captured) {
        // torch's order: the tensors' hooks, then retain_grad and the captures see the result.
        node->call_tensor_pre_hooks(inputs, api_);
        if (accumulate_captured) retain_outputs(*node, inputs);
        if (captured) capture(node, inputs, *captures);
      }
      if (runs) {
        if (!node->accepts_undefined_grads()) materialize(*node, inputs);
        TensorList outputs;
        {
          NodeScope scope(*node);
          outputs = node->apply(std::move(inputs));
        }
        const auto& edges = node->next_edges();
        if (!leaf && outputs.size() != edges.size())
          fail<Error>(api_, "function ", node->name(), " returned ", outputs.size(),
                      " gradients, expected ", edges.size());
        for (size_t k = 0; k < outputs.size(); ++k) {
          if (!edges[k].is_valid()) continue;
          deliver(edges[k], validate(*node, edges[k], std::move(outputs[k])));
        }
      }
      if (!keep_graph_) {
        if (node->release_at_end())
          release_at_end.push_back(node);
        else
          node->release_variables();
      }
      for (const Edge& e : node->next_edges()) {
        if (!e.is_valid()) continue;
        Node* next = e.function.get();
        if (--dependencies_[next] == 0 && queued_.insert(next).second) ready.push(next);
      }
    }
    for (Node* node : release_at_end) node->release_variables();
  }

 private:
  void count_dependencies(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    std::unordered_set<Node*> seen;
    for (const Edge& r : roots)
      if (seen.insert(r.function.get()).second) stack.push_back(r.function.get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.is_valid()) continue;
        ++dependencies_[e.function.get()];
        if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
      }
    }
  }

  // needed_: nodes from which a captured edge can be reached (they must run).
  void mark_needed(const std::vector<Edge>& roots, const std::vector<Capture>& captures) {
    std::unordered_set<Node*> targets;
    for (const Capture& c : captures) targets.insert(c.edge.function.get());
    std::unordered_map<Node*, bool> memo;
    // Iterative post-order: a node is needed when one of its edges leads to a target or to a
    // needed node.
    std::vector<std::pair<Node*, size_t>> stack;
    for (const Edge& r : roots) {
      if (memo.count(r.function.get())) continue;
      stack.push_back({r.function.get(), 0});
      memo[r.function.get()] = false;
      while (!stack.empty()) {
        auto& [n, k] = stack.back();
        const auto& edges = n->next_edges();
        if (k < edges.size()) {
          Node* next = edges[k++].function.get();
          if (next && !memo.count(next)) {
            memo[next] = false;
            stack.push_back({next, 0});
          }
          continue;
        }
        bool needed = false;
        for (const Edge& e : edges)
          if (e.is_valid() && (targets.count(e.function.get()) || memo[e.function.get()]))
            needed = true;
        memo[n] = needed;
        if (needed) needed_.insert(n);
        stack.pop_back();
      }
    }
  }

  static bool is_captured(Node* node, const std::vector<Capture>& captures) {
    for (const Capture& c : captures)
      if (c.edge.function.get() == node) return true;
    return false;
  }

  static void capture(Node* node, const TensorList& inputs, std::vector<Capture>& captures) {
    for (Capture& c : captures)
      if (c.edge.function.get() == node && inputs[c.edge.input_nr].defined())
        c.grad = inputs[c.edge.input_nr];
  }

  // retain_grad() outputs keep their gradient in grad() (backward only: grad() accumulates
  // nothing).
  void retain_outputs(const Node& node, const TensorList& inputs) const {
    for (const auto& [nr, weak] : node.retained_outputs()) {
      std::shared_ptr<TensorImpl> impl = weak.lock();
      if (!impl || !inputs[nr].defined()) continue;
      AutogradMeta& m = meta_for(Tensor(impl));
      const Tensor g = create_graph_ ? inputs[nr] : inputs[nr].detach();
      m.grad = m.grad.defined() ? add(m.grad, g) : g;
    }
  }

  // Zeros for the outputs no gradient reached, for nodes whose apply() needs every gradient.
  static void materialize(const Node& node, TensorList& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].defined()) continue;
      const InputMeta& m = node.input_meta(i);
      inputs[i] = zeros(m.shape, TensorOptions(m.dtype).device(m.device));
    }
  }

  // torch's validate_outputs: a gradient must fit the input it goes to. One of a shape the input
  // broadcasts to is summed back to it, one of another floating dtype is converted; another
  // shape or another device is an error naming the node.
  Tensor validate(const Node& node, const Edge& e, Tensor g) const {
    if (!g.defined()) return g;
    const InputMeta& want = e.function->input_meta(e.input_nr);
    if (g.device() != want.device)
      fail<DeviceError>(api_, "Function ", node.name(), " returned a gradient on ", g.device(),
                        " but expected ", want.device);
    if (g.shape() != want.shape) {
      if (!broadcasts_to(want.shape, g.shape()))
        fail<ShapeError>(api_, "Function ", node.name(),
                         " returned an invalid gradient: got shape ", g.shape(),
                         " but expected shape ", want.shape);
      g = reduce_to(g, want);
    }
    if (g.dtype() != want.dtype) {
      if (!is_floating_point(g.dtype()))
        fail<DTypeError>(api_, "Function ", node.name(), " returned a gradient of dtype ",
                         g.dtype(), " for a ", want.dtype, " input");
      g = g.to(want.dtype);
    }
    return g;
  }

  void deliver(const Edge& e, const Tensor& g) {
    if (!g.defined()) return;
    std::vector<GradSum>& buffer = buffers_[e.function.get()];
    if (buffer.size() < e.function->num_inputs()) buffer.resize(e.function->num_inputs());
    buffer[e.input_nr].add(g);
  }

  // The node's gradients, undefined for outputs no gradient reached.
  TensorList take_inputs(Node* node) {
    TensorList inputs(node->num_inputs());
    auto it = buffers_.find(node);
    if (it == buffers_.end()) return inputs;
    for (size_t i = 0; i < it->second.size() && i < inputs.size(); ++i)
      inputs[i] = it->second[i].take();
    buffers_.erase(it);
    return inputs;
  }

  const char* api_;
  bool keep_graph_;
  bool create_graph_;
  std::unordered_map<Node*, int> dependencies_;
  // Each node's incoming gradients, per input, until the node runs.
  std::unordered_map<Node*, std::vector<GradSum>> buffers_;
  std::unordered_set<Node*> needed_;
  std::unordered_set<Node*> queued_;
};

std::vector<Edge> root_edges(const char* api, const std::vector<Tensor>& outputs) {
  std::vector<Edge> edges;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined()) fail<Error>(api, "output ", i, " is an undefined tensor");
    Edge e = gradient_edge(outputs[i]);
    if (!e.is_valid())
      fail<Error>(api, "element ", i,
                  " of tensors does not require grad and does not have a grad_fn");
    edges.push_back(std::move(e));
  }
  return edges;
}

std::vector<Tensor> root_grads(const char* api, const std::vector<Tensor>& outputs,
                               const std::vector<Tensor>& grad_outputs) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    fail<Error>(api, "got ", grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
  std::vector<Tensor> grads;
  for (size_t i = 0; i < outputs.size(); ++i)
    grads.push_back(
        root_gradient(api, outputs[i], grad_outputs.empty() ? nullptr : &grad_outputs[i], i));
  return grads;
}

std::vector<Capture> captures_of(const char* api, const std::vector<Tensor>& inputs) {
  std::vector<Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) fail<Error>(api, "input ", i, " is an undefined tensor");
    Edge e = gradient_edge(inputs[i]);
    if (!e.is_valid()) fail<Error>(api, "One of the differentiated Tensors does not require grad");
    captures.push_back(Capture{std::move(e), {}});
  }
  return captures;
}

}  // namespace

const char* current_backward_api() {
  return t_backward_api ? t_backward_api : "tl::autograd::backward";
}

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph,
              const std::vector<Tensor>& inputs) {
  detail::backward("tl::autograd::backward", outputs, grad_outputs, retain_graph, create_graph,
                   inputs);
}

void detail::backward(const char* api, const std::vector<Tensor>& outputs,
                      const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                      bool create_graph, const std::vector<Tensor>& inputs) {
  const std::vector<Edge> roots = root_edges(api, outputs);
  const std::vector<Tensor> grads = root_grads(api, outputs, grad_outputs);
  GraphTask task(api, retain_graph.value_or(create_graph), create_graph);
  if (inputs.empty()) {
    task.run(roots, grads, nullptr, true);
    return;
  }
  // Only into the given inputs: leaves through their accumulators, others into their .grad.
  std::vector<Capture> captures = captures_of(api, inputs);
  task.run(roots, grads, &captures, true);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (is_leaf_edge(captures[i].edge) || !captures[i].grad.defined()) continue;
    AutogradMeta& m = meta_for(inputs[i]);
    Tensor g = create_graph ? captures[i].grad : captures[i].grad.detach();
    m.grad = m.grad.defined() ? add(m.grad, g) : g;
  }
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  const char* api = "tl::autograd::grad";
  const std::vector<Edge> roots = root_edges(api, outputs);
  const std::vector<Tensor> grads = root_grads(api, outputs, grad_outputs);
  std::vector<Capture> captures = captures_of(api, inputs);
  GraphTask task(api, retain_graph.value_or(create_graph), create_graph);
  task.run(roots, grads, &captures, false);
  std::vector<Tensor> result;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (!captures[i].grad.defined() && !allow_unused)
      fail<Error>(api,
                  "One of the differentiated Tensors appears to not have been used in the graph. "
                  "Set allow_unused=true if this is the desired behavior (input ",
                  i, ")");
    result.push_back(create_graph || !captures[i].grad.defined() ? captures[i].grad
                                                                 : captures[i].grad.detach());
  }
  return result;
}

}  // namespace tensorlet::autograd

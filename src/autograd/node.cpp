// Nodes, saved tensors, leaf accumulation and the recording helpers of autograd_meta.h.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/engine.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/tensor/op_scope.h"

namespace tensorlet::autograd {

namespace {
// One counter for the process: sequence numbers order nodes made on different threads too.
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

Node::Node() : sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

void Node::call_tensor_pre_hooks(TensorList& grads, const char* api) {
  for (const auto& [nr, hooks] : tensor_pre_hooks_)
    if (grads[nr].defined()) grads[nr] = run_gradient_hooks(*hooks, std::move(grads[nr]), api);
}

uint32_t Node::add_input_metadata(const Tensor& output) {
  return add_input_metadata(InputMeta{output.shape(), output.dtype(), output.device()});
}

uint32_t Node::add_input_metadata(const InputMeta& meta) {
  input_meta_.push_back(meta);
  return static_cast<uint32_t>(input_meta_.size() - 1);
}

SavedVariable::SavedVariable(const Tensor& tensor, bool is_output, const char* api)
    : is_output_(is_output), saved_(tensor.defined()) {
  if (!saved_) return;
  if (tensor.is_inference()) {
    const char* op = api ? api : profiler::user_op();
    fail<Error>(op ? op : "tl::autograd::SavedVariable",
                "Inference tensors cannot be saved for backward. To work around you can make a "
                "clone to get a normal tensor and use it in autograd.");
  }
  data_ = is_output ? tensor.detach() : tensor;
  if (is_output && meta_of(tensor)) {
    grad_fn_ = tensor.grad_fn();
    output_nr_ = tensor.output_nr();
  }
  version_ = tensor.storage()->version();
}

Tensor SavedVariable::unpack(const Node& node) const {
  if (released_)
    fail<Error>(current_backward_api(),
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call backward() or autograd::grad(). Specify "
                "retain_graph=true if you need to backward through the graph a second time (",
                node.name(), ")");
  if (!saved_) return {};
  if (data_.storage()->version() != version_)
    fail<Error>(current_backward_api(),
                "one of the variables needed for gradient computation has been modified by an "
                "inplace operation: [",
                data_.dtype(), " ", data_.shape(), "], which is output 0 of ", node.name(),
                ", is at version ", data_.storage()->version(), "; expected version ", version_,
                " instead");
  if (!GradMode::is_enabled()) return data_;
  std::shared_ptr<Node> fn = grad_fn_.lock();
  if (!fn) return data_;
  Tensor with_history = data_.detach();
  AutogradMeta& m = meta_for(with_history);
  m.grad_fn = std::move(fn);
  m.output_nr = output_nr_;
  return with_history;
}

void SavedVariable::reset() {
  data_ = Tensor();
  grad_fn_.reset();
  released_ = true;
}

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { add_input_metadata(leaf_); }

void AccumulateGrad::call_tensor_pre_hooks(TensorList& grads, const char* api) {
  const AutogradMeta* m = meta_of(leaf_);
  if (m && m->hooks && grads[0].defined())
    grads[0] = run_gradient_hooks(*m->hooks, std::move(grads[0]), api);
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor& g = grads[0];
  if (!g.defined()) return {};
  AutogradMeta& m = meta_for(leaf_);
  // With create_graph the gradient keeps its graph (for a second derivative); without, it is data.
  Tensor incoming = GradMode::is_enabled() ? g : g.detach();
  // grad() is a plain dense tensor, as torch's layout contract: never the stride-0 view a
  // reduction's backward hands on.
  if (!incoming.is_contiguous()) incoming = incoming.contiguous();
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (!m.grad.defined())
      m.grad = incoming;
    else
      m.grad = add(m.grad, incoming);  // out of place: never writes into a tensor the user holds
  }
  // Outside the lock: a hook may read grad() or start work of its own (an all-reduce).
  if (m.post_accumulate_hooks) run_post_accumulate_hooks(*m.post_accumulate_hooks, leaf_);
  return {};
}

AutogradMeta& meta_for(const Tensor& t) {
  std::shared_ptr<AutogradMeta>& slot = t.mutable_impl().autograd;
  if (!slot) slot = std::make_shared<AutogradMeta>();
  return *slot;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta_of(t);
  if (!m) return {};
  refresh_if_stale(*m, t);
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  // Graphs recorded on several threads may share this leaf: one accumulator at a time.
  std::lock_guard<std::mutex> lock(m->mutex);
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

void register_view(const Tensor& view, const std::shared_ptr<TensorImpl>& base) {
  AutogradMeta& vm = meta_for(view);
  vm.view_base = base;
  vm.view_version = view.storage()->version();
  AutogradMeta& bm = meta_for(Tensor(base));
  std::lock_guard<std::mutex> lock(bm.mutex);
  // Expired entries go when the list has doubled since the last pruning: amortized O(1) a view.
  if (bm.views.size() >= bm.views_prune_at) {
    std::erase_if(bm.views, [](const std::weak_ptr<TensorImpl>& w) { return w.expired(); });
    bm.views_prune_at = std::max<size_t>(8, 2 * bm.views.size());
  }
  bm.views.push_back(view.impl_ptr());
}

size_t live_views_of(const Tensor& base) {
  AutogradMeta* m = meta_of(base);
  if (!m) return 0;
  std::lock_guard<std::mutex> lock(m->mutex);
  size_t n = 0;
  for (const std::weak_ptr<TensorImpl>& w : m->views) {
    const std::shared_ptr<TensorImpl> v = w.lock();
    if (v && v->storage == base.impl().storage) ++n;
  }
  return n;
}

std::vector<Edge> collect_next_edges(std::initializer_list<const Tensor*> inputs) {
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) edges.push_back(t ? gradient_edge(*t) : Edge{});
  return edges;
}

void set_history(const Tensor& output, const std::shared_ptr<Node>& node) {
  AutogradMeta& m = meta_for(output);
  m.grad_fn = node;
  m.requires_grad = false;
  if (m.view_base) m.view_version = output.storage()->version();  // made from the current values
  m.output_nr = node->add_input_metadata(output);
  // The profiler ties the forward op that made the node to the backward scope that runs it (only
  // ops make outputs; a leaf's accumulator, made on the way, has no forward op).
  if (m.output_nr == 0 && !t_view_history &&
      profiler::detail::g_recording.load(std::memory_order_relaxed))
    profiler::detail::op_sequence_nr(static_cast<int64_t>(node->sequence_nr()), false);
}

}  // namespace tensorlet::autograd

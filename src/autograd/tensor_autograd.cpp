// Tensor's autograd methods (tensor.h): requires_grad, grad, grad_fn, detach, backward.
#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/autograd/engine.h"
#include "tensorlet/tensor/inference_mode.h"

namespace tensorlet {

using autograd::AutogradMeta;
using autograd::meta_for;
using autograd::meta_of;

bool Tensor::requires_grad() const { return autograd::requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  const char* name = "tl::Tensor::requires_grad_";
  AutogradMeta* m = meta_of(*this);
  if (m && m->grad_fn) {
    if (!requires_grad)
      fail<Error>(name,
                  "you can only change requires_grad flags of leaf variables. If you want to use "
                  "a computed variable in a subgraph that doesn't require differentiation use "
                  "var_no_grad = var.detach().");
    return *this;
  }
  if (requires_grad && !is_floating_point(dtype()))
    fail<DTypeError>(name, "only Tensors of floating point dtype can require gradients (got ",
                     dtype(), ")");
  if (requires_grad && is_inference() && !InferenceMode::is_enabled())
    fail<Error>(name,
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed.");
  if (requires_grad || m) meta_for(*this).requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const {
  const AutogradMeta* m = meta_of(*this);
  return !m || !m->grad_fn;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const AutogradMeta* m = meta_of(*this);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return meta_for(*this).grad; }

void Tensor::retain_grad() const {
  if (!requires_grad())
    fail<Error>("tl::Tensor::retain_grad",
                "can't retain_grad on Tensor that has requires_grad=false");
  if (is_leaf()) return;  // a leaf keeps its gradient anyway
  AutogradMeta& m = meta_for(*this);
  if (m.retains_grad) return;
  m.retains_grad = true;
  m.grad_fn->retain_output(m.output_nr, impl_ptr());
}

bool Tensor::retains_grad() const {
  const AutogradMeta* m = meta_of(*this);
  return m && m->retains_grad;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  AutogradMeta* m = meta_of(*this);
  if (!m) return none;
  autograd::refresh_if_stale(*m, *this);
  return m->grad_fn;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = meta_of(*this);
  if (m) autograd::refresh_if_stale(*m, *this);
  return m ? m->output_nr : 0;
}

Tensor Tensor::detach() const {
  const TensorImpl& from = impl();
  auto out = std::make_shared<TensorImpl>();
  out->storage = from.storage;
  out->shape = from.shape;
  out->strides = from.strides;
  out->offset = from.offset;
  out->dtype = from.dtype;
  return Tensor(std::move(out));
}

Tensor& Tensor::detach_() {
  AutogradMeta* m = meta_of(*this);
  if (m) {
    m->grad_fn.reset();
    m->requires_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

void Tensor::set_data(const Tensor& new_data) const {
  const char* name = "tl::Tensor::set_data";
  check_defined(*this, name);
  check_defined(new_data, name);
  if (!is_leaf())
    fail<Error>(name, "set_data on a tensor with a grad_fn (", grad_fn()->name(),
                ") is not supported: set the data of a leaf");
  if (requires_grad() && !is_floating_point(new_data.dtype()))
    fail<DTypeError>(name, "a tensor that requires grad needs floating point data, got ",
                     new_data.dtype());
  const TensorImpl& src = new_data.impl();
  TensorImpl& dst = mutable_impl();
  // Copies first: new_data may be this tensor (or share its impl).
  std::shared_ptr<Storage> storage = src.storage;
  Shape shape = src.shape, strides = src.strides;
  const int64_t offset = src.offset;
  const DType dtype = src.dtype;
  dst.storage = std::move(storage);
  dst.shape = std::move(shape);
  dst.strides = std::move(strides);
  dst.offset = offset;
  dst.dtype = dtype;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const std::vector<Tensor>& inputs) const {
  autograd::detail::backward(
      "tl::Tensor::backward", {*this},
      gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{}, retain_graph,
      create_graph, inputs);
}

autograd::HookHandle Tensor::_register_hook(std::function<Tensor(const Tensor&)> fn) const {
  if (!requires_grad())
    fail<Error>("tl::Tensor::register_hook",
                "cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = meta_for(*this);
  const bool first = !m.hooks;
  autograd::HookHandle handle = autograd::add_hook(m.hooks, std::move(fn));
  // A non-leaf's gradient is the one flowing into its grad_fn for this output: the node runs
  // the list (a leaf's accumulator reads it from the leaf).
  if (first && m.grad_fn) m.grad_fn->add_tensor_pre_hook(m.output_nr, m.hooks);
  return handle;
}

autograd::HookHandle Tensor::_register_post_accumulate_grad_hook(
    std::function<void(const Tensor&)> fn) const {
  const char* name = "tl::Tensor::register_post_accumulate_grad_hook";
  if (!requires_grad())
    fail<Error>(name, "cannot register a hook on a tensor that doesn't require gradient");
  if (!is_leaf())
    fail<Error>(name, "post accumulate grad hooks cannot be registered on non-leaf tensors");
  return autograd::add_hook(meta_for(*this).post_accumulate_hooks,
                            [fn = std::move(fn)](const Tensor& leaf) {
                              fn(leaf);
                              return Tensor();
                            });
}

void Tensor::remove_hook(unsigned pos) const {
  AutogradMeta* m = meta_of(*this);
  if (!m || !m->hooks || pos >= m->hooks->hooks.size())
    fail<IndexError>("tl::Tensor::remove_hook", "Invalid index, no hook at position ", pos);
  m->hooks->hooks[pos] = nullptr;
}

void Tensor::remove_hook(autograd::HookHandle handle) const { handle.remove(); }

uint32_t Tensor::_version() const {
  if (is_inference())
    fail<Error>("tl::Tensor::_version", "Inference tensors do not track version counter.");
  return storage()->version();
}

}  // namespace tensorlet

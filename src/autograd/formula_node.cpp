// Recording a FormulaNode, reducing a broadcast gradient back to its input, embedding a view's
// gradient in zeros.
#include "tensorlet/autograd/formula_node.h"

#include "tensorlet/ops/advanced_index.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/grad_mode.h"

namespace tensorlet::autograd {

std::shared_ptr<FormulaNode> record_node(const char* name, FormulaNode::Formula formula,
                                         const std::vector<const Tensor*>& inputs,
                                         const Tensor& out) {
  auto node = std::make_shared<FormulaNode>(name, formula);
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    edges.push_back(t ? gradient_edge(*t) : Edge{});
    node->add_input(t);
  }
  node->set_next_edges(std::move(edges));
  set_history(out, node);
  return node;
}

std::shared_ptr<FormulaNode> record_node(const char* name, FormulaNode::Formula formula,
                                         std::initializer_list<const Tensor*> inputs,
                                         const Tensor& out) {
  return record_node(name, formula, std::vector<const Tensor*>(inputs), out);
}

Tensor reduce_to(const Tensor& g, const InputMeta& meta) {
  Tensor r = g;
  if (r.shape() != meta.shape) {
    const int64_t lead = r.dim() - static_cast<int64_t>(meta.shape.size());
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < r.dim(); ++d)
      if (d < lead || (meta.shape[d - lead] == 1 && r.shape()[d] != 1)) dims.push_back(d);
    if (!dims.empty()) r = sum(r, dims, true);
    r = r.reshape(meta.shape);
  }
  if (r.dtype() != meta.dtype) r = r.to(meta.dtype);
  if (r.device() != meta.device) r = r.to(meta.device);
  return r;
}

Tensor embed_in_zeros(const Tensor& g, const Shape& shape,
                      const std::function<Tensor(const Tensor&)>& view_of) {
  const TensorOptions options = TensorOptions(g.dtype()).device(g.device());
  if (GradMode::is_enabled() && g.requires_grad()) {
    const Tensor all = arange(shape.numel(), TensorOptions(kInt64).device(g.device())).view(shape);
    return put(zeros(shape, options), view_of(all).contiguous(), g.contiguous());
  }
  Tensor r = zeros(shape, options);
  view_of(r).copy_(g);
  return r;
}

bool is_transposed_matrix(const Tensor& t) {
  return t.dim() == 2 && !t.is_contiguous() && t.transpose(0, 1).is_contiguous();
}

}  // namespace tensorlet::autograd

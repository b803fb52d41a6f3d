// Runs backward over the recorded graph: Tensor::backward and tl::autograd::grad.
#pragma once

#include <optional>
#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet::autograd {

// torch.autograd.backward: accumulates the gradients of `outputs` (weighted by `grad_outputs`,
// which may be left out for one-element outputs) into the .grad of the leaves they depend on, or
// of `inputs` only when given. retain_graph defaults to create_graph.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::vector<Tensor>& inputs = {});

namespace detail {
// backward() as called through `api` (Tensor::backward names itself in its errors).
void backward(const char* api, const std::vector<Tensor>& outputs,
              const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
              bool create_graph, const std::vector<Tensor>& inputs);
}  // namespace detail

// torch.autograd.grad: the gradients of `outputs` with respect to `inputs`, returned instead of
// accumulated. An input the outputs do not depend on is an Error unless allow_unused (then its
// entry is undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

// The backward call running on this thread, for errors raised inside a node's apply() (a custom
// Function's backward, a saved tensor's check); "tl::autograd::backward" outside one.
const char* current_backward_api();

}  // namespace tensorlet::autograd

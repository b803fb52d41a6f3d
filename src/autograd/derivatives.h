// Where op front-ends hand their result to autograd: one call per op family, made only when
// should_record() says an input requires grad in grad mode. The formulas are in
// derivatives_*.cpp, one entry per op (the role of PyTorch's derivatives.yaml).
#pragma once

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/backends/math/binary_ops.h"
#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/autograd_hooks.h"
#include "tensorlet/tensor/dim_list.h"

namespace tensorlet::autograd {

// out = op(a, b) (alpha: add/sub's factor on b). A scalar operand is an undefined tensor with its
// value in `a_value` / `b_value`.
void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                   double alpha = 1, double a_value = 0, double b_value = 0);
void record_unary(UnaryOp op, const Tensor& x, const Tensor& out);
// sum / mean / amax-amin (max() and min() too) over dims (empty: all). The extremes share the
// gradient evenly among ties, as torch's amax.
enum class Reduction : uint8_t { Sum, Mean, Extreme };
void record_reduction(Reduction kind, const Tensor& x, const DimList& dims, bool keepdim,
                      const Tensor& out);
// cumsum of x along dim (wrapped).
void record_cumsum(const Tensor& x, int64_t dim, const Tensor& out);
void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out);
// out = clamp(a, min, max) with bounds that need no gradient: the gradient passes where the
// value was inside the bounds.
void record_clamp(const Tensor& a, const Tensor& out);
// gather (true) or index_select (false) of x along dim (wrapped) with an int index.
void record_index(bool gather, const Tensor& x, int64_t dim, const Tensor& index,
                  const Tensor& out);
// where(cond, a, b) (a scalar operand: an undefined tensor).
void record_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
// cat of `tensors` along dim (wrapped); stack is a cat of unsqueezed views.
void record_cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out);
// softmax / log_softmax of x along dim (wrapped), y = out.
void record_softmax(bool log, const Tensor& x, int64_t dim, const Tensor& out);

// Views and shape ops (tensor/autograd_hooks.h's kinds and arguments, reached through its hook):
// the gradient takes the inverse path back to the input's shape.
void record_view(ViewKind kind, const Tensor& x, const Tensor& out, int64_t d0 = 0, int64_t d1 = 0,
                 int64_t d2 = 0, const std::vector<int64_t>& dims = {});
// x.to(dtype / device), x.clone(): the gradient goes back to x's dtype and device.
void record_to(const Tensor& x, const Tensor& out, const char* name = "ToCopyBackward0");

// For ops with no derivative yet: an Error naming the op when one would be needed, instead of a
// result that silently drops the gradient.
void no_derivative(const char* op);

}  // namespace tensorlet::autograd

// Where op front-ends hand their result to autograd: one call per op family, made only when
// should_record() says an input requires grad in grad mode. The formulas are in
// derivatives_*.cpp, one entry per op (the role of PyTorch's derivatives.yaml).
#pragma once

#include "tensorlet/autograd/autograd_meta.h"
#include "tensorlet/backends/math/batch_norm_ops.h"
#include "tensorlet/backends/math/binary_ops.h"
#include "tensorlet/backends/math/convolution_args.h"
#include "tensorlet/backends/math/cross_entropy_ops.h"
#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/autograd_hooks.h"
#include "tensorlet/tensor/dim_list.h"
#include "tensorlet/tensor/tensor_index.h"

namespace tensorlet::autograd {

// out = op(a, b) (alpha: add/sub's factor on b). A scalar operand is an undefined tensor with its
// value in `a_value` / `b_value`.
void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                   double alpha = 1, double a_value = 0, double b_value = 0);
void record_unary(UnaryOp op, const Tensor& x, const Tensor& out);
// sum / mean / amax-amin (max() and min() too, and median() as `name`) over dims (empty: all).
// The extremes share the gradient evenly among ties, as torch's amax.
enum class Reduction : uint8_t { Sum, Mean, Extreme };
void record_reduction(Reduction kind, const Tensor& x, const DimList& dims, bool keepdim,
                      const Tensor& out, const char* name = nullptr);
// cumsum of x along dim (wrapped).
void record_cumsum(const Tensor& x, int64_t dim, const Tensor& out);
void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out);
// out = beta * input + alpha * (a @ b): addmm (batched false) or baddbmm.
void record_addmm(bool batched, const Tensor& input, const Tensor& a, const Tensor& b, double beta,
                  double alpha, const Tensor& out);
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

// The fused cross entropy's row losses `out` of x (nn/fused_cross_entropy.h), with the kernel's
// other inputs (target, weight, weight_total: contiguous) and its lse, so the backward is one more
// kernel (Backend::cross_entropy_backward), or with create_graph the formula as recorded ops.
void record_cross_entropy(const Tensor& x, const Tensor& target, const Tensor& weight,
                          const Tensor& weight_total, const Tensor& lse,
                          const CrossEntropyArgs& args, const Tensor& out);

// A backend's own 2-D convolution y = conv2d(x, w) (ops/convolution_native.cpp): the backward
// is that backend's two backward passes (Backend::conv2d_backward_*), or the im2col formulas as
// recorded ops when the backward itself must be differentiable or the backend declines.
void record_conv2d(const Tensor& x, const Tensor& w, const Conv2dArgs& args, const Tensor& y);

// The fused batch norm's output y of x (nn/fused_batch_norm.h) with its weight and bias (each
// undefined or [C]) and the forward's per-channel mean and invstd: the backward is one more
// kernel (Backend::batch_norm_backward), or with create_graph the formula as recorded ops.
void record_batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       const Tensor& mean, const Tensor& invstd, const BatchNormArgs& args,
                       const Tensor& y);

// Views and shape ops (tensor/autograd_hooks.h's kinds and arguments, reached through its hook):
// the gradient takes the inverse path back to the input's shape.
void record_view(ViewKind kind, const Tensor& x, const Tensor& out, int64_t d0 = 0, int64_t d1 = 0,
                 int64_t d2 = 0, const std::vector<int64_t>& dims = {});
// x.to(dtype / device), x.clone(): the gradient goes back to x's dtype and device.
void record_to(const Tensor& x, const Tensor& out, const char* name = "ToCopyBackward0");

// logsumexp, var / std (take_sqrt), norm and prod over dims (empty: all), as their ops take them.
void record_logsumexp(const Tensor& x, const DimList& dims, bool keepdim, const Tensor& out);
void record_var(bool take_sqrt, const Tensor& x, const DimList& dims, double correction,
                bool keepdim, const Tensor& out);
void record_norm(const Tensor& x, double p, const DimList& dims, bool keepdim, const Tensor& out);
void record_prod(const Tensor& x, const DimList& dims, bool keepdim, const Tensor& out);
// cumprod of x along dim (wrapped).
void record_cumprod(const Tensor& x, int64_t dim, const Tensor& out);
// `values` picked from x along dim (wrapped) at `indices` (max/min/kthvalue/median with a dim,
// sort, topk, cummax/cummin; keepdim: values keep dim): the gradient goes back to the indices.
void record_selection(const char* name, const Tensor& x, int64_t dim, const Tensor& indices,
                      bool keepdim, const Tensor& values);
// Runs `op` (returning ValuesIndices) below autograd and records its values as a selection from x
// when x requires grad in grad mode; otherwise just runs it.
template <class Op>
ValuesIndices selecting_op(const char* name, const Tensor& x, int64_t dim, bool keepdim, Op&& op) {
  if (!should_record({&x})) return op();
  ValuesIndices out;
  {
    NoGradGuard below;
    out = op();
  }
  record_selection(name, x, x.dim() == 0 ? 0 : (dim < 0 ? dim + x.dim() : dim), out.indices,
                   keepdim, out.values);
  return out;
}

// Indexing and scatter ops (derivatives_indexing.cpp); each forward ran below autograd.
// out = take(x, flat), or an advanced index x[...] read as take of the basic view x at flat.
void record_take(bool advanced_index, const Tensor& x, const Tensor& flat, const Tensor& out);
void record_put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate,
                const Tensor& out);
// scatter (reduce "", src or a value: src null), scatter_add ("add"), scatter_reduce ("sum",
// "mean", "amax", "amin"; "prod" raises).
void record_scatter(const char* reduce, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor* src, bool include_self, const Tensor& out);
// index_add (kind 0, alpha), index_copy (1), index_fill (2, a number: source null).
void record_index_add(int kind, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor* source, double alpha, const Tensor& out);
// masked_fill (kind 0; other: the 0-dim value tensor or null), masked_scatter (1, other: source),
// masked_select (2).
void record_masked(int kind, const Tensor& self, const Tensor& mask, const Tensor* other,
                   const Tensor& out);
// index_put out of place: values null for a number.
void record_index_put(const Tensor& self, const std::vector<TensorIndex>& items,
                      const Tensor* values, bool accumulate, const Tensor& out);
// lerp (weight: the tensor, or null for the number w), nan_to_num, clamp with tensor bounds (a
// missing bound null), diagonal (embed false) and diag_embed (embed true; diag of a vector is one,
// of a matrix a diagonal), dims wrapped.
void record_lerp(const Tensor& start, const Tensor& end, const Tensor* weight, double w,
                 const Tensor& out);
void record_nan_to_num(const Tensor& x, const Tensor& out);
void record_clamp_tensors(const Tensor& x, const Tensor* lo, const Tensor* hi, const Tensor& out);
void record_diagonal(bool embed, const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2,
                     const Tensor& out);
// Runs `op` below autograd when one of `inputs` requires grad in grad mode, then `record(out)`.
template <class Op, class Record>
Tensor recorded_op(std::initializer_list<const Tensor*> inputs, Op&& op, Record&& record) {
  if (!should_record(inputs)) return op();
  Tensor out;
  {
    NoGradGuard below;
    out = op();
  }
  record(out);
  return out;
}

// For ops with no derivative yet: an Error naming the op when one would be needed, instead of a
// result that silently drops the gradient.
void no_derivative(const char* op);

}  // namespace tensorlet::autograd

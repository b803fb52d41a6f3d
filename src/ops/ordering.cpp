// tl::sort / argsort / topk / kthvalue front-ends: check dim and k, move the dim last as
// contiguous rows, call one backend kernel, and put the dim back.
#include <utility>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/ordering.h"

namespace tensorlet {

namespace {

// x's elements as contiguous rows along dim d ([rows, n]; a 0-dim tensor is one row of one), and
// what puts a kernel's per-row results back into x's dim order. The other dims keep their order
// (a permute, not a transpose), so a per-row result of kthvalue is already in its final order.
struct Rows {
  Tensor rows;
  Shape others;  // x's shape without dim d
  int64_t d = 0, ndim = 0;

  // A kernel's [rows, m] result as x's shape with dim d of extent m, contiguous.
  Tensor back(const Tensor& out, int64_t m) const {
    if (ndim == 0) return out.view({});
    Shape moved = others;
    moved.push_back(m);
    Tensor t = out.view(moved);
    if (d == ndim - 1) return t;
    Shape inverse;
    for (int64_t j = 0; j < ndim; ++j) inverse.push_back(j < d ? j : j == d ? ndim - 1 : j - 1);
    return t.permute(inverse).contiguous();
  }
  // The result shape with dim d of extent m (0-dim stays 0-dim).
  Shape shape_with(int64_t m) const {
    if (ndim == 0) return {};
    Shape s = others;
    s.insert(d, m);
    return s;
  }
};

Rows rows_of(const Tensor& x, int64_t d) {
  Rows r;
  r.d = d;
  r.ndim = x.dim();
  if (r.ndim == 0) {
    r.rows = x.reshape({1, 1});
    return r;
  }
  Shape perm;
  for (int64_t i = 0; i < r.ndim; ++i) {
    if (i == d) continue;
    perm.push_back(i);
    r.others.push_back(x.shape()[i]);
  }
  perm.push_back(d);
  const Tensor moved = d == r.ndim - 1 ? x : x.permute(perm);
  // A zero-size x has no rows to run: the shape is all that is used.
  if (x.numel() > 0) r.rows = moved.contiguous().view({x.numel() / x.shape()[d], x.shape()[d]});
  return r;
}

// torch builds its topk and kthvalue kernels for every dtype but bool (sort takes bool too).
void check_not_bool(const Tensor& x, const char* name) {
  if (x.dtype() == kBool)
    fail<DTypeError>(name, "not implemented for dtype bool (as torch); convert to uint8 first");
}

// The extent of dim d, 1 for a 0-dim tensor (torch's slice size).
int64_t slice_size(const Tensor& x, int64_t d) { return x.dim() == 0 ? 1 : x.shape()[d]; }

ValuesIndices sort_op(const char* name, const Tensor& x, int64_t dim, bool descending) {
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);  // a 0-dim tensor takes 0 and -1
  const Rows r = rows_of(x, d);
  if (x.numel() == 0)
    return {make_tensor(x.shape(), x.dtype(), x.device()),
            make_tensor(x.shape(), kInt64, x.device())};
  const int64_t n = r.rows.shape()[1];
  Tensor values = make_tensor(r.rows.shape(), x.dtype(), x.device());
  Tensor indices = make_tensor(r.rows.shape(), kInt64, x.device());
  backend_for(x.device()).sort(r.rows, descending, values, indices);
  return {r.back(values, n), r.back(indices, n)};
}

}  // namespace

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending, bool /*stable: always*/) {
  return autograd::selecting_op("SortBackward0", x, dim, true,
                                [&] { return sort_op("tl::sort", x, dim, descending); });
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool /*stable: always*/) {
  return sort_op("tl::argsort", x, dim, descending).indices;
}

namespace {

ValuesIndices topk_op(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  const char* name = "tl::topk";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);
  const int64_t size = slice_size(x, d);
  check_not_bool(x, name);
  if (k < 0 || k > size)
    fail<IndexError>(name, "selected index k out of range: k = ", k, " for dim ", d, " of size ",
                     size, " in shape ", x.shape());
  const Rows r = rows_of(x, d);
  // A 0-dim tensor stays 0-dim for k = 0 too (torch returns the element).
  const int64_t m = x.dim() == 0 ? 1 : k;
  if (x.numel() == 0 || m == 0)
    return {make_tensor(r.shape_with(m), x.dtype(), x.device()),
            make_tensor(r.shape_with(m), kInt64, x.device())};
  const int64_t rows = r.rows.shape()[0];
  Tensor values = make_tensor({rows, m}, x.dtype(), x.device());
  Tensor indices = make_tensor({rows, m}, kInt64, x.device());
  backend_for(x.device()).topk(r.rows, m, largest, sorted, values, indices);
  return {r.back(values, m), r.back(indices, m)};
}

ValuesIndices kthvalue_op(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  const char* name = "tl::kthvalue";
  profiler::OpScope scope(name);
  scope.inputs({&x});
  check_defined(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);
  const int64_t size = slice_size(x, d);
  check_not_bool(x, name);
  if (size == 0)
    fail<IndexError>(name, "expected dim ", d, " to have non-zero size, got shape ", x.shape());
  if (k < 1 || k > size)
    fail<IndexError>(name, "selected number k out of range: k = ", k, " for dim ", d, " of size ",
                     size, " (k counts from 1)");
  const Rows r = rows_of(x, d);
  const Shape out_shape = keepdim ? r.shape_with(1) : r.others;
  Tensor values = make_tensor(out_shape, x.dtype(), x.device());
  Tensor indices = make_tensor(out_shape, kInt64, x.device());
  if (x.numel() == 0) return {values, indices};
  // The kernel's [rows] results are in the order of x's other dims: out_shape's order.
  const int64_t rows = r.rows.shape()[0];
  backend_for(x.device()).kthvalue(r.rows, k, values.view({rows}), indices.view({rows}));
  return {std::move(values), std::move(indices)};
}

}  // namespace

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  return autograd::selecting_op("TopkBackward0", x, dim, true,
                                [&] { return topk_op(x, k, dim, largest, sorted); });
}

ValuesIndices kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  return autograd::selecting_op("KthvalueBackward0", x, dim, keepdim,
                                [&] { return kthvalue_op(x, k, dim, keepdim); });
}

}  // namespace tensorlet

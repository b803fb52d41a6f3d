// Advanced indexing front-ends: the items of x[...] applied as views (select, slice, unsqueeze),
// then the tensor items reduced to one flat row-major index into the view, read by take or
// written by put. Every check (counts, dtypes, devices, mask shapes, index ranges, value shapes)
// runs before any kernel writes.
#include "tensorlet/ops/advanced_index.h"

#include <cstring>
#include <string>
#include <utility>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/backends/backend.h"
#include "tensorlet/tensor/broadcast.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/scalar_check.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/index_range.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/out_arg.h"

namespace tensorlet {

namespace indexing {

TensorIndex::TensorIndex(const char* text) : type_(TensorIndexType::Ellipsis) {
  bad_string_ = text == nullptr || std::strcmp(text, "...") != 0;
}

}  // namespace indexing

namespace {

bool is_mask(DType d) { return d == kBool || d == kUInt8; }

// What the items leave: `sliced`, the view after the basic items, and for each of its dims an
// index tensor (int64/int32 on sliced's device, a mask already turned into its nonzero columns)
// or nothing.
struct Applied {
  Tensor sliced;
  std::vector<Tensor> per_dim;
  bool advanced() const {
    for (const Tensor& t : per_dim)
      if (t.defined()) return true;
    return false;
  }
};

// Checks every item and returns how many dims of self they index (torch's
// count_specified_dimensions: a mask indexes one per mask dim; None, Ellipsis and bools none).
int64_t check_items(const Tensor& self, const std::vector<TensorIndex>& items, const char* op) {
  int64_t ellipses = 0, specified = 0;
  for (const TensorIndex& item : items) {
    if (item.bad_string()) fail<IndexError>(op, "the only string index is \"...\" (Ellipsis)");
    if (item.is_ellipsis() && ++ellipses > 1)
      fail<IndexError>(op, "an index can only have a single ellipsis ('...')");
    if (item.is_integer() || item.is_slice()) ++specified;
    if (item.is_slice() && item.slice().step() == 0)
      fail<IndexError>(op, "slice step cannot be zero");
    if (item.is_slice() && item.slice().step() < 0)
      fail<IndexError>(op,
                       "step must be greater than zero (negative steps are not supported), got ",
                       item.slice().step());
    if (!item.is_tensor()) continue;
    const Tensor& t = item.tensor();
    check_defined(t, op);
    const DType d = t.dtype();
    if (d != kInt64 && d != kInt32 && !is_mask(d))
      fail<DTypeError>(op, "tensors used as indices must be long, int, byte or bool tensors, got ",
                       d);
    // As torch: an index on the CPU serves any tensor (it is moved), another device's does not.
    if (!t.device().is_cpu() && t.device() != self.device())
      fail<DeviceError>(op,
                        "indices should be either on cpu or on the same device as the indexed "
                        "tensor (",
                        self.device(), "), got an index on ", t.device());
    specified += is_mask(d) && t.dim() > 0 ? t.dim() : 1;
  }
  if (specified > self.dim())
    fail<IndexError>(op, "too many indices for tensor of dimension ", self.dim(), " (got ",
                     specified, ")");
  return specified;
}

// self.select(dim, i) with the bound checked here, so the error names the user's op and the
// dim of self it indexes.
Tensor select_checked(const Tensor& t, int64_t dim, int64_t i, int64_t self_dim, const char* op) {
  const int64_t n = t.shape()[dim];
  if (i < -n || i >= n)
    fail<IndexError>(op, "index ", i, " is out of bounds for dimension ", self_dim, " with size ",
                     n);
  return t.select(dim, i);
}

// torch's `true` / `false` item: an index [0] or [] into a new axis of size 1.
Tensor bool_index(bool value, Device device) {
  return value ? zeros({1}, TensorOptions(kInt64).device(device))
               : make_tensor({0}, kInt64, device);
}

// Applies the items in order as torch's applySlicing: `dim` walks the dims of the result so far.
Applied apply_items(const Tensor& self, const std::vector<TensorIndex>& items, const char* op) {
  const int64_t specified = check_items(self, items, op);
  Applied a;
  a.sliced = self;
  std::vector<std::pair<int64_t, Tensor>> recorded;  // (dim of sliced, index or mask)
  int64_t dim = 0, self_dim = 0;
  for (const TensorIndex& item : items) {
    switch (item.type()) {
      case indexing::TensorIndexType::Integer:
        a.sliced = select_checked(a.sliced, dim, item.integer(), self_dim++, op);
        break;
      case indexing::TensorIndexType::Slice: {
        const Slice& s = item.slice();
        a.sliced = a.sliced.slice(dim++, s.start(), s.stop(), s.step());
        ++self_dim;
        break;
      }
      case indexing::TensorIndexType::None:
        a.sliced = a.sliced.unsqueeze(dim++);
        break;
      case indexing::TensorIndexType::Ellipsis:
        dim += self.dim() - specified;
        self_dim += self.dim() - specified;
        break;
      case indexing::TensorIndexType::Boolean:
        a.sliced = a.sliced.unsqueeze(dim);
        recorded.emplace_back(dim++, bool_index(item.boolean(), self.device()));
        break;
      case indexing::TensorIndexType::Tensor: {
        const Tensor& t = item.tensor();
        if (t.dim() == 0 && !is_mask(t.dtype())) {
          // A 0-dim integer tensor selects, as an integer (its value is read: synchronizes).
          a.sliced = select_checked(a.sliced, dim, t.item<int64_t>(), self_dim++, op);
        } else if (t.dim() == 0) {
          a.sliced = a.sliced.unsqueeze(dim);
          recorded.emplace_back(dim++, bool_index(t.item<bool>(), self.device()));
        } else {
          const int64_t spans = is_mask(t.dtype()) ? t.dim() : 1;
          recorded.emplace_back(dim, t);
          dim += spans;
          self_dim += spans;
        }
        break;
      }
    }
  }
  a.per_dim.resize(a.sliced.dim());
  for (auto& [at, t] : recorded) {
    const Tensor on_device = t.device() == self.device() ? t : t.to(self.device());
    if (!is_mask(t.dtype())) {
      a.per_dim[at] = on_device;
      continue;
    }
    for (int64_t j = 0; j < t.dim(); ++j)
      if (t.shape()[j] != a.sliced.shape()[at + j])
        fail<IndexError>(op, "The shape of the mask ", t.shape(), " at index ", j,
                         " does not match the shape of the indexed tensor ", a.sliced.shape(),
                         " at index ", at + j);
    // The mask's true positions, one int64 column per mask dim. nonzero waits for the device:
    // the number of true elements is the result's size, as in torch.
    const Tensor nz = nonzero(on_device);
    for (int64_t j = 0; j < t.dim(); ++j) a.per_dim[at + j] = nz.select(1, j);
  }
  return a;
}

// The flat row-major positions into a.sliced of every element of the advanced result, and that
// result's shape (torch's placement: the broadcast index dims replace the indexed dims when those
// are adjacent, else go first). Index ranges are checked here, before any kernel.
struct Plan {
  Shape shape;  // the advanced result's shape
  Tensor flat;  // int64, broadcast to `shape` (defined when shape has elements)
};

Plan plan_advanced(const Applied& a, const char* op) {
  const Tensor& sliced = a.sliced;
  const int64_t nd = sliced.dim();
  std::vector<int64_t> indexed;
  Shape bshape;
  bool first = true;
  for (int64_t d = 0; d < nd; ++d) {
    const Tensor& t = a.per_dim[d];
    if (!t.defined()) continue;
    indexed.push_back(d);
    if (first) {
      bshape = t.shape();
      first = false;
      continue;
    }
    try {
      bshape = broadcast_shapes(bshape, t.shape(), op);
    } catch (const ShapeError&) {
      std::string shapes;
      for (int64_t e = 0; e < nd; ++e)
        if (a.per_dim[e].defined())
          shapes += (shapes.empty() ? "" : ", ") + a.per_dim[e].shape().str();
      fail<IndexError>(op,
                       "shape mismatch: indexing tensors could not be broadcast together with "
                       "shapes ",
                       shapes);
    }
  }
  const bool adjacent =
      indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  // Where each dim of the result comes from: -1 for a broadcast index dim, else a dim of sliced.
  std::vector<int64_t> source;
  const int64_t b_at = adjacent ? indexed.front() : 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == b_at && adjacent)
      for (int64_t k = 0; k < bshape.size(); ++k) source.push_back(-1);
    if (a.per_dim[d].defined()) continue;
    source.push_back(d);
  }
  if (!adjacent) source.insert(source.begin(), bshape.size(), -1);
  if (static_cast<int64_t>(source.size()) > kMaxDims)
    fail<IndexError>(op, "the result would have ", source.size(), " dims, more than ", kMaxDims);
  Plan plan;
  for (int64_t q = 0, k = 0; q < static_cast<int64_t>(source.size()); ++q)
    plan.shape.push_back(source[q] < 0 ? bshape[k++] : sliced.shape()[source[q]]);
  int64_t count = 0;
  if (!checked_numel(plan.shape, &count))
    fail<ShapeError>(op, "the result's shape ", plan.shape, " overflows int64 elements");
  // Ranges of the given index tensors (mask columns are in range by construction).
  std::vector<int64_t> lows(nd, 0);
  for (int64_t d : indexed) {
    const Tensor& t = a.per_dim[d];
    const int64_t size = sliced.shape()[d];
    lows[d] = check_index_range(op, t, size, d, -size);  // negative indices wrap
  }
  if (count == 0) return plan;
  // Row-major strides of sliced: no overflow, as sliced has elements whenever the result has.
  std::vector<int64_t> row_stride(nd, 1);
  for (int64_t d = nd - 2; d >= 0; --d) row_stride[d] = row_stride[d + 1] * sliced.shape()[d + 1];
  // The index part: sum over indexed dims of (wrapped index) * row stride, over bshape.
  Tensor acc;
  for (int64_t d : indexed) {
    Tensor t = a.per_dim[d].to(kInt64);
    if (lows[d] < 0) t = where(t < 0, t + sliced.shape()[d], t);
    if (!acc.defined()) {
      acc = row_stride[d] == 1 ? t : t * row_stride[d];
    } else {
      acc = add(acc, t, row_stride[d]);
    }
  }
  const int64_t rank = plan.shape.size();
  const int64_t b_first = adjacent ? b_at : 0;
  for (int64_t k = 0; k < b_first; ++k) acc = acc.unsqueeze(0);
  while (acc.dim() < rank) acc = acc.unsqueeze(acc.dim());
  // The basic part: each non-indexed dim's positions times its row stride, broadcast along the
  // others; added to the index part last, so only the final sum has the result's size.
  Tensor base;
  for (int64_t q = 0; q < rank; ++q) {
    if (source[q] < 0) continue;
    const int64_t d = source[q];
    Tensor steps = arange(sliced.shape()[d], TensorOptions(kInt64).device(sliced.device()));
    if (row_stride[d] != 1) steps = steps * row_stride[d];
    Shape view_shape = Shape::filled(rank, 1);
    view_shape[q] = sliced.shape()[d];
    steps = steps.view(view_shape);
    base = base.defined() ? base + steps : steps;
  }
  plan.flat = base.defined() ? acc + base : acc;
  return plan;
}

// values with leading dims of size 1 dropped (torch's setitem does, as numpy), broadcast to shape.
Tensor broadcast_values(const Tensor& values, const Shape& shape, const char* op) {
  int64_t lead = 0;
  while (lead < values.dim() && values.shape()[lead] == 1) ++lead;
  Shape kept;
  for (int64_t d = lead; d < values.dim(); ++d) kept.push_back(values.shape()[d]);
  bool ok = kept.size() <= shape.size();
  for (int64_t k = 1; ok && k <= kept.size(); ++k) {
    const int64_t have = kept[kept.size() - k], want = shape[shape.size() - k];
    ok = have == want || have == 1;
  }
  if (!ok)
    fail<ShapeError>(op, "shape mismatch: value tensor of shape ", values.shape(),
                     " cannot be broadcast to indexing result of shape ", shape);
  const Tensor stripped = values.as_strided(
      kept,
      [&] {
        Shape st;
        for (int64_t d = lead; d < values.dim(); ++d) st.push_back(values.strides()[d]);
        return st;
      }(),
      values.offset());
  return stripped.expand(shape);
}

Tensor& index_put_impl(Tensor& self, const std::vector<TensorIndex>& items, const Tensor* values,
                       Scalar value, bool accumulate, const char* op) {
  check_defined(self, op);
  if (values) check_defined(*values, op);
  check_writable(op, self);
  // In place into a tensor outside the graph with values in it: not differentiable yet.
  if (values && autograd::should_record({values})) autograd::no_derivative(op);
  Applied a = apply_items(self, items, op);
  if (!a.advanced()) {
    // Basic items only: the target is a view of self; copy_/fill_/add_ convert as they do.
    if (!values) {
      if (accumulate) {
        a.sliced.add_(value);
      } else {
        a.sliced.fill_(value);
      }
      return self;
    }
    const Tensor src = broadcast_values(*values, a.sliced.shape(), op);
    if (accumulate) {
      a.sliced.add_(src.device() == self.device() ? src : src.to(self.device()));
    } else {
      a.sliced.copy_(src);
    }
    return self;
  }
  Tensor src;
  if (values) {
    if (values->dtype() != self.dtype())
      fail<DTypeError>(op, "Index put requires the source and destination dtypes match, got ",
                       self.dtype(), " for the destination and ", values->dtype(),
                       " for the source");
    if (values->device() != self.device() && !(values->dim() == 0 && values->device().is_cpu()))
      fail<DeviceError>(op, "expected values on ", self.device(), " (or a 0-dim CPU tensor), got ",
                        values->device());
    src = values->device() == self.device() ? *values : values->to(self.device());
  } else {
    check_scalar_fits(op, "value", value, self.dtype());
    src = full({}, value, TensorOptions(self.dtype()).device(self.device()));
  }
  const Plan plan = plan_advanced(a, op);
  src = broadcast_values(src, plan.shape, op);
  if (!plan.flat.defined()) return self;
  // Values read from self's memory would be overwritten while the kernel reads them.
  if (src.storage() == self.storage()) src = src.clone();
  backend_for(self.device()).put(a.sliced, plan.flat, src, accumulate);
  return self;
}

void check_flat_index(const Tensor& self, const Tensor& index, const char* op) {
  check_defined(self, op);
  check_defined(index, op);
  if (index.dtype() != kInt64)
    fail<DTypeError>(op, "expected a long (int64) tensor for index, but got ", index.dtype());
  if (index.device() != self.device())
    fail<DeviceError>(op, "expected index on ", self.device(), ", got ", index.device());
  if (index.numel() == 0) return;
  const int64_t n = self.numel();
  if (n == 0)
    fail<IndexError>(op, "tried to index an empty tensor (shape ", self.shape(), ") with ",
                     index.numel(), " indices");
  int64_t lo = 0, hi = 0;
  backend_for(index.device()).index_bounds(index, &lo, &hi);
  if (lo < -n || hi >= n)
    fail<IndexError>(op, "out of range: tried to access index ", lo < -n ? lo : hi,
                     " on a tensor of ", n, " elements");
}

Tensor& put_impl(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate,
                 const char* op) {
  check_flat_index(self, index, op);
  check_defined(source, op);
  check_writable(op, self);
  if (autograd::should_record({&source})) autograd::no_derivative(op);
  if (source.dtype() != self.dtype())
    fail<DTypeError>(op, "self and source expected to have the same dtype, but got self.dtype = ",
                     self.dtype(), " and source.dtype = ", source.dtype());
  if (source.device() != self.device())
    fail<DeviceError>(op, "expected source on ", self.device(), ", got ", source.device());
  if (source.numel() != index.numel())
    fail<ShapeError>(op,
                     "expected source and index to have the same number of elements, but got "
                     "source.numel() = ",
                     source.numel(), ", index.numel() = ", index.numel());
  if (index.numel() == 0) return self;
  Tensor src = source.reshape(index.shape());
  if (src.storage() == self.storage()) src = src.clone();
  backend_for(self.device()).put(self, index, src, accumulate);
  return self;
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<TensorIndex>& indices) {
  constexpr const char* op = "tl::index";
  profiler::OpScope scope(op);
  scope.inputs({&self});
  check_defined(self, op);
  Applied a = apply_items(self, indices, op);  // the basic items: views, recorded as such
  if (!a.advanced()) return a.sliced;
  const Plan plan = plan_advanced(a, op);
  Tensor out = make_tensor(plan.shape, self.dtype(), self.device());
  if (plan.flat.defined()) backend_for(self.device()).take(a.sliced, plan.flat, out);
  // The read of the view at the flat positions: IndexBackward0 adds the gradient back there.
  if (autograd::should_record({&a.sliced}))
    autograd::record_take(true, a.sliced,
                          plan.flat.defined()
                              ? plan.flat
                              : zeros(plan.shape, TensorOptions(kInt64).device(self.device())),
                          out);
  return out;
}

Tensor& index_put_(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values,
                   bool accumulate) {
  profiler::OpScope scope("tl::index_put_");
  scope.inputs({&self, nullptr, &values});
  return index_put_impl(self, indices, &values, Scalar(), accumulate, "tl::index_put_");
}

Tensor& index_put_(Tensor& self, const std::vector<TensorIndex>& indices, Scalar value,
                   bool accumulate) {
  profiler::OpScope scope("tl::index_put_");
  scope.inputs({&self});
  return index_put_impl(self, indices, nullptr, value, accumulate, "tl::index_put_");
}

Tensor index_put(const Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values,
                 bool accumulate) {
  profiler::OpScope scope("tl::index_put");
  scope.inputs({&self, nullptr, &values});
  check_defined(self, "tl::index_put");
  return autograd::recorded_op(
      {&self, &values},
      [&] {
        Tensor out = self.clone();
        return index_put_impl(out, indices, &values, Scalar(), accumulate, "tl::index_put");
      },
      [&](const Tensor& out) {
        autograd::record_index_put(self, indices, &values, accumulate, out);
      });
}

Tensor index_put(const Tensor& self, const std::vector<TensorIndex>& indices, Scalar value,
                 bool accumulate) {
  profiler::OpScope scope("tl::index_put");
  scope.inputs({&self});
  check_defined(self, "tl::index_put");
  return autograd::recorded_op(
      {&self},
      [&] {
        Tensor out = self.clone();
        return index_put_impl(out, indices, nullptr, value, accumulate, "tl::index_put");
      },
      [&](const Tensor& out) {
        autograd::record_index_put(self, indices, nullptr, accumulate, out);
      });
}

Tensor take(const Tensor& self, const Tensor& index) {
  constexpr const char* op = "tl::take";
  profiler::OpScope scope(op);
  scope.inputs({&self, &index});
  check_flat_index(self, index, op);
  Tensor out = make_tensor(index.shape(), self.dtype(), self.device());
  if (out.numel() > 0) backend_for(self.device()).take(self, index, out);
  if (autograd::should_record({&self})) autograd::record_take(false, self, index, out);
  return out;
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  constexpr const char* op = "tl::put";
  profiler::OpScope scope(op);
  scope.inputs({&self, &index, &source});
  check_defined(self, op);
  return autograd::recorded_op(
      {&self, &source},
      [&] {
        Tensor out = self.clone();
        return put_impl(out, index, source, accumulate, op);
      },
      [&](const Tensor& out) { autograd::record_put(self, index, source, accumulate, out); });
}

// ---- method forms ----

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return tensorlet::index(*this, std::vector<TensorIndex>(indices));
}
Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  return tensorlet::index(*this, indices);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& values,
                           bool accumulate) {
  return tensorlet::index_put_(*this, std::vector<TensorIndex>(indices), values, accumulate);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, Scalar value,
                           bool accumulate) {
  return tensorlet::index_put_(*this, std::vector<TensorIndex>(indices), value, accumulate);
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values,
                           bool accumulate) {
  return tensorlet::index_put_(*this, indices, values, accumulate);
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, Scalar value, bool accumulate) {
  return tensorlet::index_put_(*this, indices, value, accumulate);
}
Tensor Tensor::take(const Tensor& index) const { return tensorlet::take(*this, index); }
Tensor& Tensor::put_(const Tensor& index, const Tensor& source, bool accumulate) {
  profiler::OpScope scope("tl::put_");
  scope.inputs({this, &index, &source});
  return put_impl(*this, index, source, accumulate, "tl::put_");
}
Tensor Tensor::put(const Tensor& index, const Tensor& source, bool accumulate) const {
  return tensorlet::put(*this, index, source, accumulate);
}

}  // namespace tensorlet

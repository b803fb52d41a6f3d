// Views: ops that share storage and only change shape, strides and offset.
#include <algorithm>
#include <numeric>

#include "tensorlet/tensor/autograd_hooks.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

namespace {

using autograd::ViewKind;

// A view of a tensor autograd has seen goes to autograd's hook, which records its node when the
// tensor requires grad in grad mode; any other view costs one pointer test.
Tensor recorded(const Tensor& x, Tensor out, ViewKind kind, int64_t d0 = 0, int64_t d1 = 0,
                int64_t d2 = 0, const std::vector<int64_t>& dims = {}) {
  if (x.impl().autograd && autograd::detail::g_record_view)
    autograd::detail::g_record_view(kind, x, out, d0, d1, d2, dims);
  return out;
}

}  // namespace

Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, int64_t offset) const {
  constexpr const char* op = "tl::as_strided";
  const Shape shape(size), strides(stride);
  if (shape.size() != strides.size())
    fail<ShapeError>(op, "shape ", shape, " and strides ", strides, " differ in length");
  for (int64_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      fail<ShapeError>(op, "negative size ", shape[i], " at dim ", i, " of ", shape);
    if (strides[i] < 0)
      fail<ShapeError>(op, "negative stride ", strides[i], " at dim ", i, " of ", strides,
                       " (negative strides are not supported)");
  }
  if (offset < 0) fail<IndexError>(op, "negative storage offset ", offset);
  int64_t n = 0;
  if (!checked_numel(shape, &n))
    fail<ShapeError>(op, "Storage size calculation overflowed with sizes=", shape);
  // Also for a view without elements (any strides pass torch there): every size * stride must
  // fit, so that select, slice and unsqueeze on the view cannot overflow computing offsets.
  for (int64_t i = 0; i < shape.size(); ++i) {
    int64_t extent = 0;
    if (!checked_mul(shape[i], strides[i], &extent))
      fail<ShapeError>(op, "Storage size calculation overflowed with sizes=", shape,
                       " and strides=", strides);
  }
  if (n == 0)  // reaches no element
    return recorded(*this, make_view(*this, shape, strides, offset), ViewKind::AsStrided);
  // The largest reachable element, offset + sum((size - 1) * stride), must lie in the storage.
  int64_t last = offset;
  for (int64_t i = 0; i < shape.size(); ++i) {
    int64_t step = 0;
    if (!checked_mul(shape[i] - 1, strides[i], &step) || __builtin_add_overflow(last, step, &last))
      fail<ShapeError>(op, "Storage size calculation overflowed with sizes=", shape,
                       " and strides=", strides, " at storage offset ", offset);
  }
  const int64_t capacity =
      static_cast<int64_t>(storage()->nbytes() / tensorlet::element_size(dtype()));
  if (last >= capacity)
    fail<IndexError>(op, "sizes ", shape, ", strides ", strides, " and storage offset ", offset,
                     " reach element ", last, ", out of bounds for a storage of ", capacity,
                     " elements");
  return recorded(*this, make_view(*this, shape, strides, offset), ViewKind::AsStrided);
}

// Fills in a single -1 of `shape` so that it has `numel` elements.
static Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t infer = -1, known = 1;
  bool overflow = false;  // the known sizes' product does not fit int64 (so it is not numel)
  for (int64_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail<ShapeError>(op, "only one dimension can be inferred, got shape ", shape);
      infer = i;
    } else if (shape[i] < 0) {
      fail<ShapeError>(op, "invalid shape dimension ", shape[i], " in ", shape);
    }
  }
  Shape known_dims = shape;
  if (infer >= 0) known_dims.erase(infer);
  overflow = !checked_numel(known_dims, &known);
  if (infer >= 0) {
    if (!overflow && known == 0 && numel == 0)
      fail<ShapeError>(op, "cannot reshape a tensor of 0 elements into shape ", shape,
                       " because the unspecified dimension size -1 can be any value and is "
                       "ambiguous");
    if (overflow || known == 0 || numel % known != 0)
      fail<ShapeError>(op, "shape ", shape, " is invalid for input of size ", numel);
    out[infer] = numel / known;
    // The inferred size may make a contiguous stride overflow ([2^62, 4, -1] of 0 elements).
    int64_t check = 0;
    if (!checked_numel(out, &check))
      fail<ShapeError>(op, "shape ", shape, " is invalid for input of size ", numel);
  } else if (overflow || known != numel) {
    fail<ShapeError>(op, "shape ", shape, " is invalid for input of size ", numel);
  }
  return out;
}

// Strides for viewing (shape, strides) as new_shape without a copy, if possible (as
// at::detail::computeStride: chunks of old dims that are contiguous among themselves).
static std::optional<Shape> view_strides(const Shape& shape, const Shape& strides,
                                         const Shape& new_shape) {
  Shape new_strides = Shape::filled(new_shape.size(), 0);
  if (shape.numel() == 0 && shape == new_shape) return strides;
  // A 0-dim tensor's one element can be viewed with any number of size-1 dims (torch's "old
  // shape is empty" case).
  if (shape.empty()) return Shape::filled(new_shape.size(), 1);
  if (shape.numel() == 0) {
    new_strides = contiguous_strides(new_shape);
    return new_strides;
  }
  int64_t view_d = new_shape.size() - 1;
  int64_t chunk_base_stride = strides.size() ? strides.back() : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = shape.size() - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= shape[tensor_d];
    // A size-1 dim may carry any stride (as_strided), so these products are checked: a chunk
    // whose stride overflows ends there, and a view stride that overflows means a copy.
    int64_t chunk_stride = 0;
    bool chunk_ends =
        tensor_d == 0 || (shape[tensor_d - 1] != 1 &&
                          (!checked_mul(tensor_numel, chunk_base_stride, &chunk_stride) ||
                           strides[tensor_d - 1] != chunk_stride));
    if (chunk_ends) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        if (!checked_mul(view_numel, chunk_base_stride, &new_strides[view_d])) return std::nullopt;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

Tensor Tensor::view(IntArrayRef size) const {
  check_defined(*this, "tl::view");
  Shape target = infer_shape(Shape(size), numel(), "tl::view");
  auto strides = view_strides(this->shape(), this->strides(), target);
  if (!strides)
    fail<ShapeError>("tl::view", "view size ", target,
                     " is not compatible with input tensor's size ", this->shape(), " and strides ",
                     this->strides(), "; use reshape() instead");
  return recorded(*this, make_view(*this, target, *strides, offset()), ViewKind::View);
}

Tensor Tensor::reshape(IntArrayRef size) const {
  check_defined(*this, "tl::reshape");
  Shape target = infer_shape(Shape(size), numel(), "tl::reshape");
  if (auto strides = view_strides(this->shape(), this->strides(), target))
    return recorded(*this, make_view(*this, target, *strides, offset()), ViewKind::Reshape);
  // Only the copying path is an op of its own (as aten::reshape over aten::clone), so that
  // errors of the copy (out of memory) name tl::reshape.
  profiler::OpScope scope("tl::reshape");
  Tensor c = detach().clone();
  return recorded(*this, make_view(c, target, contiguous_strides(target), 0), ViewKind::Reshape);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  int64_t nd = dim();
  start_dim = wrap_dim(start_dim, nd, "tl::flatten");
  end_dim = wrap_dim(end_dim, nd, "tl::flatten");
  if (nd == 0) return reshape({1});
  if (start_dim > end_dim) fail<IndexError>("tl::flatten", "start_dim cannot come after end_dim");
  Shape s;
  for (int64_t i = 0; i < start_dim; ++i) s.push_back(shape()[i]);
  int64_t m = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) m *= shape()[i];
  s.push_back(m);
  for (int64_t i = end_dim + 1; i < nd; ++i) s.push_back(shape()[i]);
  return reshape(s);
}

Tensor Tensor::t() const {
  if (dim() > 2)
    fail<ShapeError>("tl::t", "expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  if (dim() < 2) return *this;
  // Its own view (not transpose's), so a graph names it TBackward0 as torch's.
  const Shape s{shape()[1], shape()[0]}, st{strides()[1], strides()[0]};
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::T);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  int64_t nd = dim();
  dim0 = wrap_dim(dim0, nd, "tl::transpose");
  dim1 = wrap_dim(dim1, nd, "tl::transpose");
  if (nd == 0) return *this;
  Shape s = shape(), st = strides();
  std::swap(s[dim0], s[dim1]);
  std::swap(st[dim0], st[dim1]);
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Transpose, dim0, dim1);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  int64_t nd = dim();
  if (static_cast<int64_t>(dims.size()) != nd)
    fail<ShapeError>("tl::permute", "number of dims don't match: tensor has ", nd, " dims, got ",
                     dims);
  Shape s = Shape::filled(nd, 0), st = Shape::filled(nd, 0);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd, "tl::permute");
    if (seen[d]) fail<IndexError>("tl::permute", "repeated dim ", d, " in ", dims);
    seen[d] = true;
    s[i] = shape()[d];
    st[i] = strides()[d];
  }
  std::vector<int64_t> order(dims.begin(), dims.end());
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Permute, 0, 0, 0, order);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  if (this->dim() == 0) fail<IndexError>("tl::select", "cannot index a 0-dim tensor");
  dim = wrap_dim(dim, this->dim(), "tl::select");
  int64_t n = shape()[dim];
  if (index < -n || index >= n)
    fail<IndexError>("tl::select", "index ", index, " is out of bounds for dimension ", dim,
                     " with size ", n);
  if (index < 0) index += n;
  Shape s = shape(), st = strides();
  int64_t off = offset() + index * st[dim];
  s.erase(dim);
  st.erase(dim);
  return recorded(*this, make_view(*this, s, st, off), ViewKind::Select, dim, index);
}

Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  if (this->dim() == 0) fail<IndexError>("tl::slice", "cannot slice a 0-dim tensor");
  dim = wrap_dim(dim, this->dim(), "tl::slice");
  if (step <= 0) fail<IndexError>("tl::slice", "step must be positive, got ", step);
  int64_t n = shape()[dim];
  // Python slice semantics: negative counts from the end, out-of-range clamps.
  auto clampi = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  int64_t b = start ? clampi(*start) : 0;
  int64_t e = end ? clampi(*end) : n;
  // ceil((e - b) / step) without forming e - b + step, which overflows for a huge step.
  int64_t len = e > b ? 1 + (e - b - 1) / step : 0;
  Shape s = shape(), st = strides();
  // b * stride lies inside the storage whenever the slice reaches an element; an empty slice
  // past a huge stride keeps the base offset rather than overflow.
  int64_t off = 0;
  if (!checked_mul(b, st[dim], &off) || __builtin_add_overflow(off, offset(), &off)) off = offset();
  s[dim] = len;
  // A dim of one element is never stepped over, so a huge step leaves its stride alone.
  if (len > 1 && !checked_mul(st[dim], step, &st[dim]))
    fail<ShapeError>("tl::slice", "stride ", strides()[dim], " times step ", step,
                     " overflows int64");
  return recorded(*this, make_view(*this, s, st, off), ViewKind::Slice, dim, b, step);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  if (this->dim() == 0) fail<IndexError>("tl::narrow", "cannot narrow a 0-dim tensor");
  dim = wrap_dim(dim, this->dim(), "tl::narrow");
  int64_t n = shape()[dim];
  if (start < -n || start > n)
    fail<IndexError>("tl::narrow", "start ", start, " out of range for dimension ", dim,
                     " of size ", n);
  if (start < 0) start += n;
  if (length < 0 || length > n - start)  // not start + length: that overflows for a huge length
    fail<IndexError>("tl::narrow", "start (", start, ") + length (", length,
                     ") exceeds dimension size (", n, ")");
  return slice(dim, start, start + length);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  dim = wrap_dim(dim, this->dim() + 1, "tl::unsqueeze");
  Shape s = shape(), st = strides();
  int64_t new_stride = 1;
  // size * stride as torch; a size-1 dim's stride is free, so on overflow (a huge as_strided
  // stride) it takes the neighbour's stride instead.
  if (dim < this->dim() && !checked_mul(st[dim], s[dim], &new_stride)) new_stride = st[dim];
  s.insert(dim, 1);
  st.insert(dim, new_stride);
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Unsqueeze, dim);
}

Tensor Tensor::squeeze() const {
  Shape s, st;
  for (int64_t i = 0; i < dim(); ++i)
    if (shape()[i] != 1) {
      s.push_back(shape()[i]);
      st.push_back(strides()[i]);
    }
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Squeeze);
}

Tensor Tensor::squeeze(int64_t dim) const {
  if (this->dim() == 0) {
    wrap_dim(dim, 0, "tl::squeeze");
    return *this;
  }
  dim = wrap_dim(dim, this->dim(), "tl::squeeze");
  if (shape()[dim] != 1) return *this;
  Shape s = shape(), st = strides();
  s.erase(dim);
  st.erase(dim);
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Squeeze);
}

// Each listed dim (wrapped, once at most, as torch) goes when its size is 1; a 0-dim tensor
// takes dim 0 / -1 and stays as it is.
Tensor Tensor::squeeze(IntArrayRef dims) const {
  const int64_t nd = dim();
  std::vector<bool> listed(std::max<int64_t>(nd, 1), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd, "tl::squeeze");
    if (listed[w])
      fail<IndexError>("tl::squeeze", "dim ", w, " appears multiple times in the list of dims");
    listed[w] = true;
  }
  if (nd == 0) return *this;
  Shape s, st;
  for (int64_t i = 0; i < nd; ++i)
    if (!listed[i] || shape()[i] != 1) {
      s.push_back(shape()[i]);
      st.push_back(strides()[i]);
    }
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Squeeze);
}

Tensor Tensor::expand(IntArrayRef target) const {
  int64_t nd = dim(), nt = static_cast<int64_t>(target.size());
  if (nt < nd)
    fail<ShapeError>("tl::expand", "the number of sizes provided (", nt,
                     ") must be greater or equal to the number of dimensions in the tensor (", nd,
                     ")");
  for (int64_t i = 0; i < nt; ++i)
    if (target[i] < -1)
      fail<ShapeError>("tl::expand", "invalid size ", target[i], " at dim ", i, " of target ",
                       target, ": sizes must be non-negative, or -1 to keep a dim");
  Shape s = Shape::filled(nt, 0), st = Shape::filled(nt, 0);
  for (int64_t i = nt - 1; i >= 0; --i) {
    int64_t j = i - (nt - nd);
    int64_t want = target[i];
    if (j < 0) {
      if (want < 0)
        fail<ShapeError>("tl::expand", "the size -1 is not allowed in a leading, non-existing dim ",
                         i, " of target ", target);
      s[i] = want;
      st[i] = 0;
      continue;
    }
    int64_t have = shape()[j];
    if (want == -1) want = have;
    if (have == want) {
      s[i] = have;
      st[i] = strides()[j];
    } else if (have == 1 && want >= 0) {
      s[i] = want;
      st[i] = 0;
    } else {
      fail<ShapeError>("tl::expand", "the expanded size of the tensor (", want,
                       ") must match the existing size (", have, ") at non-singleton dimension ", i,
                       ": target ", target, ", tensor ", shape());
    }
  }
  int64_t n = 0;
  if (!checked_numel(s, &n))
    fail<ShapeError>("tl::expand", "Storage size calculation overflowed with sizes=", s);
  return recorded(*this, make_view(*this, s, st, offset()), ViewKind::Expand);
}

}  // namespace tensorlet

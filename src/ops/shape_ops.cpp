// Shape ops: views built from narrow/select/permute/expand/as_strided, and copies composed of
// index_select, cat and where. Errors name the public function.
#include "tensorlet/ops/shape_ops.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "tensorlet/autograd/derivatives.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/reduce.h"

namespace tensorlet {
namespace {

int64_t dim_of(const Tensor& a, int64_t dim, const char* op) {
  check_defined(a, op);
  if (a.dim() == 0) fail<IndexError>(op, "expected a tensor with at least 1 dimension, got 0-dim");
  return wrap_dim(dim, a.dim(), op);
}

std::vector<Tensor> split_sizes(const Tensor& a, IntArrayRef sizes, int64_t d) {
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t s : sizes) {
    pieces.push_back(a.narrow(d, start, s));
    start += s;
  }
  return pieces;
}

// n + |offset|: the side of a square holding n elements on diagonal `offset`, overflow-checked.
int64_t side_with_offset(const char* op, int64_t n, int64_t offset) {
  const int64_t limit = std::numeric_limits<int64_t>::max() - n;
  if (offset == std::numeric_limits<int64_t>::min() || (offset < 0 ? -offset : offset) > limit)
    fail<ShapeError>(op, "diagonal offset ", offset, " makes the result's size overflow int64");
  return n + (offset < 0 ? -offset : offset);
}

// split / split_with_sizes by a list of sizes, errors naming `op`.
std::vector<Tensor> split_by_sizes(const char* op, const Tensor& a, IntArrayRef sizes,
                                   int64_t dim) {
  const int64_t d = dim_of(a, dim, op);
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail<ShapeError>(op, "split sizes must be non-negative, got ", sizes);
    if (__builtin_add_overflow(total, s, &total))
      fail<ShapeError>(op, "split sizes ", sizes, " overflow int64");
  }
  if (total != a.shape()[d])
    fail<ShapeError>(op, "split sizes ", sizes, " add up to ", total, ", not to the size ",
                     a.shape()[d], " of dim ", d);
  return split_sizes(a, sizes, d);
}

// Elements shifted along dims, each by its shift; the public roll's work without its op scope,
// so that rolling the flattened tensor is one op.
Tensor roll_dims(const char* op, const Tensor& a, IntArrayRef shifts, IntArrayRef dims) {
  if (shifts.size() != dims.size())
    fail<ShapeError>(op, "shifts and dims must align, got ", shifts, " and ", dims);
  Tensor out = a;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dim_of(a, dims[i], op), n = a.shape()[d];
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.is_same(a) ? a.clone() : out;
}

}  // namespace

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  constexpr const char* op = "tl::split";
  const int64_t d = dim_of(a, dim, op);
  const int64_t n = a.shape()[d];
  if (split_size < 0) fail<ShapeError>(op, "split_size must be non-negative, got ", split_size);
  if (split_size == 0 && n != 0)
    fail<ShapeError>(op, "split_size can only be 0 if dimension size is 0, got size ", n);
  if (n == 0) return {a};
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < n; start += split_size)
    sizes.push_back(std::min(split_size, n - start));
  return split_sizes(a, sizes, d);
}

std::vector<Tensor> split(const Tensor& a, IntArrayRef split_sizes, int64_t dim) {
  return split_by_sizes("tl::split", a, split_sizes, dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& a, IntArrayRef split_sizes, int64_t dim) {
  return split_by_sizes("tl::split_with_sizes", a, split_sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  constexpr const char* op = "tl::chunk";
  const int64_t d = dim_of(a, dim, op);
  if (chunks <= 0) fail<ShapeError>(op, "chunks must be positive, got ", chunks);
  const int64_t n = a.shape()[d];
  if (n == 0) return split_sizes(a, std::vector<int64_t>(chunks, 0), d);  // as torch
  const int64_t size = (n + chunks - 1) / chunks;
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < n; start += size) sizes.push_back(std::min(size, n - start));
  return split_sizes(a, sizes, d);
}

std::vector<Tensor> unbind(const Tensor& a, int64_t dim) {
  const int64_t d = dim_of(a, dim, "tl::unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < a.shape()[d]; ++i) out.push_back(a.select(d, i));
  return out;
}

Tensor movedim(const Tensor& a, IntArrayRef source, IntArrayRef destination) {
  constexpr const char* op = "tl::movedim";
  check_defined(a, op);
  if (source.size() != destination.size())
    fail<ShapeError>(op, "source and destination must have the same number of dims, got ", source,
                     " and ", destination);
  const int64_t nd = a.dim();
  std::vector<int64_t> perm(std::max<int64_t>(nd, 0), -1);
  std::vector<bool> used_src(nd, false), used_dst(nd, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], nd, op), t = wrap_dim(destination[i], nd, op);
    if (nd == 0) continue;
    if (used_src[s]) fail<IndexError>(op, "repeated dim ", s, " in source");
    if (used_dst[t]) fail<IndexError>(op, "repeated dim ", t, " in destination");
    used_src[s] = used_dst[t] = true;
    perm[t] = s;
  }
  int64_t next = 0;
  for (int64_t t = 0; t < nd; ++t) {
    if (perm[t] >= 0) continue;
    while (used_src[next]) ++next;
    perm[t] = next++;
  }
  return nd == 0 ? a : a.permute(perm);
}

Tensor movedim(const Tensor& a, int64_t source, int64_t destination) {
  return movedim(a, IntArrayRef(source), IntArrayRef(destination));
}

Tensor broadcast_to(const Tensor& a, IntArrayRef size) {
  check_defined(a, "tl::broadcast_to");
  return a.expand(size);
}

Tensor diagonal(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2) {
  constexpr const char* op = "tl::diagonal";
  check_defined(a, op);
  if (a.dim() < 2) fail<ShapeError>(op, "expected at least 2 dims, got ", a.dim());
  const int64_t d1 = wrap_dim(dim1, a.dim(), op), d2 = wrap_dim(dim2, a.dim(), op);
  if (d1 == d2) fail<IndexError>(op, "diagonal dimensions cannot be identical ", d1, ", ", d2);
  const int64_t n1 = a.shape()[d1], n2 = a.shape()[d2];
  const int64_t size =
      std::max<int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  int64_t start = a.offset();
  if (size > 0) start += offset >= 0 ? offset * a.strides()[d2] : -offset * a.strides()[d1];
  Shape shape, strides;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    shape.push_back(a.shape()[d]);
    strides.push_back(a.strides()[d]);
  }
  shape.push_back(size);
  strides.push_back(a.strides()[d1] + a.strides()[d2]);
  // In a graph: the view made below autograd (as_strided has no derivative), one
  // DiagonalBackward0 node.
  return autograd::recorded_op(
      {&a}, [&] { return a.as_strided(shape, strides, start); },
      [&](const Tensor& out) { autograd::record_diagonal(false, a, offset, d1, d2, out); });
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  constexpr const char* op = "tl::meshgrid";
  if (indexing != "ij" && indexing != "xy")
    fail<Error>(op, "indexing must be \"ij\" or \"xy\", got \"", indexing, "\"");
  if (tensors.empty()) fail<ShapeError>(op, "expects a non-empty list of tensors");
  const size_t n = tensors.size();
  std::vector<size_t> pos(n);
  std::iota(pos.begin(), pos.end(), 0);
  if (indexing == "xy" && n >= 2) std::swap(pos[0], pos[1]);
  Shape shape = Shape::filled(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = tensors[i];
    check_defined(t, op);
    if (t.dim() > 1) fail<ShapeError>(op, "expects 0-D or 1-D tensors, got ", t.dim(), "-D");
    if (!(t.device() == tensors[0].device()) || t.dtype() != tensors[0].dtype())
      fail<DTypeError>(op, "expects all tensors to have the same dtype and device");
    shape[pos[i]] = t.numel();
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    Shape view = Shape::filled(n, 1);
    view[pos[i]] = tensors[i].numel();
    out.push_back(tensors[i].reshape(view).expand(shape));
  }
  return out;
}

Tensor repeat(const Tensor& a, IntArrayRef repeats) {
  constexpr const char* op = "tl::repeat";
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  const int64_t nr = static_cast<int64_t>(repeats.size());
  if (nr < a.dim())
    fail<ShapeError>(op, "number of repeat dims (", nr,
                     ") can not be smaller than the number of tensor dims (", a.dim(), ")");
  for (int64_t r : repeats)
    if (r < 0) fail<ShapeError>(op, "repeats must be non-negative, got ", repeats);
  const int64_t pad = nr - a.dim();
  Shape interleaved, expanded, result;
  for (int64_t d = 0; d < nr; ++d) {
    const int64_t s = d < pad ? 1 : a.shape()[d - pad];
    interleaved.push_back(1);
    interleaved.push_back(s);
    expanded.push_back(repeats[d]);
    expanded.push_back(s);
    int64_t n = 0;
    if (!checked_mul(repeats[d], s, &n))
      fail<ShapeError>(op, "the result's size overflows int64: ", a.shape(), " by ", repeats);
    result.push_back(n);
  }
  int64_t total = 0;
  if (!checked_numel(result, &total))
    fail<ShapeError>(op, "the result's size overflows int64: ", result);
  return a.reshape(interleaved).expand(expanded).contiguous().view(result);
}

// A composite over repeat, as torch's tile: the profiler shows tl::tile holding tl::repeat, and
// errors name tl::tile.
Tensor tile(const Tensor& a, IntArrayRef reps) {
  constexpr const char* op = "tl::tile";
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  Shape full(reps);
  while (full.size() < a.dim()) full.insert(0, 1);
  return repeat(a, full);
}

Tensor flip(const Tensor& a, const DimList& dims) {
  constexpr const char* op = "tl::flip";
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  std::vector<bool> seen(std::max<int64_t>(a.dim(), 1), false);
  Tensor out = a;
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, a.dim(), op);
    if (seen[d]) fail<IndexError>(op, "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    if (a.dim() == 0 || a.shape()[d] < 2) continue;
    const int64_t n = a.shape()[d];
    out = index_select(out, d, arange(n - 1, -1, -1, TensorOptions(kInt64).device(a.device())));
  }
  return out.is_same(a) ? a.clone() : out;
}

Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims) {
  constexpr const char* op = "tl::roll";
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  if (!dims.empty()) return roll_dims(op, a, shifts, dims);
  if (shifts.size() != 1) fail<ShapeError>(op, "without dims, expects one shift, got ", shifts);
  return roll_dims(op, a.flatten(), shifts, 0).view(a.shape());
}

namespace {

// Keeps the elements of the last two dims where col - row compares with k as `lower` asks.
Tensor triangle(const char* op, const Tensor& a, int64_t k, bool lower) {
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  if (a.dim() < 2)
    fail<ShapeError>(op, "input tensor must have at least 2 dimensions, got ", a.dim());
  const TensorOptions index = TensorOptions(kInt64).device(a.device());
  const Tensor rows = arange(a.shape()[a.dim() - 2], index).unsqueeze(1);
  const Tensor cols = arange(a.shape()[a.dim() - 1], index);
  const Tensor offset = sub(cols, rows);
  const Tensor keep = lower ? le(offset, k) : ge(offset, k);
  return where(keep, a, a.dtype() == kBool ? Scalar(false) : Scalar(0));
}

}  // namespace

Tensor tril(const Tensor& a, int64_t diagonal) { return triangle("tl::tril", a, diagonal, true); }
Tensor triu(const Tensor& a, int64_t diagonal) { return triangle("tl::triu", a, diagonal, false); }

Tensor diag(const Tensor& a, int64_t k) {
  constexpr const char* op = "tl::diag";
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  if (a.dim() == 2) return diagonal(a, k).clone();
  if (a.dim() != 1) fail<ShapeError>(op, "expected a 1-D or 2-D tensor, got ", a.dim(), "-D");
  const int64_t n = side_with_offset(op, a.numel(), k);
  return autograd::recorded_op(
      {&a},
      [&] {
        Tensor out = zeros({n, n}, a.options());
        diagonal(out, k).copy_(a);
        return out;
      },
      [&](const Tensor& out) { autograd::record_diagonal(true, a, k, 0, 1, out); });
}

Tensor diag_embed(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2) {
  constexpr const char* op = "tl::diag_embed";
  profiler::OpScope scope(op);
  scope.inputs({&a});
  check_defined(a, op);
  const int64_t nd = a.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, nd, op), d2 = wrap_dim(dim2, nd, op);
  if (d1 == d2) fail<IndexError>(op, "diagonal dimensions cannot be identical ", d1, ", ", d2);
  const int64_t last = a.dim() == 0 ? 1 : a.shape()[a.dim() - 1];
  const int64_t n = side_with_offset(op, last, offset);
  Shape shape;
  int64_t next = 0;
  for (int64_t d = 0; d < nd; ++d) shape.push_back(d == d1 || d == d2 ? n : a.shape()[next++]);
  return autograd::recorded_op(
      {&a},
      [&] {
        Tensor out = zeros(shape, a.options());
        diagonal(out, offset, d1, d2).copy_(a.dim() == 0 ? a.reshape({1}) : a);
        return out;
      },
      [&](const Tensor& out) { autograd::record_diagonal(true, a, offset, d1, d2, out); });
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  constexpr const char* op = "tl::one_hot";
  profiler::OpScope scope(op);
  scope.inputs({&indices});
  check_defined(indices, op);
  if (indices.dtype() != kInt64)
    fail<DTypeError>(op, "one_hot is only applicable to index (int64) tensors, got ",
                     indices.dtype());
  if (num_classes < -1) fail<ShapeError>(op, "num_classes must be -1 or non-negative");
  if (indices.numel() == 0) {
    if (num_classes == -1)
      fail<ShapeError>(op, "can not infer the total number of classes from an empty tensor");
  } else {
    if (amin(indices).item<int64_t>() < 0)
      fail<IndexError>(op, "class values must be non-negative");
    const int64_t top = amax(indices).item<int64_t>();
    if (num_classes == -1) num_classes = top + 1;
    if (top >= num_classes)
      fail<IndexError>(op, "class values must be smaller than num_classes (", num_classes, ")");
  }
  const Tensor classes = arange(num_classes, TensorOptions(kInt64).device(indices.device()));
  return eq(indices.unsqueeze(-1), classes).to(kInt64);
}

}  // namespace tensorlet

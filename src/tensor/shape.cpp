// Shape storage, printing, strides and dim wrapping.
#include "tensorlet/tensor/shape.h"

#include <sstream>

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet {

static void check_capacity(size_t n) {
  if (n > static_cast<size_t>(kMaxDims))
    fail<ShapeError>("tl::Shape", "at most ", kMaxDims, " dims are supported, got ", n);
}

void Shape::assign(const int64_t* p, size_t n) {
  check_capacity(n);
  std::copy(p, p + n, dims_);
  size_ = static_cast<int64_t>(n);
}

Shape Shape::filled(int64_t n, int64_t fill) {
  Shape s;
  s.resize(n, fill);
  return s;
}

void Shape::push_back(int64_t v) {
  check_capacity(size_ + 1);
  dims_[size_++] = v;
}

void Shape::insert(int64_t pos, int64_t v) {
  check_capacity(size_ + 1);
  std::copy_backward(dims_ + pos, dims_ + size_, dims_ + size_ + 1);
  dims_[pos] = v;
  ++size_;
}

void Shape::erase(int64_t pos) {
  std::copy(dims_ + pos + 1, dims_ + size_, dims_ + pos);
  --size_;
}

void Shape::resize(int64_t n, int64_t fill) {
  check_capacity(n);
  for (int64_t i = size_; i < n; ++i) dims_[i] = fill;
  size_ = n;
}

bool checked_numel(const Shape& shape, int64_t* out) {
  int64_t n = 1, strides = 1;
  bool ok = true;
  for (int64_t d : shape) {
    ok = ok && checked_mul(n, d, &n) && checked_mul(strides, std::max<int64_t>(d, 1), &strides);
    if (!ok) return false;
  }
  *out = n;
  return true;
}

[[noreturn]] static void fail_overflow(const Shape& shape, const char* fallback,
                                       const char* detail) {
  fail<ShapeError>(profiler::user_op_or(fallback),
                   "Storage size calculation overflowed with sizes=", shape, detail);
}

int64_t Shape::numel() const {
  int64_t n = 1;
  // The common case (every product fits) costs one overflow flag per dim.
  if (!checked_numel(*this, &n)) fail_overflow(*this, "tl::Shape::numel", "");
  return n;
}

int64_t checked_nbytes(const Shape& shape, size_t element_size, const char* fallback) {
  int64_t n = 0, bytes = 0;
  if (!checked_numel(shape, &n)) fail_overflow(shape, fallback, "");
  if (!checked_mul(n, static_cast<int64_t>(element_size), &bytes))
    fail_overflow(shape, fallback, " (the byte count does not fit int64)");
  return bytes;
}

std::string Shape::str() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  os << "[";
  for (int64_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  return os << "]";
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = Shape::filled(shape.size(), 1);
  int64_t running = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    strides[i] = running;
    if (!checked_mul(running, std::max<int64_t>(shape[i], 1), &running))
      fail_overflow(shape, "tl::contiguous_strides", "");
  }
  return strides;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  if (dim < lo || dim > hi)
    fail<IndexError>(op, "dimension out of range (expected to be in range of [", lo, ", ", hi,
                     "], but got ", dim, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

}  // namespace tensorlet

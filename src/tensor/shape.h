// Shape: a fixed-capacity list of int64 extents (also used for strides); no heap allocation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace tensorlet {

// PyTorch has no small fixed limit, but 16 dims covers every real use and keeps shapes inline.
inline constexpr int kMaxDims = 16;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.size()); }
  Shape(std::span<const int64_t> dims) { assign(dims.data(), dims.size()); }
  Shape(const std::vector<int64_t>& dims) { assign(dims.data(), dims.size()); }
  // A shape of n dims, each `fill`.
  static Shape filled(int64_t n, int64_t fill);

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](int64_t i) const { return dims_[i]; }
  int64_t& operator[](int64_t i) { return dims_[i]; }
  const int64_t* data() const { return dims_; }
  int64_t* data() { return dims_; }
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + size_; }
  int64_t* begin() { return dims_; }
  int64_t* end() { return dims_ + size_; }
  int64_t back() const { return dims_[size_ - 1]; }

  void push_back(int64_t v);
  void insert(int64_t pos, int64_t v);
  void erase(int64_t pos);
  void resize(int64_t n, int64_t fill = 0);

  // Product of all extents (1 for a 0-dim shape). Throws ShapeError, naming the user's op, when
  // the extents' product (or a contiguous stride of them) does not fit int64.
  int64_t numel() const;
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  std::string str() const;  // "[2, 3]"

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void assign(const int64_t* p, size_t n);
  int64_t dims_[kMaxDims] = {};
  int64_t size_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

// a * b into *out; false (and *out unspecified) when the product does not fit int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// The element count of `shape` into *out; false when it, or any contiguous stride of the shape
// (the product of the extents with zeros counted as ones), does not fit int64. A zero-size
// shape counts 0 elements, but its strides must still fit, so that no stride ever wraps.
bool checked_numel(const Shape& shape, int64_t* out);

// numel * element_size in bytes, throwing ShapeError "[op] Storage size calculation overflowed
// ..." when it does not fit int64 (op: the user's op, else `fallback`).
int64_t checked_nbytes(const Shape& shape, size_t element_size, const char* fallback);

// Row-major strides (in elements) for a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);

// Wraps a possibly negative dim into [0, ndim); throws IndexError naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tensorlet

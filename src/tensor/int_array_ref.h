// IntArrayRef: the list of integers a public function takes (sizes, dims, shifts, repeats), as
// LibTorch's c10::IntArrayRef: one integer, a braced list, a std::vector, a Shape or a span.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <type_traits>
#include <vector>

namespace tensorlet {

class IntArrayRef;

namespace detail {
// One integer taken as a list of one; bool and floating types are not (`tl::zeros(2.5)` does not
// compile).
template <typename T>
concept ListInteger = std::integral<T> && !std::is_same_v<T, bool>;
// A contiguous range of int64 the caller keeps: std::vector, Shape, std::span, std::array.
template <typename C>
concept Int64Range = !std::is_same_v<std::remove_cvref_t<C>, IntArrayRef> && requires(const C& c) {
  { c.data() } -> std::convertible_to<const int64_t*>;
  { c.size() } -> std::convertible_to<size_t>;
};
}  // namespace detail

// A read-only view, taken by value as a parameter and never kept: a braced list's array lives
// only until the end of the full expression that holds the call. One integer is a list of one
// (`tl::zeros(5)`, `x.roll(1, 0)`), held inline so that even a copy kept too long stays valid.
class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;  // the empty list; `{}` picks this one too
  template <detail::ListInteger I>
  constexpr IntArrayRef(I one) : one_(static_cast<int64_t>(one)), size_(1) {}  // NOLINT: x.sum(1)
// GCC warns that keeping list.begin() does not extend the array's life: true, and why an
// IntArrayRef is a parameter type only (the array outlives the call it is passed to).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr IntArrayRef(std::initializer_list<int64_t> list)  // NOLINT: `x.permute({1, 0})`
      : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <detail::Int64Range C>
  constexpr IntArrayRef(const C& c)  // NOLINT: a built list, `tl::zeros(x.shape())`
      : data_(c.data()), size_(static_cast<size_t>(c.size())) {}

  constexpr const int64_t* data() const { return data_ ? data_ : &one_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* begin() const { return data(); }
  constexpr const int64_t* end() const { return data() + size_; }
  constexpr int64_t operator[](size_t i) const { return data()[i]; }
  constexpr int64_t back() const { return data()[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  // What Shape (tensor/shape.h) is built from: `Shape(sizes)`.
  constexpr operator std::span<const int64_t>() const { return {data(), size_}; }  // NOLINT

  // "[2, 3]", as a Shape prints, in error messages.
  friend std::ostream& operator<<(std::ostream& os, IntArrayRef list) {
    os << '[';
    for (size_t i = 0; i < list.size(); ++i) os << (i ? ", " : "") << list[i];
    return os << ']';
  }

 private:
  const int64_t* data_ = nullptr;  // null: the list is one_ (or empty)
  int64_t one_ = 0;
  size_t size_ = 0;
};

}  // namespace tensorlet

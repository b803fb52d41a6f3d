// TensorIndex: one item of x.index({...}) / x.index_put_({...}, v), as torch::indexing's.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {
namespace indexing {

// `...`: as many full slices as the other items leave dims.
struct EllipsisIndexType {
  explicit constexpr EllipsisIndexType() = default;
};
inline constexpr EllipsisIndexType Ellipsis{};
// A new axis of size 1 (x[None]); also an open end of a Slice: Slice(None, 3).
inline constexpr std::nullopt_t None = std::nullopt;

// start:stop:step with Python's rules (negative start/stop count from the end, out-of-range ends
// clamp); an absent end is open, an absent step is 1. A step must be positive (torch refuses
// negative steps), checked where the slice is applied.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt,  // NOLINT: Slice(1, 3) as LibTorch
        std::optional<int64_t> stop = std::nullopt, std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step.value_or(1)) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

enum class TensorIndexType { None, Ellipsis, Integer, Boolean, Slice, Tensor };

// Implicit from every item torch's x[...] takes: an integer, a bool, None, Ellipsis (or the
// string "..."), a Slice, or a Tensor (int64/int32 indices, bool/uint8 masks).
class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}         // NOLINT: implicit
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}  // NOLINT: implicit
  // Only "..." (IndexError otherwise, when the index is applied).
  TensorIndex(const char* text);  // NOLINT: implicit
  template <std::integral I>
  requires(!std::same_as<I, bool>) TensorIndex(I value)  // NOLINT: implicit
      : type_(TensorIndexType::Integer), integer_(static_cast<int64_t>(value)) {}
  TensorIndex(bool value) : type_(TensorIndexType::Boolean), boolean_(value) {}  // NOLINT
  TensorIndex(Slice slice) : type_(TensorIndexType::Slice), slice_(slice) {}     // NOLINT
  TensorIndex(Tensor tensor)                                                     // NOLINT: implicit
      : type_(TensorIndexType::Tensor), tensor_(std::move(tensor)) {}

  TensorIndexType type() const { return type_; }
  bool is_none() const { return type_ == TensorIndexType::None; }
  bool is_ellipsis() const { return type_ == TensorIndexType::Ellipsis; }
  bool is_integer() const { return type_ == TensorIndexType::Integer; }
  bool is_boolean() const { return type_ == TensorIndexType::Boolean; }
  bool is_slice() const { return type_ == TensorIndexType::Slice; }
  bool is_tensor() const { return type_ == TensorIndexType::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }
  // Set for a string other than "...": the index is refused when applied.
  bool bad_string() const { return bad_string_; }

 private:
  TensorIndexType type_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  bool bad_string_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace indexing

// x.index({Slice(), None, Ellipsis}) reads as LibTorch's torch::indexing names at tl level too.
using indexing::Ellipsis;
using indexing::None;
using indexing::Slice;
using indexing::TensorIndex;

}  // namespace tensorlet

// IValue: the value type of a custom Function's ctx->saved_data (LibTorch's c10::IValue, reduced
// to what a backward keeps: none, bool, int, double, string, tensor, and lists of those).
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

class IValue {
 public:
  IValue() = default;  // None
  IValue(bool v) : value_(v) {}
  // Every integer type is an Int (int64), as in LibTorch.
  template <std::integral I>
  requires(!std::same_as<I, bool>) IValue(I v) : value_(static_cast<int64_t>(v)) {}
  IValue(double v) : value_(v) {}
  IValue(float v) : value_(static_cast<double>(v)) {}
  IValue(const char* v) : value_(std::string(v)) {}
  IValue(std::string v) : value_(std::move(v)) {}
  IValue(Tensor v) : value_(std::move(v)) {}
  IValue(std::vector<int64_t> v) : value_(std::move(v)) {}
  IValue(std::vector<double> v) : value_(std::move(v)) {}
  IValue(std::vector<Tensor> v) : value_(std::move(v)) {}

  bool isNone() const { return value_.index() == 0; }
  bool isBool() const { return std::holds_alternative<bool>(value_); }
  bool isInt() const { return std::holds_alternative<int64_t>(value_); }
  bool isDouble() const { return std::holds_alternative<double>(value_); }
  bool isString() const { return std::holds_alternative<std::string>(value_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(value_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(value_); }
  bool isDoubleList() const { return std::holds_alternative<std::vector<double>>(value_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<Tensor>>(value_); }

  // Each raises DTypeError naming the kind held when it holds another (LibTorch: "Expected Int
  // but got Double"); no conversion between Int and Double, as there.
  bool toBool() const { return get<bool>("toBool", "Bool"); }
  int64_t toInt() const { return get<int64_t>("toInt", "Int"); }
  double toDouble() const { return get<double>("toDouble", "Double"); }
  const std::string& toStringRef() const { return get<std::string>("toStringRef", "String"); }
  Tensor toTensor() const { return get<Tensor>("toTensor", "Tensor"); }
  std::vector<int64_t> toIntVector() const {
    return get<std::vector<int64_t>>("toIntVector", "IntList");
  }
  std::vector<double> toDoubleVector() const {
    return get<std::vector<double>>("toDoubleVector", "DoubleList");
  }
  std::vector<Tensor> toTensorVector() const {
    return get<std::vector<Tensor>>("toTensorVector", "TensorList");
  }
  // "None", "Bool", "Int", "Double", "String", "Tensor", "IntList", "DoubleList", "TensorList".
  std::string tagKind() const;

 private:
  template <typename T>
  const T& get(const char* method, const char* kind) const {
    if (const T* v = std::get_if<T>(&value_)) return *v;
    fail_kind(method, kind);
  }
  [[noreturn]] void fail_kind(const char* method, const char* kind) const;

  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<int64_t>,
               std::vector<double>, std::vector<Tensor>>
      value_;
};

namespace autograd {
using tensorlet::IValue;
}  // namespace autograd

}  // namespace tensorlet

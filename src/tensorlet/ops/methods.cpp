// Tensor's method forms, forwarding to the op free functions.
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/scan.h"

namespace tensorlet {

Tensor Tensor::matmul(const Tensor& other) const { return tensorlet::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return tensorlet::mm(*this, other); }
Tensor Tensor::sum(const DimList& dims, bool keepdim) const {
  return tensorlet::sum(*this, dims, keepdim);
}
Tensor Tensor::prod(const DimList& dims, bool keepdim) const {
  return tensorlet::prod(*this, dims, keepdim);
}
Tensor Tensor::mean(const DimList& dims, bool keepdim) const {
  return tensorlet::mean(*this, dims, keepdim);
}
Tensor Tensor::amax(const DimList& dims, bool keepdim) const {
  return tensorlet::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(const DimList& dims, bool keepdim) const {
  return tensorlet::amin(*this, dims, keepdim);
}
Tensor Tensor::all(const DimList& dims, bool keepdim) const {
  return tensorlet::all(*this, dims, keepdim);
}
Tensor Tensor::any(const DimList& dims, bool keepdim) const {
  return tensorlet::any(*this, dims, keepdim);
}
Tensor Tensor::max() const { return tensorlet::max(*this); }
Tensor Tensor::min() const { return tensorlet::min(*this); }
ValuesIndices Tensor::max(int64_t dim, bool keepdim) const {
  return tensorlet::max(*this, dim, keepdim);
}
ValuesIndices Tensor::min(int64_t dim, bool keepdim) const {
  return tensorlet::min(*this, dim, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return tensorlet::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return tensorlet::argmin(*this, dim, keepdim);
}
Tensor Tensor::softmax(int64_t dim, std::optional<DType> dtype) const {
  return tensorlet::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> dtype) const {
  return tensorlet::log_softmax(*this, dim, dtype);
}
Tensor Tensor::logsumexp(const DimList& dims, bool keepdim) const {
  return tensorlet::logsumexp(*this, dims, keepdim);
}
Tensor Tensor::var(const DimList& dims, double correction, bool keepdim) const {
  return tensorlet::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(const DimList& dims, double correction, bool keepdim) const {
  return tensorlet::std(*this, dims, correction, keepdim);
}
Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype) const {
  return tensorlet::cumsum(*this, dim, dtype);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype) const {
  return tensorlet::cumprod(*this, dim, dtype);
}
ValuesIndices Tensor::cummax(int64_t dim) const { return tensorlet::cummax(*this, dim); }
ValuesIndices Tensor::cummin(int64_t dim) const { return tensorlet::cummin(*this, dim); }
Tensor Tensor::pow(const Tensor& exponent) const { return tensorlet::pow(*this, exponent); }
Tensor Tensor::pow(Scalar exponent) const { return tensorlet::pow(*this, exponent); }
Tensor Tensor::nonzero() const { return tensorlet::nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const {
  return tensorlet::masked_select(*this, mask);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return tensorlet::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return tensorlet::gather(*this, dim, index);
}

}  // namespace tensorlet

// Tensor's method forms, forwarding to the op free functions.
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/ordering.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/shape_ops.h"
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
ValuesIndices Tensor::sort(int64_t dim, bool descending, bool stable) const {
  return tensorlet::sort(*this, dim, descending, stable);
}
Tensor Tensor::argsort(int64_t dim, bool descending, bool stable) const {
  return tensorlet::argsort(*this, dim, descending, stable);
}
ValuesIndices Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return tensorlet::topk(*this, k, dim, largest, sorted);
}
ValuesIndices Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return tensorlet::kthvalue(*this, k, dim, keepdim);
}
UniqueResult Tensor::unique(bool sorted, bool return_inverse, bool return_counts,
                            std::optional<int64_t> dim) const {
  return tensorlet::unique(*this, sorted, return_inverse, return_counts, dim);
}
UniqueResult Tensor::unique_consecutive(bool return_inverse, bool return_counts,
                                        std::optional<int64_t> dim) const {
  return tensorlet::unique_consecutive(*this, return_inverse, return_counts, dim);
}
Tensor Tensor::bincount(const Tensor& weights, int64_t minlength) const {
  return tensorlet::bincount(*this, weights, minlength);
}
Tensor Tensor::histc(int64_t bins, Scalar min, Scalar max) const {
  return tensorlet::histc(*this, bins, min, max);
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

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return tensorlet::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t dim) const {
  return tensorlet::split(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t dim) const {
  return tensorlet::split_with_sizes(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return tensorlet::chunk(*this, chunks, dim);
}
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return tensorlet::unbind(*this, dim); }
Tensor Tensor::movedim(int64_t source, int64_t destination) const {
  return tensorlet::movedim(*this, source, destination);
}
Tensor Tensor::movedim(IntArrayRef source, IntArrayRef destination) const {
  return tensorlet::movedim(*this, source, destination);
}
Tensor Tensor::broadcast_to(IntArrayRef size) const { return tensorlet::broadcast_to(*this, size); }
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return tensorlet::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::repeat(IntArrayRef repeats) const { return tensorlet::repeat(*this, repeats); }
Tensor Tensor::tile(IntArrayRef reps) const { return tensorlet::tile(*this, reps); }
Tensor Tensor::flip(const DimList& dims) const { return tensorlet::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const {
  return tensorlet::roll(*this, shifts, dims);
}
Tensor Tensor::tril(int64_t diagonal) const { return tensorlet::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return tensorlet::triu(*this, diagonal); }

}  // namespace tensorlet

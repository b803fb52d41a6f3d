// Tensor: a handle to (storage, shape, strides, offset, dtype); copies share, views share storage.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensorlet/tensor/accessor.h"
#include "tensorlet/tensor/device.h"
#include "tensorlet/tensor/dim_list.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/generator.h"
#include "tensorlet/tensor/hook_handle.h"
#include "tensorlet/tensor/int_array_ref.h"
#include "tensorlet/tensor/scalar.h"
#include "tensorlet/tensor/shape.h"
#include "tensorlet/tensor/storage.h"
#include "tensorlet/tensor/tensor_options.h"

namespace tensorlet {

// The element type of some dtype (TL_DTYPES). Checking it instantiates dtype_of<T>, so another
// type (uint16_t, long long) stops compilation at the call with dtype_of's static_assert, which
// lists the supported types, instead of failing at link time.
template <typename T>
concept ElementType = sizeof(dtype_of<T>) > 0;

namespace autograd {
struct AutogradMeta;  // src/autograd/autograd_meta.h
class Node;
}  // namespace autograd

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;       // in elements
  int64_t offset = 0;  // in elements
  DType dtype = kFloat32;
  // Autograd's state of this tensor (requires_grad, grad, grad_fn); null for a tensor autograd
  // never saw, so an op checks one pointer per input to know it has nothing to record.
  std::shared_ptr<autograd::AutogradMeta> autograd;
};

struct ValuesIndices;
namespace indexing {
class TensorIndex;
}
struct UniqueResult;

class Tensor {
 public:
  Tensor() = default;  // undefined; most ops throw on it
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Plain assignment rebinds the handle; assigning into an rvalue (a view such as `res[i] = t`)
  // writes into its elements, as in LibTorch.
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& src) &&;
  Tensor& operator=(Scalar value) &&;
  ~Tensor() = default;

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  const Shape& sizes() const { return impl().shape; }
  const Shape& strides() const { return impl().strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl().shape.size(); }
  int64_t ndim() const { return dim(); }
  int64_t numel() const { return impl().shape.numel(); }
  int64_t offset() const { return impl().offset; }
  DType dtype() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  size_t element_size() const { return tensorlet::element_size(dtype()); }
  size_t nbytes() const { return numel() * element_size(); }
  bool is_contiguous() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  // True for CPU tensors in page-locked memory (pin_memory(), or the pinned_memory option).
  bool is_pinned() const { return storage()->pinned(); }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // Address of the first element (storage base + offset).
  void* data_ptr() const;
  // Typed pointer; throws DTypeError when T does not match dtype().
  template <ElementType T>
  T* data() const;

  // Element access at raw-pointer speed, as LibTorch's (tensor/accessor.h): a[i][j] through
  // the strides. T must be the dtype's element type (const allowed) and N the rank (DTypeError,
  // ShapeError otherwise); accessor() is for CPU tensors (DeviceError), the packed ones for any
  // device, packed_accessor32 when every size, stride and offset fits int32 (tl::Error). Not on a
  // temporary tensor: an accessor borrows the tensor's sizes and strides.
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const&;
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() && = delete;
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const&;
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() && = delete;

  // ---- autograd (src/autograd/), LibTorch's names ----
  // Whether gradients flow to (or through) this tensor; true for a floating leaf after
  // requires_grad_() and for results of differentiable ops with such an input in grad mode.
  bool requires_grad() const;
  // Makes this leaf track gradients (or stop); DTypeError for a non-floating tensor, Error for a
  // non-leaf asked to stop.
  Tensor& requires_grad_(bool requires_grad = true);
  // True unless the tensor is the result of a recorded op (it has a grad_fn).
  bool is_leaf() const;
  // The gradient accumulated by backward(); undefined until one reaches this tensor.
  const Tensor& grad() const;
  Tensor& mutable_grad();
  // Keeps the gradient of a non-leaf in grad() during backward.
  void retain_grad() const;
  bool retains_grad() const;
  // The node that computes this tensor's gradient's contributions (null for a leaf).
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  // Which output of grad_fn this tensor is.
  uint32_t output_nr() const;
  // Shares the data, outside any graph.
  Tensor detach() const;
  Tensor& detach_();
  // This tensor's data becomes new_data's (storage, shape, strides, dtype, device) while it keeps
  // its identity and autograd state: every handle to it sees the change (LibTorch's set_data;
  // nn::Module::to moves parameters with it). Error for an undefined tensor, a non-leaf, and a
  // tensor requiring grad given non-floating data.
  void set_data(const Tensor& new_data) const;
  // This tensor's data, outside any graph (LibTorch's data(): detach()).
  Tensor data() const { return detach(); }
  // Runs backward from this tensor: `gradient` may be left out for a one-element tensor.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, const std::vector<Tensor>& inputs = {}) const;
  // The number of in-place writes to this tensor's storage (torch's _version); Error for an
  // inference tensor, which tracks none (torch).
  uint32_t _version() const;
  // Whether the tensor's memory was allocated inside InferenceMode (tensor/inference_mode.h).
  bool is_inference() const { return defined() && storage()->inference(); }
  // A gradient hook (torch's Tensor.register_hook): fn(grad) runs each time backward computes the
  // gradient with respect to this tensor, before it is used: a leaf's before it is added into
  // grad(), a non-leaf's before it flows into grad_fn. A defined Tensor it returns replaces the
  // gradient (same shape, dtype and device, else the backward call raises); void or an undefined
  // Tensor keeps it. Hooks run in registration order, each seeing the previous one's result.
  // Error when the tensor does not require grad. The handle (or its position) removes it.
  template <typename F>
  autograd::HookHandle register_hook(F&& fn) const;
  // Leaves only (Error otherwise): fn(*this) runs after backward updated grad() (torch's
  // register_post_accumulate_grad_hook; not run by autograd::grad, which accumulates nothing).
  template <typename F>
  autograd::HookHandle register_post_accumulate_grad_hook(F&& fn) const;
  // LibTorch's remove_hook(pos): removes the gradient hook at that position (IndexError when
  // there is none); with a handle, the hook it names. Removing twice does nothing.
  void remove_hook(unsigned pos) const;
  void remove_hook(autograd::HookHandle handle) const;
  autograd::HookHandle _register_hook(std::function<Tensor(const Tensor&)> fn) const;
  autograd::HookHandle _register_post_accumulate_grad_hook(
      std::function<void(const Tensor&)> fn) const;

  // ---- views (share storage) ----
  // A list of integers is an IntArrayRef (tensor/int_array_ref.h), as in LibTorch: one integer
  // (`x.view(-1)`, `x.roll(1, 0)`) or a braced list (`x.permute({1, 0})`), a vector or a Shape.
  Tensor view(IntArrayRef size) const;     // one dim may be -1
  Tensor reshape(IntArrayRef size) const;  // view when strides allow, else a copy
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor t() const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze(IntArrayRef dims) const;  // each listed dim of size 1
  Tensor expand(IntArrayRef size) const;   // -1 keeps a dim
  Tensor expand_as(const Tensor& other) const { return expand(other.shape()); }
  Tensor as_strided(IntArrayRef size, IntArrayRef stride, int64_t offset) const;

  // ---- copies and conversion ----
  Tensor contiguous() const;  // this when already contiguous
  Tensor clone() const;
  Tensor to(DType dtype) const;  // this when dtype matches
  Tensor to(Device device, bool non_blocking = false) const;
  Tensor to(const TensorOptions& options) const;
  Tensor cpu() const { return to(Device::cpu()); }
  // A copy in page-locked host memory (this when already pinned); CPU tensors only.
  Tensor pin_memory() const;
  Tensor cuda(int index = 0) const { return to(Device::cuda(index)); }

  // ---- host-visible results (synchronize) ----
  // T: the element type of any dtype (TL_DTYPES); another type does not compile.
  template <ElementType T>
  T item() const;
  template <ElementType T>
  std::vector<T> to_vector() const;

  // ---- in place ----
  // non_blocking: a copy between a CUDA device and pinned host memory may return before it ran.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& fill_(Scalar value);
  Tensor& zero_() { return fill_(0); }
  Tensor& add_(const Tensor& other);
  Tensor& add_(Scalar other);
  Tensor& sub_(const Tensor& other);
  Tensor& sub_(Scalar other);
  // self += alpha * other (self -= alpha * other) in one kernel: p.add_(grad, -lr).
  Tensor& add_(const Tensor& other, Scalar alpha);
  Tensor& add_(Scalar other, Scalar alpha);
  Tensor& sub_(const Tensor& other, Scalar alpha);
  Tensor& sub_(Scalar other, Scalar alpha);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator+=(Scalar o) { return add_(o); }
  Tensor& operator-=(Scalar o) { return sub_(o); }
  Tensor& operator*=(Scalar o) { return mul_(o); }
  Tensor& operator/=(Scalar o) { return div_(o); }
  // Unary math ops as methods, and in place, written straight into this tensor's elements (no
  // allocation when the result has this tensor's dtype; exp_ of an integer tensor is refused, as
  // torch). The op list (backends/math/unary_ops.h) generates both definitions.
#define TL_UNARY_METHODS(name) \
  Tensor name() const;         \
  Tensor& name##_();
  TL_UNARY_METHODS(neg)
  TL_UNARY_METHODS(abs)
  TL_UNARY_METHODS(exp)
  TL_UNARY_METHODS(log)
  TL_UNARY_METHODS(sqrt)
  TL_UNARY_METHODS(sin)
  TL_UNARY_METHODS(cos)
  TL_UNARY_METHODS(tanh)
  TL_UNARY_METHODS(sigmoid)
  TL_UNARY_METHODS(relu)
  TL_UNARY_METHODS(logical_not)
  TL_UNARY_METHODS(floor)
  TL_UNARY_METHODS(ceil)
  TL_UNARY_METHODS(trunc)
  TL_UNARY_METHODS(round)
  TL_UNARY_METHODS(sign)
  TL_UNARY_METHODS(square)
  TL_UNARY_METHODS(reciprocal)
  TL_UNARY_METHODS(rsqrt)
  TL_UNARY_METHODS(log1p)
  TL_UNARY_METHODS(expm1)
  TL_UNARY_METHODS(log2)
  TL_UNARY_METHODS(log10)
  TL_UNARY_METHODS(exp2)
  TL_UNARY_METHODS(erf)
  TL_UNARY_METHODS(erfc)
  TL_UNARY_METHODS(tan)
  TL_UNARY_METHODS(sinh)
  TL_UNARY_METHODS(cosh)
  TL_UNARY_METHODS(asin)
  TL_UNARY_METHODS(acos)
  TL_UNARY_METHODS(atan)
  TL_UNARY_METHODS(bitwise_not)
#undef TL_UNARY_METHODS
  // x.isnan(), x.isinf(), x.isfinite(): bool results, no in-place form.
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  // masked_fill_(mask, value): value where mask (bool, broadcast to this shape) is true.
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  // clamp_(min, max): min(max(x, min), max) in place; either bound may be absent.
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  // lerp_, nan_to_num_ (ops/pointwise.h) in place.
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor& lerp_(const Tensor& end, Scalar weight);
  Tensor& nan_to_num_(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);

  // ---- method forms of common ops (see the op headers) ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor outer(const Tensor& other) const;
  // beta * self + alpha * (mat1 @ mat2); addmm_ / baddbmm_ write into self (which must have
  // the result's shape).
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1) const;
  Tensor& addmm_(const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1);
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, Scalar beta = 1,
                 Scalar alpha = 1) const;
  Tensor& baddbmm_(const Tensor& batch1, const Tensor& batch2, Scalar beta = 1, Scalar alpha = 1);
  Tensor sum(const DimList& dims = {}, bool keepdim = false) const;
  Tensor prod(const DimList& dims = {}, bool keepdim = false) const;
  Tensor mean(const DimList& dims = {}, bool keepdim = false) const;
  Tensor amax(const DimList& dims = {}, bool keepdim = false) const;
  Tensor amin(const DimList& dims = {}, bool keepdim = false) const;
  Tensor all(const DimList& dims = {}, bool keepdim = false) const;
  Tensor any(const DimList& dims = {}, bool keepdim = false) const;
  Tensor max() const;  // the largest element, 0-dim (amax takes dims)
  Tensor min() const;
  ValuesIndices max(int64_t dim, bool keepdim = false) const;  // auto [v, i] = x.max(1);
  ValuesIndices min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  // softmax and log_softmax along dim, logsumexp, var and std (ops/numerics.h).
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor logsumexp(const DimList& dims, bool keepdim = false) const;
  Tensor var(const DimList& dims = {}, double correction = 1, bool keepdim = false) const;
  Tensor std(const DimList& dims = {}, double correction = 1, bool keepdim = false) const;
  // sort, argsort, topk and kthvalue (ops/ordering.h): auto [v, i] = x.sort(-1, true);
  ValuesIndices sort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  ValuesIndices topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  ValuesIndices kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  // unique, unique_consecutive, bincount and histc (ops/ordering.h):
  // auto [values, inverse, counts] = x.unique(true, true, true);
  UniqueResult unique(bool sorted = true, bool return_inverse = false, bool return_counts = false,
                      std::optional<int64_t> dim = std::nullopt) const;
  UniqueResult unique_consecutive(bool return_inverse = false, bool return_counts = false,
                                  std::optional<int64_t> dim = std::nullopt) const;
  Tensor bincount(const Tensor& weights = {}, int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, Scalar min = 0, Scalar max = 0) const;
  // cumsum, cumprod, cummax and cummin along dim (ops/scan.h).
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  ValuesIndices cummax(int64_t dim) const;  // auto [v, i] = x.cummax(1);
  ValuesIndices cummin(int64_t dim) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor nonzero() const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  // lerp, isclose, allclose, nan_to_num (ops/pointwise.h).
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor isclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
                 bool equal_nan = false) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
                bool equal_nan = false) const;
  Tensor nan_to_num(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  // Shape ops (ops/shape_ops.h).
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor broadcast_to(IntArrayRef size) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor tile(IntArrayRef reps) const;
  Tensor flip(const DimList& dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  // Advanced indexing, torch's x[...] (ops/advanced_index.h): x.index({0, Slice(1, None), idx}),
  // x.index_put_({mask}, 0.0), x.take(flat), x.put_(flat, source, accumulate).
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values,
                     bool accumulate = false);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value,
                     bool accumulate = false);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values,
                     bool accumulate = false);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value,
                     bool accumulate = false);
  Tensor take(const Tensor& index) const;
  Tensor& put_(const Tensor& index, const Tensor& source, bool accumulate = false);
  Tensor put(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  // The scatter family (ops/scatter.h) and its in-place forms: x.scatter_(1, index, src).
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, Scalar value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(int64_t dim, const Tensor& index, Scalar value);
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self = true) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                          std::string_view reduce, bool include_self = true);
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1);
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
  Tensor index_fill(int64_t dim, const Tensor& index, Scalar value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, Scalar value);
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  // Random fills in place and random methods (ops/random.h), from gen or the device's default
  // generator. uniform_ in [from, to), normal_ N(mean, std^2), exponential_ rate lambd (floating
  // tensors); random_ integers in [from, to) (random_(): [0, 2^mantissa] for floats, the whole
  // non-negative range for integers); bernoulli_ 0/1 with probability p (any dtype).
  Tensor& uniform_(double from = 0, double to = 1,
                   const std::optional<Generator>& gen = std::nullopt);
  Tensor& normal_(double mean = 0, double std = 1,
                  const std::optional<Generator>& gen = std::nullopt);
  Tensor& exponential_(double lambd = 1, const std::optional<Generator>& gen = std::nullopt);
  Tensor& random_(int64_t from, int64_t to, const std::optional<Generator>& gen = std::nullopt);
  Tensor& random_(int64_t to, const std::optional<Generator>& gen = std::nullopt);
  Tensor& random_(const std::optional<Generator>& gen = std::nullopt);
  Tensor& bernoulli_(double p = 0.5, const std::optional<Generator>& gen = std::nullopt);
  Tensor& bernoulli_(const Tensor& p, const std::optional<Generator>& gen = std::nullopt);
  Tensor bernoulli(const std::optional<Generator>& gen = std::nullopt) const;
  Tensor bernoulli(double p, const std::optional<Generator>& gen = std::nullopt) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false,
                     const std::optional<Generator>& gen = std::nullopt) const;

  const TensorImpl& impl() const {
    if (!impl_) throw_undefined();
    return *impl_;
  }
  TensorImpl& mutable_impl() const {
    if (!impl_) throw_undefined();
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

// What torch.max(x, dim), torch.min(x, dim), sort, topk and kthvalue return: the values and their
// int64 indices along the dim, as a struct that structured bindings unpack.
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};

// What unique and unique_consecutive return: the distinct values, and the inverse indices and
// counts when asked for (undefined tensors otherwise). auto [v, inverse, counts] = tl::unique(x);
struct UniqueResult {
  Tensor values;
  Tensor inverse;
  Tensor counts;
};

// Creates a tensor with fresh (uninitialised) contiguous storage.
Tensor make_tensor(const Shape& shape, DType dtype, Device device, bool pinned = false);
// Creates a view sharing `base`'s storage with the given geometry.
Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides, int64_t offset);

// Throws if `t` is undefined, naming `op`.
void check_defined(const Tensor& t, const char* op);

bool equal(const Tensor& a, const Tensor& b);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

template <>
std::vector<bool> Tensor::to_vector<bool>() const;

template <typename F>
autograd::HookHandle Tensor::register_hook(F&& fn) const {
  using Result = std::invoke_result_t<F&, const Tensor&>;
  if constexpr (std::is_void_v<Result>) {
    return _register_hook([fn = std::forward<F>(fn)](const Tensor& grad) mutable {
      fn(grad);
      return Tensor();
    });
  } else {
    static_assert(std::is_convertible_v<Result, Tensor>,
                  "a gradient hook returns a Tensor (the replacement) or void");
    return _register_hook(std::function<Tensor(const Tensor&)>(std::forward<F>(fn)));
  }
}

template <typename F>
autograd::HookHandle Tensor::register_post_accumulate_grad_hook(F&& fn) const {
  return _register_post_accumulate_grad_hook(
      std::function<void(const Tensor&)>(std::forward<F>(fn)));
}

template <ElementType T>
T* Tensor::data() const {
  if (dtype() != dtype_of_v<T>)
    fail<DTypeError>("tl::Tensor::data", "expected dtype ", dtype_of_v<T>, ", got ", dtype());
  return static_cast<T*>(data_ptr());
}

namespace detail {
// The checks of Tensor::accessor and the packed accessors (op: the member's name); index_bits 32
// also checks that sizes, strides and offsets fit int32.
void check_accessor(const Tensor& t, const char* op, DType dtype, size_t rank, bool cpu_only,
                    int index_bits);
}  // namespace detail

template <typename T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  static_assert(N > 0, "accessor is for indexing a tensor; for a scalar use *data<T>()");
  static_assert(ElementType<std::remove_const_t<T>>);
  detail::check_accessor(*this, "tl::Tensor::accessor", dtype_of_v<std::remove_const_t<T>>, N, true,
                         64);
  return {static_cast<T*>(data_ptr()), shape().data(), strides().data()};
}

template <typename T, size_t N, template <typename U> class PtrTraits>
PackedTensorAccessor32<T, N, PtrTraits> Tensor::packed_accessor32() const& {
  static_assert(N > 0, "accessor is for indexing a tensor; for a scalar use *data<T>()");
  static_assert(ElementType<std::remove_const_t<T>>);
  detail::check_accessor(*this, "tl::Tensor::packed_accessor32", dtype_of_v<std::remove_const_t<T>>,
                         N, false, 32);
  return {static_cast<T*>(data_ptr()), shape().data(), strides().data()};
}

template <typename T, size_t N, template <typename U> class PtrTraits>
PackedTensorAccessor64<T, N, PtrTraits> Tensor::packed_accessor64() const& {
  static_assert(N > 0, "accessor is for indexing a tensor; for a scalar use *data<T>()");
  static_assert(ElementType<std::remove_const_t<T>>);
  detail::check_accessor(*this, "tl::Tensor::packed_accessor64", dtype_of_v<std::remove_const_t<T>>,
                         N, false, 64);
  return {static_cast<T*>(data_ptr()), shape().data(), strides().data()};
}

}  // namespace tensorlet

// The index item type, complete wherever Tensor::index is callable.
#include "tensorlet/tensor/tensor_index.h"  // IWYU pragma: export

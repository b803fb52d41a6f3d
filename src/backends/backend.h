// Backend: the one interface every device type implements; op front-ends validate, promote and
// allocate, then call the kernel of the backend for the tensors' device.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tensorlet/backends/math/binary_backward_ops.h"
#include "tensorlet/backends/math/batch_norm_ops.h"
#include "tensorlet/backends/math/binary_ops.h"
#include "tensorlet/backends/math/convolution_args.h"
#include "tensorlet/backends/math/cross_entropy_ops.h"
#include "tensorlet/backends/math/optimizer_ops.h"
#include "tensorlet/backends/math/reduce_ops.h"
#include "tensorlet/backends/math/scan_ops.h"
#include "tensorlet/backends/math/scatter_ops.h"
#include "tensorlet/backends/math/unary_ops.h"
#include "tensorlet/tensor/allocator.h"
#include "tensorlet/tensor/generator.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

enum class RandomKind : uint8_t { Uniform, Normal, Integer, Exponential };

// What Backend::random draws (the layouts: backends/math/philox.h). a and b shape the real
// kinds: Uniform a + u * (b - a) (rand: [0, 1)), Normal a + b * z (mean, std; randn: 0, 1),
// Exponential -log(1 - u) / a (a = lambda).
struct RandomParams {
  RandomKind kind = RandomKind::Uniform;
  uint64_t seed = 0;
  uint64_t offset = 0;  // first Philox block (see backends/math/philox.h)
  // Set by a backend that records work for later (a CUDA graph capture): the kernel reads the
  // seed and a base block from here at run time and draws from block *(philox_base + 1) + offset.
  const uint64_t* philox_base = nullptr;
  int64_t low = 0, high = 0;  // Integer only
  double a = 0, b = 1;        // Uniform, Normal, Exponential
};

// An input of an elementwise kernel (binary, where): a tensor on the kernel's device, broadcast to
// out's shape by its strides (0 on broadcast dims), or a Python-style scalar (`x + 2.5`,
// `where(c, x, 0)`, a clamp bound) passed by value. The front-end has already converted the
// scalar to the kernel's dtype T (an integer one wrapped), except that a float16/bfloat16 op's
// scalar may keep float precision (scalar_in_compute_type in backends/math/binary_ops.h): binary
// kernels read it as scalar.to<compute_t<T>>(), exact either way; where() reads the element
// (element_bits, which rounds). Backends read it once, allocate nothing for it, and
// a device backend passes it to its kernel as a parameter. Like std::string_view it only refers
// to the tensor, which must outlive the call.
struct ElementwiseArg {
  ElementwiseArg(const Tensor& t) : tensor(&t) {}  // NOLINT: implicit, a tensor is the usual input
  explicit ElementwiseArg(Scalar s) : scalar(s) {}
  bool is_scalar() const { return tensor == nullptr; }

  const Tensor* tensor = nullptr;  // null: the input is `scalar`
  Scalar scalar;
};

// `value` as one element of `dtype`, its bytes at the start of the result (memcpy them out; a bool
// is the byte 0 or 1): how bit-moving kernels (where) and kernel launches carry a scalar input.
uint64_t element_bits(Scalar value, DType dtype);

// All shapes below are validated by the front-end. Unless stated, `out` is freshly allocated,
// contiguous and on the same device as the inputs; inputs may have any strides (including 0 for
// broadcast dims). Kernels may run asynchronously on devices that have streams.
class Backend {
 public:
  virtual ~Backend() = default;

  // out[...] = src[...] converted to out's dtype; same shape; out may be any (non-overlapping)
  // strided view. One of src/out may live on another device (host <-> device copies);
  // non_blocking lets a device -> pinned host copy return before it has run.
  virtual void copy(const Tensor& src, const Tensor& out, bool non_blocking = false) = 0;
  // out (any strides) = value.
  virtual void fill(const Tensor& out, Scalar value) = 0;
  // DLPack's stream rules (io/dlpack.cpp) on `device`: exporting, the work enqueued on the
  // current stream so far is ordered before later work on `stream`; importing, the current stream
  // waits for the work already on `stream`. `stream` in DLPack's encoding: 1 (legacy default), 2
  // (per-thread default) or a stream handle. Devices without streams have nothing to order.
  virtual void order_with_stream(Device /*device*/, std::intptr_t /*stream*/, bool /*exporting*/) {}
  // Same shape; in has the op's compute dtype and out its output dtype (backends/math/
  // unary_ops.h). out may be a strided view (in-place ops), possibly the same memory as the input.
  virtual void unary(UnaryOp op, const Tensor& in, const Tensor& out) = 0;
  // a, b broadcast to out's shape, one (compute) dtype, at least one of them a tensor; out has
  // the op's output dtype (backends/math/binary_ops.h: that dtype, or bool for comparisons and
  // logical ops) and may be a (strided) view that is a's memory (in-place ops).
  virtual void binary(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b,
                      const Tensor& out) = 0;
  // out = a + alpha * b (torch.add's alpha), rounded once (backends/math/binary_ops.h:
  // AddScaledFn): a and b tensors of out's dtype broadcast to its shape; alpha a value of that
  // dtype's compute type; out may be a's memory (add_).
  virtual void add_scaled(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) = 0;
  // The pointwise ops with parameters (backends/math/pointwise_ops.h). lerp: start, end and a
  // tensor weight of out's floating dtype broadcast to its shape, or a number weight in that
  // dtype's compute type; out may be start's memory (lerp_).
  virtual void lerp(const Tensor& start, const Tensor& end, const ElementwiseArg& weight,
                    const Tensor& out) = 0;
  // isclose: a and b of one dtype broadcast to the bool out's shape.
  virtual void isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
                       const Tensor& out) = 0;
  // nan_to_num of a floating tensor: in and out of one dtype and shape (out may be in's memory);
  // the replacements are values of that dtype.
  virtual void nan_to_num(const Tensor& in, Scalar nan, Scalar posinf, Scalar neginf,
                          const Tensor& out) = 0;
  // The gradient of a unary op in one pass, grad * op'(x) (backends/math/unary_backward_ops.h):
  // op has a backward kernel (has_backward_kernel); grad and saved (x or y, as backward_saved(op)
  // says) of out's floating dtype and shape, any strides (a broadcast gradient's zeros too); out
  // fresh and contiguous.
  virtual void unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved,
                              const Tensor& out) = 0;
  // One operand's gradient of a binary op in one pass, grad * d op(a, b) / d a or / d b
  // (backends/math/binary_backward_ops.h): grad, a and b of out's floating dtype, a and b expanded
  // to out's shape (stride 0 where broadcast), any strides; out fresh and contiguous.
  virtual void binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a,
                               const Tensor& b, const Tensor& out) = 0;
  // One Adam/AdamW step (backends/math/optimizer_ops.h) of every parameter listed, in place:
  // params, grads, exp_avgs, exp_avg_sqs and, with step.amsgrad, max_exp_avg_sqs (else empty) of
  // one length; every tensor contiguous, of one floating dtype, on this backend's device, the
  // i-th of each list of one numel (none empty). CUDA updates them all in one launch (a table of
  // pointers in the kernel's parameters), as torch's fused=True.
  virtual void fused_adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& exp_avgs,
                          const std::vector<Tensor>& exp_avg_sqs,
                          const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& step) = 0;
  // One SGD step of every parameter listed, in place, as fused_adam: momentum_buffers empty when
  // step.momentum is 0.
  virtual void fused_sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& momentum_buffers, const SgdStep& step) = 0;
  // Cross entropy of class-index targets, one row of x at a time (backends/math/cross_entropy_ops.h
  // has the formulas): x [args.rows, args.classes] contiguous and floating; target [rows] int64;
  // weight undefined or [classes] of x's dtype; weight_total undefined or a 0-dim tensor holding
  // sum(weight) (read with smoothing and a weight only); loss, row_weight (w_t, 0 where ignored)
  // and lse [rows] of the accumulation dtype (float64 for float64 x, else float32); all contiguous
  // on this device. A target out of range that is not ignore_index: the CPU's front-end checked
  // before; CUDA reports it as a device error (IndexOutOfRange) and treats the row as ignored.
  virtual void cross_entropy_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                                     const Tensor& weight_total, const CrossEntropyArgs& args,
                                     const Tensor& loss, const Tensor& row_weight,
                                     const Tensor& lse) = 0;
  // dx [rows, classes] (x's dtype, fresh and contiguous) from grad [rows] (the loss's dtype) and
  // the forward's lse: one pass over x, 0 on rows whose target does not count.
  virtual void cross_entropy_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                                      const Tensor& weight, const Tensor& weight_total,
                                      const Tensor& lse, const CrossEntropyArgs& args,
                                      const Tensor& dx) = 0;
  // out = ((in[0] + in[1]) + in[2]) + ...: 2 or more floating inputs of out's dtype and shape on
  // its device, all contiguous as out is (out may be in[0]'s memory). Each step rounds to the
  // dtype, as a chain of adds does, so the sum is the chain's bit for bit, in one pass (autograd
  // sums a gradient's parts with it). The default is that chain, one add_scaled per input.
  virtual void add_n(const std::vector<Tensor>& in, const Tensor& out);
  // cond bool; a/b tensors or scalars of out's dtype; tensors broadcast to out's shape.
  virtual void where(const Tensor& cond, const ElementwiseArg& a, const ElementwiseArg& b,
                     const Tensor& out) = 0;
  // out has in's shape with reduced dims of size 1 (keepdim); reduce_dims[d] marks reduced dims.
  // Sum/Prod/Mean/Max/Min keep in's dtype except the front-end may pick a wider out dtype
  // (int -> int64); All/Any give bool. Empty reductions are validated by the front-end.
  virtual void reduce(ReduceOp op, const Tensor& in, const std::vector<bool>& reduce_dims,
                      const Tensor& out) = 0;
  // Softmax along `dim` (log: log-softmax) of a floating tensor: in and out contiguous, same
  // shape and dtype, non-empty (a 0-dim tensor comes with dim 0). Kernels see the tensor as
  // softmax_rows (backends/softmax_rows.h): the front-end does not move the dim last, so a
  // softmax over dim 0 costs no transposing copies. float16/bfloat16 compute in float and round
  // once; the row max is subtracted before exp.
  virtual void softmax(const Tensor& in, int64_t dim, bool log, const Tensor& out) = 0;
  // Ordering ops (ops/ordering.cpp). `in` is contiguous [rows, n], rows >= 1 and n >= 1: the
  // front-end moves the op's dim last. Outputs are contiguous, values of in's dtype, indices
  // int64 positions within the row. The order is order_key's (backends/math/order_key.h: NaN
  // largest, -0.0 == 0.0) and every kernel breaks ties by position, so results are the stable
  // sort's on every backend.
  // sort: values and indices [rows, n], each row ascending (descending: largest first).
  virtual void sort(const Tensor& in, bool descending, const Tensor& values,
                    const Tensor& indices) = 0;
  // topk: the k (1 <= k <= n) largest (or smallest) of each row into [rows, k]; sorted: largest
  // (smallest) first, else in any order.
  virtual void topk(const Tensor& in, int64_t k, bool largest, bool sorted, const Tensor& values,
                    const Tensor& indices) = 0;
  // kthvalue: the k-th smallest (1 <= k <= n) of each row into values and indices [rows].
  virtual void kthvalue(const Tensor& in, int64_t k, const Tensor& values,
                        const Tensor& indices) = 0;
  // Inclusive scan along `dim` (backends/math/scan_ops.h): in and values contiguous, same shape
  // and dtype (the op's output dtype, never bool), non-empty (a 0-dim tensor comes with dim 0).
  // Kernels see the tensor as softmax_rows (backends/softmax_rows.h): a scan over dim 0 scans
  // columns in place, with no transposing copy. indices (int64, same shape, contiguous) is
  // written by Max/Min and undefined for Sum/Prod.
  virtual void scan(ScanOp op, const Tensor& in, int64_t dim, const Tensor& values,
                    const Tensor& indices) = 0;
  // Lower median of each row of a contiguous [rows, n] tensor (n >= 1, not bool): the element
  // of rank (n - 1) / 2 in (value, position) order (equal values rank by position; -0 equals
  // 0), or the row's first NaN when it has one. values [rows] of in's dtype, indices [rows]
  // int64, both contiguous.
  virtual void median(const Tensor& in, const Tensor& values, const Tensor& indices) = 0;
  // Index of the first max/min along `dim` (or over everything flattened when dim is empty);
  // out int64 with keepdim shape.
  virtual void arg_reduce(ArgReduceOp op, const Tensor& in, std::optional<int64_t> dim,
                          const Tensor& out) = 0;
  // a: [*batch, M, K], b: [*batch, K, N] (batch dims already broadcast, possibly stride 0),
  // out: [*batch, M, N] contiguous.
  virtual void matmul(const Tensor& a, const Tensor& b, const Tensor& out) = 0;
  // [n, ndim] int64 indices of non-zero elements, row-major (host-synchronizing).
  virtual Tensor nonzero(const Tensor& in) = 0;
  // in and mask already broadcast to one shape; mask bool; 1-D result (host-synchronizing).
  virtual Tensor masked_select(const Tensor& in, const Tensor& mask) = 0;
  // index 1-D int64, all in range; out shape = in's with dim replaced by index.numel().
  virtual void index_select(const Tensor& in, int64_t dim, const Tensor& index,
                            const Tensor& out) = 0;
  // index int64 of out's shape, all in range.
  virtual void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) = 0;
  // Concatenates inputs (same dtype as out, matching shapes) along dim into out, in one pass.
  virtual void cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) = 0;
  // Fills contiguous out from the Philox stream.
  virtual void random(const RandomParams& params, const Tensor& out) = 0;
  // Reserves the `blocks` Philox blocks a random op on `out` draws from: params.seed and offset
  // from gen.reserve(blocks). A backend that records work to replay later overrides it.
  virtual void reserve_random(const Generator& gen, uint64_t blocks, const Tensor& out,
                              RandomParams& params);
  // The smallest and largest value of a non-empty int32/int64 tensor, on the host (indexing
  // front-ends check ranges before any kernel runs; a device does it in one pass and one wait).
  virtual void index_bounds(const Tensor& index, int64_t* lo, int64_t* hi) = 0;
  // Advanced indexing's two kernels (ops/advanced_index.cpp): `in` / `self` (any strides) seen
  // as 1-D in row-major order, `index` int64 holding positions in [-numel, numel) (negative ones
  // wrap; checked by the front-end), any strides (0 for broadcast dims).
  // take: out[i] = in[index[i]]; index has out's shape; in non-empty.
  virtual void take(const Tensor& in, const Tensor& index, const Tensor& out) = 0;
  // put: self[index[i]] = values[i], or += with accumulate (duplicates all add, atomically on
  // devices); without it, which of duplicate positions wins is undefined, as torch. values has
  // self's dtype and index's shape (any strides); self has no internal overlap.
  virtual void put(const Tensor& self, const Tensor& index, const Tensor& values,
                   bool accumulate) = 0;
  // Whether the kernels check their data themselves and report a bad value at the host's next
  // wait for the device (backends/cuda/cuda_device_error.h): scatter()'s index values, and the
  // divisor of an integer fmod / remainder / floor_divide in binary(). The front-ends then skip
  // their own pass over the data and its wait.
  virtual bool checks_data_in_kernels() const { return false; }
  // Scatter into `self` in place (backends/math/scatter_ops.h): self has at least one dim, any
  // strides and no broadcast dims; index is int64 of self's rank (any strides, 0 included) with
  // every value in [0, self.size(dim)) (unless checks_data_in_kernels(): then a value outside is
  // skipped and reported as the current op's IndexError) and index.size(d) <= self.size(d) for
  // d != dim. For every
  // position p of index's shape, the element of self at p with coordinate `dim` replaced by
  // index[p] is combined with src[p]: src is a tensor of self's dtype and index's shape (any
  // strides), or a scalar already of self's dtype. Add scales src by alpha (a value of self's
  // compute type) first. Reductions fold every value of duplicated targets in (in any order
  // where atomics do it); which Assign wins is unspecified. Used by scatter, scatter_add,
  // scatter_reduce and index_add / index_copy / index_fill (ops/scatter.cpp, ops/index_ops.cpp).
  virtual void scatter(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
                       const ElementwiseArg& src, Scalar alpha) = 0;
  // Inverse-CDF sampling (tl::multinomial with replacement): cdf float64 [rows, n] contiguous,
  // each row non-decreasing, non-negative, last element > 0; u float64 [rows, s] in [0, 1);
  // out int64 [rows, s]: the first j with cdf[r][j] > u[r][i] * cdf[r][n - 1] (rounding can put
  // that product at the total: then the first j reaching the total, a non-zero category).
  virtual void sample_from_cdf(const Tensor& cdf, const Tensor& u, const Tensor& out) = 0;

  // ---- unique, bincount, histc, searchsorted (ops/unique.cpp, bincount.cpp, histc.cpp,
  // searchsorted.cpp; element math in backends/math/unique_rows.h and bucket_ops.h) ----
  // The distinct rows of a contiguous [n, m] tensor (n >= 1, m >= 1): sorted (rows ordered by
  // rows_compare, ties by position) or consecutive (rows in place: equal neighbours collapse).
  // Rows are equal by rows_equal (NaN equals nothing); a group keeps its first row. values [u, m]
  // of in's dtype; inverse [n] int64, each row's group (want_inverse, else undefined); counts [u]
  // int64 (want_counts, else undefined). A device waits once, for u.
  virtual UniqueResult unique(const Tensor& in, bool consecutive, bool want_inverse,
                              bool want_counts) = 0;
  // out[in[i]] += weights[i] (1 without weights): in 1-D contiguous int32/int64, every value in
  // [0, out.numel()) (checked by the front-end); weights undefined or contiguous of in's length
  // and out's dtype (float32/float64); out contiguous, zero-filled, int64 without weights.
  virtual void bincount(const Tensor& in, const Tensor& weights, const Tensor& out) = 0;
  // histc: counts of a contiguous floating tensor's elements in out.numel() equal bins over
  // [lo, hi] (histc_bin; lo < hi once rounded to in's dtype) written into out (contiguous, in's
  // dtype, every bin written).
  virtual void histc(const Tensor& in, double lo, double hi, const Tensor& out) = 0;
  // searchsorted: boundaries contiguous [rows, len]; values contiguous [rows, inner] of the same
  // (non-bool) dtype, row r searching boundaries row r (searchsorted_position); sorter undefined
  // or contiguous int64 [rows, len] with values in [0, len); out contiguous int32/int64 of values'
  // shape.
  virtual void searchsorted(const Tensor& boundaries, const Tensor& values, const Tensor& sorter,
                            bool right, const Tensor& out) = 0;
  // out = alpha * (a @ b) + beta * out (addmm, baddbmm): a, b and out as matmul's, with K >= 1
  // and out non-empty. out holds the (broadcast) input already unless beta is 0, when it is
  // never read (NaN or garbage there does not propagate, as BLAS). alpha (non-zero) and beta are
  // values the front-end checked for out's dtype: applied in its compute type (float for
  // float16/bfloat16, wrapping for integers), the result rounded once.
  virtual void gemm(const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta,
                    const Tensor& out) = 0;
  // out = alpha * (a @ b) + bias, bias a contiguous row of out's width added to every row, in
  // one call where the backend has a GEMM with a bias epilogue (CUDA: cuBLASLt); a, b and out as
  // gemm's, out 2-D and contiguous, a floating dtype. Returns false, having done nothing, where it
  // has none for these operands: the front-end then copies the bias in and calls gemm.
  virtual bool gemm_bias(const Tensor& /*a*/, const Tensor& /*b*/, const Tensor& /*bias*/,
                         Scalar /*alpha*/, const Tensor& /*out*/) {
    return false;
  }
  // 2-D convolution by the backend's own library (CUDA: cuDNN), without the bias: x [N, C, H, W],
  // w [O, C / groups, kH, kW] and y [N, O, Ho, Wo] (backends/math/convolution_args.h) of one
  // floating dtype, contiguous, on this device, every size >= 1. Forward writes y; the backward
  // passes write dx (x's shape) from dy and w, and dw (w's shape) from x and dy, each overwritten.
  // Each returns false, having done nothing, where the backend has no such convolution for these
  // operands: tl::conv2d then runs its im2col + matmul path (forward), or the node its im2col
  // formulas (backward).
  // Batch norm in training mode (nn::functional::batch_norm; backends/math/batch_norm_ops.h has
  // the formulas), when has_batch_norm(x's dtype, the parameters' dtype) says the backend has it.
  // x [a.n, a.channels, a.inner] contiguous, a.count() >= 2; weight, bias, running_mean and
  // running_var each undefined or [channels], contiguous, of the parameter dtype; the running
  // statistics are updated in place. y: x's shape and dtype; mean, invstd [channels] of the
  // accumulation dtype (float64 for float64 x, else float32), kept for the backward.
  virtual bool has_batch_norm(DType /*x*/, DType /*param*/) const { return false; }
  virtual void batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                  const Tensor& running_mean, const Tensor& running_var,
                                  const BatchNormArgs& a, const Tensor& y, const Tensor& mean,
                                  const Tensor& invstd);
  // From grad (y's shape, contiguous) and the forward's x, weight, mean and invstd: dx (x's shape
  // and dtype), dweight and dbias ([channels], the parameter dtype), each undefined when not
  // wanted; each written whole.
  virtual void batch_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight,
                                   const Tensor& mean, const Tensor& invstd, const BatchNormArgs& a,
                                   const Tensor& dx, const Tensor& dweight, const Tensor& dbias);
  // Whether this backend may have its own convolution for dtype (the front-end then tries it).
  virtual bool has_conv2d(DType /*dtype*/) const { return false; }
  virtual bool conv2d_forward(const Tensor& /*x*/, const Tensor& /*w*/, const Conv2dArgs& /*a*/,
                              const Tensor& /*y*/) {
    return false;
  }
  virtual bool conv2d_backward_input(const Tensor& /*dy*/, const Tensor& /*w*/,
                                     const Conv2dArgs& /*a*/, const Tensor& /*dx*/) {
    return false;
  }
  virtual bool conv2d_backward_weight(const Tensor& /*x*/, const Tensor& /*dy*/,
                                      const Conv2dArgs& /*a*/, const Tensor& /*dw*/) {
    return false;
  }
};

// What a backend registers for its device type when the library loads:
//   static const bool registered = register_backend({DeviceType::CPU, &cpu_backend, ...});
struct BackendRegistration {
  DeviceType type;
  Backend& (*backend)();
  AllocatorGetter allocator;
  HostAllocatorGetter pinned_host_allocator = nullptr;  // page-locked host memory, if offered
  PointerLocator locate_pointer = nullptr;  // where outside memory lives, if the runtime knows
};
bool register_backend(const BackendRegistration& registration);

// The backend registered for a device's type; throws DeviceError when it is not built in.
Backend& backend_for(Device device);
// The backend that runs a kernel touching these devices: a non-CPU one if either is.
inline Backend& backend_for(Device a, Device b) { return backend_for(a.is_cpu() ? b : a); }

Backend& cpu_backend();

}  // namespace tensorlet

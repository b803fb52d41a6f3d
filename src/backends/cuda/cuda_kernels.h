// The CUDA backend's kernel families, one .cu file each; cuda_backend.cpp routes the Backend
// interface here. Contracts are those of backend.h; all tensors are on one CUDA device (the copy
// family also handles host <-> device and device <-> device), every kernel is enqueued on the
// current stream of that device and returns without waiting unless it says otherwise.
#pragma once

#include <optional>
#include <vector>

#include "tensorlet/backends/backend.h"

namespace tensorlet::cuda {

// cuda_copy.cpp: any pair of devices (at least one CUDA); non_blocking skips the host wait of a
// device -> pinned host copy.
void copy(const Tensor& src, const Tensor& out, bool non_blocking);
// cuda_copy_kernel.cu: same device, any strides, dtype conversion.
void copy_same_device(const Tensor& src, const Tensor& out);
// cuda_fill.cu
void fill(const Tensor& out, Scalar value);
// cuda_unary.cu, cuda_binary.cu, cuda_where.cu
void unary(UnaryOp op, const Tensor& in, const Tensor& out);
void binary(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b, const Tensor& out);
void add_scaled(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out);
void where(const Tensor& cond, const ElementwiseArg& a, const ElementwiseArg& b, const Tensor& out);
// cuda_pointwise.cu
void lerp(const Tensor& start, const Tensor& end, const ElementwiseArg& weight, const Tensor& out);
void isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
             const Tensor& out);
void nan_to_num(const Tensor& in, Scalar nan, Scalar posinf, Scalar neginf, const Tensor& out);
// cuda_add_n.cu
void add_n(const std::vector<Tensor>& in, const Tensor& out);
// cuda_unary_backward.cu
void unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved, const Tensor& out);
// cuda_optimizer.cu
void fused_adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& step);
void fused_sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& momentum_buffers, const SgdStep& step);
// cuda_cross_entropy.cu
void cross_entropy_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                           const Tensor& weight_total, const CrossEntropyArgs& args,
                           const Tensor& loss, const Tensor& row_weight, const Tensor& lse);
void cross_entropy_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                            const Tensor& weight, const Tensor& weight_total, const Tensor& lse,
                            const CrossEntropyArgs& args, const Tensor& dx);
// cuda_binary_backward.cu
void binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b,
                     const Tensor& out);
// cuda_reduce.cu
void reduce(ReduceOp op, const Tensor& in, const std::vector<bool>& reduce_dims, const Tensor& out);
void arg_reduce(ArgReduceOp op, const Tensor& in, std::optional<int64_t> dim, const Tensor& out);
// cuda_softmax.cu
void softmax(const Tensor& in, int64_t dim, bool log, const Tensor& out);
// cuda_sort.cu, cuda_topk.cu (CUB radix sorts; a block radix select for topk)
void sort(const Tensor& in, bool descending, const Tensor& values, const Tensor& indices);
void topk(const Tensor& in, int64_t k, bool largest, bool sorted, const Tensor& values,
          const Tensor& indices);
void kthvalue(const Tensor& in, int64_t k, const Tensor& values, const Tensor& indices);
// cuda_scan.cu (CUB's single-pass scan for long rows, block and warp scans, a column kernel)
void scan(ScanOp op, const Tensor& in, int64_t dim, const Tensor& values, const Tensor& indices);
// cuda_median.cu (a radix selection per row, one block each)
void median(const Tensor& in, const Tensor& values, const Tensor& indices);
// cuda_matmul.cu (cuBLAS, and a small-matrix kernel)
void matmul(const Tensor& a, const Tensor& b, const Tensor& out);
// cuda_index.cu (nonzero and masked_select synchronize for their output size)
Tensor nonzero(const Tensor& in);
Tensor masked_select(const Tensor& in, const Tensor& mask);
void index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out);
void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out);
// cuda_cat.cu
void cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out);
// cuda_random.cu
void random(const RandomParams& params, const Tensor& out);
// Min and max of a non-empty int32/int64 tensor: one kernel and one copy to the host.
void index_bounds(const Tensor& index, int64_t* lo, int64_t* hi);
// cuda_take_put.cu: a thread per index element; put's accumulate adds atomically.
void take(const Tensor& in, const Tensor& index, const Tensor& out);
void put(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate);
// cuda_scatter.cu (a thread per index element, atomics; Backend::scatter's contract)
void scatter(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
             const ElementwiseArg& src, Scalar alpha);
// cuda_multinomial.cu (a thread per sample, binary search in its row's cdf)
void sample_from_cdf(const Tensor& cdf, const Tensor& u, const Tensor& out);
// cuda_unique.cu (CUB sorts, a scan of group starts; waits once, for the number of groups)
UniqueResult unique(const Tensor& in, bool consecutive, bool want_inverse, bool want_counts);
// cuda_histogram.cu (atomics into bins, privatized in shared memory when they fit)
void bincount(const Tensor& in, const Tensor& weights, const Tensor& out);
void histc(const Tensor& in, double lo, double hi, const Tensor& out);
// cuda_searchsorted.cu (a thread per value)
void searchsorted(const Tensor& boundaries, const Tensor& values, const Tensor& sorter, bool right,
                  const Tensor& out);
// cuda_matmul.cu: out = alpha * (a @ b) + beta * out (backend.h's gemm): cuBLAS's alpha and
// beta in one call, or the same kernels as matmul with the scaling in their last step.
void gemm(const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta, const Tensor& out);
// Whether matmul/gemm run an m x n x k product (out's batch included) on our own kernels rather
// than cuBLAS: small and medium floats, where cuBLAS's host cost dominates.
bool matmul_uses_kernels(const Tensor& out, int64_t m, int64_t n, int64_t k);
// cuda_cudnn_conv.cpp (builds with cuDNN only): Backend::conv2d_forward / _backward_input /
// _backward_weight on cuDNN; false where cuDNN has no algorithm for the operands.
bool cudnn_conv2d_forward(const Tensor& x, const Tensor& w, const Conv2dArgs& a, const Tensor& y);
bool cudnn_conv2d_backward_input(const Tensor& dy, const Tensor& w, const Conv2dArgs& a,
                                 const Tensor& dx);
bool cudnn_conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dArgs& a,
                                  const Tensor& dw);

// cuda_gemm_bias.cpp: out = alpha * (a @ b) + bias through cuBLASLt's bias epilogue
// (Backend::gemm_bias); false where it declines (small products, layouts, no algorithm).
bool gemm_bias(const Tensor& a, const Tensor& b, const Tensor& bias, Scalar alpha,
               const Tensor& out);

}  // namespace tensorlet::cuda

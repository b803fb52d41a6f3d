// The CPU backend: Eigen for matrix products, OpenMP-parallel strided loops for the rest.
#pragma once

#include "tensorlet/backends/backend.h"

namespace tensorlet::cpu {

class CpuBackend final : public Backend {
 public:
  void copy(const Tensor& src, const Tensor& out, bool non_blocking) override;  // cpu_copy.cpp
  void fill(const Tensor& out, Scalar value) override;                          // cpu_copy.cpp
  void unary(UnaryOp op, const Tensor& in, const Tensor& out) override;         // cpu_unary.cpp
  void binary(BinaryOp op, const ElementwiseArg& a, const ElementwiseArg& b,
              const Tensor& out) override;  // cpu_binary.cpp
  void add_scaled(const Tensor& a, const Tensor& b, Scalar alpha,
                  const Tensor& out) override;                            // cpu_binary.cpp
  void add_n(const std::vector<Tensor>& in, const Tensor& out) override;  // cpu_add_n.cpp
  void lerp(const Tensor& start, const Tensor& end, const ElementwiseArg& weight,
            const Tensor& out) override;  // cpu_pointwise.cpp
  void isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
               const Tensor& out) override;  // cpu_pointwise.cpp
  void nan_to_num(const Tensor& in, Scalar nan, Scalar posinf, Scalar neginf,
                  const Tensor& out) override;  // cpu_pointwise.cpp
  void unary_backward(UnaryOp op, const Tensor& grad, const Tensor& saved,
                      const Tensor& out) override;  // cpu_unary_backward.cpp
  void binary_backward(BinaryGradient which, const Tensor& grad, const Tensor& a, const Tensor& b,
                       const Tensor& out) override;  // cpu_binary_backward.cpp
  void fused_adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                  const std::vector<Tensor>& max_exp_avg_sqs,
                  const AdamStep& step) override;  // cpu_optimizer.cpp
  void fused_sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& momentum_buffers,
                 const SgdStep& step) override;  // cpu_optimizer.cpp
  void cross_entropy_forward(const Tensor& x, const Tensor& target, const Tensor& weight,
                             const Tensor& weight_total, const CrossEntropyArgs& args,
                             const Tensor& loss, const Tensor& row_weight,
                             const Tensor& lse) override;  // cpu_cross_entropy.cpp
  void cross_entropy_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                              const Tensor& weight, const Tensor& weight_total, const Tensor& lse,
                              const CrossEntropyArgs& args,
                              const Tensor& dx) override;     // cpu_cross_entropy.cpp
  bool has_batch_norm(DType x, DType param) const override {  // cpu_batch_norm.cpp
    return x == param && (x == DType::Float32 || x == DType::Float64);
  }
  void batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias,
                          const Tensor& running_mean, const Tensor& running_var,
                          const BatchNormArgs& a, const Tensor& y, const Tensor& mean,
                          const Tensor& invstd) override;
  void batch_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight,
                           const Tensor& mean, const Tensor& invstd, const BatchNormArgs& a,
                           const Tensor& dx, const Tensor& dweight, const Tensor& dbias) override;
  void where(const Tensor& cond, const ElementwiseArg& a, const ElementwiseArg& b,
             const Tensor& out) override;  // cpu_binary.cpp
  void reduce(ReduceOp op, const Tensor& in, const std::vector<bool>& reduce_dims,
              const Tensor& out) override;  // cpu_reduce.cpp
  void arg_reduce(ArgReduceOp op, const Tensor& in, std::optional<int64_t> dim,
                  const Tensor& out) override;  // cpu_reduce.cpp
  void softmax(const Tensor& in, int64_t dim, bool log,
               const Tensor& out) override;  // cpu_softmax.cpp
  void sort(const Tensor& in, bool descending, const Tensor& values,
            const Tensor& indices) override;  // cpu_sort.cpp
  void topk(const Tensor& in, int64_t k, bool largest, bool sorted, const Tensor& values,
            const Tensor& indices) override;  // cpu_sort.cpp
  void kthvalue(const Tensor& in, int64_t k, const Tensor& values,
                const Tensor& indices) override;  // cpu_sort.cpp
  void scan(ScanOp op, const Tensor& in, int64_t dim, const Tensor& values,
            const Tensor& indices) override;  // cpu_scan.cpp
  void median(const Tensor& in, const Tensor& values,
              const Tensor& indices) override;                                // cpu_median.cpp
  void matmul(const Tensor& a, const Tensor& b, const Tensor& out) override;  // cpu_matmul.cpp
  Tensor nonzero(const Tensor& in) override;                                  // cpu_index.cpp
  Tensor masked_select(const Tensor& in, const Tensor& mask) override;        // cpu_index.cpp
  void index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override;
  void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override;
  void cat(const std::vector<Tensor>& inputs, int64_t dim,
           const Tensor& out) override;                                       // cpu_cat.cpp
  void random(const RandomParams& params, const Tensor& out) override;        // cpu_random.cpp
  void index_bounds(const Tensor& index, int64_t* lo, int64_t* hi) override;  // cpu_index.cpp

  // cpu_take_put.cpp
  void take(const Tensor& in, const Tensor& index, const Tensor& out) override;
  void put(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate) override;
  void scatter(ScatterOp op, const Tensor& self, int64_t dim, const Tensor& index,
               const ElementwiseArg& src, Scalar alpha) override;  // cpu_scatter.cpp
  void sample_from_cdf(const Tensor& cdf, const Tensor& u,
                       const Tensor& out) override;  // cpu_multinomial.cpp
  UniqueResult unique(const Tensor& in, bool consecutive, bool want_inverse,
                      bool want_counts) override;  // cpu_unique.cpp
  void bincount(const Tensor& in, const Tensor& weights,
                const Tensor& out) override;  // cpu_histogram.cpp
  void histc(const Tensor& in, double lo, double hi,
             const Tensor& out) override;  // cpu_histogram.cpp
  void searchsorted(const Tensor& boundaries, const Tensor& values, const Tensor& sorter,
                    bool right, const Tensor& out) override;  // cpu_searchsorted.cpp
  void gemm(const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta,
            const Tensor& out) override;  // cpu_matmul.cpp

  // cpu_conv2d.cpp
  bool has_conv2d(DType dtype) const override;
  bool conv2d_forward(const Tensor& x, const Tensor& w, const Conv2dArgs& a,
                      const Tensor& y) override;
  bool conv2d_backward_input(const Tensor& dy, const Tensor& w, const Conv2dArgs& a,
                             const Tensor& dx) override;
  bool conv2d_backward_weight(const Tensor& x, const Tensor& dy, const Conv2dArgs& a,
                              const Tensor& dw) override;
};

// Strided copy with dtype conversion on the calling thread's share of work (used by cat too).
void copy_strided(const Tensor& src, const Tensor& out);

}  // namespace tensorlet::cpu

// A fuzz case: inputs (base values plus a chain of views), the op with its arguments, and flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuzz/host.h"

namespace fuzz {

enum class Op {
  // unary
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Relu,
  Floor,
  Ceil,
  Trunc,
  Round,
  Sign,
  Square,
  Reciprocal,
  Rsqrt,
  Log1p,
  Expm1,
  Log2,
  Log10,
  Exp2,
  Erf,
  Erfc,
  Tan,
  Sinh,
  Cosh,
  Asin,
  Acos,
  Atan,
  BitwiseNot,
  Isnan,
  Isinf,
  Isfinite,
  Silu,
  Softplus,
  Gelu,
  GeluTanh,
  LogicalNot,
  // binary (tensor/tensor, tensor/scalar, scalar/tensor)
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Fmod,
  Remainder,
  FloorDivide,
  Atan2,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  LeftShift,
  RightShift,
  Gt,
  Lt,
  Ge,
  Le,
  Eq,
  Ne,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  Where,
  Clamp,
  // reductions
  Sum,
  Mean,
  Prod,
  Max,
  Min,
  Argmax,
  Argmin,
  Any,
  All,
  // numerics along a dim / over dims
  Softmax,
  LogSoftmax,
  Logsumexp,
  Var,
  Std,
  // ordering along a dim
  Sort,
  Argsort,
  Topk,
  Kthvalue,
  // scans along a dim; norms, NaN-skipping sums and non-zero counts over dims
  Cumsum,
  Cumprod,
  Cummax,
  Cummin,
  Norm,
  Nansum,
  CountNonzero,
  // unique (flattened or along a dim), bincount, searchsorted, histc
  Unique,
  UniqueConsecutive,
  Bincount,
  Searchsorted,
  Histc,
  Matmul,
  Outer,
  Addmm,  // inputs: input, mat1, mat2; scalars: beta, alpha
  Cat,
  Stack,
  IndexSelect,
  Gather,
  Take,  // tl::take: in0 as 1-D row-major at int64 positions in1
  MaskedSelect,
  To,
  Clone,
  Contiguous,
  Reshape,
  View,
  Copy,
  Fill,
  // the scatter family: scatter_add and index_add (repeated indices fold in), masked_scatter
  ScatterAdd,
  IndexAdd,
  MaskedScatter,
  // pointwise ops with parameters: lerp (tensor or number weight), isclose, nan_to_num; masked_fill
  Lerp,
  Isclose,
  NanToNum,
  MaskedFill,
  // copies that move elements: flip (dims), roll (shifts, dims), tril / triu (diagonal k)
  Flip,
  Roll,
  Tril,
  Triu,
  // windows over [N, C, H, W] (or unbatched [C, H, W]): conv2d (inputs: input, weight[, bias]),
  // max / avg pooling, adaptive average pooling
  Conv2d,
  MaxPool2d,
  AvgPool2d,
  AdaptiveAvgPool2d,
  // losses over class scores [C], [N, C] or [N, C, d1, ...]: cross_entropy (inputs: input, target
  // (int64 class indices or, for cross_entropy, class probabilities)[, weight]), nll_loss
  CrossEntropy,
  NllLoss,
  // in place: self (a view) op= other (tensor or number)
  AddInplace,
  SubInplace,
  MulInplace,
  DivInplace,
};
inline constexpr int kOpCount = static_cast<int>(Op::DivInplace) + 1;
const char* op_name(Op op);
inline bool is_unary(Op op) { return op <= Op::LogicalNot; }
inline bool is_binary(Op op) { return op >= Op::Add && op <= Op::LogicalXor; }
inline bool is_reduction(Op op) { return op >= Op::Sum && op <= Op::All; }
inline bool is_numerics(Op op) { return op >= Op::Softmax && op <= Op::Std; }
inline bool is_ordering(Op op) { return op >= Op::Sort && op <= Op::Kthvalue; }
inline bool is_scan(Op op) { return op >= Op::Cumsum && op <= Op::Cummin; }
inline bool is_more_reduction(Op op) { return op >= Op::Norm && op <= Op::CountNonzero; }
inline bool is_counting(Op op) { return op >= Op::Unique && op <= Op::Histc; }
inline bool is_window(Op op) { return op >= Op::Conv2d && op <= Op::AdaptiveAvgPool2d; }
inline bool is_loss(Op op) { return op == Op::CrossEntropy || op == Op::NllLoss; }
inline bool is_inplace(Op op) { return op >= Op::AddInplace; }
// The out-of-place op an in-place op applies.
inline Op inplace_base(Op op) {
  return static_cast<Op>(static_cast<int>(Op::Add) +
                         (static_cast<int>(op) - static_cast<int>(Op::AddInplace)));
}

enum class ViewKind { Transpose, Permute, Slice, Expand, AsStrided, Unsqueeze, Select };

struct ViewStep {
  ViewKind kind;
  Dims a, b;      // permutation / expand or as_strided shape; as_strided strides
  int64_t x = 0;  // dim (transpose dim0, slice, unsqueeze, select); as_strided offset
  int64_t y = 0;  // transpose dim1; slice start; select index
  int64_t z = 0;  // slice end
  int64_t w = 1;  // slice step
};

// An input tensor: a contiguous base of `base_shape` filled with `values`, then `views` applied.
struct Input {
  DType dtype = tl::kFloat32;
  Dims base_shape;
  std::vector<V> values;
  std::vector<ViewStep> views;
  std::vector<uint8_t> bool_bytes;  // when non-empty: the raw bytes of a bool base (any value)
};

// A Python-style number operand.
struct ScalarArg {
  tl::DTypeKind kind = tl::DTypeKind::Integer;
  V v;
};

enum class Form { TT, TS, ST, SS };  // which operands of a binary/where/clamp are tensors

struct Case {
  Op op = Op::Add;
  std::vector<Input> inputs;
  std::vector<ScalarArg> scalars;
  Form form = Form::TT;
  bool has_lo = true, has_hi = true;  // clamp bounds
  Dims dims;                          // reduction dims; reshape/view target shape
  std::optional<int64_t> dim;  // argmax/argmin/softmax/cat/stack/index_select/gather/sort... dim
  double correction = 1;       // var/std
  std::optional<DType> dtype;  // cumsum/cumprod's dtype argument
  double p = 2;                // norm
  bool indices = false;        // cummax/cummin: the result checked is the indices
  bool keepdim = false;
  int64_t k = 1;  // topk (how many), kthvalue (1-based rank); unique: which result (0 values,
                  // 1 inverse, 2 counts); bincount: minlength; histc: bins; tril/triu diagonal
  bool descending = false;          // sort/argsort
  bool stable = false;              // sort/argsort
  bool largest = true;              // topk
  bool sorted = true;               // topk
  DType target = tl::kFloat32;      // to(dtype)
  bool right = false;               // searchsorted
  double lo = 0, hi = 0;            // histc's min and max
  double rtol = 1e-5, atol = 1e-8;  // isclose
  bool equal_nan = false;           // isclose
  // nan_to_num's replacements (nullopt: torch's default)
  std::optional<double> nan, posinf, neginf;
  Dims shifts;  // roll (its dims are `dims`)
  // conv2d and the pools: one value for both spatial dims or (H, W), as torch's _pair; an empty
  // stride is the pools' default (the kernel). conv2d's kernel is its weight's [kH, kW].
  Dims kernel, stride, padding, dilation;
  int64_t groups = 1;                       // conv2d
  bool ceil_mode = false;                   // max_pool2d / avg_pool2d
  bool count_include_pad = true;            // avg_pool2d
  std::optional<int64_t> divisor_override;  // avg_pool2d
  Dims output_size;                         // adaptive_avg_pool2d
  // cross_entropy / nll_loss (a weight is the third input, when there is one)
  int64_t ignore_index = -100;
  tl::nn::Reduction reduction = tl::nn::Reduction::Mean;
  double label_smoothing = 0;  // cross_entropy
};

// The case families of bugs that were known when the fuzzer was written. Those fixed are fuzzed by
// default; `--known NAME` skips one again while a regression is chased, `--check NAME` fuzzes an
// open one.
struct Known {
  bool bool_bytes = false;           // bool tensors holding bytes other than 0/1
  bool gather_int32 = false;         // gather with int32 indices
  bool zero_d_view = false;          // view/reshape of and to 0-d tensors
  bool float_to_int = false;         // NaN/inf/out-of-range floats converted to an integer dtype
  bool int_matmul_overflow = false;  // integer matmul whose products or sums overflow
  bool fill_range = false;           // fill_ with a value outside the dtype's range
  bool bool_math = false;            // abs/argmax/argmin/clamp on bool tensors
  bool pow_bool = false;             // pow with a bool operand
  // masked_fill with a number or 0-dim value outside a's dtype (found by the fuzzer, fixed:
  // torch's checked conversion, as fill_'s).
  bool masked_fill_range = false;
  // Open since the fuzzer took conv2d and the pools (PyTorch 2.15's CPU rules; skipped by default):
  // integer inputs torch computes and the library refuses (conv2d and max_pool2d of every integer
  // dtype, avg_pool2d of int64; integers wrap, avg_pool2d divides truncating).
  bool window_int = true;
  // max_pool2d padding over half the kernel but within half the dilated kernel: torch checks
  // pad <= kernel / 2, the library checked pad <= ((kernel - 1) * dilation + 1) / 2 (fixed).
  bool max_pool_padding = false;
  // conv2d with a weight of 0 output channels: torch raises (at least `groups` needed), the
  // library returned an empty result (fixed).
  bool conv_zero_out_channels = false;
  // adaptive_avg_pool2d with an output size of 0 (torch: an empty result) or of 1 x 1 on a 5-D
  // input or on a 2-D one with output_size a single number (torch: the mean over the last two
  // dims); the library refuses both.
  bool adaptive_output = true;
  // adaptive_avg_pool2d of an input with NaN or inf whose H or W the output size does not divide:
  // the library's averaging matmuls multiplied it by the 0 weights of the other windows, so NaN
  // reached them (torch: only the windows holding it). Fixed: each window's own elements summed.
  bool adaptive_nonfinite = false;
  // cross_entropy with class probabilities and an ignore_index >= 0: torch raises (ignore_index is
  // not supported for floating point targets), the library ignored the argument (fixed: refused).
  bool cross_entropy_prob_ignore = false;
  // nll_loss with an ignored element whose input is NaN or +-inf at class 0: torch gives it 0
  // (ignored elements are skipped), the library gave NaN (it gathered class 0 for them and
  // multiplied by a weight of 0: inf * 0) (fixed: ignored elements are selected out).
  bool nll_ignored_nonfinite = false;
};
// Sets the flag NAME to `on`; false when there is no such family ("all" names every one).
bool set_known(Known& known, const std::string& name, bool on);
std::vector<std::string> known_names();

}  // namespace fuzz

// Names of ops and of the known-bug families.
#include "fuzz/case.h"

namespace fuzz {

const char* op_name(Op op) {
  static const char* const names[] = {"neg",
                                      "abs",
                                      "exp",
                                      "log",
                                      "sqrt",
                                      "sin",
                                      "cos",
                                      "tanh",
                                      "sigmoid",
                                      "relu",
                                      "floor",
                                      "ceil",
                                      "trunc",
                                      "round",
                                      "sign",
                                      "square",
                                      "reciprocal",
                                      "rsqrt",
                                      "log1p",
                                      "expm1",
                                      "log2",
                                      "log10",
                                      "exp2",
                                      "erf",
                                      "erfc",
                                      "tan",
                                      "sinh",
                                      "cosh",
                                      "asin",
                                      "acos",
                                      "atan",
                                      "bitwise_not",
                                      "isnan",
                                      "isinf",
                                      "isfinite",
                                      "silu",
                                      "softplus",
                                      "gelu",
                                      "gelu_tanh",
                                      "logical_not",
                                      "add",
                                      "sub",
                                      "mul",
                                      "div",
                                      "pow",
                                      "maximum",
                                      "minimum",
                                      "fmod",
                                      "remainder",
                                      "floor_divide",
                                      "atan2",
                                      "bitwise_and",
                                      "bitwise_or",
                                      "bitwise_xor",
                                      "bitwise_left_shift",
                                      "bitwise_right_shift",
                                      "gt",
                                      "lt",
                                      "ge",
                                      "le",
                                      "eq",
                                      "ne",
                                      "logical_and",
                                      "logical_or",
                                      "logical_xor",
                                      "where",
                                      "clamp",
                                      "sum",
                                      "mean",
                                      "prod",
                                      "max",
                                      "min",
                                      "argmax",
                                      "argmin",
                                      "any",
                                      "all",
                                      "softmax",
                                      "log_softmax",
                                      "logsumexp",
                                      "var",
                                      "std",
                                      "sort",
                                      "argsort",
                                      "topk",
                                      "kthvalue",
                                      "cumsum",
                                      "cumprod",
                                      "cummax",
                                      "cummin",
                                      "norm",
                                      "nansum",
                                      "count_nonzero",
                                      "unique",
                                      "unique_consecutive",
                                      "bincount",
                                      "searchsorted",
                                      "histc",
                                      "matmul",
                                      "outer",
                                      "addmm",
                                      "cat",
                                      "stack",
                                      "index_select",
                                      "gather",
                                      "take",
                                      "masked_select",
                                      "to",
                                      "clone",
                                      "contiguous",
                                      "reshape",
                                      "view",
                                      "copy_",
                                      "fill_",
                                      "scatter_add",
                                      "index_add",
                                      "masked_scatter",
                                      "lerp",
                                      "isclose",
                                      "nan_to_num",
                                      "masked_fill",
                                      "flip",
                                      "roll",
                                      "tril",
                                      "triu",
                                      "conv2d",
                                      "max_pool2d",
                                      "avg_pool2d",
                                      "adaptive_avg_pool2d",
                                      "cross_entropy",
                                      "nll_loss",
                                      "add_",
                                      "sub_",
                                      "mul_",
                                      "div_"};
  static_assert(sizeof(names) / sizeof(names[0]) == kOpCount);
  return names[static_cast<int>(op)];
}

namespace {
struct Family {
  const char* name;
  bool Known::*flag;
};
constexpr Family kFamilies[] = {
    {"bool_bytes", &Known::bool_bytes},
    {"gather_int32", &Known::gather_int32},
    {"zero_d_view", &Known::zero_d_view},
    {"float_to_int", &Known::float_to_int},
    {"int_matmul_overflow", &Known::int_matmul_overflow},
    {"fill_range", &Known::fill_range},
    {"bool_math", &Known::bool_math},
    {"pow_bool", &Known::pow_bool},
    {"masked_fill_range", &Known::masked_fill_range},
    {"window_int", &Known::window_int},
    {"max_pool_padding", &Known::max_pool_padding},
    {"conv_zero_out_channels", &Known::conv_zero_out_channels},
    {"adaptive_output", &Known::adaptive_output},
    {"adaptive_nonfinite", &Known::adaptive_nonfinite},
    {"cross_entropy_prob_ignore", &Known::cross_entropy_prob_ignore},
    {"nll_ignored_nonfinite", &Known::nll_ignored_nonfinite},
};
}  // namespace

bool set_known(Known& known, const std::string& name, bool on) {
  bool found = false;
  for (const Family& f : kFamilies)
    if (name == "all" || name == f.name) {
      known.*f.flag = on;
      found = true;
    }
  return found;
}

std::vector<std::string> known_names() {
  std::vector<std::string> v;
  for (const Family& f : kFamilies) v.push_back(f.name);
  return v;
}

}  // namespace fuzz

// The reproducer: C++ that rebuilds a case's inputs (values, then views) and calls the op.
#include "fuzz/report.h"

#include <cmath>
#include <sstream>

namespace fuzz {
namespace {

// The C++ element type and the dtype constant, as a repro spells them (from the dtype list).
std::string ctype(DType d) {
  switch (d) {
#define TL_FUZZ_CTYPE(e, T, name, kind) \
  case tl::DType::e:                    \
    return tl::is_reduced_float(d) ? "tl::" #T : #T;
    TL_DTYPES(TL_FUZZ_CTYPE)
#undef TL_FUZZ_CTYPE
  }
  return "?";
}

std::string dtype_const(DType d) {
  switch (d) {
#define TL_FUZZ_CONST(e, T, name, kind) \
  case tl::DType::e:                    \
    return "tl::k" #e;
    TL_DTYPES(TL_FUZZ_CONST)
#undef TL_FUZZ_CONST
  }
  return "?";
}

std::string list(const Dims& d) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "}";
  return os.str();
}

std::string number(double f, bool as_float) {
  std::ostringstream os;
  if (std::isnan(f)) return "NAN";
  if (std::isinf(f)) return f > 0 ? "INFINITY" : "-INFINITY";
  os.precision(17);
  os << f;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return as_float ? s + "f" : s;
}

std::string int_literal(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "");
}

std::string value(const V& v, DType d) {
  if (d == tl::kBool) return v.i ? "true" : "false";
  // The half types have explicit constructors: each value is spelled tl::Half(1.5f).
  if (is_half(d)) return std::string(ctype(d)) + "(" + number(v.f, true) + ")";
  if (is_float(d)) return number(v.f, d == tl::kFloat32);
  return int_literal(v.i);
}

std::string scalar(const ScalarArg& s) {
  if (s.kind == tl::DTypeKind::Bool) return s.v.i ? "true" : "false";
  if (s.kind == tl::DTypeKind::Integer) return "int64_t(" + int_literal(s.v.i) + ")";
  return number(s.v.f, false);
}

std::string view_call(const ViewStep& s) {
  std::ostringstream os;
  switch (s.kind) {
    case ViewKind::Transpose:
      os << ".transpose(" << s.x << ", " << s.y << ")";
      break;
    case ViewKind::Permute:
      os << ".permute(" << list(s.a) << ")";
      break;
    case ViewKind::Slice:
      os << ".slice(" << s.x << ", " << s.y << ", " << s.z << ", " << s.w << ")";
      break;
    case ViewKind::Expand:
      os << ".expand(" << list(s.a) << ")";
      break;
    case ViewKind::AsStrided:
      os << ".as_strided(" << list(s.a) << ", " << list(s.b) << ", " << s.x << ")";
      break;
    case ViewKind::Unsqueeze:
      os << ".unsqueeze(" << s.x << ")";
      break;
    case ViewKind::Select:
      os << ".select(" << s.x << ", " << s.y << ")";
      break;
  }
  return os.str();
}

void print_input(std::ostream& os, const Input& in, size_t i) {
  os << "  auto base" << i << " = tl::from_vector<" << ctype(in.dtype) << ">({";
  for (size_t k = 0; k < in.values.size(); ++k)
    os << (k ? ", " : "") << value(in.values[k], in.dtype);
  os << "}, " << list(in.base_shape) << ");\n";
  if (!in.bool_bytes.empty()) {
    os << "  {  // raw bool bytes\n    const uint8_t bytes[] = {";
    for (size_t k = 0; k < in.bool_bytes.size(); ++k)
      os << (k ? ", " : "") << int(in.bool_bytes[k]);
    os << "};\n    std::memcpy(base" << i << ".data_ptr(), bytes, sizeof bytes);\n  }\n";
  }
  os << "  auto in" << i << " = base" << i;
  for (const ViewStep& s : in.views) os << view_call(s);
  os << ";\n";
}

}  // namespace

void print_reproducer(std::ostream& os, const Case& c, const std::string& mismatch) {
  os << "// fuzz mismatch (" << op_name(c.op) << "): " << mismatch << "\n{\n";
  for (size_t i = 0; i < c.inputs.size(); ++i) print_input(os, c.inputs[i], i);
  std::vector<std::string> args;  // operands in order, from the form
  size_t ti = 0, si = 0;
  auto t = [&] { return "in" + std::to_string(ti++); };
  auto s = [&] { return scalar(c.scalars[si++]); };
  const Op op = c.op;
  os << "  auto out = ";
  if (is_unary(op)) {
    os << "tl::" << op_name(op) << "(" << t() << ")";
  } else if (is_binary(op) || op == Op::Where) {
    os << "tl::" << op_name(op) << "(";
    if (op == Op::Where) os << t() << ", ";
    const bool a_t = c.form == Form::TT || c.form == Form::TS;
    const bool b_t = c.form == Form::TT || c.form == Form::ST;
    std::string a = a_t ? t() : s();
    std::string b = b_t ? t() : s();
    os << a << ", " << b << ")";
  } else if (op == Op::Clamp) {
    os << "tl::clamp(" << t();
    const bool tt = c.form == Form::TT;
    const char* none = tt ? "std::optional<tl::Tensor>()" : "std::optional<tl::Scalar>()";
    os << ", " << (c.has_lo ? (tt ? t() : "std::optional<tl::Scalar>(" + s() + ")") : none);
    os << ", " << (c.has_hi ? (tt ? t() : "std::optional<tl::Scalar>(" + s() + ")") : none) << ")";
  } else if (op == Op::Argmax || op == Op::Argmin) {
    os << "tl::" << op_name(op) << "(" << t() << ", "
       << (c.dim ? std::to_string(*c.dim) : "std::nullopt") << ", "
       << (c.keepdim ? "true" : "false") << ")";
  } else if (op == Op::Softmax || op == Op::LogSoftmax) {
    os << "tl::" << op_name(op) << "(" << t() << ", " << *c.dim << ")";
  } else if (op == Op::Sort || op == Op::Argsort) {
    os << "tl::" << op_name(op) << "(" << t() << ", " << *c.dim << ", "
       << (c.descending ? "true" : "false") << ", " << (c.stable ? "true" : "false") << ")";
  } else if (op == Op::Topk) {
    os << "tl::topk(" << t() << ", " << c.k << ", " << *c.dim << ", "
       << (c.largest ? "true" : "false") << ", " << (c.sorted ? "true" : "false") << ")";
  } else if (op == Op::Kthvalue) {
    os << "tl::kthvalue(" << t() << ", " << c.k << ", " << *c.dim << ", "
       << (c.keepdim ? "true" : "false") << ")";
  } else if (op == Op::Var || op == Op::Std) {
    os << "tl::" << op_name(op) << "(" << t() << ", " << list(c.dims) << ", " << c.correction
       << ", " << (c.keepdim ? "true" : "false") << ")";
  } else if (op == Op::Cumsum || op == Op::Cumprod) {
    os << "tl::" << op_name(op) << "(" << t() << ", " << *c.dim;
    if (c.dtype) os << ", " << dtype_const(*c.dtype);
    os << ")";
  } else if (op == Op::Cummax || op == Op::Cummin) {
    os << "tl::" << op_name(op) << "(" << t() << ", " << *c.dim << ")."
       << (c.indices ? "indices" : "values");
  } else if (op == Op::Norm) {
    const std::string p =
        std::isinf(c.p) ? (c.p > 0 ? "INFINITY" : "-INFINITY") : number(c.p, false);
    os << "tl::norm(" << t() << ", " << p << ", " << list(c.dims) << ", "
       << (c.keepdim ? "true" : "false") << ")";
  } else if (op == Op::CountNonzero) {
    os << "tl::count_nonzero(" << t() << ", " << list(c.dims) << ")";
  } else if (is_reduction(op) || op == Op::Logsumexp || op == Op::Nansum) {
    os << "tl::" << op_name(op) << "(" << t() << ", " << list(c.dims) << ", "
       << (c.keepdim ? "true" : "false") << ")";
  } else if (op == Op::Matmul) {
    os << "tl::matmul(in0, in1)";
  } else if (op == Op::Outer) {
    os << "tl::outer(in0, in1)";
  } else if (op == Op::Addmm) {
    os << "tl::addmm(in0, in1, in2, " << s();
    os << ", " << s() << ")";
  } else if (op == Op::Cat || op == Op::Stack) {
    os << "tl::" << op_name(op) << "({";
    for (size_t i = 0; i < c.inputs.size(); ++i) os << (i ? ", " : "") << "in" << i;
    os << "}, " << *c.dim << ")";
  } else if (op == Op::IndexSelect || op == Op::Gather) {
    os << "tl::" << op_name(op) << "(in0, " << *c.dim << ", in1)";
  } else if (op == Op::Take) {
    os << "tl::take(in0, in1)";
  } else if (op == Op::MaskedSelect) {
    os << "tl::masked_select(in0, in1)";
  } else if (op == Op::ScatterAdd || op == Op::IndexAdd) {
    os << "tl::" << op_name(op) << "(in0, " << *c.dim << ", in1, in2)";
  } else if (op == Op::MaskedScatter) {
    os << "tl::masked_scatter(in0, in1, in2)";
  } else if (op == Op::Lerp || op == Op::MaskedFill) {
    os << "tl::" << op_name(op) << "(in0, in1, " << (c.form == Form::TT ? std::string("in2") : s())
       << ")";
  } else if (op == Op::Isclose) {
    os << "tl::isclose(in0, in1, " << number(c.rtol, false) << ", " << number(c.atol, false) << ", "
       << (c.equal_nan ? "true" : "false") << ")";
  } else if (op == Op::NanToNum) {
    auto opt = [](const std::optional<double>& v) {
      return v ? number(*v, false) : std::string("std::nullopt");
    };
    os << "tl::nan_to_num(in0, " << opt(c.nan) << ", " << opt(c.posinf) << ", " << opt(c.neginf)
       << ")";
  } else if (op == Op::Flip) {
    os << "tl::flip(in0, " << list(c.dims) << ")";
  } else if (op == Op::Roll) {
    os << "tl::roll(in0, std::vector<int64_t>" << list(c.shifts) << ", std::vector<int64_t>"
       << list(c.dims) << ")";
  } else if (op == Op::Tril || op == Op::Triu) {
    os << "tl::" << op_name(op) << "(in0, " << c.k << ")";
  } else if (op == Op::Conv2d) {
    os << "tl::conv2d(in0, in1, " << (c.inputs.size() > 2 ? "in2" : "tl::Tensor()") << ", "
       << list(c.stride) << ", " << list(c.padding) << ", " << list(c.dilation) << ", " << c.groups
       << ")";
  } else if (op == Op::MaxPool2d) {
    os << "tl::max_pool2d(in0, " << list(c.kernel) << ", " << list(c.stride) << ", "
       << list(c.padding) << ", " << list(c.dilation) << ", " << (c.ceil_mode ? "true" : "false")
       << ")";
  } else if (op == Op::AvgPool2d) {
    os << "tl::avg_pool2d(in0, " << list(c.kernel) << ", " << list(c.stride) << ", "
       << list(c.padding) << ", " << (c.ceil_mode ? "true" : "false") << ", "
       << (c.count_include_pad ? "true" : "false") << ", "
       << (c.divisor_override
               ? "std::optional<int64_t>(" + std::to_string(*c.divisor_override) + ")"
               : std::string("std::nullopt"))
       << ")";
  } else if (op == Op::AdaptiveAvgPool2d) {
    os << "tl::adaptive_avg_pool2d(in0, " << list(c.output_size) << ")";
  } else if (is_loss(op)) {
    const char* reduction = c.reduction == tl::nn::Reduction::None   ? "tl::nn::kNone"
                            : c.reduction == tl::nn::Reduction::Mean ? "tl::nn::kMean"
                                                                     : "tl::nn::kSum";
    os << "tl::nn::functional::" << op_name(op) << "(in0, in1, "
       << (c.inputs.size() > 2 ? "in2" : "tl::Tensor()") << ", " << int_literal(c.ignore_index)
       << ", " << reduction;
    if (op == Op::CrossEntropy) os << ", " << number(c.label_smoothing, false);
    os << ")";
  } else if (op == Op::To) {
    os << "in0.to(" << dtype_const(c.target) << ")";
  } else if (op == Op::Clone || op == Op::Contiguous) {
    os << "in0." << op_name(op) << "()";
  } else if (op == Op::Reshape || op == Op::View) {
    os << "in0." << op_name(op) << "(" << list(c.dims) << ")";
  } else if (op == Op::Copy) {
    os << "in0.copy_(in1);  // then look at base0";
  } else if (is_inplace(op)) {
    os << "in0." << op_name(op) << "(" << (c.form == Form::TT ? std::string("in1") : s())
       << ");  // then look at base0";
  } else if (op == Op::Fill) {
    os << "in0.fill_(" << s() << ");  // then look at base0";
  }
  if (op != Op::Copy && op != Op::Fill && !is_inplace(op)) os << ";";
  os << "\n  std::cout << out << \"\\n\";\n}\n";
}

}  // namespace fuzz

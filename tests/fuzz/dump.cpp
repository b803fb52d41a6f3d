// JSON lines of cases and reference results, so that the reference itself can be checked against
// PyTorch (tests/fuzz/torch_check.py) where PyTorch is installed.
#include "fuzz/dump.h"

#include <cmath>
#include <sstream>

namespace fuzz {
namespace {

std::string num(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  std::ostringstream os;
  os.precision(17);
  os << f;
  std::string s = os.str();  // "-0" would read back as the integer 0: keep floats floats
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string value(const V& v, DType d) { return is_float(d) ? num(v.f) : std::to_string(v.i); }

std::string list(const Dims& d) {
  std::string s = "[";
  // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "," + string.
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(d[i]);
  }
  return s + "]";
}

std::string values(const std::vector<V>& v, DType d) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += value(v[i], d);
  }
  return s + "]";
}

const char* view_name(ViewKind k) {
  static const char* const n[] = {"transpose",  "permute",   "slice", "expand",
                                  "as_strided", "unsqueeze", "select"};
  return n[static_cast<int>(k)];
}

}  // namespace

void dump_case(std::ostream& os, uint64_t index, const Case& c, const RefResult& ref) {
  static const char* const forms[] = {"TT", "TS", "ST", "SS"};
  static const char* const kinds[] = {"bool", "int", "float"};
  os << "{\"index\":" << index << ",\"op\":\"" << op_name(c.op) << "\",\"form\":\""
     << forms[static_cast<int>(c.form)] << "\",\"has_lo\":" << c.has_lo
     << ",\"has_hi\":" << c.has_hi << ",\"dims\":" << list(c.dims)
     << ",\"dim\":" << (c.dim ? std::to_string(*c.dim) : "null") << ",\"keepdim\":" << c.keepdim
     << ",\"correction\":" << c.correction << ",\"k\":" << c.k << ",\"descending\":" << c.descending
     << ",\"stable\":" << c.stable << ",\"largest\":" << c.largest << ",\"sorted\":" << c.sorted
     << ",\"p\":" << num(c.p) << ",\"indices\":" << c.indices << ",\"right\":" << c.right
     << ",\"lo\":" << num(c.lo) << ",\"hi\":" << num(c.hi) << ",\"dtype\":";
  // Streamed piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "\"" + string.
  if (c.dtype)
    os << "\"" << *c.dtype << "\"";
  else
    os << "null";
  auto opt = [](const std::optional<double>& v) { return v ? num(*v) : std::string("null"); };
  os << ",\"rtol\":" << num(c.rtol) << ",\"atol\":" << num(c.atol)
     << ",\"equal_nan\":" << c.equal_nan << ",\"nan\":" << opt(c.nan)
     << ",\"posinf\":" << opt(c.posinf) << ",\"neginf\":" << opt(c.neginf)
     << ",\"shifts\":" << list(c.shifts);
  os << ",\"kernel\":" << list(c.kernel) << ",\"stride\":" << list(c.stride)
     << ",\"padding\":" << list(c.padding) << ",\"dilation\":" << list(c.dilation)
     << ",\"groups\":" << c.groups << ",\"ceil_mode\":" << c.ceil_mode
     << ",\"count_include_pad\":" << c.count_include_pad << ",\"divisor_override\":"
     << (c.divisor_override ? std::to_string(*c.divisor_override) : "null")
     << ",\"output_size\":" << list(c.output_size);
  static const char* const reductions[] = {"none", "mean", "sum"};  // tl::nn::Reduction's order
  os << ",\"ignore_index\":" << c.ignore_index << ",\"reduction\":\""
     << reductions[static_cast<int>(c.reduction)]
     << "\",\"label_smoothing\":" << num(c.label_smoothing);
  os << ",\"target\":\"" << c.target << "\",\"inputs\":[";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    os << (i ? "," : "") << "{\"dtype\":\"" << in.dtype
       << "\",\"base_shape\":" << list(in.base_shape)
       << ",\"values\":" << values(in.values, in.dtype) << ",\"views\":[";
    for (size_t k = 0; k < in.views.size(); ++k) {
      const ViewStep& s = in.views[k];
      os << (k ? "," : "") << "{\"kind\":\"" << view_name(s.kind) << "\",\"a\":" << list(s.a)
         << ",\"b\":" << list(s.b) << ",\"x\":" << s.x << ",\"y\":" << s.y << ",\"z\":" << s.z
         << ",\"w\":" << s.w << "}";
    }
    os << "]}";
  }
  os << "],\"scalars\":[";
  for (size_t i = 0; i < c.scalars.size(); ++i) {
    const ScalarArg& s = c.scalars[i];
    os << (i ? "," : "") << "{\"kind\":\"" << kinds[static_cast<int>(s.kind)]
       << "\",\"v\":" << (s.kind == tl::DTypeKind::Floating ? num(s.v.f) : std::to_string(s.v.i))
       << "}";
  }
  os << "],\"ref\":{\"raises\":" << ref.raises << ",\"why\":\"" << ref.why << "\",\"dtype\":\""
     << ref.out.dtype << "\",\"shape\":" << list(ref.out.shape)
     << ",\"values\":" << values(ref.out.v, ref.out.dtype) << ",\"rtol\":" << num(ref.rtol)
     << ",\"atol\":[";
  for (size_t i = 0; i < ref.atol.size(); ++i) os << (i ? "," : "") << num(ref.atol[i]);
  os << "]}}\n";
}

}  // namespace fuzz

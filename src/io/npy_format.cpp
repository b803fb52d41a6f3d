// NumPy's .npy header: dtype strings, writing a header, and a strict parser of the header's
// Python-literal dict (npy_format.h).
#include "tensorlet/io/npy_format.h"

#include <bit>
#include <cstring>
#include <limits>

#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/shape.h"
#include "tensorlet/io/file_io.h"

namespace tensorlet::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tl::save writes little-endian data as the host's own bytes");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The type code of each dtype NumPy has ('b1', 'f4', ...); empty for bfloat16.
const char* type_code(DType d) {
  switch (d) {
    case DType::Bool:
      return "b1";
    case DType::UInt8:
      return "u1";
    case DType::Int8:
      return "i1";
    case DType::Int16:
      return "i2";
    case DType::Int32:
      return "i4";
    case DType::Int64:
      return "i8";
    case DType::Float16:
      return "f2";
    case DType::Float32:
      return "f4";
    case DType::Float64:
      return "f8";
    case DType::BFloat16:
      return "";
  }
  return "";
}

// A recursive-descent reader of the header dict: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), } with any spacing, a trailing comma or not, Python 2's 3L. Nothing else.
class DictParser {
 public:
  DictParser(const std::string& text, const char* op, const std::string& path)
      : s_(text), op_(op), path_(path) {}

  [[noreturn]] void bad(const std::string& what) const {
    fail_file(op_, path_, "bad .npy header (" + what + "): " + excerpt());
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(std::string("expected '") + c + "'");
  }
  bool at_end() {
    skip_space();
    return i_ == s_.size();
  }
  std::string string_literal() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) bad("expected a string");
    const char quote = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\') bad("escapes in strings are not supported");
      if (out.size() >= 64) bad("string longer than 64 characters");
      out += s_[i_++];
    }
    if (i_ >= s_.size()) bad("unterminated string");
    ++i_;
    return out;
  }
  bool boolean() {
    skip_space();
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  int64_t dimension() {
    skip_space();
    if (i_ < s_.size() && s_[i_] == '-') bad("a negative dimension");
    const size_t start = i_;
    int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      const int digit = s_[i_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) bad("a dimension past int64");
      v = v * 10 + digit;
      ++i_;
    }
    if (i_ == start) bad("expected a dimension");
    if (i_ < s_.size() && (s_[i_] == 'L' || s_[i_] == 'l')) ++i_;  // Python 2's long
    return v;
  }
  std::vector<int64_t> shape() {
    expect('(');
    std::vector<int64_t> dims;
    if (eat(')')) return dims;
    for (;;) {
      if (dims.size() >= static_cast<size_t>(kMaxDims))
        bad("more than " + std::to_string(kMaxDims) + " dimensions");
      dims.push_back(dimension());
      if (eat(')')) break;
      expect(',');
      if (eat(')')) break;
    }
    return dims;
  }

 private:
  std::string excerpt() const {
    std::string e = s_.substr(0, 120);
    for (char& c : e)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return "\"" + e + (s_.size() > 120 ? "...\"" : "\"");
  }

  const std::string& s_;
  size_t i_ = 0;
  const char* op_;
  const std::string& path_;
};

// '<f4' and the like: the dtype and whether the data is big-endian; false for anything else.
bool parse_descr(const std::string& descr, DType* dtype, bool* big_endian) {
  if (descr.size() != 2 && descr.size() != 3) return false;
  const char order = descr.size() == 3 ? descr[0] : '=';
  const std::string code = descr.substr(descr.size() - 2);
  if (order != '<' && order != '>' && order != '=' && order != '|') return false;
  for (DType d : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,
                  DType::Float16, DType::Float32, DType::Float64}) {
    if (code != type_code(d)) continue;
    const bool one_byte = element_size(d) == 1;
    if (order == '|' && !one_byte) return false;  // "not applicable" only fits single bytes
    *dtype = d;
    *big_endian = order == '>' && !one_byte;
    return true;
  }
  return false;
}

void put_le(std::string& out, uint32_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}

}  // namespace

std::string npy_header(DType dtype, const std::vector<int64_t>& shape, bool fortran_order,
                       const char* op) {
  const std::string code = type_code(dtype);
  if (code.empty())
    fail<DTypeError>(op, "bfloat16 has no NumPy dtype; convert first, e.g. t.to(tl::kFloat32)");
  std::string dict = "{'descr': '";
  dict += (element_size(dtype) == 1 ? "|" : "<") + code + "', 'fortran_order': ";
  dict += fortran_order ? "True" : "False";
  dict += ", 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  // Padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes.
  for (const int major : {1, 2}) {
    const size_t prefix = major == 1 ? 10 : 12;
    const size_t unpadded = prefix + dict.size() + 1;
    const size_t length = dict.size() + (64 - unpadded % 64) % 64 + 1;
    if (major == 1 && length > 0xffff) continue;
    std::string out(kMagic, kMagicSize);
    out += static_cast<char>(major);
    out += '\0';
    put_le(out, static_cast<uint32_t>(length), major == 1 ? 2 : 4);
    out += dict;
    out.append(length - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  fail<IOError>(op, "a .npy header of ", dict.size(), " bytes is too long");
}

size_t npy_prefix_size(const unsigned char* first8, const char* op, const std::string& path) {
  if (std::memcmp(first8, kMagic, kMagicSize) != 0)
    fail_file(op, path, "not a .npy file (no \\x93NUMPY magic at its start)");
  const int major = first8[6], minor = first8[7];
  if (major < 1 || major > 3 || minor != 0)
    fail_file(op, path,
              "unsupported .npy format version " + std::to_string(major) + "." +
                  std::to_string(minor) + " (1.0, 2.0 and 3.0 are known)");
  return major == 1 ? 10 : 12;
}

uint32_t npy_dict_length(const unsigned char* prefix, size_t prefix_size) {
  uint32_t v = 0;
  for (size_t b = 8; b < prefix_size; ++b) v |= static_cast<uint32_t>(prefix[b]) << (8 * (b - 8));
  return v;
}

NpyHeader parse_npy_dict(const std::string& dict, size_t prefix_size, uint64_t available,
                         const char* op, const std::string& path) {
  for (const char c : dict) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x7f || (u < 0x20 && c != '\n' && c != '\r' && c != '\t'))
      fail_file(op, path, "bad .npy header: it has non-ASCII or control bytes");
  }
  DictParser p(dict, op, path);
  NpyHeader h;
  bool seen_descr = false, seen_order = false, seen_shape = false;
  p.expect('{');
  while (!p.eat('}')) {
    const std::string key = p.string_literal();
    p.expect(':');
    bool* seen = nullptr;
    if (key == "descr") {
      const std::string descr = p.string_literal();
      if (!parse_descr(descr, &h.dtype, &h.big_endian))
        fail_file(op, path,
                  "unsupported .npy dtype '" + descr +
                      "' (known: b1, u1, i1, i2, i4, i8, f2, f4, f8, in either byte order)");
      seen = &seen_descr;
    } else if (key == "fortran_order") {
      h.fortran_order = p.boolean();
      seen = &seen_order;
    } else if (key == "shape") {
      h.shape = p.shape();
      seen = &seen_shape;
    } else {
      p.bad("unknown key '" + key + "'");
    }
    if (*seen) p.bad("key '" + key + "' given twice");
    *seen = true;
    if (!p.eat(',')) {
      p.expect('}');
      break;
    }
  }
  if (!p.at_end()) p.bad("text after the dict");
  if (!seen_descr || !seen_order || !seen_shape)
    p.bad("it needs the keys 'descr', 'fortran_order' and 'shape'");
  int64_t numel = 0, nbytes = 0;
  if (!checked_numel(Shape(h.shape), &numel) ||
      !checked_mul(numel, static_cast<int64_t>(element_size(h.dtype)), &nbytes))
    fail_file(op, path, "bad .npy header: its shape's size does not fit 64 bits");
  h.data_offset = prefix_size + dict.size();
  h.data_bytes = static_cast<uint64_t>(nbytes);
  if (h.data_bytes > available)
    fail_file(op, path,
              "truncated data: the header's shape " + Shape(h.shape).str() + " of " +
                  dtype_name(h.dtype) + " needs " + std::to_string(h.data_bytes) +
                  " bytes, the file has " + std::to_string(available) + " after the header");
  return h;
}

}  // namespace tensorlet::io

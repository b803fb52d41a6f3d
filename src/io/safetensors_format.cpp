// The safetensors header (safetensors_format.h): built with nlohmann's ordered JSON, parsed by a
// SAX handler that checks the structure as it streams by, so no JSON tree is built and nothing
// but the entries is kept.
#include "tensorlet/io/safetensors_format.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "tensorlet/tensor/shape.h"
#include "tensorlet/io/file_io.h"

namespace tensorlet::io {
namespace {

// The reference implementation's dtype strings in the order of its dtype enum (the writer orders
// the data by it, last first); `tensorlet` marks the ones tensorlet has.
struct DTypeRow {
  const char* name;
  bool tensorlet;
  DType dtype;
};
constexpr DTypeRow kDTypeRows[] = {
    {"BOOL", true, DType::Bool},     {"F4", false, {}},           {"F6_E2M3", false, {}},
    {"F6_E3M2", false, {}},          {"U8", true, DType::UInt8},  {"I8", true, DType::Int8},
    {"F8_E5M2", false, {}},          {"F8_E4M3", false, {}},      {"F8_E8M0", false, {}},
    {"I16", true, DType::Int16},     {"U16", false, {}},          {"F16", true, DType::Float16},
    {"BF16", true, DType::BFloat16}, {"I32", true, DType::Int32}, {"U32", false, {}},
    {"F32", true, DType::Float32},   {"C64", false, {}},          {"F64", true, DType::Float64},
    {"I64", true, DType::Int64},     {"U64", false, {}},
};

size_t dtype_rank(DType d) {
  for (size_t i = 0; i < std::size(kDTypeRows); ++i)
    if (kDTypeRows[i].tensorlet && kDTypeRows[i].dtype == d) return i;
  return 0;  // unreachable: every tensorlet dtype has a row
}

// A name or string for a message: JSON-quoted (control characters escaped, bad UTF-8 replaced)
// and cut short, since it comes from the file or the caller and may be anything.
std::string json_quoted(std::string_view s) {
  constexpr size_t kMax = 120;
  std::string cut(s.substr(0, kMax));
  std::string out =
      nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > kMax) out += "...";
  return out;
}

// nlohmann's parse error without its exception id, printable ASCII only and not too long.
std::string parse_error_text(const std::string& what) {
  std::string text = what;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find("] ");
    if (close != std::string::npos) text.erase(0, close + 2);
  }
  for (char& c : text)
    if (c < 0x20 || c > 0x7e) c = '?';
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

// One entry as the JSON gave it, before its values are checked.
struct RawEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<uint64_t> offsets;
  bool has_dtype = false, has_shape = false, has_offsets = false;
};

// Checks the header's structure event by event: an object of tensor entries, each an object with
// "dtype" (a string), "shape" (at most kMaxDims integers in int64) and "data_offsets" (two
// integers), and an optional "__metadata__" object of strings (null as none, as the reference
// reads it). Other keys of an entry are skipped, as by the reference. A handler returning false
// stops the parse with `error` set.
class HeaderSax final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string error;
  std::vector<RawEntry> entries;
  std::map<std::string, std::string> metadata;

  bool null() override {
    if (state_ == State::MetadataStart) return to(State::Root);
    return scalar("null");
  }
  bool boolean(bool /*v*/) override { return scalar("a boolean"); }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override {
    return scalar("a number that is not an integer of 64 bits");
  }
  bool binary(binary_t& /*v*/) override { return scalar("binary data"); }
  bool number_integer(number_integer_t v) override {
    if (v >= 0) return number_unsigned(static_cast<number_unsigned_t>(v));
    if (state_ == State::Shape || state_ == State::Offsets)
      return wrong("a negative number " + std::to_string(v));
    return scalar("a number");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (state_ == State::Shape) {
      RawEntry& e = entries.back();
      if (e.shape.size() >= static_cast<size_t>(kMaxDims))
        return wrong("more than " + std::to_string(kMaxDims) + " dimensions");
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return wrong("a dimension past int64 (" + std::to_string(v) + ")");
      e.shape.push_back(v);
      return true;
    }
    if (state_ == State::Offsets) {
      RawEntry& e = entries.back();
      if (e.offsets.size() >= 2) return wrong("more than two numbers");
      e.offsets.push_back(v);
      return true;
    }
    return scalar("a number");
  }
  bool string(string_t& v) override {
    if (state_ == State::Dtype) {
      entries.back().dtype = std::move(v);
      return to(State::Entry);
    }
    if (state_ == State::MetadataValue) {
      metadata.emplace(std::move(metadata_key_), std::move(v));
      return to(State::Metadata);
    }
    return scalar("a string");
  }
  bool start_object(std::size_t /*n*/) override {
    switch (state_) {
      case State::Start:
        return to(State::Root);
      case State::MetadataStart:
        return to(State::Metadata);
      case State::EntryStart:
        return to(State::Entry);
      case State::Skip:
        ++skip_depth_;
        return true;
      default:
        return wrong("an object");
    }
  }
  bool start_array(std::size_t /*n*/) override {
    switch (state_) {
      case State::ShapeStart:
        return to(State::Shape);
      case State::OffsetsStart:
        return to(State::Offsets);
      case State::Skip:
        ++skip_depth_;
        return true;
      default:
        return wrong("an array");
    }
  }
  bool key(string_t& k) override {
    switch (state_) {
      case State::Root:
        if (k == "__metadata__") {
          if (seen_metadata_) return fail("the key \"__metadata__\" is given twice");
          seen_metadata_ = true;
          return to(State::MetadataStart);
        }
        if (!names_.insert(k).second)
          return fail("the tensor name " + json_quoted(k) + " is given twice");
        entries.emplace_back();
        entries.back().name = std::move(k);
        entry_keys_.clear();
        return to(State::EntryStart);
      case State::Metadata:
        if (metadata.count(k) != 0)
          return fail("the metadata key " + json_quoted(k) + " is given twice");
        metadata_key_ = std::move(k);
        return to(State::MetadataValue);
      case State::Entry: {
        RawEntry& e = entries.back();
        if (!entry_keys_.insert(k).second)
          return fail("tensor " + json_quoted(e.name) + " gives " + json_quoted(k) + " twice");
        if (k == "dtype") {
          e.has_dtype = true;
          return to(State::Dtype);
        }
        if (k == "shape") {
          e.has_shape = true;
          return to(State::ShapeStart);
        }
        if (k == "data_offsets") {
          e.has_offsets = true;
          return to(State::OffsetsStart);
        }
        skip_depth_ = 0;
        return to(State::Skip);
      }
      default:
        return true;  // a key inside a skipped value
    }
  }
  bool end_object() override {
    switch (state_) {
      case State::Root:
        return to(State::Done);
      case State::Metadata:
        return to(State::Root);
      case State::Entry: {
        const RawEntry& e = entries.back();
        const char* missing = !e.has_dtype     ? "dtype"
                              : !e.has_shape   ? "shape"
                              : !e.has_offsets ? "data_offsets"
                                               : nullptr;
        if (missing != nullptr)
          return fail("tensor " + json_quoted(e.name) + " has no \"" + missing + "\"");
        return to(State::Root);
      }
      default:
        return end_skipped();
    }
  }
  bool end_array() override {
    switch (state_) {
      case State::Shape:
        return to(State::Entry);
      case State::Offsets:
        if (entries.back().offsets.size() != 2) return wrong("fewer than two numbers");
        return to(State::Entry);
      default:
        return end_skipped();
    }
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    if (error.empty()) error = "the header is not valid JSON: " + parse_error_text(ex.what());
    return false;
  }

 private:
  enum class State {
    Start,
    Root,
    MetadataStart,
    Metadata,
    MetadataValue,
    EntryStart,
    Entry,
    Dtype,
    ShapeStart,
    Shape,
    OffsetsStart,
    Offsets,
    Skip,
    Done
  };

  bool to(State s) {
    state_ = s;
    return true;
  }
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }
  // A scalar: the whole value when skipping at the top of a skipped value, else out of place.
  bool scalar(const std::string& found) {
    if (state_ == State::Skip) return skip_depth_ == 0 ? to(State::Entry) : true;
    return wrong(found);
  }
  bool end_skipped() {
    // Only a skipped value's own containers end here: every other state that can see an end has
    // its case above, and the parser matches brackets.
    if (state_ != State::Skip || skip_depth_ == 0) return wrong("the end of a container");
    if (--skip_depth_ == 0) state_ = State::Entry;
    return true;
  }
  // "expected <what the state needs>, found <found>".
  bool wrong(const std::string& found) {
    const std::string name = entries.empty() ? std::string() : json_quoted(entries.back().name);
    std::string want;
    switch (state_) {
      case State::Start:
        want = "the header to be a JSON object";
        break;
      case State::MetadataStart:
      case State::Metadata:
        want = "\"__metadata__\" to be an object of strings";
        break;
      case State::MetadataValue:
        want = "the metadata value of " + json_quoted(metadata_key_) + " to be a string";
        break;
      case State::EntryStart:
        want = "tensor " + name + " to be an object";
        break;
      case State::Dtype:
        want = "tensor " + name + "'s \"dtype\" to be a string";
        break;
      case State::ShapeStart:
      case State::Shape:
        want = "tensor " + name + "'s \"shape\" to be an array of non-negative integers";
        break;
      case State::OffsetsStart:
      case State::Offsets:
        want = "tensor " + name + "'s \"data_offsets\" to be two non-negative integers";
        break;
      default:
        want = "a valid header";
        break;
    }
    return fail("expected " + want + ", found " + found);
  }

  State state_ = State::Start;
  int64_t skip_depth_ = 0;
  bool seen_metadata_ = false;
  std::set<std::string> names_;       // tensor names so far
  std::set<std::string> entry_keys_;  // keys of the entry being read
  std::string metadata_key_;
};

// The entry's dtype, or an IOError naming the string it has.
DType entry_dtype(const RawEntry& e, const char* op, const std::string& path) {
  for (const DTypeRow& row : kDTypeRows) {
    if (e.dtype != row.name) continue;
    if (!row.tensorlet)
      fail_file(op, path,
                "tensor " + json_quoted(e.name) + " has the safetensors dtype " +
                    json_quoted(e.dtype) + ", which tensorlet does not have");
    return row.dtype;
  }
  fail_file(op, path,
            "tensor " + json_quoted(e.name) + " has an unknown dtype " + json_quoted(e.dtype));
}

std::string byte_range(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

}  // namespace

const char* safetensors_dtype_name(DType d) { return kDTypeRows[dtype_rank(d)].name; }

bool safetensors_data_before(DType a, const std::string& name_a, DType b,
                             const std::string& name_b) {
  const size_t ra = dtype_rank(a), rb = dtype_rank(b);
  if (ra != rb) return ra > rb;
  return name_a < name_b;
}

std::string safetensors_header(const std::vector<SafetensorsEntry>& entries,
                               const std::map<std::string, std::string>& metadata) {
  using ordered_json = nlohmann::ordered_json;
  ordered_json root = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json m = ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    root["__metadata__"] = std::move(m);
  }
  for (const SafetensorsEntry& e : entries) {
    ordered_json info = ordered_json::object();
    info["dtype"] = safetensors_dtype_name(e.dtype);
    info["shape"] = e.shape;
    info["data_offsets"] = ordered_json::array({e.begin, e.end});
    root[e.name] = std::move(info);
  }
  std::string text = root.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = text.size();
  for (size_t b = 0; b < 8; ++b) out[b] = static_cast<char>((n >> (8 * b)) & 0xff);
  return out + text;
}

uint64_t safetensors_header_length(const unsigned char* first8, uint64_t file_size, const char* op,
                                   const std::string& path) {
  uint64_t n = 0;
  for (size_t b = 0; b < 8; ++b) n |= static_cast<uint64_t>(first8[b]) << (8 * b);
  if (n > kSafetensorsMaxHeader)
    fail_file(op, path,
              "the header length " + std::to_string(n) + " is past the limit of " +
                  std::to_string(kSafetensorsMaxHeader) + " bytes");
  if (n > file_size - 8)
    fail_file(op, path,
              "the header length " + std::to_string(n) + " is larger than the file (" +
                  std::to_string(file_size) + " bytes)");
  return n;
}

SafetensorsHeader parse_safetensors_header(std::string_view text, uint64_t data_size,
                                           const char* op, const std::string& path) {
  // The reference's test before its JSON parser; JSON would also allow leading whitespace.
  if (text.empty() || text[0] != '{') fail_file(op, path, "the header does not start with '{'");
  HeaderSax sax;
  const bool ok = nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax,
                                            nlohmann::json::input_format_t::json, true);
  if (!ok) fail_file(op, path, sax.error.empty() ? "the header is not valid JSON" : sax.error);

  SafetensorsHeader h;
  h.data_offset = 8 + text.size();
  h.metadata = std::move(sax.metadata);
  h.entries.reserve(sax.entries.size());
  for (RawEntry& raw : sax.entries) {
    SafetensorsEntry e;
    e.dtype = entry_dtype(raw, op, path);
    e.shape.assign(raw.shape.begin(), raw.shape.end());  // each checked to fit int64
    int64_t numel = 1, bytes = 0;
    for (int64_t d : e.shape)
      if (!checked_mul(numel, d, &numel))
        fail_file(
            op, path,
            "tensor " + json_quoted(raw.name) + "'s shape has more elements than int64 holds");
    if (!checked_mul(numel, static_cast<int64_t>(element_size(e.dtype)), &bytes))
      fail_file(op, path,
                "tensor " + json_quoted(raw.name) + "'s size in bytes does not fit int64");
    e.begin = raw.offsets[0];
    e.end = raw.offsets[1];
    if (e.end < e.begin)
      fail_file(op, path,
                "tensor " + json_quoted(raw.name) + "'s data_offsets " +
                    byte_range(e.begin, e.end) + " end before they begin");
    if (e.end - e.begin != static_cast<uint64_t>(bytes))
      fail_file(op, path,
                "tensor " + json_quoted(raw.name) + " of " + std::to_string(numel) + " " +
                    dtype_name(e.dtype) + " elements needs " + std::to_string(bytes) +
                    " bytes, its data_offsets " + byte_range(e.begin, e.end) + " hold " +
                    std::to_string(e.end - e.begin));
    e.name = std::move(raw.name);
    h.entries.push_back(std::move(e));
  }
  // The data buffer must be the entries end to end: sorted by their ranges (an empty range before
  // a full one at the same place), each must begin where the one before ended.
  std::sort(h.entries.begin(), h.entries.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  uint64_t at = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry& e : h.entries) {
    if (e.end > data_size)
      fail_file(op, path,
                "tensor " + json_quoted(e.name) + "'s data_offsets " + byte_range(e.begin, e.end) +
                    " reach past the data (" + std::to_string(data_size) + " bytes)");
    if (e.begin < at)
      fail_file(op, path,
                "tensor " + json_quoted(e.name) + "'s bytes " + byte_range(e.begin, e.end) +
                    " overlap tensor " + json_quoted(previous->name) + "'s " +
                    byte_range(previous->begin, previous->end));
    if (e.begin > at)
      fail_file(op, path,
                "the data has a hole: bytes " + byte_range(at, e.begin) +
                    " belong to no tensor (tensor " + json_quoted(e.name) + " begins at " +
                    std::to_string(e.begin) + ")");
    at = e.end;
    previous = &e;
  }
  if (at != data_size)
    fail_file(op, path,
              "the tensors cover " + std::to_string(at) + " bytes of the data, the file has " +
                  std::to_string(data_size) + " bytes after the header");
  return h;
}

}  // namespace tensorlet::io

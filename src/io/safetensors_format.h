// The safetensors header: dtype strings, the reference writer's data order, building a header,
// and parsing and checking one without trusting any of it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensorlet/tensor/dtype.h"

namespace tensorlet::io {

// The reference implementation's limit, which bounds what a loader allocates for the header.
inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // bytes [begin, end) of the data buffer (after the header)
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in data order
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // bytes from the start of the file to the data buffer: 8 + length
};

// "F32" for float32, and so on.
const char* safetensors_dtype_name(DType d);

// True when `a` comes before `b` in the reference writer's data buffer: larger alignment first
// (the order of its dtype enum, reversed), then names in byte order.
bool safetensors_data_before(DType a, const std::string& name_a, DType b,
                             const std::string& name_b);

// The 8-byte little-endian length and the compact JSON header as the reference writes it
// (`__metadata__` first when there is any, then the entries in the order given), padded with
// spaces so that the data starts at a multiple of 8. Names and metadata must be valid UTF-8.
std::string safetensors_header(const std::vector<SafetensorsEntry>& entries,
                               const std::map<std::string, std::string>& metadata);

// The header's length from the file's first 8 bytes, checked against the limit and against the
// `file_size` bytes of the file.
uint64_t safetensors_header_length(const unsigned char* first8, uint64_t file_size, const char* op,
                                   const std::string& path);

// Parses the header's text and checks every entry against the `data_size` bytes after it:
// dtypes tensorlet has, shapes within 16 dims and int64, each entry's bytes matching its shape,
// and the entries covering the data exactly, in order, with no holes or overlaps. Duplicate keys
// anywhere are refused. Every problem is an IOError "[op] path: ...".
SafetensorsHeader parse_safetensors_header(std::string_view text, uint64_t data_size,
                                           const char* op, const std::string& path);

}  // namespace tensorlet::io

// safetensors files (Hugging Face's format): tl::save_safetensors / tl::load_safetensors of named
// tensors, and the file's string metadata.
#pragma once

#include <map>
#include <string>

#include "tensorlet/tensor/device.h"
#include "tensorlet/io/tensor_map.h"

namespace tensorlet {

// Writes `tensors` (any device, any layout; copied to the host one at a time) and `metadata` to
// `path` as the reference implementation writes them: the data little-endian, ordered by dtype
// alignment (largest first) then name, after a JSON header padded with spaces so that the data
// starts 8-byte aligned. The file appears whole or not at all (written beside `path`, renamed over
// it). An undefined tensor, a name that is empty, not UTF-8 or "__metadata__", or metadata that is
// not UTF-8: Error; a file that cannot be written: IOError naming it.
void save_safetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a safetensors file. On the CPU nothing is copied: the file is mapped copy-on-write and
// each tensor views its bytes (a tensor written to gets private pages; the file never changes),
// the mapping kept until the last such tensor is gone; only a tensor whose bytes are not aligned
// to its element size is copied into memory of its own. The file must not be truncated or
// written in place while those tensors live (replacing it by a rename, as save_safetensors does,
// is fine). On cuda:N each tensor is copied once, asynchronously on the device's current stream,
// through page-locked staging memory in chunks of 64 MiB. Every problem with the file (header,
// dtypes tensorlet lacks, shapes, offsets that do not cover the data exactly) is an IOError
// "[tl::load_safetensors] path: what".
TensorMap load_safetensors(const std::string& path, Device device = Device::cpu());

// The file's "__metadata__" strings (empty when it has none); the whole header is checked as by
// load_safetensors, and the data is not read.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

}  // namespace tensorlet

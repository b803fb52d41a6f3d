// tl::save_safetensors / tl::load_safetensors (io/safetensors.h): the header through
// safetensors_format.h, the data written from each tensor's host copy and read as views of the
// mapped file.
#include "tensorlet/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "tensorlet/tensor/allocator.h"
#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/io/file_io.h"
#include "tensorlet/io/mapped_file.h"
#include "tensorlet/io/safetensors_format.h"
#include "tensorlet/io/utf8.h"
#include "tensorlet/ops/external_tensor.h"
#include "tensorlet/ops/factories.h"

namespace tensorlet {
namespace {

// The format is little-endian; tensors are written and viewed as they lie in memory.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little-endian");

void check_name(const char* op, const std::string& what, const std::string& s) {
  if (!io::is_valid_utf8(s)) fail<Error>(op, what, " is not valid UTF-8");
}

// A CPU tensor over the entry's bytes in the mapping (kept alive by the tensor's release
// function), or a copy of them when they are not aligned to the element size.
Tensor cpu_tensor(const char* op, const std::shared_ptr<io::MappedFile>& file, const void* bytes,
                  const io::SafetensorsEntry& e) {
  const Shape shape(e.shape);
  const size_t n = e.end - e.begin;
  if (n == 0) return empty(shape, e.dtype);
  if (reinterpret_cast<uintptr_t>(bytes) % element_size(e.dtype) != 0) {
    Tensor t = empty(shape, e.dtype);
    std::memcpy(t.data_ptr(), bytes, n);
    return t;
  }
  // The mapping is writable (private), so handing out a non-const pointer is safe.
  return detail::wrap_external(op, const_cast<void*>(bytes), shape, contiguous_strides(shape),
                               e.dtype, Device::cpu(),
                               [keep = file](void*) mutable { keep.reset(); });
}

// Page-locked staging memory goes in chunks of this size, so a load holds about two of them
// (the pinned allocator hands a chunk out again once its copy has run) whatever the tensors'
// sizes, not a pinned copy of the whole file.
constexpr size_t kStagingBytes = size_t{64} << 20;

// A tensor on `device`, filled chunk by chunk: a memcpy from the mapping into fresh pinned memory,
// then an asynchronous copy into the tensor's next elements (the pinned allocator keeps the chunk
// from reuse until that copy has run).
Tensor device_tensor(const void* bytes, const io::SafetensorsEntry& e, Device device) {
  Tensor out = empty(Shape(e.shape), TensorOptions(e.dtype).device(device));
  const int64_t numel = out.numel();
  if (numel == 0) return out;
  const auto width = static_cast<int64_t>(element_size(e.dtype));
  const int64_t chunk = static_cast<int64_t>(kStagingBytes) / width;
  const Tensor flat = out.view({numel});
  const auto* src = static_cast<const unsigned char*>(bytes);
  for (int64_t start = 0; start < numel; start += chunk) {
    const int64_t n = std::min(chunk, numel - start);
    Tensor staging = empty({n}, TensorOptions(e.dtype).pinned_memory(true));
    std::memcpy(staging.data_ptr(), src + start * width, static_cast<size_t>(n * width));
    flat.narrow(0, start, n).copy_(staging, /*non_blocking=*/true);
  }
  return out;
}

}  // namespace

void save_safetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  constexpr const char* op = "tl::save_safetensors";
  profiler::OpScope scope(op);
  for (const auto& [name, t] : tensors) {
    if (name.empty()) fail<Error>(op, "a tensor has an empty name");
    check_name(op, "a tensor name", name);
    if (name == "__metadata__")
      fail<Error>(op, "\"__metadata__\" is the metadata's key, not a tensor name");
    if (!t.defined()) fail<Error>(op, "the tensor \"", name, "\" is undefined");
  }
  for (const auto& [k, v] : metadata) {
    check_name(op, "a metadata key", k);
    check_name(op, "the metadata value of \"" + k + "\"", v);
  }
  // The reference writer's order, then each entry's place in the data.
  std::vector<std::pair<const std::string*, const Tensor*>> order;
  order.reserve(tensors.size());
  for (const auto& [name, t] : tensors) order.emplace_back(&name, &t);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return io::safetensors_data_before(a.second->dtype(), *a.first, b.second->dtype(), *b.first);
  });
  std::vector<io::SafetensorsEntry> entries;
  entries.reserve(order.size());
  uint64_t at = 0;
  for (const auto& [name, t] : order) {
    io::SafetensorsEntry e;
    e.name = *name;
    e.dtype = t->dtype();
    e.shape = t->shape().vec();
    e.begin = at;
    at += static_cast<uint64_t>(t->nbytes());
    e.end = at;
    entries.push_back(std::move(e));
  }
  const std::string header = io::safetensors_header(entries, metadata);
  io::AtomicFileWriter out(path, op);
  out.write(header.data(), header.size());
  // One host copy at a time, so a model on the GPU needs host memory for one tensor, not all.
  for (const auto& [name, t] : order) {
    if (t->numel() == 0) continue;
    // Made contiguous where it lives (on a GPU by a kernel), then one copy to the host, not two.
    const Tensor host = t->contiguous().cpu();
    out.write(host.data_ptr(), host.nbytes());
  }
  out.commit();
}

TensorMap load_safetensors(const std::string& path, Device device) {
  constexpr const char* op = "tl::load_safetensors";
  profiler::OpScope scope(op);
  // A device this build lacks is refused before the file is opened, even when it has no tensors.
  if (!device.is_cpu()) (void)allocator_for(device);
  auto file = std::make_shared<io::MappedFile>(path, op);
  if (file->size() < 8)
    io::fail_file(op, path,
                  "truncated file: the header length needs 8 bytes, the file has " +
                      std::to_string(file->size()));
  const uint64_t length = io::safetensors_header_length(file->data(), file->size(), op, path);
  const io::SafetensorsHeader h = io::parse_safetensors_header(
      std::string_view(reinterpret_cast<const char*>(file->data()) + 8, length),
      file->size() - 8 - length, op, path);
  const unsigned char* data = file->data() + h.data_offset;
  TensorMap out;
  for (const io::SafetensorsEntry& e : h.entries) {
    const unsigned char* bytes = data + e.begin;
    out.emplace(e.name,
                device.is_cpu() ? cpu_tensor(op, file, bytes, e) : device_tensor(bytes, e, device));
  }
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  constexpr const char* op = "tl::load_safetensors_metadata";
  profiler::OpScope scope(op);
  const io::FileReader in(path, op);
  unsigned char prefix[8] = {};
  in.read_at(0, prefix, 8, "the header length");
  const uint64_t length = io::safetensors_header_length(prefix, in.size(), op, path);
  std::string text(length, '\0');
  in.read_at(8, text.data(), text.size(), "the header");
  return io::parse_safetensors_header(text, in.size() - 8 - length, op, path).metadata;
}

}  // namespace tensorlet

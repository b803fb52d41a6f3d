// A whole file mapped copy-on-write, for loaders that hand out tensors viewing a file's bytes.
#pragma once

#include <cstdint>
#include <string>

namespace tensorlet::io {

// Maps `path` private and writable: a write through the mapping copies the page and never
// reaches the file, so tensors viewing it behave as the caller's own memory. The descriptor is
// closed at once (the mapping keeps the file's pages); the mapping goes with the object. The
// file must not be truncated or written in place while mapped (replacing it by a rename, as
// AtomicFileWriter does, is fine). Errors are IOError "[op] path: what".
class MappedFile {
 public:
  MappedFile(const std::string& path, const char* op);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Null for an empty file (nothing to map).
  unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace tensorlet::io

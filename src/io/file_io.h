// Files for tl::save / tl::load: a reader that bounds every read by the file's size, and a writer
// that replaces its path whole or not at all. Errors are IOError "[op] path: what".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensorlet::io {

// Throws IOError "[op] path: parts..." (a strerror text appended when errnum != 0).
[[noreturn]] void fail_file(const char* op, const std::string& path, const std::string& what,
                            int errnum = 0);

class FileReader {
 public:
  FileReader(const std::string& path, const char* op);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  uint64_t size() const { return size_; }
  // Reads exactly n bytes at `offset`; a read past the end throws "truncated ...: `what`".
  void read_at(uint64_t offset, void* out, size_t n, const char* what) const;

 private:
  std::string path_;
  const char* op_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Writes into a temporary file beside `path` (same folder, so the rename cannot cross file
// systems); commit() flushes it to disk and renames it over `path`. Without commit() (an error
// or an exception on the way) the temporary is removed and `path` is left as it was.
class AtomicFileWriter {
 public:
  AtomicFileWriter(const std::string& path, const char* op);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t n);
  // Overwrites n bytes already written at `offset` (a header completed once its data is out).
  void write_at(uint64_t offset, const void* data, size_t n);
  // How many bytes write() has appended.
  uint64_t size() const { return size_; }
  void commit();

 private:
  std::string path_, temp_;
  const char* op_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace tensorlet::io

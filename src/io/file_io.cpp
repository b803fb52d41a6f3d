// POSIX file reading and atomic replacement for tl::save / tl::load (file_io.h).
#include "tensorlet/io/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "tensorlet/tensor/error.h"

namespace tensorlet::io {

void fail_file(const char* op, const std::string& path, const std::string& what, int errnum) {
  if (errnum != 0) fail<IOError>(op, path, ": ", what, ": ", std::strerror(errnum));
  fail<IOError>(op, path, ": ", what);
}

FileReader::FileReader(const std::string& path, const char* op) : path_(path), op_(op) {
  do {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) fail_file(op, path, "cannot open for reading", errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    fail_file(op, path, "cannot stat", e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail_file(op, path, "not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

void FileReader::read_at(uint64_t offset, void* out, size_t n, const char* what) const {
  if (offset > size_ || n > size_ - offset)
    fail_file(op_, path_,
              std::string("truncated file: ") + what + " needs " + std::to_string(n) +
                  " bytes at offset " + std::to_string(offset) + ", the file has " +
                  std::to_string(size_));
  char* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_file(op_, path_, std::string("cannot read ") + what, errno);
    if (got == 0) fail_file(op_, path_, std::string("file shrank while reading ") + what);
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
}

AtomicFileWriter::AtomicFileWriter(const std::string& path, const char* op) : path_(path), op_(op) {
  // A fresh name per attempt; O_EXCL so that two writers never share one. Created with mode 0666
  // so the umask applies, as for any new file.
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    temp_ = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
            std::to_string(rd() % 1000000);
    do {
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0 && errno != EEXIST)
      fail_file(op, path, "cannot create a temporary file beside it", errno);
  }
  if (fd_ < 0) fail_file(op, path, "cannot create a temporary file beside it", EEXIST);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ < 0) return;  // committed
  ::close(fd_);
  ::unlink(temp_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail_file(op_, path_, "cannot write", errno);
    p += put;
    n -= static_cast<size_t>(put);
    size_ += static_cast<uint64_t>(put);
  }
}

void AtomicFileWriter::write_at(uint64_t offset, const void* data, size_t n) {
  if (offset > size_ || n > size_ - offset)
    fail_file(op_, path_, "internal error: a rewrite past what was written");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail_file(op_, path_, "cannot write", errno);
    p += put;
    n -= static_cast<size_t>(put);
    offset += static_cast<uint64_t>(put);
  }
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) fail_file(op_, path_, "cannot flush to disk", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp_.c_str());
    fail_file(op_, path_, "cannot close", e);
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp_.c_str());
    fail_file(op_, path_, "cannot replace it with the written file", e);
  }
}

}  // namespace tensorlet::io

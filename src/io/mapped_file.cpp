// mmap of a whole file, copy-on-write (mapped_file.h).
#include "tensorlet/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

#include "tensorlet/io/file_io.h"

namespace tensorlet::io {

MappedFile::MappedFile(const std::string& path, const char* op) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail_file(op, path, "cannot open for reading", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    fail_file(op, path, "cannot stat", e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail_file(op, path, "not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > std::numeric_limits<size_t>::max()) {
    ::close(fd);
    fail_file(op, path, "too large to map into memory");
  }
  if (size_ > 0) {
    // MAP_NORESERVE: a private writable mapping is otherwise charged in full against the
    // machine's commit limit, which refuses files larger than memory plus swap although only the
    // pages written ever need memory of their own.
    void* p = ::mmap(nullptr, static_cast<size_t>(size_), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      fail_file(op, path, "cannot map into memory", e);
    }
    data_ = static_cast<unsigned char*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, static_cast<size_t>(size_));
}

}  // namespace tensorlet::io

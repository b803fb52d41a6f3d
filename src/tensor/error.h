// Typed errors: every misuse throws a tl::Error subclass whose message starts with "[tl::op]".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tensorlet {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};
class ShapeError : public Error {
 public:
  using Error::Error;
};
class DTypeError : public Error {
 public:
  using Error::Error;
};
class DeviceError : public Error {
 public:
  using Error::Error;
};
class IndexError : public Error {
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};
class CudaError : public Error {
 public:
  using Error::Error;
};
// A file that cannot be read or written, or whose content is not what its format says: the
// message names the file and what is wrong (tl::load, tl::save).
class IOError : public Error {
 public:
  using Error::Error;
};

namespace detail {
// Builds "[tl::op] part1part2..." from anything streamable.
template <typename... Parts>
std::string error_message(const char* op, const Parts&... parts) {
  std::ostringstream os;
  os << "[" << op << "] ";
  (os << ... << parts);
  return os.str();
}
}  // namespace detail

// Throws E with a message "[op] ..." built from the streamable parts.
template <typename E, typename... Parts>
[[noreturn]] void fail(const char* op, const Parts&... parts) {
  throw E(detail::error_message(op, parts...));
}

}  // namespace tensorlet

// Checks a condition in an op front-end; on failure throws E("[op] msg...").
#define TL_CHECK(cond, E, op, ...)                      \
  do {                                                  \
    if (!(cond)) ::tensorlet::fail<E>(op, __VA_ARGS__); \
  } while (0)

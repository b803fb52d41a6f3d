// The NCCL unique id as text: hex for environment variables and files, and the id file that rank 0
// publishes atomically and the other ranks poll for.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tensorlet/distributed/nccl_internal.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::distributed {
namespace detail {

std::string to_hex(const ncclUniqueId& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * NCCL_UNIQUE_ID_BYTES);
  for (char c : id.internal) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(digits[byte >> 4]);
    out.push_back(digits[byte & 15]);
  }
  return out;
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ncclUniqueId from_hex(const std::string& hex, const char* op, const std::string& source) {
  std::string text = hex;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  ncclUniqueId id;
  if (text.size() != 2 * sizeof(id.internal))
    fail<Error>(op, source, " holds ", text.size(), " characters; an NCCL unique id is ",
                2 * sizeof(id.internal), " hex digits (Communicator::unique_id_hex())");
  for (size_t i = 0; i < sizeof(id.internal); ++i) {
    const int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0)
      fail<Error>(op, source, " is not hex (character ", 2 * i, "); an NCCL unique id is ",
                  2 * sizeof(id.internal), " hex digits (Communicator::unique_id_hex())");
    id.internal[i] = static_cast<char>(hi * 16 + lo);
  }
  return id;
}

void write_id_file(const std::string& path, const ncclUniqueId& id, const char* op) {
  // Readers poll for `path`: renaming a complete file into place means they never read half.
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << to_hex(id) << "\n";
    out.close();
    if (!out) fail<Error>(op, "cannot write the NCCL id to ", tmp, ": ", std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail<Error>(op, "cannot rename ", tmp, " to ", path, ": ", std::strerror(err));
  }
}

bool read_id_file(const std::string& path, ncclUniqueId* id, Clock::time_point deadline,
                  const char* op) {
  Poller poller;
  while (true) {
    std::ifstream in(path);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      *id = from_hex(text.str(), op, "the id file " + path);
      return true;
    }
    if (Clock::now() >= deadline) return false;
    poller.pause();
  }
}

}  // namespace detail

std::string Communicator::unique_id_hex() {
  detail::prepare_nccl();
  ncclUniqueId id;
  detail::check_nccl(ncclGetUniqueId(&id), nullptr, "tl::distributed::unique_id_hex",
                     "ncclGetUniqueId");
  return detail::to_hex(id);
}

}  // namespace tensorlet::distributed

// The IDX reader: the file's bytes (inflated when gzip'd), the header checked against them, the
// big-endian elements copied into a CPU tensor.
#include "tensorlet/io/idx.h"

#include <cstring>
#include <vector>

#include "tensorlet/io/file_io.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/tensor/error.h"

#if defined(TL_WITH_ZLIB)
#include <zlib.h>
#endif

namespace tensorlet {
namespace {

constexpr const char* kOp = "tl::load_idx";
// Inflated files stop here: a hostile gzip cannot make the reader allocate without bound.
constexpr uint64_t kMaxInflated = uint64_t{1} << 34;

std::vector<uint8_t> file_bytes(const std::string& path) {
  io::FileReader file(path, kOp);
  std::vector<uint8_t> bytes(static_cast<size_t>(file.size()));
  if (!bytes.empty()) file.read_at(0, bytes.data(), bytes.size(), "the file");
  return bytes;
}

std::vector<uint8_t> inflated(const std::vector<uint8_t>& in, const std::string& path) {
#if !defined(TL_WITH_ZLIB)
  (void)in;
  io::fail_file(kOp, path,
                "is gzip'd, and this build of tensorlet has no zlib (install zlib1g-dev and "
                "reconfigure, or gunzip the file)");
#else
  z_stream z{};
  // 16 + MAX_WBITS: a gzip wrapper, not a raw or zlib one.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    io::fail_file(kOp, path, "zlib cannot start inflating (out of memory?)");
  std::vector<uint8_t> out;
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  int r = Z_OK;
  while (r != Z_STREAM_END) {
    if (out.size() >= kMaxInflated) {
      inflateEnd(&z);
      io::fail_file(kOp, path, "inflates past 16 GiB");
    }
    const size_t at = out.size();
    out.resize(at + (size_t{1} << 20));
    z.next_out = out.data() + at;
    z.avail_out = static_cast<uInt>(out.size() - at);
    r = inflate(&z, Z_NO_FLUSH);
    out.resize(out.size() - z.avail_out);
    if (r == Z_OK) continue;
    if (r == Z_STREAM_END) break;
    const std::string msg = z.msg ? z.msg : "error";
    inflateEnd(&z);
    if (r == Z_BUF_ERROR) io::fail_file(kOp, path, "its gzip stream is cut short (truncated)");
    io::fail_file(kOp, path, "bad gzip data (zlib: " + msg + ")");
  }
  inflateEnd(&z);
  return out;
#endif
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

struct IdxType {
  DType dtype;
  size_t size;
};

bool idx_type(uint8_t code, IdxType* out) {
  switch (code) {
    case 0x08:
      *out = {kUInt8, 1};
      return true;
    case 0x09:
      *out = {kInt8, 1};
      return true;
    case 0x0B:
      *out = {kInt16, 2};
      return true;
    case 0x0C:
      *out = {kInt32, 4};
      return true;
    case 0x0D:
      *out = {kFloat32, 4};
      return true;
    case 0x0E:
      *out = {kFloat64, 8};
      return true;
    default:
      return false;
  }
}

}  // namespace

Tensor load_idx(const std::string& path) {
  std::vector<uint8_t> bytes = file_bytes(path);
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) bytes = inflated(bytes, path);
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    io::fail_file(kOp, path, "is not an IDX file (its first two bytes are not zero)");
  IdxType type{};
  if (!idx_type(bytes[2], &type))
    io::fail_file(kOp, path, "has an unknown IDX element type " + std::to_string(bytes[2]));
  const size_t ndim = bytes[3];
  if (bytes.size() < 4 + 4 * ndim)
    io::fail_file(kOp, path, "is truncated inside its " + std::to_string(ndim) + " dims");
  std::vector<int64_t> dims;
  for (size_t d = 0; d < ndim; ++d) dims.push_back(big_endian_u32(&bytes[4 + 4 * d]));
  const Shape shape(dims);
  int64_t numel = 0;
  if (!checked_numel(shape, &numel)) io::fail_file(kOp, path, "has dims whose product overflows");
  const size_t header = 4 + 4 * ndim;
  const uint64_t want = static_cast<uint64_t>(numel) * type.size;
  const uint64_t have = bytes.size() - header;
  if (have != want)
    io::fail_file(kOp, path,
                  "holds " + std::to_string(have) + " bytes of data where its dims " + "need " +
                      std::to_string(want));
  Tensor out = empty(shape, type.dtype);
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  const uint8_t* src = bytes.data() + header;
  // Big-endian elements: each one's bytes reversed on this little-endian machine.
  for (uint64_t i = 0; i < static_cast<uint64_t>(numel); ++i)
    for (size_t b = 0; b < type.size; ++b)
      dst[i * type.size + b] = src[i * type.size + type.size - 1 - b];
  return out;
}

}  // namespace tensorlet

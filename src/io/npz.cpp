// tl::save_npz / tl::load_npz (io/npz.h): each tensor a "<name>.npy" member of a zip archive
// (zip_format.h), its bytes those of tl::save (npy_tensor.h), stored or deflated through zlib.
#include "tensorlet/io/npz.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tensorlet/tensor/error.h"
#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/io/file_io.h"

#if defined(TL_WITH_ZLIB)
#include <zlib.h>

#include <set>

#include "tensorlet/io/npy_tensor.h"
#include "tensorlet/io/utf8.h"
#include "tensorlet/io/zip_format.h"
#endif

namespace tensorlet {
namespace {

#if !defined(TL_WITH_ZLIB)

constexpr const char* kNoZlib =
    "this build of tensorlet has no zlib, which .npz archives need (install zlib1g-dev and "
    "reconfigure)";

#else

// zlib counts bytes in uInt: it is handed at most this many per call.
constexpr size_t kZlibChunk = size_t{1} << 30;
// What deflate writes or inflate reads per file access.
constexpr size_t kBufferSize = size_t{256} << 10;
// Deflate's largest ratio (a 258-byte match in 2 bits): a member claiming more output per
// compressed byte is refused before anything is allocated for it.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint32_t crc_update(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const size_t k = std::min(n, kZlibChunk);
    crc = static_cast<uint32_t>(crc32(crc, p, static_cast<uInt>(k)));
    p += k;
    n -= k;
  }
  return crc;
}

// An upper bound on deflate's output for n input bytes, whatever the settings (zlib's own
// conservative bound, with room for the block headers).
uint64_t deflate_bound(uint64_t n) { return n + ((n + 7) >> 3) + ((n + 63) >> 6) + 64; }

void check_name(const std::string& name, const char* op) {
  if (name.empty()) fail<Error>(op, "a tensor name is empty");
  if (name.find('\0') != std::string::npos)
    fail<Error>(op, "the tensor name '", name.substr(0, name.find('\0')),
                "\\0...' holds a NUL byte");
  if (!io::is_valid_utf8(name))
    fail<Error>(op, "a tensor name is not valid UTF-8 (zip member names are UTF-8)");
  if (name.size() > 0xffff - 4)
    fail<Error>(op, "a tensor name of ", name.size(),
                " bytes is too long for a zip member (65531 at most)");
}

// Deflates a member into the file as its bytes come, as Python's zipfile does for
// numpy.savez_compressed: raw deflate (windowBits -15), the default level and memory.
class Deflater {
 public:
  Deflater(io::AtomicFileWriter& out, const char* op, const std::string& path)
      : out_(out), op_(op), path_(path), buffer_(kBufferSize) {
    if (deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      io::fail_file(op, path, "zlib cannot start deflating (out of memory?)");
  }
  ~Deflater() { deflateEnd(&z_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  void add(const void* data, size_t n) {
    const auto* p = static_cast<const Bytef*>(data);
    while (n > 0) {
      const size_t k = std::min(n, kZlibChunk);
      z_.next_in = const_cast<Bytef*>(p);
      z_.avail_in = static_cast<uInt>(k);
      while (z_.avail_in > 0) run(Z_NO_FLUSH);
      p += k;
      n -= k;
    }
  }
  void finish() {
    while (run(Z_FINISH) != Z_STREAM_END) {
    }
  }

 private:
  int run(int flush) {
    z_.next_out = buffer_.data();
    z_.avail_out = static_cast<uInt>(buffer_.size());
    const int r = deflate(&z_, flush);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
      io::fail_file(op_, path_, "zlib cannot deflate (error " + std::to_string(r) + ")");
    const size_t got = buffer_.size() - z_.avail_out;
    if (got > 0) out_.write(buffer_.data(), got);
    return r;
  }

  io::AtomicFileWriter& out_;
  const char* op_;
  const std::string& path_;
  std::vector<Bytef> buffer_;
  z_stream z_{};
};

// A member's .npy bytes front to back, CRC-32 computed as they pass.
class MemberReader : public io::NpyReader {
 public:
  MemberReader(const io::FileReader& file, const io::ZipEntry& e, const char* op,
               const std::string& where)
      : file_(file), e_(e), op_(op), where_(where) {}
  uint64_t size() const override { return e_.uncompressed_size; }
  std::string noun() const override { return "member"; }
  void read(void* out, size_t n, const char* what) override {
    if (n > e_.uncompressed_size - produced_)
      io::fail_file(op_, where_,
                    std::string("truncated member: ") + what + " needs " + std::to_string(n) +
                        " bytes at offset " + std::to_string(produced_) + ", the member has " +
                        std::to_string(e_.uncompressed_size));
    if (n == 0) return;
    fill(out, n);
    crc_ = crc_update(crc_, out, n);
    produced_ += n;
  }
  // After the last byte: the stream must end there; then the CRC-32 must be the recorded one.
  void finish() {
    end();
    if (crc_ != e_.crc32)
      io::fail_file(op_, where_,
                    "CRC-32 mismatch: the data gives " + hex(crc_) + ", the archive records " +
                        hex(e_.crc32));
  }

 protected:
  virtual void fill(void* out, size_t n) = 0;
  virtual void end() {}
  static std::string hex(uint32_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xf];
    return s;
  }

  const io::FileReader& file_;
  const io::ZipEntry& e_;
  const char* op_;
  const std::string& where_;
  uint64_t produced_ = 0;
  uint32_t crc_ = 0;
};

// A stored member: its bytes are read where they lie (the data straight into the tensor).
class StoredReader final : public MemberReader {
 public:
  using MemberReader::MemberReader;

 private:
  void fill(void* out, size_t n) override {
    file_.read_at(e_.data_offset + produced_, out, n, "a member's data");
  }
};

// A deflated member: its compressed bytes are read a buffer at a time and inflated straight into
// what is asked for, never past the member's uncompressed size.
class InflatingReader final : public MemberReader {
 public:
  InflatingReader(const io::FileReader& file, const io::ZipEntry& e, const char* op,
                  const std::string& where)
      : MemberReader(file, e, op, where),
        input_(static_cast<size_t>(std::min<uint64_t>(e.compressed_size, kBufferSize))) {
    if (inflateInit2(&z_, -15) != Z_OK)
      io::fail_file(op, where, "zlib cannot start inflating (out of memory?)");
  }
  ~InflatingReader() override { inflateEnd(&z_); }
  InflatingReader(const InflatingReader&) = delete;
  InflatingReader& operator=(const InflatingReader&) = delete;

 private:
  void fill(void* out, size_t n) override {
    auto* p = static_cast<Bytef*>(out);
    for (size_t done = 0; done < n;) {
      const uInt asked = static_cast<uInt>(std::min(n - done, kZlibChunk));
      z_.next_out = p + done;
      z_.avail_out = asked;
      const bool ended = step();
      done += asked - z_.avail_out;
      if (ended && done < n)
        io::fail_file(op_, where_,
                      "its deflate stream ends after " + std::to_string(produced_ + done) +
                          " bytes, the archive records " + std::to_string(e_.uncompressed_size));
    }
  }

  void end() override {
    // Every recorded byte is out: the stream must end here, with nothing more to give and no
    // compressed bytes after it.
    Bytef extra = 0;
    for (;;) {
      z_.next_out = &extra;
      z_.avail_out = 1;
      const bool ended = step();
      if (z_.avail_out == 0)
        io::fail_file(op_, where_,
                      "inflating gives more than the " + std::to_string(e_.uncompressed_size) +
                          " bytes the archive records");
      if (ended) break;
    }
    if (z_.avail_in != 0 || consumed_ != e_.compressed_size)
      io::fail_file(op_, where_,
                    std::to_string(e_.compressed_size - consumed_ + z_.avail_in) +
                        " compressed bytes follow the end of its deflate stream");
  }

  // One inflate call with input refilled from the file; true when the stream has ended.
  bool step() {
    if (z_.avail_in == 0 && consumed_ < e_.compressed_size) {
      const size_t k =
          static_cast<size_t>(std::min<uint64_t>(input_.size(), e_.compressed_size - consumed_));
      file_.read_at(e_.data_offset + consumed_, input_.data(), k, "a member's compressed data");
      consumed_ += k;
      z_.next_in = input_.data();
      z_.avail_in = static_cast<uInt>(k);
    }
    const int r = inflate(&z_, Z_NO_FLUSH);
    if (r == Z_STREAM_END) return true;
    if (r == Z_OK) return false;
    // No progress was possible: with output room left, that means no input is left.
    if (r == Z_BUF_ERROR)
      io::fail_file(op_, where_, "its deflate stream is cut short (truncated compressed data)");
    if (r == Z_MEM_ERROR) io::fail_file(op_, where_, "zlib ran out of memory inflating it");
    io::fail_file(op_, where_,
                  std::string("bad deflate data (zlib: ") + (z_.msg ? z_.msg : "error") + ")");
  }

  std::vector<Bytef> input_;
  uint64_t consumed_ = 0;  // compressed bytes read from the file
  z_stream z_{};
};

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The tensor's name: the member's less a trailing ".npy", as NumPy's.
std::string tensor_name(const io::ZipEntry& e) {
  return ends_with(e.name, ".npy") ? e.name.substr(0, e.name.size() - 4) : e.name;
}

// Where messages about a member say it went wrong: "path: member 'x.npy'".
std::string member_where(const std::string& path, const io::ZipEntry& e) {
  return path + ": member '" + e.name + "'";
}

// The member's header, then its data straight into the tensor, then its end and CRC-32.
Tensor read_member(MemberReader& in, const io::ZipEntry& e, const char* op,
                   const std::string& where) {
  const io::NpyHeader h = io::read_npy_header(in, op, where);
  if (h.data_offset + h.data_bytes != e.uncompressed_size)
    io::fail_file(op, where,
                  std::to_string(e.uncompressed_size - h.data_offset - h.data_bytes) +
                      " bytes follow the array's data (its .npy header says " +
                      std::to_string(h.data_bytes) + " bytes of data)");
  Tensor t = io::read_npy_data(in, h);
  in.finish();
  return t;
}

Tensor load_member(const io::FileReader& file, const io::ZipEntry& e, const char* op,
                   const std::string& path) {
  const std::string where = member_where(path, e);
  if (e.method == io::kZipStored) {
    StoredReader in(file, e, op, where);
    return read_member(in, e, op, where);
  }
  InflatingReader in(file, e, op, where);
  return read_member(in, e, op, where);
}

#endif  // TL_WITH_ZLIB

}  // namespace

void save_npz(const std::string& path, const TensorMap& tensors, bool compressed) {
  constexpr const char* op = "tl::save_npz";
  profiler::OpScope scope(op);
#if !defined(TL_WITH_ZLIB)
  (void)tensors;
  (void)compressed;
  io::fail_file(op, path, kNoZlib);
#else
  if (scope.active()) {
    std::vector<Tensor> inputs;
    for (const auto& [name, t] : tensors) inputs.push_back(t);
    scope.inputs_of(inputs);
  }
  // Everything that can be refused is, before the file is touched.
  for (const auto& [name, t] : tensors) {
    check_name(name, op);
    if (!t.defined()) fail<Error>(op, "the tensor '", name, "' is undefined");
    if (t.dtype() == DType::BFloat16)
      fail<DTypeError>(op, "the tensor '", name,
                       "' is bfloat16, which has no NumPy dtype; convert first, e.g. "
                       "t.to(tl::kFloat32)");
  }
  io::AtomicFileWriter out(path, op);
  std::vector<io::ZipMember> members;
  members.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    const io::NpyPayload payload = io::npy_payload(t, op);
    const size_t data_bytes = payload.data.nbytes();
    io::ZipMember m;
    m.name = name + ".npy";
    m.method = compressed ? io::kZipDeflated : io::kZipStored;
    m.uncompressed_size = payload.size();
    m.local_header_offset = out.size();
    m.local_zip64 =
        (compressed ? deflate_bound(m.uncompressed_size) : m.uncompressed_size) >= io::kZip32Max;
    // The header goes out first with a zero CRC and is rewritten once the data is out.
    const size_t header_size = io::zip_local_header(m).size();
    out.write(io::zip_local_header(m).data(), header_size);
    const uint64_t data_start = out.size();
    m.crc32 = crc_update(0, payload.header.data(), payload.header.size());
    if (data_bytes > 0) m.crc32 = crc_update(m.crc32, payload.data.data_ptr(), data_bytes);
    if (compressed) {
      Deflater deflater(out, op, path);
      deflater.add(payload.header.data(), payload.header.size());
      if (data_bytes > 0) deflater.add(payload.data.data_ptr(), data_bytes);
      deflater.finish();
    } else {
      out.write(payload.header.data(), payload.header.size());
      if (data_bytes > 0) out.write(payload.data.data_ptr(), data_bytes);
    }
    m.compressed_size = out.size() - data_start;
    if (!m.local_zip64 && m.compressed_size >= io::kZip32Max)
      io::fail_file(op, path, "internal error: a member outgrew its local header's sizes");
    const std::string header = io::zip_local_header(m);
    out.write_at(m.local_header_offset, header.data(), header.size());
    members.push_back(std::move(m));
  }
  const std::string directory = io::zip_central_directory(members, out.size());
  out.write(directory.data(), directory.size());
  out.commit();
#endif
}

TensorMap load_npz(const std::string& path) {
  constexpr const char* op = "tl::load_npz";
  profiler::OpScope scope(op);
#if !defined(TL_WITH_ZLIB)
  io::fail_file(op, path, kNoZlib);
#else
  const io::FileReader file(path, op);
  const std::vector<io::ZipEntry> entries = io::read_zip_entries(file, op, path);
  // Every member is checked before any tensor is allocated.
  std::set<std::string> keys;
  for (const io::ZipEntry& e : entries) {
    const std::string where = member_where(path, e);
    if (e.method != io::kZipStored && e.method != io::kZipDeflated)
      io::fail_file(op, where,
                    "compression method " + std::to_string(e.method) +
                        " is not supported (only stored, 0, and deflated, 8)");
    if (e.method == io::kZipStored && e.compressed_size != e.uncompressed_size)
      io::fail_file(op, where,
                    "it is stored but its sizes differ (" + std::to_string(e.compressed_size) +
                        " bytes in the archive, " + std::to_string(e.uncompressed_size) +
                        " recorded uncompressed)");
    // compressed_size is at most the file's size (its data lies in the file): no overflow.
    if (e.method == io::kZipDeflated && e.uncompressed_size > kMaxDeflateRatio * e.compressed_size)
      io::fail_file(op, where,
                    "it records " + std::to_string(e.uncompressed_size) + " bytes from " +
                        std::to_string(e.compressed_size) +
                        " compressed bytes, more than deflate gives (1032 to 1 at most)");
    const std::string key = tensor_name(e);
    if (key.empty()) io::fail_file(op, where, "its tensor name (the name less \".npy\") is empty");
    if (!keys.insert(key).second)
      io::fail_file(op, path, "two members hold the tensor named '" + key + "'");
  }
  TensorMap out;
  for (const io::ZipEntry& e : entries) out.emplace(tensor_name(e), load_member(file, e, op, path));
  return out;
#endif
}

bool npz_supported() {
#if defined(TL_WITH_ZLIB)
  return true;
#else
  return false;
#endif
}

}  // namespace tensorlet

// tl::save_npz / tl::load_npz of NumPy .npz archives: round trips of every dtype NumPy has in every
// layout, stored and deflated; members holding tl::save's exact bytes; archives numpy.savez and
// numpy.savez_compressed wrote; zip64 (more than 65535 members, offsets past 4 GiB); atomic
// replacement; and bad archives, each an IOError naming the file, including a few thousand random
// mutations of valid archives (scripts/fuzz --io N runs more; under ASan in ./run test).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io_test_files.h"
#include "test_util.h"

namespace {

using tl::Tensor;
namespace fs = std::filesystem;

using tl_test::read_bytes;
using tl_test::write_bytes;

const tl_test::ScratchDir& temp() {
  static tl_test::ScratchDir dir("tl_io_npz_");
  return dir;
}

// Random values of any dtype (uint8 over its whole range, which random_tensor's [-9, 10) is not).
Tensor random_values(const tl::Shape& shape, tl::DType d) {
  if (d == tl::kUInt8) return tl::randint(0, 256, shape, d);
  return tl_test::random_tensor(shape, d);
}

// What tl::save writes for a tensor.
std::string npy_bytes(const Tensor& t) {
  const std::string path = temp().file("member.npy");
  tl::save(path, t);
  return read_bytes(path);
}

// --- A second, independent model of the zip format: builds archives (good ones and, with its
// knobs and patches, bad ones) and reads back good ones. ---

uint32_t crc32_of(const std::string& s) {
  uint32_t crc = 0xffffffffu;
  for (const char ch : s) {
    crc ^= static_cast<unsigned char>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void put(std::string& out, uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}
// Overwrites `bytes` little-endian bytes at `at`.
void patch(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) s[at + b] = static_cast<char>((v >> (8 * b)) & 0xff);
}
uint64_t get(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int b = 0; b < bytes; ++b)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + b])) << (8 * b);
  return v;
}

struct Member {
  std::string name;
  std::string bytes;  // as the archive holds them (compressed for method 8)
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t usize = 0;
  uint16_t flags = 0;
};

Member stored(const std::string& name, const std::string& plain) {
  return {name, plain, 0, crc32_of(plain), plain.size(), 0};
}

// A raw deflate stream of one final stored block (no compression): lets a test say exactly what
// inflating gives.
std::string deflate_stored(const std::string& plain) {
  std::string out = "\x01";
  put(out, plain.size(), 2);
  put(out, ~plain.size() & 0xffff, 2);
  return out + plain;
}

Member deflated(const std::string& name, const std::string& plain) {
  return {name, deflate_stored(plain), 8, crc32_of(plain), plain.size(), 0};
}

struct ZipOptions {
  std::string comment = "";
  bool zip64_local = false;    // sizes in a zip64 extra field of each local header (as numpy)
  bool zip64_central = false;  // sizes and offset in a zip64 extra field of the central directory
  bool zip64_end = false;      // a zip64 end record and locator
  uint64_t first_offset = 0;   // the archive's first member starts here (a hole before it)
};

// Archive bytes from `first_offset` on, laid out as tl::save_npz lays them out (fixed date, Unix
// attributes); zip64 fields where a value needs them or an option asks for them.
std::string zip_of(const std::vector<Member>& members, const ZipOptions& o = {}) {
  std::string out, dir;
  for (const Member& m : members) {
    const uint64_t offset = o.first_offset + out.size();
    const bool local64 = o.zip64_local;
    put(out, 0x04034b50, 4);
    put(out, local64 ? 45 : 20, 2);
    put(out, m.flags, 2);
    put(out, m.method, 2);
    put(out, 0, 2);
    put(out, 0x21, 2);
    put(out, m.crc, 4);
    put(out, local64 ? 0xffffffffu : m.bytes.size(), 4);
    put(out, local64 ? 0xffffffffu : m.usize, 4);
    put(out, m.name.size(), 2);
    put(out, local64 ? 20 : 0, 2);
    out += m.name;
    if (local64) {
      put(out, 1, 2);
      put(out, 16, 2);
      put(out, m.usize, 8);
      put(out, m.bytes.size(), 8);
    }
    out += m.bytes;
    const bool c64 = o.zip64_central || offset >= 0xffffffffu;
    std::string extra;
    if (c64) {
      put(extra, 1, 2);
      put(extra, 24, 2);
      put(extra, m.usize, 8);
      put(extra, m.bytes.size(), 8);
      put(extra, offset, 8);
    }
    const uint16_t version = c64 || local64 ? 45 : 20;
    put(dir, 0x02014b50, 4);
    put(dir, 0x300 | version, 2);
    put(dir, version, 2);
    put(dir, m.flags, 2);
    put(dir, m.method, 2);
    put(dir, 0, 2);
    put(dir, 0x21, 2);
    put(dir, m.crc, 4);
    put(dir, c64 ? 0xffffffffu : m.bytes.size(), 4);
    put(dir, c64 ? 0xffffffffu : m.usize, 4);
    put(dir, m.name.size(), 2);
    put(dir, extra.size(), 2);
    put(dir, 0, 2);
    put(dir, 0, 2);
    put(dir, 0, 2);
    put(dir, 0100644u << 16, 4);
    put(dir, c64 ? 0xffffffffu : offset, 4);
    dir += m.name + extra;
  }
  const uint64_t dir_offset = o.first_offset + out.size();
  out += dir;
  const bool end64 = o.zip64_end || dir_offset >= 0xffffffffu || members.size() > 0xffff;
  if (end64) {
    const uint64_t record = o.first_offset + out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);
    put(out, 0x300 | 45, 2);
    put(out, 45, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, members.size(), 8);
    put(out, members.size(), 8);
    put(out, dir.size(), 8);
    put(out, dir_offset, 8);
    put(out, 0x07064b50, 4);
    put(out, 0, 4);
    put(out, record, 8);
    put(out, 1, 4);
  }
  put(out, 0x06054b50, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, std::min<uint64_t>(members.size(), 0xffff), 2);
  put(out, std::min<uint64_t>(members.size(), 0xffff), 2);
  put(out, std::min<uint64_t>(dir.size(), 0xffffffffu), 4);
  put(out, std::min<uint64_t>(dir_offset, 0xffffffffu), 4);
  put(out, o.comment.size(), 2);
  return out + o.comment;
}

// The members of a plain archive (no zip64, no comment) as they lie in it; trusts its input.
std::vector<Member> members_of(const std::string& zip) {
  const size_t end = zip.size() - 22;
  const size_t count = get(zip, end + 10, 2);
  size_t at = get(zip, end + 16, 4);
  std::vector<Member> out;
  for (size_t i = 0; i < count; ++i) {
    Member m;
    m.flags = static_cast<uint16_t>(get(zip, at + 8, 2));
    m.method = static_cast<uint16_t>(get(zip, at + 10, 2));
    m.crc = static_cast<uint32_t>(get(zip, at + 16, 4));
    const size_t csize = get(zip, at + 20, 4);
    m.usize = get(zip, at + 24, 4);
    const size_t name = get(zip, at + 28, 2), extra = get(zip, at + 30, 2);
    const size_t comment = get(zip, at + 32, 2), local = get(zip, at + 42, 4);
    m.name = zip.substr(at + 46, name);
    const size_t data = local + 30 + get(zip, local + 26, 2) + get(zip, local + 28, 2);
    m.bytes = zip.substr(data, csize);
    out.push_back(m);
    at += 46 + name + extra + comment;
  }
  return out;
}

// An archive tl::save_npz wrote.
std::string saved_npz(const tl::TensorMap& tensors, bool compressed) {
  const std::string path = temp().file("saved.npz");
  tl::save_npz(path, tensors, compressed);
  return read_bytes(path);
}

// numpy.savez("stored.npz", a=np.arange(6, dtype=np.int32).reshape(2, 3) - 2,
//             f=np.asfortranarray(np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.int16)),
//             s=np.float64(-0.125))
// (NumPy 2.4.6, Python 3.11's zipfile: zip64 extra fields in the local headers.)
const char kNumpyStored[] =
    "\x50\x4b\x03\x04\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\x3b\x56\x84\x44\xff\xff\xff\xff\xff"
    "\xff\xff\xff\x05\x00\x14\x00\x61\x2e\x6e\x70\x79\x01\x00\x10\x00\x98\x00\x00\x00\x00\x00\x00"
    "\x00\x98\x00\x00\x00\x00\x00\x00\x00\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00\x7b\x27\x64\x65"
    "\x73\x63\x72\x27\x3a\x20\x27\x3c\x69\x34\x27\x2c\x20\x27\x66\x6f\x72\x74\x72\x61\x6e\x5f\x6f"
    "\x72\x64\x65\x72\x27\x3a\x20\x46\x61\x6c\x73\x65\x2c\x20\x27\x73\x68\x61\x70\x65\x27\x3a\x20"
    "\x28\x32\x2c\x20\x33\x29\x2c\x20\x7d\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x0a\xfe"
    "\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00"
    "\x50\x4b\x03\x04\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\xb1\xbb\x0e\x45\xff\xff\xff\xff\xff"
    "\xff\xff\xff\x05\x00\x14\x00\x66\x2e\x6e\x70\x79\x01\x00\x10\x00\x8c\x00\x00\x00\x00\x00\x00"
    "\x00\x8c\x00\x00\x00\x00\x00\x00\x00\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00\x7b\x27\x64\x65"
    "\x73\x63\x72\x27\x3a\x20\x27\x3c\x69\x32\x27\x2c\x20\x27\x66\x6f\x72\x74\x72\x61\x6e\x5f\x6f"
    "\x72\x64\x65\x72\x27\x3a\x20\x54\x72\x75\x65\x2c\x20\x27\x73\x68\x61\x70\x65\x27\x3a\x20\x28"
    "\x32\x2c\x20\x33\x29\x2c\x20\x7d\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x0a\x01"
    "\x00\xfc\xff\xfe\xff\x05\x00\x03\x00\xfa\xff\x50\x4b\x03\x04\x2d\x00\x00\x00\x00\x00\x00\x00"
    "\x21\x00\xf2\x49\xae\x11\xff\xff\xff\xff\xff\xff\xff\xff\x05\x00\x14\x00\x73\x2e\x6e\x70\x79"
    "\x01\x00\x10\x00\x88\x00\x00\x00\x00\x00\x00\x00\x88\x00\x00\x00\x00\x00\x00\x00\x93\x4e\x55"
    "\x4d\x50\x59\x01\x00\x76\x00\x7b\x27\x64\x65\x73\x63\x72\x27\x3a\x20\x27\x3c\x66\x38\x27\x2c"
    "\x20\x27\x66\x6f\x72\x74\x72\x61\x6e\x5f\x6f\x72\x64\x65\x72\x27\x3a\x20\x46\x61\x6c\x73\x65"
    "\x2c\x20\x27\x73\x68\x61\x70\x65\x27\x3a\x20\x28\x29\x2c\x20\x7d\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x0a\x00\x00\x00\x00\x00\x00\xc0\xbf\x50\x4b\x01\x02\x2d"
    "\x03\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\x3b\x56\x84\x44\x98\x00\x00\x00\x98\x00\x00\x00"
    "\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x61\x2e\x6e\x70\x79"
    "\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\xb1\xbb\x0e\x45\x8c\x00\x00"
    "\x00\x8c\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\xcf\x00\x00\x00"
    "\x66\x2e\x6e\x70\x79\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\xf2\x49"
    "\xae\x11\x88\x00\x00\x00\x88\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
    "\x01\x92\x01\x00\x00\x73\x2e\x6e\x70\x79\x50\x4b\x05\x06\x00\x00\x00\x00\x03\x00\x03\x00\x99"
    "\x00\x00\x00\x51\x02\x00\x00\x00\x00";

// numpy.savez_compressed("compressed.npz", x=np.array([0.5, -1.25, 3.0, 7.5], dtype=np.float32),
//                        **{"\u00e9t\u00e9": np.array([[True, False], [False, True]])},
//                        be=np.array([1, -2, 70000], dtype=">i4"))
const char kNumpyCompressed[] =
    "\x50\x4b\x03\x04\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\x03\xac\x8f\x19\xff\xff\xff\xff\xff"
    "\xff\xff\xff\x05\x00\x14\x00\x78\x2e\x6e\x70\x79\x01\x00\x10\x00\x90\x00\x00\x00\x00\x00\x00"
    "\x00\x55\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92"
    "\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x6e\x93\x66\xa2\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f"
    "\x5f\x94\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\x26\x3a\x9a"
    "\x3a\x0a\xb5\x0a\x14\x00\x2e\x06\x06\x06\x7b\x06\x86\x05\xfb\x19\x18\x1c\x1c\x18\x18\x3e\x38"
    "\x00\x00\x50\x4b\x03\x04\x2d\x00\x00\x08\x08\x00\x00\x00\x21\x00\xbb\xe4\x4c\xad\xff\xff\xff"
    "\xff\xff\xff\xff\xff\x09\x00\x14\x00\xc3\xa9\x74\xc3\xa9\x2e\x6e\x70\x79\x01\x00\x10\x00\x84"
    "\x00\x00\x00\x00\x00\x00\x00\x4a\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8"
    "\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x5e\x93\x64\xa8\xae\xa3\xa0\x9e\x96\x5f"
    "\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4"
    "\x02\xf9\x1a\x46\x3a\x0a\x46\x9a\x3a\x0a\xb5\x0a\x64\x03\x2e\x46\x06\x06\x46\x00\x50\x4b\x03"
    "\x04\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\xf5\xad\xc2\xa8\xff\xff\xff\xff\xff\xff\xff\xff"
    "\x06\x00\x14\x00\x62\x65\x2e\x6e\x70\x79\x01\x00\x10\x00\x8c\x00\x00\x00\x00\x00\x00\x00\x51"
    "\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c"
    "\x5c\xa4\x6e\xa5\xa0\x6e\x97\x69\xa2\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94"
    "\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\xc6\x3a\x9a\x3a\x0a"
    "\xb5\x0a\x14\x00\x2e\x06\x06\x06\xc6\xff\xff\xff\xff\x63\x60\x14\x2c\x00\x00\x50\x4b\x01\x02"
    "\x2d\x03\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\x03\xac\x8f\x19\x55\x00\x00\x00\x90\x00\x00"
    "\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x78\x2e\x6e\x70"
    "\x79\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x08\x08\x00\x00\x00\x21\x00\xbb\xe4\x4c\xad\x4a\x00"
    "\x00\x00\x84\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x8c\x00\x00"
    "\x00\xc3\xa9\x74\xc3\xa9\x2e\x6e\x70\x79\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00\x08\x00\x00"
    "\x00\x21\x00\xf5\xad\xc2\xa8\x51\x00\x00\x00\x8c\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x80\x01\x11\x01\x00\x00\x62\x65\x2e\x6e\x70\x79\x50\x4b\x05\x06\x00\x00\x00"
    "\x00\x03\x00\x03\x00\x9e\x00\x00\x00\x9a\x01\x00\x00\x00\x00";

std::string numpy_stored() { return std::string(kNumpyStored, sizeof kNumpyStored - 1); }
std::string numpy_compressed() {
  return std::string(kNumpyCompressed, sizeof kNumpyCompressed - 1);
}

// Whether this build reads and writes .npz (zlib was found): without it both functions throw.
bool npz_or_skip() {
  if (tl::npz_supported()) return true;
  tl_test::check_throws<tl::IOError>(
      [] {
        tl::save_npz(temp().file("no_zlib.npz"), {{"a", tl::ones({1})}});
      },
      "no zlib");
  tl_test::check_throws<tl::IOError>([] { (void)tl::load_npz(temp().file("no_zlib.npz")); },
                                     "no zlib");
  MESSAGE("this build has no zlib: .npz archives are refused");
  return false;
}

}  // namespace

TEST_CASE("npz: every dtype but bfloat16 round-trips bit for bit, in every layout, both methods") {
  if (!npz_or_skip()) return;
  const std::vector<tl::Shape> shapes{{}, {7}, {0}, {3, 0, 2}, {4, 5}, {2, 3, 5}};
  for (tl::DType d : tl_test::all_dtypes()) {
    if (d == tl::kBFloat16) continue;  // refused: no NumPy dtype (below)
    for (const tl::Shape& shape : shapes) {
      // One archive per dtype and shape, a member per layout (contiguous, transposed, sliced,
      // offset), and a 0-d scalar beside them.
      tl::TensorMap tensors;
      for (const tl_test::Layout& l : tl_test::layouts_of(random_values(shape, d)))
        tensors[l.name] = l.tensor;
      tensors["scalar"] = random_values({}, d);
      for (const bool compressed : {false, true}) {
        CAPTURE(tl::dtype_name(d));
        CAPTURE(shape.str());
        CAPTURE(compressed);
        const std::string path = temp().file("roundtrip.npz");
        tl::save_npz(path, tensors, compressed);
        const tl::TensorMap back = tl::load_npz(path);
        REQUIRE(back.size() == tensors.size());
        for (const auto& [name, t] : tensors) {
          CAPTURE(name);
          REQUIRE(back.count(name) == 1);
          const Tensor& b = back.at(name);
          CHECK(b.dtype() == d);
          CHECK(b.shape() == t.shape());
          CHECK(b.device() == tl::Device::cpu());
          CHECK(tl_test::bits_of(b) == tl_test::bits_of(t));
        }
      }
    }
  }
  // A transposed block comes back as tl::load's Fortran view; an empty map as an empty archive.
  const std::string path = temp().file("views.npz");
  const Tensor t = tl_test::random_tensor({4, 3}, tl::kFloat64).t();
  for (const bool compressed : {false, true}) {
    tl::save_npz(path, {{"t", t}}, compressed);
    const Tensor back = tl::load_npz(path).at("t");
    CHECK(back.strides() == tl::Shape({1, 3}));
    CHECK(tl_test::bits_of(back) == tl_test::bits_of(t));
    tl::save_npz(path, {}, compressed);
    CHECK(read_bytes(path).size() == 22);
    CHECK(tl::load_npz(path).empty());
  }
}

TEST_CASE("npz: the archive's bytes: plain zip, members holding tl::save's exact bytes") {
  if (!npz_or_skip()) return;
  const Tensor a = tl::arange(6, tl::kInt32).view({2, 3});
  const Tensor b = tl_test::random_tensor({3, 4}, tl::kFloat16).t();
  const Tensor c = tl_test::random_tensor({5}, tl::kInt64);
  const tl::TensorMap tensors{{"a", a}, {"b.npy", b}, {"\xc3\xa9t\xc3\xa9 \xcf\x80", c}};
  // Stored: exactly the independent model's archive (names + ".npy", in name order; fixed date;
  // the UTF-8 flag on the non-ASCII name only; no zip64).
  Member ma = stored("a.npy", npy_bytes(a));
  Member mb = stored("b.npy.npy", npy_bytes(b));
  Member mc = stored("\xc3\xa9t\xc3\xa9 \xcf\x80.npy", npy_bytes(c));
  mc.flags = 1 << 11;
  const std::string want = zip_of({ma, mb, mc});
  const std::string got = saved_npz(tensors, false);
  CHECK(got == want);
  CHECK(saved_npz(tensors, false) == got);  // the same tensors give the same bytes
  // Deflated: each member inflates (its CRC-32 checked by load_npz) to tl::save's bytes: the
  // central directory's CRC-32 and size are those of tl::save's bytes.
  const std::vector<Member> members = members_of(saved_npz(tensors, true));
  const std::vector<Member> want_members{ma, mb, mc};
  REQUIRE(members.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const Member& want_m = want_members[i];
    CAPTURE(want_m.name);
    CHECK(members[i].name == want_m.name);
    CHECK(members[i].method == 8);
    CHECK(members[i].flags == want_m.flags);
    CHECK(members[i].crc == want_m.crc);
    CHECK(members[i].usize == want_m.usize);
    CHECK(members[i].bytes.size() < members[i].usize);
  }
  const tl::TensorMap back = tl::load_npz(temp().file("saved.npz"));
  CHECK(tl_test::bits_of(back.at("b.npy")) == tl_test::bits_of(b));
  CHECK(tl_test::bits_of(back.at("\xc3\xa9t\xc3\xa9 \xcf\x80")) == tl_test::bits_of(c));
  // A CUDA tensor is saved from the device.
  if (tl::cuda::is_available()) {
    const Tensor g = tl_test::random_tensor({5, 3}, tl::kFloat32, tl::Device::cuda(0));
    const std::string path = temp().file("device.npz");
    tl::save_npz(path, {{"g", g}}, true);
    CHECK(tl_test::bits_of(tl::load_npz(path).at("g")) == tl_test::bits_of(g));
  }
}

TEST_CASE("npz: archives numpy.savez and numpy.savez_compressed wrote load bit for bit") {
  if (!npz_or_skip()) return;
  const std::string path = temp().file("numpy.npz");
  write_bytes(path, numpy_stored());
  tl::TensorMap m = tl::load_npz(path);
  REQUIRE(m.size() == 3);
  CHECK(m.at("a").dtype() == tl::kInt32);
  CHECK(m.at("a").shape() == tl::Shape({2, 3}));
  CHECK(m.at("a").to_vector<int32_t>() == std::vector<int32_t>{-2, -1, 0, 1, 2, 3});
  // Fortran order: a view with reversed strides, as NumPy's.
  CHECK(m.at("f").dtype() == tl::kInt16);
  CHECK(m.at("f").strides() == tl::Shape({1, 2}));
  CHECK(m.at("f").contiguous().to_vector<int16_t>() == std::vector<int16_t>{1, -2, 3, -4, 5, -6});
  CHECK(m.at("s").dim() == 0);
  CHECK(m.at("s").item<double>() == -0.125);
  write_bytes(path, numpy_compressed());
  m = tl::load_npz(path);
  REQUIRE(m.size() == 3);
  CHECK(m.at("x").to_vector<float>() == std::vector<float>{0.5f, -1.25f, 3.0f, 7.5f});
  const Tensor ete = m.at("\xc3\xa9t\xc3\xa9");
  CHECK(ete.dtype() == tl::kBool);
  CHECK(tl_test::values_of(ete) == std::vector<double>{1, 0, 0, 1});
  // '>i4': byte-swapped as tl::load swaps.
  CHECK(m.at("be").to_vector<int32_t>() == std::vector<int32_t>{1, -2, 70000});
}

TEST_CASE("npz: other writers' archives: names without .npy, comments, zip64 fields, descriptors") {
  if (!npz_or_skip()) return;
  const std::string path = temp().file("other.npz");
  const Tensor t = tl_test::random_tensor({3, 2}, tl::kFloat32);
  const std::string npy = npy_bytes(t);
  auto loads = [&](const std::string& zip, const std::string& key) {
    write_bytes(path, zip);
    const tl::TensorMap m = tl::load_npz(path);
    REQUIRE(m.size() == 1);
    REQUIRE(m.count(key) == 1);
    CHECK(tl_test::bits_of(m.at(key)) == tl_test::bits_of(t));
  };
  // A member without ".npy" keeps its name; only one ".npy" is taken off.
  loads(zip_of({stored("weights", npy)}), "weights");
  loads(zip_of({stored("w.npy.npy", npy)}), "w.npy");
  loads(zip_of({stored("dir/w.npy", npy)}), "dir/w");
  // A comment after the end record, even one holding the end record's signature.
  loads(zip_of({stored("w.npy", npy)}, {.comment = "made by hand"}), "w");
  loads(zip_of({deflated("w.npy", npy)}, {.comment = "PK\x05\x06" + std::string(30, 'x')}), "w");
  // Zip64 fields that are not needed: local (as numpy writes), central, the end records.
  loads(zip_of({deflated("w.npy", npy)},
               {.zip64_local = true, .zip64_central = true, .zip64_end = true}),
        "w");
  // A data descriptor (bit 3): the local header's CRC and sizes are zero, the directory has them.
  {
    Member m = stored("w.npy", npy);
    m.flags = 1 << 3;
    std::string zip = zip_of({m});
    for (const size_t at : {14, 18, 22}) patch(zip, at, 0, 4);  // CRC-32 and both sizes
    loads(zip, "w");
  }
  // A member at offset 5 GiB of a sparse file: zip64 offset, zip64 end records.
  const uint64_t far = uint64_t{5} << 30;
  const std::string zip = zip_of({stored("far.npy", npy)}, {.first_offset = far});
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    const bool ok = ::ftruncate(fd, static_cast<off_t>(far)) == 0 &&
                    ::pwrite(fd, zip.data(), zip.size(), static_cast<off_t>(far)) ==
                        static_cast<ssize_t>(zip.size());
    ::close(fd);
    REQUIRE(ok);
  }
  const tl::TensorMap m = tl::load_npz(path);
  CHECK(tl_test::bits_of(m.at("far")) == tl_test::bits_of(t));
  fs::remove(path);
}

TEST_CASE("npz: more than 65535 tensors: zip64 end records, as Python's zipfile writes them") {
  if (!npz_or_skip()) return;
  tl::TensorMap tensors;
  for (int i = 0; i < 65536 + 5; ++i) tensors[std::to_string(i)] = tl::full({1}, i, tl::kInt32);
  const std::string path = temp().file("many.npz");
  tl::save_npz(path, tensors);
  const std::string bytes = read_bytes(path);
  const size_t end = bytes.size() - 22;
  CHECK(get(bytes, end, 4) == 0x06054b50);
  CHECK(get(bytes, end + 10, 2) == 0xffff);                     // the count's marker
  CHECK(get(bytes, end - 20, 4) == 0x07064b50);                 // the zip64 locator
  CHECK(get(bytes, get(bytes, end - 12, 8) + 32, 8) == 65541);  // the zip64 record's count
  const tl::TensorMap back = tl::load_npz(path);
  REQUIRE(back.size() == tensors.size());
  CHECK(back.at("65540").item<int32_t>() == 65540);
  CHECK(back.at("0").item<int32_t>() == 0);
  fs::remove(path);
}

TEST_CASE("npz: writing is atomic: a refused save leaves the old file intact and no temporary") {
  if (!npz_or_skip()) return;
  const std::string path = temp().file("atomic.npz");
  tl::save_npz(path, {{"a", tl::ones({3})}});
  const std::string before = read_bytes(path);
  auto intact = [&] {
    CHECK(read_bytes(path) == before);
    for (const auto& entry : fs::directory_iterator(temp().path()))
      CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  };
  // bfloat16, whichever member it is: DTypeError naming the tensor.
  for (const bool compressed : {false, true}) {
    tl_test::check_throws<tl::DTypeError>(
        [&] {
          tl::save_npz(path, {{"a", tl::ones({3})}, {"z", tl::ones({3}, tl::kBFloat16)}},
                       compressed);
        },
        "[tl::save_npz] the tensor 'z' is bfloat16, which has no NumPy dtype");
    intact();
  }
  // Names: empty, a NUL, not UTF-8 (a lone continuation byte, an overlong '/', a surrogate).
  for (const std::string& name : {std::string(), std::string("a\0b", 3), std::string("\x80"),
                                  std::string("\xc0\xaf"), std::string("\xed\xa0\x80")}) {
    CAPTURE(name);
    tl_test::check_throws<tl::Error>(
        [&] {
          tl::save_npz(path, {{"ok", tl::ones({2})}, {name, tl::ones({2})}});
        },
        "[tl::save_npz] ");
    intact();
  }
  tl_test::check_throws<tl::Error>(
      [&] {
        tl::save_npz(path, {{std::string(65532, 'n'), tl::ones({2})}});
      },
      "too long");
  tl_test::check_throws<tl::Error>(
      [&] {
        tl::save_npz(path, {{"u", Tensor()}});
      },
      "[tl::save_npz] the tensor 'u' is undefined");
  intact();
  // A folder that does not exist: IOError naming the file; nothing appears.
  const std::string missing = temp().file("no_such_dir/x.npz");
  tl_test::check_throws<tl::IOError>(
      [&] {
        tl::save_npz(missing, {{"a", tl::ones({3})}});
      },
      "[tl::save_npz] " + missing);
  CHECK_FALSE(fs::exists(missing));
  // A successful save replaces the file whole.
  tl::save_npz(path, {{"b", tl::zeros({2}, tl::kInt8)}});
  CHECK(tl::load_npz(path).count("b") == 1);
}

TEST_CASE("npz: bad archives are IOErrors naming the file and what is wrong") {
  if (!npz_or_skip()) return;
  const std::string path = temp().file("bad.npz");
  int rows = 0;
  auto refused = [&](const std::string& bytes, const std::string& needle) {
    CAPTURE(needle);
    ++rows;
    write_bytes(path, bytes);
    bool thrown = false;
    try {
      (void)tl::load_npz(path);
    } catch (const tl::IOError& e) {
      thrown = true;
      const std::string what = e.what();
      INFO("message: " << what);
      CHECK(what.rfind("[tl::load_npz] " + path + ": ", 0) == 0);
      CHECK(what.find(needle) != std::string::npos);
    }
    CHECK_MESSAGE(thrown, "expected an IOError mentioning " << needle);
  };
  const Tensor t = tl::arange(6, tl::kInt32).view({2, 3});
  const std::string npy = npy_bytes(t);
  const std::string good = zip_of({stored("a.npy", npy), stored("b.npy", npy)});
  const size_t end = good.size() - 22;              // the end record
  const size_t dir = get(good, end + 16, 4);        // the central directory
  const size_t dir_b = dir + 46 + 5;                // its second entry
  const size_t local_b = get(good, dir_b + 42, 4);  // b's local header
  write_bytes(path, good);
  REQUIRE(tl::load_npz(path).size() == 2);
  auto with = [&](size_t at, uint64_t v, int bytes) {
    std::string s = good;
    patch(s, at, v, bytes);
    return s;
  };

  // Not a zip archive, or one cut short.
  refused("", "truncated file");
  refused(good.substr(0, 21), "truncated file");
  refused(std::string(100, 'x'), "not a zip archive");
  refused(npy, "not a zip archive");
  refused(good.substr(0, good.size() - 1), "not a zip archive");
  refused(good.substr(0, dir + 10) + good.substr(end), "does not lie in the file");
  refused(good.substr(40), "does not lie in the file");
  // The end record lies.
  refused(with(end + 16, good.size(), 4), "does not lie in the file");
  refused(with(end + 12, end - dir + 1, 4), "does not lie in the file");
  refused(with(end + 8, 1, 2), "entry counts disagree");
  {
    std::string s = with(end + 8, 3, 2);
    patch(s, end + 10, 3, 2);
    refused(s, "more than a central directory");
    s = with(end + 8, 1, 2);
    patch(s, end + 10, 1, 2);
    refused(s, "bytes after its 1 entries");
  }
  refused(with(end + 4, 1, 2), "multi-disk");
  {
    std::string s = good;
    s[dir + 3] = '\x03';
    refused(s, "not a central directory record");
  }
  // Central directory entries that lie.
  refused(with(dir_b + 42, local_b + 1, 4), "no local header");
  refused(with(dir_b + 42, dir, 4), "is not before the central directory");
  refused(with(dir_b + 30, 200, 2), "runs past the end of the directory");
  refused(with(dir_b + 20, 0xffffffffu, 4), "lacks");
  refused(with(dir_b + 8, 1, 2), "is encrypted");
  refused(with(dir_b + 8, 1 << 6, 2), "is encrypted");
  refused(with(dir_b + 34, 1, 2), "multi-disk");
  // A local header that disagrees with the directory.
  refused(with(local_b + 30, 'c', 1), "holds another name");
  refused(with(local_b + 6, 1 << 11, 2), "flags");
  refused(with(local_b + 8, 8, 2), "compression method");
  refused(with(local_b + 14, 0, 4), "CRC-32 or sizes differ");
  refused(with(local_b + 28, 0xffff, 2), "runs into the central directory");
  {
    // Both headers agree on the method, which is not one NumPy writes (12, bzip2).
    std::string s = with(local_b + 8, 12, 2);
    patch(s, dir_b + 10, 12, 2);
    refused(s, "compression method 12 is not supported");
  }
  // Sizes past the data: both headers say 1 TB (through zip64 fields) in a small file.
  {
    Member big = stored("a.npy", npy);
    big.usize = uint64_t{1} << 40;
    refused(zip_of({big}, {.zip64_local = true, .zip64_central = true}), "stored but its sizes");
    big.method = 8;
    big.bytes = deflate_stored(npy);
    refused(zip_of({big}, {.zip64_local = true, .zip64_central = true}), "more than deflate gives");
    Member all = stored("a.npy", npy);
    std::string s = zip_of({all}, {.zip64_local = true, .zip64_central = true});
    const size_t d = get(s, s.size() - 22 + 16, 4);
    patch(s, 30 + 5 + 4 + 8, uint64_t{1} << 40, 8);   // local: compressed size
    patch(s, 30 + 5 + 4, uint64_t{1} << 40, 8);       // local: uncompressed size
    patch(s, d + 46 + 5 + 4, uint64_t{1} << 40, 8);   // central: uncompressed size
    patch(s, d + 46 + 5 + 12, uint64_t{1} << 40, 8);  // central: compressed size
    refused(s, "run past the central directory");
  }
  // Members that share bytes.
  {
    std::string s = good;
    patch(s, dir_b + 42, 0, 4);
    s.replace(dir_b + 46, 5, "a.npy");
    refused(s, "overlap");
  }
  // Names.
  refused(zip_of({stored("a.npy", npy), stored("a", npy)}),
          "two members hold the tensor named 'a'");
  refused(zip_of({stored("\xff.npy", npy)}), "not valid UTF-8");
  refused(zip_of({stored("\xc0\xaf.npy", npy)}), "not valid UTF-8");
  refused(zip_of({stored("\xed\xa0\x80.npy", npy)}), "not valid UTF-8");
  refused(zip_of({stored("\xf4\x90\x80\x80.npy", npy)}), "not valid UTF-8");
  refused(zip_of({stored(std::string("a\0.npy", 6), npy)}), "NUL");
  refused(zip_of({stored("", npy)}), "empty name");
  refused(zip_of({stored(".npy", npy)}), "is empty");
  // Member data: CRC-32, inflating, the .npy inside.
  {
    std::string s = good;
    s[local_b + 30 + 5 + 130] ^= 1;
    refused(s, "member 'b.npy': CRC-32 mismatch");
  }
  refused(zip_of({stored("a.npy", npy + "xx")}), "2 bytes follow the array's data");
  refused(zip_of({stored("a.npy", npy.substr(0, npy.size() - 4))}), "truncated data");
  refused(zip_of({stored("a.npy", "not an array")}), "member 'a.npy': not a .npy file");
  refused(zip_of({stored("a.npy", npy.substr(0, 5))}), "truncated member");
  refused(zip_of({stored("dir/", "")}), "truncated member");
  {
    Member m = deflated("a.npy", npy);
    m.bytes = deflate_stored(npy + "x");  // one byte more than recorded
    refused(zip_of({m}), "more than the");
    m.bytes = deflate_stored(npy.substr(0, npy.size() - 1));
    refused(zip_of({m}), "ends after");
    m.bytes = deflate_stored(npy).substr(0, 100);
    refused(zip_of({m}), "cut short");
    m.bytes = deflate_stored(npy) + "junk";
    refused(zip_of({m}), "4 compressed bytes follow the end");
    m.bytes = "\x07" + deflate_stored(npy).substr(1);  // block type 3: invalid
    refused(zip_of({m}), "bad deflate data");
    m.bytes = "";
    refused(zip_of({m}), "more than deflate gives");
  }
  // Zip64 records that lie.
  {
    const std::string z = zip_of({stored("a.npy", npy)}, {.zip64_end = true});
    const size_t e = z.size() - 22, locator = e - 20, record = locator - 56;
    write_bytes(path, z);
    REQUIRE(tl::load_npz(path).size() == 1);
    std::string s = z;
    patch(s, locator + 8, record - 1, 8);
    refused(s, "no zip64 end record");
    s = z;
    patch(s, locator + 8, locator, 8);
    refused(s, "is not before its locator");
    s = z;
    patch(s, record + 4, 45, 8);
    refused(s, "does not reach its locator");
    s = z;
    patch(s, record + 32, 2, 8);
    refused(s, "disagree");
    s = z;
    patch(s, record + 40, 1000, 8);
    patch(s, e + 12, 0xffffffffu, 4);
    refused(s, "does not lie in the file");
    s = z;
    patch(s, locator + 16, 2, 4);
    refused(s, "multi-disk");
  }
  {
    std::string s = zip_of({stored("a.npy", npy)}, {.zip64_central = true});
    const size_t d = get(s, s.size() - 22 + 16, 4);
    patch(s, d + 46 + 5 + 2, 30, 2);  // the zip64 field's size runs past the extra data
    refused(s, "runs past the extra data");
    patch(s, d + 46 + 5 + 2, 8, 2);  // room for one of the three values it must hold
    refused(s, "too short");
  }
  MESSAGE(rows << " bad archives refused");
  CHECK(rows >= 20);
  tl_test::check_throws<tl::IOError>([&] { (void)tl::load_npz(temp().file("missing.npz")); },
                                     "cannot open for reading");
  tl_test::check_throws<tl::IOError>([&] { (void)tl::load_npz(temp().path().string()); },
                                     "not a regular file");
}

TEST_CASE("npz: random mutations of valid archives load or throw IOError, never anything else") {
  if (!npz_or_skip()) return;
  // Valid archives, stored and deflated, of several dtypes, layouts and zip64 forms, and the two
  // numpy wrote; each mutation flips, overwrites, inserts or cuts bytes, mostly in the zip
  // records and the .npy headers, and tl::load_npz must return tensors or throw IOError. Fixed
  // seed; the sanitizer build catches reads out of bounds.
  std::vector<std::string> seeds{numpy_stored(), numpy_compressed()};
  for (const bool compressed : {false, true}) {
    seeds.push_back(saved_npz({{"a", tl_test::random_tensor({3, 4}, tl::kFloat32)},
                               {"b", tl_test::random_tensor({5, 2}, tl::kInt64).t()},
                               {"c", tl_test::random_tensor({}, tl::kBool)}},
                              compressed));
    seeds.push_back(saved_npz({{"h", tl_test::random_tensor({7}, tl::kFloat16)},
                               {"\xc3\xa9", tl_test::random_tensor({2, 0}, tl::kInt8)}},
                              compressed));
  }
  const std::string npy = npy_bytes(tl_test::random_tensor({2, 2}, tl::kInt16));
  seeds.push_back(
      zip_of({stored("a.npy", npy), deflated("b", npy)},
             {.comment = "c", .zip64_local = true, .zip64_central = true, .zip64_end = true}));
  // scripts/fuzz --io N runs more (TL_IO_FUZZ_MUTATIONS) under other seeds (TL_IO_FUZZ_SEED).
  const char* count_env = std::getenv("TL_IO_FUZZ_MUTATIONS");
  const char* seed_env = std::getenv("TL_IO_FUZZ_SEED");
  const int count = count_env ? std::max(1, std::atoi(count_env)) : 4000;
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261127);
  const std::string path = temp().file("mutant.npz");
  const uint64_t interesting[] = {0, 1, 0x7f, 0xff, 0xffff, 0xffffffffu, 0x80000000u, 46, 22};
  int loaded = 0, refused = 0;
  for (int i = 0; i < count; ++i) {
    std::string m = seeds[rng() % seeds.size()];
    // Where the records are: the local headers ("PK\3\4"), the directory and the end.
    std::vector<size_t> records;
    for (size_t at = m.find("PK"); at != std::string::npos; at = m.find("PK", at + 1))
      records.push_back(at);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      size_t at = rng() % m.size();
      if (rng() % 4 != 0 && !records.empty())  // three in four edits land in a record
        at = std::min(m.size() - 1, records[rng() % records.size()] + rng() % 64);
      switch (rng() % 7) {
        case 0:
          m[at] = static_cast<char>(m[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          m[at] = static_cast<char>(rng() % 256);
          break;
        case 2: {
          const int width = (rng() % 2) ? 2 : 4;
          if (at + width <= m.size()) patch(m, at, interesting[rng() % 9] + rng() % 3, width);
          break;
        }
        case 3:
          m.insert(at, 1, static_cast<char>(rng() % 256));
          break;
        case 4:
          m.erase(at, 1 + rng() % 8);
          break;
        case 5:
          m.resize(at);
          break;
        case 6:
          m[at] = "0123456789(),:' {}-LTF<>|="[rng() % 26];
          break;
      }
    }
    write_bytes(path, m);
    try {
      const tl::TensorMap tensors = tl::load_npz(path);
      for (const auto& [name, t] : tensors) (void)tl_test::bits_of(t);  // every element readable
      ++loaded;
    } catch (const tl::IOError&) {
      ++refused;
    }
  }
  MESSAGE(loaded << " mutants loaded, " << refused << " refused with IOError");
  CHECK(loaded + refused == count);
  CHECK(refused > count / 3);
}

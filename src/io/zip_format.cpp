// Zip records for .npz archives (zip_format.h): builders for the writer, and a reader that checks
// every length, offset and count against the file before it trusts or allocates anything.
#include "tensorlet/io/zip_format.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "tensorlet/io/utf8.h"

namespace tensorlet::io {
namespace {

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
// The end record is followed by at most a 65535-byte comment.
constexpr size_t kEndSearchSize = kEndSize + 0xffff;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kVersionDefault = 20;  // deflate, plain zip (APPNOTE 4.4.3)
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;  // external attributes are Unix modes
constexpr uint32_t kRegularFileMode = 0100644u << 16;
// A fixed time, 1980-01-01 00:00 (DOS dates start in 1980): the same tensors give the same bytes.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;

void put16(std::string& out, uint64_t v) {
  for (int b = 0; b < 2; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}
void put32(std::string& out, uint64_t v) {
  for (int b = 0; b < 4; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}
void put64(std::string& out, uint64_t v) {
  for (int b = 0; b < 8; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}

uint64_t get_le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int b = 0; b < bytes; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}
uint16_t get16(const unsigned char* p) { return static_cast<uint16_t>(get_le(p, 2)); }
uint32_t get32(const unsigned char* p) { return static_cast<uint32_t>(get_le(p, 4)); }
uint64_t get64(const unsigned char* p) { return get_le(p, 8); }

// Bit 11 says the name is UTF-8; ASCII names leave it clear, as Python's zipfile does.
uint16_t name_flags(const std::string& name) {
  const bool ascii = std::all_of(name.begin(), name.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  return ascii ? 0 : kZipFlagUtf8;
}

// A name as messages show it: bytes that are not printable (or not UTF-8) as \xNN, cut at 200.
std::string shown(const std::string& name) {
  const bool utf8 = is_valid_utf8(name);
  std::string out = "'";
  for (size_t i = 0; i < name.size() && i < 200; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + (name.size() > 200 ? "...'" : "'");
}

std::string hex16(uint16_t v) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%04x", v);
  return s;
}

// Replaces the fields that hold the zip64 marker by their values from the zip64 extra field, in
// APPNOTE's order (uncompressed size, compressed size, offset, disk); `offset` and `disk` are
// null for a local header. Checks that every extra field fits the extra data (up to 3 bytes of
// padding are left, as Python's zipfile leaves them). Returns what is wrong, or "".
std::string resolve_zip64(const unsigned char* extra, size_t n, uint64_t* uncompressed,
                          uint64_t* compressed, uint64_t* offset, uint64_t* disk) {
  const unsigned char* block = nullptr;
  size_t block_size = 0;
  for (size_t at = 0; n - at >= 4;) {
    const uint16_t id = get16(extra + at), size = get16(extra + at + 2);
    if (size > n - at - 4) return "an extra field runs past the extra data";
    if (id == kZip64ExtraId && block == nullptr) {
      block = extra + at + 4;
      block_size = size;
    }
    at += 4 + size;
  }
  size_t used = 0;
  auto take = [&](uint64_t* field, uint64_t marker, int bytes) -> bool {
    if (field == nullptr || *field != marker) return true;
    if (block == nullptr || block_size - used < static_cast<size_t>(bytes)) return false;
    *field = get_le(block + used, bytes);
    used += static_cast<size_t>(bytes);
    return true;
  };
  if (!take(uncompressed, kZip32Max, 8) || !take(compressed, kZip32Max, 8) ||
      !take(offset, kZip32Max, 8) || !take(disk, 0xffff, 4))
    return block == nullptr ? "its sizes or offset need a zip64 extra field, which it lacks"
                            : "its zip64 extra field is too short";
  return "";
}

// A member's local header and data: [start, end), for the overlap check.
struct Span {
  uint64_t start, end;
  size_t entry;
};

}  // namespace

std::string zip_local_header(const ZipMember& m) {
  std::string out;
  put32(out, kLocalSignature);
  put16(out, m.local_zip64 ? kVersionZip64 : kVersionDefault);
  put16(out, name_flags(m.name));
  put16(out, m.method);
  put16(out, kDosTime);
  put16(out, kDosDate);
  put32(out, m.crc32);
  // A zip64 local header holds both sizes in its extra field (APPNOTE 4.5.3).
  put32(out, m.local_zip64 ? kZip32Max : m.compressed_size);
  put32(out, m.local_zip64 ? kZip32Max : m.uncompressed_size);
  put16(out, m.name.size());
  put16(out, m.local_zip64 ? 20 : 0);
  out += m.name;
  if (m.local_zip64) {
    put16(out, kZip64ExtraId);
    put16(out, 16);
    put64(out, m.uncompressed_size);
    put64(out, m.compressed_size);
  }
  return out;
}

std::string zip_central_directory(const std::vector<ZipMember>& members, uint64_t offset) {
  std::string out;
  for (const ZipMember& m : members) {
    // Only the values that do not fit 32 bits go to the zip64 field, in APPNOTE's order.
    const bool big_u = m.uncompressed_size >= kZip32Max;
    const bool big_c = m.compressed_size >= kZip32Max;
    const bool big_o = m.local_header_offset >= kZip32Max;
    std::string zip64;
    if (big_u || big_c || big_o) {
      put16(zip64, kZip64ExtraId);
      put16(zip64, 8 * (big_u + big_c + big_o));
      if (big_u) put64(zip64, m.uncompressed_size);
      if (big_c) put64(zip64, m.compressed_size);
      if (big_o) put64(zip64, m.local_header_offset);
    }
    const uint16_t version = zip64.empty() && !m.local_zip64 ? kVersionDefault : kVersionZip64;
    put32(out, kCentralSignature);
    put16(out, kMadeByUnix | version);
    put16(out, version);
    put16(out, name_flags(m.name));
    put16(out, m.method);
    put16(out, kDosTime);
    put16(out, kDosDate);
    put32(out, m.crc32);
    put32(out, big_c ? kZip32Max : m.compressed_size);
    put32(out, big_u ? kZip32Max : m.uncompressed_size);
    put16(out, m.name.size());
    put16(out, zip64.size());
    put16(out, 0);  // comment length
    put16(out, 0);  // disk number
    put16(out, 0);  // internal attributes
    put32(out, kRegularFileMode);
    put32(out, big_o ? kZip32Max : m.local_header_offset);
    out += m.name;
    out += zip64;
  }
  const uint64_t size = out.size(), count = members.size();
  if (count > 0xffff || offset >= kZip32Max || size >= kZip32Max) {
    const uint64_t zip64_end = offset + size;
    put32(out, kZip64EndSignature);
    put64(out, kZip64EndSize - 12);  // the record's size after this field
    put16(out, kMadeByUnix | kVersionZip64);
    put16(out, kVersionZip64);
    put32(out, 0);  // this disk
    put32(out, 0);  // the directory's disk
    put64(out, count);
    put64(out, count);
    put64(out, size);
    put64(out, offset);
    put32(out, kZip64LocatorSignature);
    put32(out, 0);  // the zip64 end record's disk
    put64(out, zip64_end);
    put32(out, 1);  // disks in all
  }
  // The values that do not fit hold the marker (as Python's zipfile writes them).
  put32(out, kEndSignature);
  put16(out, 0);
  put16(out, 0);
  put16(out, std::min<uint64_t>(count, 0xffff));
  put16(out, std::min<uint64_t>(count, 0xffff));
  put32(out, std::min(size, kZip32Max));
  put32(out, std::min(offset, kZip32Max));
  put16(out, 0);  // comment length
  return out;
}

std::vector<ZipEntry> read_zip_entries(const FileReader& in, const char* op,
                                       const std::string& path) {
  auto bad = [&](const std::string& what) { fail_file(op, path, what); };
  const uint64_t file_size = in.size();
  if (file_size < kEndSize)
    fail_file(op, path,
              "truncated file: " + std::to_string(file_size) +
                  " bytes cannot hold a zip archive's end record (22 bytes; an .npz file is a zip "
                  "archive)");

  // The end record: the last signature whose comment runs exactly to the end of the file (a
  // comment may itself hold the signature's bytes).
  const size_t tail_size = static_cast<size_t>(std::min<uint64_t>(file_size, kEndSearchSize));
  const uint64_t tail_start = file_size - tail_size;
  std::vector<unsigned char> tail(tail_size);
  in.read_at(tail_start, tail.data(), tail_size, "the end of the archive");
  size_t end_at = std::numeric_limits<size_t>::max();
  for (size_t i = tail_size - kEndSize + 1; i-- > 0;) {
    if (get32(&tail[i]) == kEndSignature && i + kEndSize + get16(&tail[i + 20]) == tail_size) {
      end_at = i;
      break;
    }
  }
  if (end_at == std::numeric_limits<size_t>::max())
    bad("not a zip archive: no end-of-central-directory record in its last " +
        std::to_string(tail_size) + " bytes (an .npz file is a zip archive)");
  const unsigned char* e = &tail[end_at];
  const uint64_t end_offset = tail_start + end_at;
  uint64_t disk = get16(e + 4), directory_disk = get16(e + 6);
  uint64_t count_here = get16(e + 8), count = get16(e + 10);
  uint64_t directory_size = get32(e + 12), directory_offset = get32(e + 16);
  uint64_t directory_limit = end_offset;  // the directory ends before this

  // A zip64 locator just before the end record points to the zip64 end record, which holds the
  // values the end record's fields are too small for.
  unsigned char locator[kZip64LocatorSize] = {};
  if (end_offset >= kZip64LocatorSize) {
    in.read_at(end_offset - kZip64LocatorSize, locator, kZip64LocatorSize, "the zip64 locator");
  }
  if (end_offset >= kZip64LocatorSize && get32(locator) == kZip64LocatorSignature) {
    const uint64_t locator_offset = end_offset - kZip64LocatorSize;
    const uint64_t record = get64(locator + 8);
    if (get32(locator + 4) != 0 || get32(locator + 16) > 1)
      bad("multi-disk zip archives are not supported");
    if (record > locator_offset || locator_offset - record < kZip64EndSize)
      bad("the zip64 end record's offset " + std::to_string(record) +
          " is not before its locator (at " + std::to_string(locator_offset) + ")");
    unsigned char z[kZip64EndSize];
    in.read_at(record, z, kZip64EndSize, "the zip64 end record");
    if (get32(z) != kZip64EndSignature)
      bad("no zip64 end record at offset " + std::to_string(record) + ", where its locator points");
    if (get64(z + 4) != locator_offset - record - 12)
      bad("the zip64 end record's size " + std::to_string(get64(z + 4)) +
          " does not reach its locator");
    if (get32(z + 16) != 0 || get32(z + 20) != 0 || (disk != 0 && disk != 0xffff) ||
        (directory_disk != 0 && directory_disk != 0xffff))
      bad("multi-disk zip archives are not supported");
    disk = directory_disk = 0;
    // A value the end record holds (not its marker) must be the zip64 record's.
    const uint64_t z_count_here = get64(z + 24), z_count = get64(z + 32);
    const uint64_t z_size = get64(z + 40), z_offset = get64(z + 48);
    if ((count_here != 0xffff && count_here != z_count_here) ||
        (count != 0xffff && count != z_count) ||
        (directory_size != kZip32Max && directory_size != z_size) ||
        (directory_offset != kZip32Max && directory_offset != z_offset))
      bad("the end record and the zip64 end record disagree on the central directory");
    count_here = z_count_here, count = z_count;
    directory_size = z_size, directory_offset = z_offset;
    directory_limit = record;
  }
  if (disk != 0 || directory_disk != 0) bad("multi-disk zip archives are not supported");
  if (count_here != count)
    bad("the end record's entry counts disagree (" + std::to_string(count_here) + " and " +
        std::to_string(count) + ")");
  if (directory_offset > directory_limit || directory_size > directory_limit - directory_offset)
    bad("the central directory (" + std::to_string(directory_size) + " bytes at offset " +
        std::to_string(directory_offset) + ") does not lie in the file before its end record (at " +
        std::to_string(directory_limit) + ")");
  if (count > directory_size / kCentralSize)
    bad("the end record counts " + std::to_string(count) + " entries, more than a central " +
        "directory of " + std::to_string(directory_size) + " bytes holds");

  // The central directory, read whole (it lies in the file, so it is no larger than the file).
  std::vector<unsigned char> dir(static_cast<size_t>(directory_size));
  in.read_at(directory_offset, dir.data(), dir.size(), "the central directory");
  std::vector<ZipEntry> entries;
  std::vector<uint64_t> local_offsets;
  entries.reserve(static_cast<size_t>(count));
  local_offsets.reserve(static_cast<size_t>(count));
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string entry = "entry " + std::to_string(i) + " of the central directory";
    if (dir.size() - at < kCentralSize || get32(&dir[at]) != kCentralSignature)
      bad(entry +
          " is not a central directory record (the entry count or the directory is "
          "wrong)");
    const unsigned char* c = &dir[at];
    const size_t name_size = get16(c + 28), extra_size = get16(c + 30);
    const size_t comment_size = get16(c + 32);
    if (dir.size() - at - kCentralSize < name_size + extra_size + comment_size)
      bad(entry + " runs past the end of the directory");
    ZipEntry z;
    z.flags = get16(c + 8);
    z.method = get16(c + 10);
    z.crc32 = get32(c + 16);
    z.compressed_size = get32(c + 20);
    z.uncompressed_size = get32(c + 24);
    uint64_t entry_disk = get16(c + 34), local = get32(c + 42);
    z.name.assign(reinterpret_cast<const char*>(c + kCentralSize), name_size);
    if (z.name.empty()) bad(entry + " has an empty name");
    if (z.name.find('\0') != std::string::npos)
      bad("the name " + shown(z.name) + " of " + entry + " holds a NUL byte");
    if (!is_valid_utf8(z.name))
      bad("the name " + shown(z.name) + " of " + entry + " is not valid UTF-8");
    const std::string member = "member " + shown(z.name);
    const std::string zip64 =
        resolve_zip64(c + kCentralSize + name_size, extra_size, &z.uncompressed_size,
                      &z.compressed_size, &local, &entry_disk);
    if (!zip64.empty()) bad(member + ": " + zip64);
    if (entry_disk != 0) bad("multi-disk zip archives are not supported");
    if (z.flags & (kZipFlagEncrypted | kZipFlagStrongEncryption))
      bad(member + " is encrypted, which is not supported");
    entries.push_back(std::move(z));
    local_offsets.push_back(local);
    at += kCentralSize + name_size + extra_size + comment_size;
  }
  if (at != dir.size())
    bad("the central directory has " + std::to_string(dir.size() - at) + " bytes after its " +
        std::to_string(count) + " entries (the end record's count is wrong)");

  // Each member's local header must repeat the central directory's record, and its data lie
  // before the directory.
  std::vector<Span> spans;
  spans.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    ZipEntry& z = entries[i];
    const std::string member = "member " + shown(z.name);
    const uint64_t local = local_offsets[i];
    if (local > directory_offset || directory_offset - local < kLocalSize)
      bad(member + ": its local header's offset " + std::to_string(local) +
          " is not before the central directory (at " + std::to_string(directory_offset) + ")");
    unsigned char h[kLocalSize];
    in.read_at(local, h, kLocalSize, "a local header");
    if (get32(h) != kLocalSignature)
      bad(member + ": no local header at offset " + std::to_string(local));
    const size_t name_size = get16(h + 26), extra_size = get16(h + 28);
    const uint64_t data = local + kLocalSize + name_size + extra_size;
    if (data > directory_offset) bad(member + ": its local header runs into the central directory");
    std::vector<unsigned char> name_extra(name_size + extra_size);
    in.read_at(local + kLocalSize, name_extra.data(), name_extra.size(), "a local header");
    if (std::string(name_extra.begin(), name_extra.begin() + static_cast<ptrdiff_t>(name_size)) !=
        z.name)
      bad(member + ": its local header holds another name");
    const uint16_t flags = get16(h + 6), method = get16(h + 8);
    if (flags != z.flags)
      bad(member + ": its local header's flags (" + hex16(flags) +
          ") differ from the central directory's (" + hex16(z.flags) + ")");
    if (method != z.method)
      bad(member + ": its local header's compression method (" + std::to_string(method) +
          ") differs from the central directory's (" + std::to_string(z.method) + ")");
    // With a data descriptor (bit 3) the local header's CRC and sizes may be zero.
    if (!(flags & kZipFlagDataDescriptor)) {
      uint64_t compressed = get32(h + 18), uncompressed = get32(h + 22);
      const std::string zip64 = resolve_zip64(name_extra.data() + name_size, extra_size,
                                              &uncompressed, &compressed, nullptr, nullptr);
      if (!zip64.empty()) bad(member + ": local header: " + zip64);
      if (get32(h + 14) != z.crc32 || compressed != z.compressed_size ||
          uncompressed != z.uncompressed_size)
        bad(member + ": its local header's CRC-32 or sizes differ from the central directory's");
    }
    if (z.compressed_size > directory_offset - data)
      bad(member + ": its " + std::to_string(z.compressed_size) + " bytes of data at offset " +
          std::to_string(data) + " run past the central directory (at " +
          std::to_string(directory_offset) + ")");
    z.data_offset = data;
    spans.push_back({local, data + z.compressed_size, i});
  }
  // No two members share bytes: what they inflate to is then bounded by the file's size.
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
  for (size_t k = 1; k < spans.size(); ++k)
    if (spans[k].start < spans[k - 1].end)
      bad("members " + shown(entries[spans[k - 1].entry].name) + " and " +
          shown(entries[spans[k].entry].name) + " overlap");
  return entries;
}

}  // namespace tensorlet::io

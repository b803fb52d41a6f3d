// The zip records of .npz archives (PKWARE's APPNOTE): written with zip64 fields only where needed,
// read back without trusting any of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensorlet/io/file_io.h"

namespace tensorlet::io {

constexpr uint16_t kZipStored = 0;
constexpr uint16_t kZipDeflated = 8;
constexpr uint16_t kZipFlagEncrypted = 1u << 0;
constexpr uint16_t kZipFlagDataDescriptor = 1u << 3;
constexpr uint16_t kZipFlagStrongEncryption = 1u << 6;
constexpr uint16_t kZipFlagUtf8 = 1u << 11;
// Sizes and offsets from this value on live in zip64 fields (the 32-bit field holds it as a
// marker).
constexpr uint64_t kZip32Max = 0xffffffffu;

// One member as written.
struct ZipMember {
  std::string name;
  uint16_t method = kZipStored;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  // Whether the local header carries its sizes in a zip64 extra field: decided before the data
  // is written (from a bound on its size) so that the header keeps its length when it is
  // rewritten with the real sizes.
  bool local_zip64 = false;
};

// The local header of `m` (its length depends only on the name and local_zip64).
std::string zip_local_header(const ZipMember& m);

// The central directory of `members`, starting at `offset`, and the end records after it (zip64
// ones when there are more than 65535 members or the directory starts or ends past 4 GiB).
std::string zip_central_directory(const std::vector<ZipMember>& members, uint64_t offset);

// One member as read: the central directory's values, checked against the local header.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t data_offset = 0;  // where the member's (compressed) bytes start in the file
};

// Reads the archive's end record (zip64 ones too), its central directory and every member's local
// header, and checks that they agree, that every member's data lies in the file before the
// central directory without overlapping another, that names are UTF-8 without NUL and that no
// member is encrypted. Every problem is an IOError "[op] path: what".
std::vector<ZipEntry> read_zip_entries(const FileReader& in, const char* op,
                                       const std::string& path);

}  // namespace tensorlet::io

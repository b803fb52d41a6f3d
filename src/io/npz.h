// NumPy's .npz archives: tl::save_npz and tl::load_npz of named tensors, as numpy.savez,
// numpy.savez_compressed and numpy.load.
#pragma once

#include <string>

#include "tensorlet/io/tensor_map.h"

namespace tensorlet {

// Writes `tensors` to `path` as a zip archive numpy.load reads: each tensor a member
// "<name>.npy" holding the bytes tl::save writes for it (any device, any layout), stored as they
// are or, with `compressed`, deflated (numpy.savez_compressed). Zip64 records appear only where
// a member or an offset passes 4 GiB or there are more than 65535 tensors. The file appears
// whole or not at all, as tl::save's. A name that is empty, not UTF-8 or holds a NUL:
// tl::Error; bfloat16: DTypeError; a file that cannot be written (or a build without zlib):
// IOError naming it.
void save_npz(const std::string& path, const TensorMap& tensors, bool compressed = false);

// Reads an .npz archive into CPU tensors, keyed by member name less a trailing ".npy" (as
// NumPy's). Members may be stored or deflated; each is read as tl::load reads a .npy file. Every
// problem with the archive (its records, a CRC-32, a size, a member's .npy header) is an IOError
// "[tl::load_npz] path: what", raised before anything larger than the file allows is allocated.
TensorMap load_npz(const std::string& path);

// Whether this build reads and writes .npz archives: it needs zlib (found when configured), for
// CRC-32 and deflate; without it both functions above throw IOError saying so.
bool npz_supported();

}  // namespace tensorlet

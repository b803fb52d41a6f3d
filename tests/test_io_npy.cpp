// tl::save / tl::load of NumPy .npy files: round trips of every dtype NumPy has, in every layout;
// the exact bytes numpy.save writes; headers of formats 1.0-3.0, big-endian data and Fortran
// order as NumPy writes them; atomic replacement; and bad files, each an IOError naming the file,
// including a few thousand random mutations of valid files (under ASan in ./run test).
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
  static tl_test::ScratchDir dir("tl_io_npy_");
  return dir;
}

// A .npy file by hand: `major` 1 (16-bit length) or 2/3 (32-bit), the dict as given (padded to
// 64 bytes with a final newline), then `data`.
std::string npy_file(int major, const std::string& dict, const std::string& data) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string body = dict;
  while ((prefix + body.size() + 1) % 64 != 0) body += ' ';
  body += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(body.size());
  for (size_t b = 0; b < prefix - 8; ++b) out += static_cast<char>((len >> (8 * b)) & 0xff);
  return out + body + data;
}

std::string le_bytes(const std::vector<int32_t>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

// Random values of any dtype (uint8 over its whole range, which random_tensor's [-9, 10) is not).
Tensor random_values(const tl::Shape& shape, tl::DType d) {
  if (d == tl::kUInt8) return tl::randint(0, 256, shape, d);
  return tl_test::random_tensor(shape, d);
}

}  // namespace

TEST_CASE("npy: every dtype NumPy has round-trips bit for bit, in every layout and shape") {
  const std::vector<tl::Shape> shapes{{}, {7}, {0}, {3, 0, 2}, {4, 5}, {2, 3, 5}};
  for (tl::DType d : tl_test::all_dtypes()) {
    if (d == tl::kBFloat16) continue;  // refused: no NumPy dtype (below)
    for (const tl::Shape& shape : shapes) {
      for (const tl_test::Layout& l : tl_test::layouts_of(random_values(shape, d))) {
        CAPTURE(tl::dtype_name(d));
        CAPTURE(shape.str());
        CAPTURE(l.name);
        const std::string path = temp().file("roundtrip.npy");
        tl::save(path, l.tensor);
        const Tensor back = tl::load(path);
        CHECK(back.dtype() == d);
        CHECK(back.shape() == shape);
        CHECK(back.device() == tl::Device::cpu());
        CHECK(tl_test::bits_of(back) == tl_test::bits_of(l.tensor));
      }
    }
  }
}

TEST_CASE("npy: the bytes are numpy.save's: header, 64-byte alignment, C and Fortran order") {
  const std::string path = temp().file("exact.npy");
  const Tensor t = tl::arange(6, tl::kInt32).view({2, 3});
  tl::save(path, t);
  const std::string want_dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string bytes = read_bytes(path);
  CHECK(bytes == npy_file(1, want_dict, le_bytes({0, 1, 2, 3, 4, 5})));
  CHECK((bytes.size() - 24) % 64 == 0);
  // A transposed contiguous block is written as Fortran order, without reordering the data.
  tl::save(path, t.t());
  CHECK(read_bytes(path) == npy_file(1,
                                     "{'descr': '<i4', 'fortran_order': True, 'shape': (3, 2), }",
                                     le_bytes({0, 1, 2, 3, 4, 5})));
  const Tensor back = tl::load(path);
  CHECK(back.shape() == tl::Shape({3, 2}));
  CHECK(back.strides() == tl::Shape({1, 3}));  // a view, as NumPy's F-ordered array
  CHECK(tl_test::bits_of(back) == tl_test::bits_of(t.t()));
  // One dimension: (7,); none: ().
  tl::save(path, tl::zeros({7}, tl::kUInt8));
  CHECK(read_bytes(path).find("'descr': '|u1', 'fortran_order': False, 'shape': (7,), }") !=
        std::string::npos);
  tl::save(path, tl::scalar_tensor(2.5));
  CHECK(read_bytes(path).find("'shape': (), }") != std::string::npos);
}

TEST_CASE("npy: formats 2.0 and 3.0, big-endian data, Python 2 longs, spacing as other writers") {
  const std::string path = temp().file("formats.npy");
  const std::string data = le_bytes({1, -2, 3});
  for (int major : {1, 2, 3}) {
    write_bytes(path,
                npy_file(major, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", data));
    CHECK(tl::load(path).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 3});
  }
  // '>i4' with big-endian bytes; '=' is the native order; double quotes, no trailing comma,
  // keys in another order and 3L all parse.
  std::string be;
  for (int32_t v : {1, -2, 3})
    for (int b = 3; b >= 0; --b)
      be += static_cast<char>((static_cast<uint32_t>(v) >> (8 * b)) & 0xff);
  write_bytes(path, npy_file(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (3L,)}", be));
  CHECK(tl::load(path).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 3});
  write_bytes(path,
              npy_file(1, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"=i4\"}", data));
  CHECK(tl::load(path).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 3});
  // A big-endian float64 and float16.
  const double x = -1.5e-3;
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  std::string be8;
  for (int b = 7; b >= 0; --b) be8 += static_cast<char>((bits >> (8 * b)) & 0xff);
  write_bytes(path, npy_file(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (), }", be8));
  CHECK(tl::load(path).item<double>() == x);
  write_bytes(path, npy_file(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
                             std::string("\x3c\x00", 2)));  // 1.0 in float16, big-endian
  CHECK(tl::load(path).item<double>() == 1.0);
}

TEST_CASE("npy: a CUDA tensor is saved from the device; a 3-D Fortran file loads as NumPy's view") {
  const std::string path = temp().file("device.npy");
  if (tl::cuda::is_available()) {
    const Tensor t = tl_test::random_tensor({5, 3}, tl::kFloat32, tl::Device::cuda(0));
    tl::save(path, t);
    CHECK(tl_test::bits_of(tl::load(path)) == tl_test::bits_of(t));
  }
  // Fortran order, shape (2, 3, 4): element (i, j, k) at i + 2 j + 6 k.
  std::vector<int32_t> data(24);
  for (int i = 0; i < 24; ++i) data[static_cast<size_t>(i)] = i;
  write_bytes(path, npy_file(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }",
                             le_bytes(data)));
  const Tensor f = tl::load(path);
  CHECK(f.shape() == tl::Shape({2, 3, 4}));
  CHECK(f.strides() == tl::Shape({1, 2, 6}));
  CHECK(f.index({1, 2, 3}).item<int32_t>() == 1 + 2 * 2 + 6 * 3);
}

TEST_CASE("npy: writing is atomic: a failed save leaves no partial file and the old one intact") {
  const std::string path = temp().file("atomic.npy");
  tl::save(path, tl::ones({3}));
  const std::string before = read_bytes(path);
  // bfloat16 is refused before anything is written.
  tl_test::check_throws<tl::DTypeError>([&] { tl::save(path, tl::ones({3}, tl::kBFloat16)); },
                                        "[tl::save] bfloat16 has no NumPy dtype");
  CHECK(read_bytes(path) == before);
  // A folder that does not exist: IOError naming the file; nothing appears.
  const std::string missing = temp().file("no_such_dir/x.npy");
  tl_test::check_throws<tl::IOError>([&] { tl::save(missing, tl::ones({3})); }, missing);
  CHECK_FALSE(fs::exists(missing));
  // No temporary files are left behind in the folder.
  for (const auto& entry : fs::directory_iterator(temp().path()))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  // An undefined tensor.
  tl_test::check_throws<tl::Error>([&] { tl::save(path, Tensor()); }, "[tl::save]");
}

TEST_CASE("npy: bad files are IOErrors naming the file and what is wrong") {
  const std::string path = temp().file("bad.npy");
  const std::string ok_dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  const std::string data = le_bytes({1, 2, 3});
  auto refused = [&](const std::string& bytes, const std::string& needle) {
    CAPTURE(needle);
    write_bytes(path, bytes);
    tl_test::check_throws<tl::IOError>([&] { (void)tl::load(path); }, needle);
    tl_test::check_throws<tl::IOError>([&] { (void)tl::load(path); }, "[tl::load] " + path);
  };
  const std::string good = npy_file(1, ok_dict, data);
  refused("", "truncated file");
  refused(good.substr(0, 7), "truncated file");
  refused("PK\x03\x04 not npy at all", "not a .npy file");
  refused(std::string("\x93NUMPY\x04\x00", 8) + good.substr(8),
          "unsupported .npy format version 4.0");
  refused("\x93NUMPY\x01\x01" + good.substr(8), "unsupported .npy format version 1.1");
  refused(good.substr(0, good.size() - 1), "truncated data");
  refused(good.substr(0, 30), "is larger than the file");
  std::string long_len = good;
  long_len[8] = '\xff';
  long_len[9] = '\xff';
  refused(long_len, "is larger than the file");
  refused(npy_file(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }", data),
          "unsupported .npy dtype '<u4'");
  refused(npy_file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", data),
          "unsupported .npy dtype");
  refused(npy_file(1, "{'descr': '|i4', 'fortran_order': False, 'shape': (3,), }", data),
          "unsupported .npy dtype");
  refused(npy_file(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (3,), }", data),
          "expected a string");
  refused(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (-3,), }", data),
          "a negative dimension");
  refused(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }", data),
          "truncated data: the header's shape [3, 4] of int32 needs 48 bytes");
  refused(npy_file(1,
                   "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
                   "4294967296), }",
                   data),
          "does not fit 64 bits");
  refused(
      npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
               data),
      "a dimension past int64");
  refused(npy_file(1, "{'descr': '<i4', 'fortran_order': False}", data), "needs the keys");
  refused(
      npy_file(1, "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (3,)}", data),
      "given twice");
  refused(npy_file(1, "{'descr': '<i4', 'fortran_order': 0, 'shape': (3,)}", data),
          "expected True or False");
  refused(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'x': 1}", data),
          "unknown key 'x'");
  refused(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,)} junk", data),
          "text after the dict");
  refused(
      npy_file(3, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), '\xc3\xa9': 1}", data),
      "non-ASCII");
  refused(npy_file(1,
                   "{'descr': '<i4', 'fortran_order': False, 'shape': "
                   "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }",
                   data),
          "more than 16 dimensions");
  tl_test::check_throws<tl::IOError>([&] { (void)tl::load(temp().file("missing.npy")); },
                                     "cannot open for reading");
  tl_test::check_throws<tl::IOError>([&] { (void)tl::load(temp().path().string()); },
                                     "not a regular file");
}

TEST_CASE("npy: random mutations of valid files load or throw IOError, never anything else") {
  // Valid files of several dtypes, shapes and formats; each mutation flips, overwrites, inserts
  // or cuts bytes (mostly in the header, where the parser is), and tl::load must either return a
  // tensor or throw IOError. Fixed seed; the sanitizer build catches reads out of bounds.
  std::vector<std::string> seeds;
  const std::string a = temp().file("seed.npy");
  for (tl::DType d : {tl::kFloat32, tl::kInt64, tl::kBool, tl::kFloat16}) {
    tl::save(a, tl_test::random_tensor({3, 4}, d));
    seeds.push_back(read_bytes(a));
    tl::save(a, tl_test::random_tensor({5, 2}, d).t());
    seeds.push_back(read_bytes(a));
  }
  seeds.push_back(npy_file(3, "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }",
                           std::string(12, '\x01')));
  // scripts/fuzz --io N runs more (TL_IO_FUZZ_MUTATIONS) under other seeds (TL_IO_FUZZ_SEED).
  const char* count_env = std::getenv("TL_IO_FUZZ_MUTATIONS");
  const char* seed_env = std::getenv("TL_IO_FUZZ_SEED");
  const int count = count_env ? std::max(1, std::atoi(count_env)) : 3000;
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261127);
  const std::string path = temp().file("mutant.npy");
  int loaded = 0, refused = 0;
  for (int i = 0; i < count; ++i) {
    std::string m = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      // Three in four edits land in the first 128 bytes (magic, length, dict).
      const size_t span = (rng() % 4 != 0) ? std::min<size_t>(m.size(), 128) : m.size();
      const size_t at = rng() % span;
      switch (rng() % 6) {
        case 0:
          m[at] = static_cast<char>(m[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          m[at] = static_cast<char>(rng() % 256);
          break;
        case 2:
          m[at] = "0123456789(),:' {}-LTF<>|="[rng() % 26];
          break;
        case 3:
          m.insert(at, 1, static_cast<char>(rng() % 256));
          break;
        case 4:
          m.erase(at, 1 + rng() % 8);
          break;
        case 5:
          m.resize(at);
          break;
      }
    }
    write_bytes(path, m);
    try {
      const Tensor t = tl::load(path);
      (void)tl_test::bits_of(t);  // every element readable
      ++loaded;
    } catch (const tl::IOError&) {
      ++refused;
    }
  }
  MESSAGE(loaded << " mutants loaded, " << refused << " refused with IOError");
  CHECK(loaded + refused == count);
  CHECK(refused > count / 3);
}

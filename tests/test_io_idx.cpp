// tl::load_idx: IDX files written here (every element type, big-endian, random values) read back
// exactly, plain and gzip'd (with zlib), a zero-size one, and each kind of bad file an IOError
// naming it.
#include <doctest/doctest.h>
#include <tensorlet/tensorlet.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#if defined(TL_TEST_WITH_ZLIB)
#include <zlib.h>
#endif

#include "test_util.h"

namespace fs = std::filesystem;
using tl::Tensor;
using tl_test::check_throws;

namespace {

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("tl_idx_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// The IDX bytes of t (CPU, contiguous) with type code `code`.
std::vector<uint8_t> idx_bytes(const Tensor& t, uint8_t code) {
  std::vector<uint8_t> out = {0, 0, code, static_cast<uint8_t>(t.dim())};
  for (int64_t d : t.shape())
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(d >> s));
  const size_t size = t.element_size();
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i)
    for (size_t b = 0; b < size; ++b) out.push_back(p[i * size + size - 1 - b]);
  return out;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("load_idx: every element type reads back exactly, plain and gzip'd") {
  struct Case {
    tl::DType dtype;
    uint8_t code;
  };
  const Case cases[] = {{tl::kUInt8, 0x08}, {tl::kInt8, 0x09},    {tl::kInt16, 0x0B},
                        {tl::kInt32, 0x0C}, {tl::kFloat32, 0x0D}, {tl::kFloat64, 0x0E}};
  for (const Case& c : cases) {
    INFO(c.dtype);
    const Tensor t = (tl::randn({7, 3, 5}, tl::kFloat64) * 50.0).to(c.dtype);
    const std::string path = temp_path("plain");
    const std::vector<uint8_t> bytes = idx_bytes(t, c.code);
    write_file(path, bytes);
    const Tensor back = tl::load_idx(path);
    CHECK(back.dtype() == c.dtype);
    CHECK(back.shape() == t.shape());
    CHECK(tl::equal(back, t));
#if defined(TL_TEST_WITH_ZLIB)
    const std::string gz = temp_path("gz");
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f != nullptr);
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
    CHECK(tl::equal(tl::load_idx(gz), t));
    fs::remove(gz);
#endif
    fs::remove(path);
  }
  // Fashion-MNIST's labels file: one dim of uint8; a zero-size file of images.
  const Tensor labels = tl::remainder(tl::arange(10), 10).to(tl::kUInt8);
  const std::string path = temp_path("labels");
  write_file(path, idx_bytes(labels, 0x08));
  CHECK(tl::equal(tl::load_idx(path), labels));
  write_file(path, idx_bytes(tl::zeros({0, 28, 28}, tl::kUInt8), 0x08));
  CHECK(tl::load_idx(path).shape() == tl::Shape{0, 28, 28});
  fs::remove(path);
}

TEST_CASE("bad input: load_idx names the file and the problem") {
  const std::string path = temp_path("bad");
  check_throws<tl::IOError>([] { (void)tl::load_idx("/nonexistent/train-images-idx3-ubyte"); },
                            "[tl::load_idx] /nonexistent/train-images-idx3-ubyte");
  write_file(path, {1, 0, 8, 1, 0, 0, 0, 1, 7});
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "not an IDX file");
  write_file(path, {0, 0, 0x0A, 1, 0, 0, 0, 1, 7});
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "unknown IDX element type");
  write_file(path, {0, 0, 8, 2, 0, 0, 0});
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "truncated");
  write_file(path, {0, 0, 8, 1, 0, 0, 0, 3, 7, 8});
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "holds 2 bytes");
  write_file(path, {0, 0, 8, 1, 0, 0, 0, 1, 7, 8});
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "need 1");
  write_file(path, {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3});
#if defined(TL_TEST_WITH_ZLIB)
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "gzip");
#else
  check_throws<tl::IOError>([&] { (void)tl::load_idx(path); }, "no zlib");
#endif
  fs::remove(path);
}

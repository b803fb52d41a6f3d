// tl::save_safetensors / tl::load_safetensors: round trips of every dtype in every layout; the
// loaded CPU tensors view one copy-on-write mapping of the file; the bytes the Python safetensors
// package writes; bad files, each an IOError naming the file (hand-made ones and a few thousand
// random mutations of valid files); loading to a GPU through pinned staging.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
  static tl_test::ScratchDir dir("tl_io_safetensors_");
  return dir;
}

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (size_t b = 0; b < 8; ++b) s[b] = static_cast<char>((n >> (8 * b)) & 0xff);
  return s;
}

// A safetensors file by hand: the header text padded with spaces to a multiple of 8 (as the
// reference writer pads it), its length, then `data`.
std::string st_file(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return le64(header.size()) + header + data;
}

// The header text of a file's bytes.
std::string header_of(const std::string& bytes) {
  uint64_t n = 0;
  for (size_t b = 0; b < 8; ++b)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[b])) << (8 * b);
  return bytes.substr(8, n);
}

// Random values of any dtype, never all zeros (uint8 over its whole range).
Tensor random_values(const tl::Shape& shape, tl::DType d) {
  if (d == tl::kUInt8) return tl::randint(0, 256, shape, d);
  return tl_test::random_tensor(shape, d);
}

// The same names, dtypes, shapes and bits.
void check_same(const tl::TensorMap& got, const tl::TensorMap& want) {
  REQUIRE(got.size() == want.size());
  for (const auto& [name, t] : want) {
    CAPTURE(name);
    REQUIRE(got.count(name) == 1);
    const Tensor& g = got.at(name);
    CHECK(g.dtype() == t.dtype());
    CHECK(g.shape() == t.shape());
    CHECK(tl_test::bits_of(g) == tl_test::bits_of(t));
  }
}

// What the Python safetensors package (0.8.0, numpy 2.4) writes for
//   safetensors.numpy.save({"weight": np.array([[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]], np.float32),
//                           "mask": np.array([True, False, True]),
//                           "half": np.array([0.5, -1.0, 65504.0, 2.0**-24], np.float16),
//                           "ids": np.array([7, -3], np.int64)}, metadata={"format": "pt"})
// (the header: __metadata__, then ids, weight, half, mask; padded with 5 spaces).
const unsigned char kPythonFile[] = {
    0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7b, 0x22, 0x5f, 0x5f, 0x6d, 0x65, 0x74, 0x61,
    0x64, 0x61, 0x74, 0x61, 0x5f, 0x5f, 0x22, 0x3a, 0x7b, 0x22, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74,
    0x22, 0x3a, 0x22, 0x70, 0x74, 0x22, 0x7d, 0x2c, 0x22, 0x69, 0x64, 0x73, 0x22, 0x3a, 0x7b, 0x22,
    0x64, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0x49, 0x36, 0x34, 0x22, 0x2c, 0x22, 0x73, 0x68,
    0x61, 0x70, 0x65, 0x22, 0x3a, 0x5b, 0x32, 0x5d, 0x2c, 0x22, 0x64, 0x61, 0x74, 0x61, 0x5f, 0x6f,
    0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x22, 0x3a, 0x5b, 0x30, 0x2c, 0x31, 0x36, 0x5d, 0x7d, 0x2c,
    0x22, 0x77, 0x65, 0x69, 0x67, 0x68, 0x74, 0x22, 0x3a, 0x7b, 0x22, 0x64, 0x74, 0x79, 0x70, 0x65,
    0x22, 0x3a, 0x22, 0x46, 0x33, 0x32, 0x22, 0x2c, 0x22, 0x73, 0x68, 0x61, 0x70, 0x65, 0x22, 0x3a,
    0x5b, 0x32, 0x2c, 0x33, 0x5d, 0x2c, 0x22, 0x64, 0x61, 0x74, 0x61, 0x5f, 0x6f, 0x66, 0x66, 0x73,
    0x65, 0x74, 0x73, 0x22, 0x3a, 0x5b, 0x31, 0x36, 0x2c, 0x34, 0x30, 0x5d, 0x7d, 0x2c, 0x22, 0x68,
    0x61, 0x6c, 0x66, 0x22, 0x3a, 0x7b, 0x22, 0x64, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0x46,
    0x31, 0x36, 0x22, 0x2c, 0x22, 0x73, 0x68, 0x61, 0x70, 0x65, 0x22, 0x3a, 0x5b, 0x34, 0x5d, 0x2c,
    0x22, 0x64, 0x61, 0x74, 0x61, 0x5f, 0x6f, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x22, 0x3a, 0x5b,
    0x34, 0x30, 0x2c, 0x34, 0x38, 0x5d, 0x7d, 0x2c, 0x22, 0x6d, 0x61, 0x73, 0x6b, 0x22, 0x3a, 0x7b,
    0x22, 0x64, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0x42, 0x4f, 0x4f, 0x4c, 0x22, 0x2c, 0x22,
    0x73, 0x68, 0x61, 0x70, 0x65, 0x22, 0x3a, 0x5b, 0x33, 0x5d, 0x2c, 0x22, 0x64, 0x61, 0x74, 0x61,
    0x5f, 0x6f, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x22, 0x3a, 0x5b, 0x34, 0x38, 0x2c, 0x35, 0x31,
    0x5d, 0x7d, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x10, 0xc0,
    0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0x80, 0xbf,
    0x00, 0x38, 0x00, 0xbc, 0xff, 0x7b, 0x01, 0x00, 0x01, 0x00, 0x01,
};

std::string python_bytes() {
  return std::string(reinterpret_cast<const char*>(kPythonFile), sizeof(kPythonFile));
}

// The bytes of a tensor's elements, as a file holds them.
std::string bytes_of(const Tensor& t) {
  const Tensor c = t.cpu().contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

// A file whose tensors lie at offsets their element sizes do not divide (the reference writer
// never makes one, other writers may): u8 at 0, f32 at 1, i16 at 9, f64 at 13, bool at 21.
struct OddFile {
  tl::TensorMap tensors;
  std::string bytes;
};
OddFile odd_file() {
  OddFile f;
  f.tensors["a"] = tl::from_vector(std::vector<uint8_t>{5}, {1});
  f.tensors["b"] = tl::from_vector(std::vector<float>{1.5f, -2.0f}, {2});
  f.tensors["c"] = tl::from_vector(std::vector<int16_t>{300, -7}, {2});
  f.tensors["d"] = tl::scalar_tensor(0.1, tl::kFloat64);
  f.tensors["e"] = tl::ones({1, 1}, tl::kBool);
  std::string data;
  for (const char* name : {"a", "b", "c", "d", "e"}) data += bytes_of(f.tensors[name]);
  f.bytes = st_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[1,9]},)"
                    R"("c":{"dtype":"I16","shape":[2],"data_offsets":[9,13]},)"
                    R"("d":{"dtype":"F64","shape":[],"data_offsets":[13,21]},)"
                    R"("e":{"dtype":"BOOL","shape":[1,1],"data_offsets":[21,22]}})",
                    data);
  return f;
}

// Every dtype in several layouts and shapes, with metadata: the mutation fuzz's main seed.
tl::TensorMap every_dtype() {
  tl::TensorMap m;
  for (tl::DType d : tl_test::all_dtypes()) {
    const std::string n = tl::dtype_name(d);
    m["plain_" + n] = random_values({3, 5}, d);
    m["transposed_" + n] = random_values({4, 3}, d).t();
    m["sliced_" + n] = random_values({2, 6}, d).slice(1, 0, std::nullopt, 2);
    m["empty_" + n] = tl::empty({0, 2}, d);
    m["scalar_" + n] = random_values({}, d);
  }
  return m;
}

}  // namespace

TEST_CASE("safetensors: every dtype round-trips bit for bit, in every layout and shape") {
  const std::vector<tl::Shape> shapes{{}, {7}, {0}, {3, 0, 2}, {4, 5}, {2, 3, 5}};
  const std::string path = temp().file("roundtrip.safetensors");
  for (tl::DType d : tl_test::all_dtypes()) {
    for (const tl::Shape& shape : shapes) {
      for (const tl_test::Layout& l : tl_test::layouts_of(random_values(shape, d))) {
        CAPTURE(tl::dtype_name(d));
        CAPTURE(shape.str());
        CAPTURE(l.name);
        tl::save_safetensors(path, {{"x", l.tensor}});
        const tl::TensorMap back = tl::load_safetensors(path);
        REQUIRE(back.size() == 1);
        const Tensor& t = back.at("x");
        CHECK(t.dtype() == d);
        CHECK(t.shape() == shape);
        CHECK(t.device() == tl::Device::cpu());
        CHECK(t.is_contiguous());
        CHECK(tl_test::bits_of(t) == tl_test::bits_of(l.tensor));
        if (t.numel() > 0) CHECK(t.storage()->external());  // a view of the file, not a copy
      }
    }
  }
  // All of them in one file, each at its own place in one data buffer.
  const tl::TensorMap all = every_dtype();
  tl::save_safetensors(path, all, {{"format", "tensorlet"}});
  check_same(tl::load_safetensors(path), all);
}

TEST_CASE(
    "safetensors: the data is in the reference writer's order, 8-byte aligned, exactly covered") {
  const std::string path = temp().file("order.safetensors");
  tl::TensorMap m;
  for (tl::DType d : tl_test::all_dtypes()) {
    m[std::string("z_") + tl::dtype_name(d)] = random_values({3}, d);
    m[std::string("a_") + tl::dtype_name(d)] = random_values({2}, d);
  }
  tl::save_safetensors(path, m);
  const std::string bytes = read_bytes(path);
  const std::string header = header_of(bytes);
  CHECK((8 + header.size()) % 8 == 0);
  const size_t text_end = header.find_last_not_of(' ');
  CHECK(header[text_end] == '}');
  CHECK(header.size() - text_end - 1 < 8);
  // Larger alignment first, in the order of the reference's dtype enum (reversed), then names.
  std::vector<std::string> want;
  for (tl::DType d : {tl::kInt64, tl::kFloat64, tl::kFloat32, tl::kInt32, tl::kBFloat16,
                      tl::kFloat16, tl::kInt16, tl::kInt8, tl::kUInt8, tl::kBool})
    for (const char* prefix : {"a_", "z_"}) want.push_back(prefix + std::string(tl::dtype_name(d)));
  REQUIRE(want.size() == m.size());  // the list above names every dtype
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(header);
  std::vector<std::string> got;
  uint64_t at = 0;
  for (const auto& [name, info] : j.items()) {
    got.push_back(name);
    CHECK(info["data_offsets"][0].get<uint64_t>() == at);
    at = info["data_offsets"][1].get<uint64_t>();
    CHECK(bytes.substr(8 + header.size() + info["data_offsets"][0].get<size_t>(),
                       at - info["data_offsets"][0].get<uint64_t>()) == bytes_of(m.at(name)));
  }
  CHECK(got == want);
  CHECK(8 + header.size() + at == bytes.size());
}

TEST_CASE("safetensors: metadata round-trips; none is no key") {
  const std::string path = temp().file("metadata.safetensors");
  const std::map<std::string, std::string> meta{
      {"format", "pt"},
      {"quote \" backslash \\ newline \n tab \t", "\xc3\xa9 \xe2\x9c\x93 \x01 \x7f"},
      {"", ""},
      {"long", std::string(10000, 'x')}};
  const Tensor w = random_values({2, 2}, tl::kFloat32);
  tl::save_safetensors(path, {{"w", w}}, meta);
  CHECK(tl::load_safetensors_metadata(path) == meta);
  CHECK(header_of(read_bytes(path)).rfind(R"({"__metadata__":{)", 0) == 0);
  check_same(tl::load_safetensors(path), {{"w", w}});
  tl::save_safetensors(path, {{"w", w}});
  CHECK(tl::load_safetensors_metadata(path).empty());
  CHECK(header_of(read_bytes(path)).find("__metadata__") == std::string::npos);
  // No tensors at all: the bytes safetensors.numpy.save({}) gives.
  tl::save_safetensors(path, {});
  CHECK(read_bytes(path) == le64(8) + "{}      ");
  CHECK(tl::load_safetensors(path).empty());
  tl::save_safetensors(path, {}, {{"only", "metadata"}});
  CHECK(tl::load_safetensors(path).empty());
  CHECK(tl::load_safetensors_metadata(path) ==
        std::map<std::string, std::string>{{"only", "metadata"}});
  // Names are any UTF-8 (escaped in the JSON where they must be).
  const tl::TensorMap odd_names{{"\xf0\x9f\x98\x80", w},
                                {"a.b/c:d \"q\" \x01", w},
                                {"model.layers.0.self_attn.q_proj.weight", w}};
  tl::save_safetensors(path, odd_names);
  check_same(tl::load_safetensors(path), odd_names);
}

TEST_CASE("safetensors: loaded CPU tensors view one copy-on-write mapping of the file") {
  const std::string path = temp().file("mapped.safetensors");
  const tl::TensorMap in{{"a", random_values({64}, tl::kFloat32)},
                         {"b", random_values({3, 5}, tl::kInt64)},
                         {"c", random_values({7}, tl::kFloat16)},
                         {"d", random_values({5}, tl::kBool)},
                         {"e", random_values({2, 2}, tl::kBFloat16)}};
  tl::save_safetensors(path, in);
  const std::string before = read_bytes(path);
  const std::string header = header_of(before);
  const nlohmann::json j = nlohmann::json::parse(header);
  const size_t data_start = 8 + header.size();
  auto begin_of = [&](const std::string& name) {
    return data_start + j[name]["data_offsets"][0].get<size_t>();
  };
  tl::TensorMap m = tl::load_safetensors(path);
  // Every tensor lies where the file has its bytes, relative to one base: one mapping.
  const char* base = static_cast<const char*>(m.at("a").data_ptr()) - begin_of("a");
  for (const auto& [name, t] : m) {
    CAPTURE(name);
    CHECK(t.storage()->external());
    CHECK(t.is_contiguous());
    CHECK(static_cast<const char*>(t.data_ptr()) == base + begin_of(name));
    CHECK(std::memcmp(t.data_ptr(), before.data() + begin_of(name), t.nbytes()) == 0);
  }
  // Writing to a loaded tensor changes that tensor only: the file and a second load of it keep
  // the saved values.
  m.at("a").mul_(2.0);
  m.at("b").fill_(0);
  m.at("d").fill_(true);
  CHECK(tl_test::bits_of(m.at("a")) != tl_test::bits_of(in.at("a")));
  CHECK(tl::all(m.at("b") == 0).item<bool>());
  CHECK(read_bytes(path) == before);
  check_same(tl::load_safetensors(path), in);
  // The mapping lives as long as any tensor or view of it.
  const Tensor kept = m.at("c").slice(0, 1, 4);
  const Tensor kept_b = tl::load_safetensors(path).at("b");  // the map is gone after this line
  m.clear();
  CHECK(tl_test::bits_of(kept) == tl_test::bits_of(in.at("c").slice(0, 1, 4)));
  CHECK(tl_test::bits_of(kept_b) == tl_test::bits_of(in.at("b")));
  // Replacing the file (save_safetensors renames over it) leaves the mapped tensors as they were.
  tl::save_safetensors(path, {{"other", tl::ones({3})}});
  CHECK(tl_test::bits_of(kept_b) == tl_test::bits_of(in.at("b")));
  CHECK(tl::load_safetensors(path).count("other") == 1);
}

TEST_CASE(
    "safetensors: a tensor at an offset its element size does not divide is loaded as a copy") {
  const std::string path = temp().file("odd.safetensors");
  const OddFile f = odd_file();
  write_bytes(path, f.bytes);
  const tl::TensorMap back = tl::load_safetensors(path);
  check_same(back, f.tensors);
  CHECK(back.at("a").storage()->external());        // 1-byte elements are never misaligned
  CHECK_FALSE(back.at("b").storage()->external());  // float32 at data byte 1
  CHECK_FALSE(back.at("c").storage()->external());  // int16 at 9
  CHECK_FALSE(back.at("d").storage()->external());  // float64 at 13
  CHECK(back.at("e").storage()->external());
  // A header whose length is not padded to 8: the data itself starts misaligned.
  const std::string header = R"({"s":{"dtype":"I16","shape":[2],"data_offsets":[0,4]},)"
                             R"("f":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  REQUIRE(header.size() % 8 != 0);
  const tl::TensorMap t{{"s", tl::from_vector(std::vector<int16_t>{-1, 2}, {2})},
                        {"f", tl::from_vector(std::vector<float>{3.25f}, {1})}};
  for (const std::string& pad : {std::string(""), std::string(" "), std::string("\n  ")}) {
    CAPTURE(pad.size());
    write_bytes(path, le64(header.size() + pad.size()) + header + pad + bytes_of(t.at("s")) +
                          bytes_of(t.at("f")));
    const tl::TensorMap b = tl::load_safetensors(path);
    check_same(b, t);
    const size_t f_offset = 8 + header.size() + pad.size() + 4;
    CHECK(b.at("f").storage()->external() == (f_offset % 4 == 0));
  }
}

TEST_CASE("safetensors: the bytes are the Python safetensors package's, both ways") {
  const std::string path = temp().file("python.safetensors");
  const tl::TensorMap t{
      {"weight",
       tl::from_vector(std::vector<float>{1.5f, -2.25f, 3.0f, 0.5f, 4.0f, -1.0f}, {2, 3})},
      {"mask", tl::from_vector(std::vector<uint8_t>{1, 0, 1}, {3}).to(tl::kBool)},
      {"half",
       tl::from_vector(std::vector<float>{0.5f, -1.0f, 65504.0f, std::ldexp(1.0f, -24)}, {4})
           .to(tl::kFloat16)},
      {"ids", tl::from_vector(std::vector<int64_t>{7, -3}, {2})}};
  const std::map<std::string, std::string> meta{{"format", "pt"}};
  tl::save_safetensors(path, t, meta);
  CHECK(read_bytes(path) == python_bytes());
  write_bytes(path, python_bytes());
  check_same(tl::load_safetensors(path), t);
  CHECK(tl::load_safetensors_metadata(path) == meta);
  CHECK(tl::load_safetensors(path).at("half").to(tl::kFloat64).to_vector<double>() ==
        std::vector<double>{0.5, -1.0, 65504.0, std::ldexp(1.0, -24)});
}

TEST_CASE(
    "safetensors: what the format allows loads: padding, extra fields, null metadata, order") {
  const std::string path = temp().file("allowed.safetensors");
  const std::string data = bytes_of(tl::from_vector(std::vector<int32_t>{1, -2, 3}, {3}));
  auto load_a = [&](const std::string& bytes) {
    write_bytes(path, bytes);
    const tl::TensorMap m = tl::load_safetensors(path);
    REQUIRE(m.count("a") == 1);
    return m.at("a").to_vector<int32_t>();
  };
  const std::vector<int32_t> want{1, -2, 3};
  const std::string a = R"("a":{"dtype":"I32","shape":[3],"data_offsets":[0,12]})";
  // Trailing whitespace of any kind and length after the JSON.
  CHECK(load_a(st_file("{" + a + "}\n\t \r          ", data)) == want);
  // Fields in another order; unknown fields skipped, whatever they hold.
  CHECK(load_a(st_file(
            R"({"a":{"note":"hi","data_offsets":[0,12],"extra":{"x":[1,{"y":null}],"z":-1.5},)"
            R"("shape":[3],"dtype":"I32"}})",
            data)) == want);
  // "__metadata__" null is none (as the reference's optional field reads it), and may come last.
  CHECK(load_a(st_file("{" + a + R"(,"__metadata__":null})", data)) == want);
  write_bytes(path, st_file("{" + a + R"(,"__metadata__":{"k":"v"}})", data));
  CHECK(tl::load_safetensors_metadata(path) == std::map<std::string, std::string>{{"k", "v"}});
  // Empty tensors anywhere: before a tensor at the same offset, or at the end.
  write_bytes(path, st_file("{" + a +
                                R"(,"z":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
                                R"("y":{"dtype":"BOOL","shape":[0],"data_offsets":[12,12]}})",
                            data));
  const tl::TensorMap m = tl::load_safetensors(path);
  CHECK(m.at("z").shape() == tl::Shape({0, 4}));
  CHECK(m.at("y").shape() == tl::Shape({0}));
  CHECK(m.at("a").to_vector<int32_t>() == want);
  // Escaped names, and the empty name.
  write_bytes(path,
              st_file(R"({"\u00e9\n":{"dtype":"I32","shape":[3],"data_offsets":[0,12]}})", data));
  CHECK(tl::load_safetensors(path).count("\xc3\xa9\n") == 1);
  write_bytes(path, st_file(R"({"":{"dtype":"I32","shape":[3],"data_offsets":[0,12]}})", data));
  CHECK(tl::load_safetensors(path).count("") == 1);
}

TEST_CASE("safetensors: saving is atomic and checks names, tensors and metadata first") {
  const std::string path = temp().file("atomic.safetensors");
  const Tensor w = tl::ones({3});
  tl::save_safetensors(path, {{"w", w}});
  const std::string before = read_bytes(path);
  auto refused = [&](const tl::TensorMap& m, const std::map<std::string, std::string>& meta,
                     const std::string& needle) {
    CAPTURE(needle);
    tl_test::check_throws<tl::Error>([&] { tl::save_safetensors(path, m, meta); },
                                     "[tl::save_safetensors] " + needle);
    CHECK(read_bytes(path) == before);
  };
  refused({{"", w}}, {}, "a tensor has an empty name");
  refused({{"__metadata__", w}}, {}, "\"__metadata__\" is the metadata's key, not a tensor name");
  refused({{"a\xff", w}}, {}, "a tensor name is not valid UTF-8");
  refused({{"a\xc0\x80", w}}, {}, "a tensor name is not valid UTF-8");          // overlong NUL
  refused({{"a\xed\xa0\x80", w}}, {}, "a tensor name is not valid UTF-8");      // a surrogate
  refused({{"a\xf4\x90\x80\x80", w}}, {}, "a tensor name is not valid UTF-8");  // past U+10FFFF
  refused({{"a\xe2\x9c", w}}, {}, "a tensor name is not valid UTF-8");          // cut short
  refused({{"w", w}, {"x", Tensor()}}, {}, "the tensor \"x\" is undefined");
  refused({{"w", w}}, {{"k\x80", "v"}}, "a metadata key is not valid UTF-8");
  refused({{"w", w}}, {{"k", "v\xfe"}}, "the metadata value of \"k\" is not valid UTF-8");
  // A folder that does not exist: IOError naming the file; nothing appears.
  const std::string missing = temp().file("no_such_dir/x.safetensors");
  tl_test::check_throws<tl::IOError>(
      [&] {
        tl::save_safetensors(missing, {{"w", w}});
      },
      "[tl::save_safetensors] " + missing);
  CHECK_FALSE(fs::exists(missing));
  for (const auto& entry : fs::directory_iterator(temp().path()))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  // Tensors on a GPU are saved from there.
  if (tl::cuda::is_available()) {
    const tl::TensorMap on_gpu{
        {"g", tl_test::random_tensor({5, 3}, tl::kFloat32, tl::Device::cuda(0)).t()},
        {"h", tl_test::random_tensor({4}, tl::kBFloat16, tl::Device::cuda(0))}};
    tl::save_safetensors(path, on_gpu);
    check_same(tl::load_safetensors(path), on_gpu);
  }
}

TEST_CASE("safetensors: bad files are IOErrors naming the file and what is wrong") {
  const std::string path = temp().file("bad.safetensors");
  int cases = 0;
  auto refused = [&](const std::string& bytes, const std::string& needle) {
    CAPTURE(needle);
    ++cases;
    write_bytes(path, bytes);
    tl_test::check_throws<tl::IOError>([&] { (void)tl::load_safetensors(path); }, needle);
    tl_test::check_throws<tl::IOError>([&] { (void)tl::load_safetensors(path); },
                                       "[tl::load_safetensors] " + path + ": ");
    tl_test::check_throws<tl::IOError>([&] { (void)tl::load_safetensors_metadata(path); }, needle);
  };
  const std::string i32x3 = bytes_of(tl::from_vector(std::vector<int32_t>{1, 2, 3}, {3}));
  // One int32 [3] entry "a" with `fields` in place of its usual ones.
  auto one = [&](const std::string& fields) { return st_file("{\"a\":{" + fields + "}}", i32x3); };
  const std::string ok_fields = R"("dtype":"I32","shape":[3],"data_offsets":[0,12])";
  const std::string good = one(ok_fields);
  write_bytes(path, good);
  REQUIRE(tl::load_safetensors(path).size() == 1);

  // The length and the header's framing.
  refused("", "truncated file");
  refused(good.substr(0, 7), "truncated file");
  refused(le64(64) + "{}", "the header length 64 is larger than the file (10 bytes)");
  refused(le64(UINT64_MAX) + good.substr(8), "is past the limit of 100000000 bytes");
  refused(le64(100000001) + good.substr(8), "the header length 100000001 is past the limit");
  refused(le64(0) + i32x3, "the header does not start with '{'");
  refused(st_file(" {}", ""), "the header does not start with '{'");
  refused(st_file("[]", ""), "the header does not start with '{'");
  refused(st_file("\xef\xbb\xbf{}", ""), "the header does not start with '{'");  // a BOM
  // Not JSON.
  refused(st_file("{", ""), "the header is not valid JSON");
  refused(st_file("{} x", ""), "the header is not valid JSON");
  refused(st_file("{}{}", ""), "the header is not valid JSON");
  refused(st_file("{/* c */}", ""), "the header is not valid JSON");
  refused(st_file(std::string("{\"a\0\":1}", 8), ""), "the header is not valid JSON");
  refused(st_file("{\"a\xff\":{" + ok_fields + "}}", i32x3), "the header is not valid JSON");
  refused(st_file("{\"\\ud800\":{" + ok_fields + "}}", i32x3), "the header is not valid JSON");
  refused(st_file("{'a':{" + ok_fields + "}}", i32x3), "the header is not valid JSON");
  refused(one(R"("dtype":"I32","shape":[03],"data_offsets":[0,12])"), "not valid JSON");
  refused(good.substr(0, 20), "is larger than the file");
  // Entries.
  refused(st_file(R"({"a":3})", ""), "expected tensor \"a\" to be an object, found a number");
  refused(st_file(R"({"a":[1]})", ""), "expected tensor \"a\" to be an object, found an array");
  refused(one(R"("shape":[3],"data_offsets":[0,12])"), "tensor \"a\" has no \"dtype\"");
  refused(one(R"("dtype":"I32","data_offsets":[0,12])"), "tensor \"a\" has no \"shape\"");
  refused(one(R"("dtype":"I32","shape":[3])"), "tensor \"a\" has no \"data_offsets\"");
  refused(one(R"("dtype":5,"shape":[3],"data_offsets":[0,12])"),
          "expected tensor \"a\"'s \"dtype\" to be a string, found a number");
  refused(one(R"("dtype":"F31","shape":[3],"data_offsets":[0,12])"),
          "tensor \"a\" has an unknown dtype \"F31\"");
  refused(one(R"("dtype":"i32","shape":[3],"data_offsets":[0,12])"), "unknown dtype \"i32\"");
  refused(one(R"("dtype":"U32","shape":[3],"data_offsets":[0,12])"),
          "tensor \"a\" has the safetensors dtype \"U32\", which tensorlet does not have");
  refused(one(R"("dtype":"U16","shape":[6],"data_offsets":[0,12])"), "\"U16\", which tensorlet");
  refused(one(R"("dtype":"F8_E4M3","shape":[12],"data_offsets":[0,12])"),
          "\"F8_E4M3\", which tensorlet does not have");
  refused(one(R"("dtype":"U64","shape":[1],"data_offsets":[0,12])"), "\"U64\", which tensorlet");
  // Shapes.
  refused(one(R"("dtype":"I32","shape":[-3],"data_offsets":[0,12])"),
          "expected tensor \"a\"'s \"shape\" to be an array of non-negative integers, found a "
          "negative number -3");
  refused(one(R"("dtype":"I32","shape":[3.0],"data_offsets":[0,12])"),
          "\"shape\" to be an array of non-negative integers, found a number that is not");
  refused(one(R"("dtype":"I32","shape":3,"data_offsets":[0,12])"),
          "\"shape\" to be an array of non-negative integers, found a number");
  refused(one(R"("dtype":"I32","shape":["3"],"data_offsets":[0,12])"),
          "\"shape\" to be an array of non-negative integers, found a string");
  refused(one(R"("dtype":"I32","shape":[[3]],"data_offsets":[0,12])"),
          "\"shape\" to be an array of non-negative integers, found an array");
  refused(one(R"("dtype":"I32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,3],"data_offsets":[0,12])"),
          "found more than 16 dimensions");
  refused(one(R"("dtype":"I32","shape":[9223372036854775808],"data_offsets":[0,12])"),
          "found a dimension past int64 (9223372036854775808)");
  refused(one(R"("dtype":"I32","shape":[18446744073709551616],"data_offsets":[0,12])"),
          "found a number that is not an integer of 64 bits");
  refused(one(R"("dtype":"I32","shape":[4294967296,4294967296,4],"data_offsets":[0,12])"),
          "tensor \"a\"'s shape has more elements than int64 holds");
  refused(one(R"("dtype":"I32","shape":[2305843009213693952],"data_offsets":[0,12])"),
          "tensor \"a\"'s size in bytes does not fit int64");
  // Offsets.
  refused(one(R"("dtype":"I32","shape":[3],"data_offsets":[0])"),
          "expected tensor \"a\"'s \"data_offsets\" to be two non-negative integers, found "
          "fewer than two numbers");
  refused(one(R"("dtype":"I32","shape":[3],"data_offsets":[0,12,12])"),
          "\"data_offsets\" to be two non-negative integers, found more than two numbers");
  refused(one(R"("dtype":"I32","shape":[3],"data_offsets":{"0":12})"),
          "\"data_offsets\" to be two non-negative integers, found an object");
  refused(one(R"("dtype":"I32","shape":[3],"data_offsets":[-1,11])"),
          "\"data_offsets\" to be two non-negative integers, found a negative number -1");
  refused(one(R"("dtype":"I32","shape":[3],"data_offsets":[12,0])"),
          "tensor \"a\"'s data_offsets [12, 0) end before they begin");
  refused(one(R"("dtype":"I32","shape":[3],"data_offsets":[0,8])"),
          "tensor \"a\" of 3 int32 elements needs 12 bytes, its data_offsets [0, 8) hold 8");
  refused(one(R"("dtype":"I32","shape":[2],"data_offsets":[0,12])"), "needs 8 bytes");
  refused(st_file("{\"a\":{" + ok_fields + "}}", i32x3.substr(0, 8)),
          "tensor \"a\"'s data_offsets [0, 12) reach past the data (8 bytes)");
  refused(st_file(R"({"a":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},)"
                  R"("b":{"dtype":"I32","shape":[3],"data_offsets":[8,20]}})",
                  i32x3 + i32x3.substr(0, 8)),
          "tensor \"b\"'s bytes [8, 20) overlap tensor \"a\"'s [0, 12)");
  refused(st_file(R"({"a":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},)"
                  R"("b":{"dtype":"I32","shape":[3],"data_offsets":[0,12]}})",
                  i32x3),
          "overlap tensor");
  refused(st_file(R"({"a":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},)"
                  R"("b":{"dtype":"I32","shape":[3],"data_offsets":[16,28]}})",
                  i32x3 + i32x3 + "1234"),
          "the data has a hole: bytes [12, 16) belong to no tensor (tensor \"b\" begins at 16)");
  refused(one(R"("dtype":"I32","shape":[2],"data_offsets":[4,12])"),
          "the data has a hole: bytes [0, 4) belong to no tensor");
  refused(st_file("{\"a\":{" + ok_fields + "}}", i32x3 + "xyz"),
          "the tensors cover 12 bytes of the data, the file has 15 bytes after the header");
  refused(st_file("{}", i32x3), "the tensors cover 0 bytes of the data, the file has 12");
  // Duplicate keys anywhere.
  refused(st_file("{\"a\":{" + ok_fields + "},\"a\":{" + ok_fields + "}}", i32x3),
          "the tensor name \"a\" is given twice");
  refused(one(ok_fields + R"(,"dtype":"I32")"), "tensor \"a\" gives \"dtype\" twice");
  refused(one(ok_fields + R"(,"x":1,"x":2)"), "tensor \"a\" gives \"x\" twice");
  // Metadata.
  refused(st_file(R"({"__metadata__":{},"__metadata__":{}})", ""),
          "the key \"__metadata__\" is given twice");
  refused(st_file(R"({"__metadata__":{"k":"1","k":"2"}})", ""),
          "the metadata key \"k\" is given twice");
  refused(st_file(R"({"__metadata__":{"k":1}})", ""),
          "expected the metadata value of \"k\" to be a string, found a number");
  refused(st_file(R"({"__metadata__":{"k":{"x":"y"}}})", ""),
          "expected the metadata value of \"k\" to be a string, found an object");
  refused(st_file(R"({"__metadata__":["k","v"]})", ""),
          "expected \"__metadata__\" to be an object of strings, found an array");
  refused(st_file(R"({"__metadata__":"k"})", ""),
          "expected \"__metadata__\" to be an object of strings, found a string");
  // Not a file to read.
  tl_test::check_throws<tl::IOError>(
      [&] { (void)tl::load_safetensors(temp().file("missing.safetensors")); },
      "cannot open for reading");
  tl_test::check_throws<tl::IOError>([&] { (void)tl::load_safetensors(temp().path().string()); },
                                     "not a regular file");
  tl_test::check_throws<tl::IOError>(
      [&] { (void)tl::load_safetensors_metadata(temp().path().string()); },
      "[tl::load_safetensors_metadata] " + temp().path().string() + ": not a regular file");
  MESSAGE(cases << " bad files refused");
}

TEST_CASE(
    "safetensors: random mutations of valid files load or throw IOError, never anything else") {
  // Valid files (every dtype and layout with metadata, the Python package's, misaligned
  // tensors, a small one); each mutation edits the header's text (then, mostly, rewrites the
  // length to match so the edit reaches the checks past the JSON parser), the length field, or
  // any byte of the file. load_safetensors must return tensors whose every element reads, or
  // throw IOError, and load_safetensors_metadata must agree. Fixed seed; the sanitizer build
  // catches reads out of bounds.
  std::vector<std::string> seeds;
  const std::string a = temp().file("seed.safetensors");
  tl::save_safetensors(a, every_dtype(), {{"format", "pt"}, {"k", "v"}});
  seeds.push_back(read_bytes(a));
  seeds.push_back(python_bytes());
  seeds.push_back(odd_file().bytes);
  tl::save_safetensors(a, {{"x", random_values({2, 3}, tl::kFloat32)},
                           {"y", random_values({0}, tl::kInt64)},
                           {"z", random_values({}, tl::kBFloat16)}});
  seeds.push_back(read_bytes(a));
  // scripts/fuzz --io N runs more (TL_IO_FUZZ_MUTATIONS) under other seeds (TL_IO_FUZZ_SEED).
  const char* count_env = std::getenv("TL_IO_FUZZ_MUTATIONS");
  const char* seed_env = std::getenv("TL_IO_FUZZ_SEED");
  const int count = count_env ? std::max(1, std::atoi(count_env)) : 3000;
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261128);
  const std::string path = temp().file("mutant.safetensors");
  const std::string json_chars = "0123456789[]{}\":,-. eE\\u";
  int loaded = 0, refused = 0;
  for (int i = 0; i < count; ++i) {
    const std::string& seed = seeds[rng() % seeds.size()];
    std::string header = header_of(seed);
    std::string data = seed.substr(8 + header.size());
    std::string length = seed.substr(0, 8);
    const int edits = 1 + static_cast<int>(rng() % 4);
    bool keep_length = rng() % 4 == 0;  // else the length follows the header's edits
    for (int e = 0; e < edits; ++e) {
      const unsigned where = rng() % 8;
      if (where == 0) {  // the length field: a byte, or a value near the true one
        keep_length = true;
        if (rng() % 2 == 0) {
          length[rng() % 8] = static_cast<char>(rng() % 256);
        } else {
          const int64_t delta = static_cast<int64_t>(rng() % 33) - 16;
          length = le64(static_cast<uint64_t>(static_cast<int64_t>(header.size()) + delta));
        }
        continue;
      }
      std::string& s = (where == 1 && !data.empty()) ? data : header;
      if (s.empty()) continue;
      const size_t at = rng() % s.size();
      switch (rng() % 7) {
        case 0:
          s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          s[at] = static_cast<char>(rng() % 256);
          break;
        case 2:
          s[at] = json_chars[rng() % json_chars.size()];
          break;
        case 3:
          s.insert(at, 1, json_chars[rng() % json_chars.size()]);
          break;
        case 4:
          s.erase(at, 1 + rng() % 8);
          break;
        case 5: {  // a digit changed (shapes and offsets)
          const size_t digit = s.find_first_of("0123456789", at);
          if (digit != std::string::npos) s[digit] = static_cast<char>('0' + rng() % 10);
          break;
        }
        case 6:  // a piece repeated elsewhere (duplicate keys, entries)
          s.insert(rng() % s.size(), s.substr(at, 1 + rng() % 40));
          break;
      }
    }
    std::string m = (keep_length ? length : le64(header.size())) + header + data;
    if (rng() % 16 == 0) m.resize(rng() % (m.size() + 1));  // cut anywhere
    write_bytes(path, m);
    bool ok = false;
    try {
      const tl::TensorMap t = tl::load_safetensors(path);
      for (const auto& [name, tensor] : t) (void)tl_test::bits_of(tensor);  // every element reads
      ok = true;
      ++loaded;
    } catch (const tl::IOError&) {
      ++refused;
    }
    bool meta_ok = false;
    try {
      (void)tl::load_safetensors_metadata(path);
      meta_ok = true;
    } catch (const tl::IOError&) {
    }
    CHECK(ok == meta_ok);
  }
  MESSAGE(loaded << " mutants loaded, " << refused << " refused with IOError");
  CHECK(loaded + refused == count);
  CHECK(refused > count / 3);
  CHECK(loaded > count / 50);
}

TEST_CASE("safetensors: loading to a GPU copies each tensor once and equals the CPU load") {
  TL_TEST_REQUIRE_CUDA();
  const tl::Device gpu = tl::Device::cuda(0);
  const std::string path = temp().file("gpu.safetensors");
  tl::TensorMap in = every_dtype();
  // Larger than one 64 MiB staging chunk: a full chunk and a part.
  in["big"] = random_values({17 << 20}, tl::kFloat32);
  in["big_bytes"] = random_values({(int64_t{64} << 20) + 3}, tl::kUInt8);
  in["from_gpu"] = tl_test::random_tensor({6, 4}, tl::kFloat16, gpu).t();
  tl::save_safetensors(path, in);
  const tl::TensorMap cpu = tl::load_safetensors(path);
  const tl::TensorMap on_gpu = tl::load_safetensors(path, gpu);
  REQUIRE(on_gpu.size() == cpu.size());
  for (const auto& [name, t] : on_gpu) {
    CAPTURE(name);
    CHECK(t.device() == gpu);
    CHECK(t.is_contiguous());
    CHECK(t.dtype() == cpu.at(name).dtype());
    CHECK(t.shape() == cpu.at(name).shape());
    CHECK(tl_test::bits_of(t) == tl_test::bits_of(cpu.at(name)));
  }
  check_same(on_gpu, in);
  // Tensors at offsets their element sizes do not divide: staged just the same.
  const OddFile f = odd_file();
  write_bytes(path, f.bytes);
  const tl::TensorMap odd = tl::load_safetensors(path, gpu);
  for (const auto& [name, t] : odd) CHECK(t.device() == gpu);
  check_same(odd, tl::load_safetensors(path));
  check_same(odd, f.tensors);
  // The GPU tensors hold copies: replacing the file changes nothing, and a kernel reads them.
  tl::save_safetensors(path, {{"other", tl::ones({2})}});
  check_same(odd, f.tensors);
  CHECK((odd.at("b") * 2).cpu().to_vector<float>() == std::vector<float>{3.0f, -4.0f});
  // A device this machine lacks.
  const int missing = tl::cuda::device_count();
  tl_test::check_throws<tl::DeviceError>(
      [&] { (void)tl::load_safetensors(path, tl::Device::cuda(missing)); },
      "[tl::load_safetensors] cannot use cuda:" + std::to_string(missing));
}

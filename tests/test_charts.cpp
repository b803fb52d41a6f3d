// The example notebooks' SVG charts (examples/common/chart.h), rendered by a real SVG renderer
// (rsvg-convert, from librsvg2-bin) to PNG and decoded here: each must have the canvas it says
// and must not be blank. Skipped where rsvg-convert or zlib is missing (the GPU machine).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "../examples/common/chart.h"

#if defined(TL_TEST_WITH_ZLIB)
#include <zlib.h>
#endif

namespace {

namespace fs = std::filesystem;
using tl_example::Bar;
using tl_example::Series;
using tl_example::Span;

bool have_rsvg() { return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0; }

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> pixels;  // 0xRRGGBB, row-major
};

#if defined(TL_TEST_WITH_ZLIB)
uint32_t be32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// An 8-bit RGB or RGBA PNG, non-interlaced (what rsvg-convert writes); RGBA is composited on
// white, so a transparent pixel counts as blank.
Image decode_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(file.size() > 8);
  REQUIRE(file[1] == 'P');
  Image img;
  int channels = 0;
  std::vector<unsigned char> idat;
  for (size_t at = 8; at + 8 <= file.size();) {
    const uint32_t length = be32(&file[at]);
    const std::string type(reinterpret_cast<const char*>(&file[at + 4]), 4);
    REQUIRE(at + 12 + length <= file.size());
    const unsigned char* data = &file[at + 8];
    if (type == "IHDR") {
      img.width = be32(data);
      img.height = be32(data + 4);
      REQUIRE(data[8] == 8);                    // bit depth
      REQUIRE((data[9] == 2 || data[9] == 6));  // RGB or RGBA
      REQUIRE(data[12] == 0);                   // not interlaced
      channels = data[9] == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + length);
    }
    at += 12 + length;
  }
  REQUIRE(channels > 0);
  const size_t stride = size_t{img.width} * channels;
  std::vector<unsigned char> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  REQUIRE(uncompress(raw.data(), &raw_size, idat.data(), idat.size()) == Z_OK);
  REQUIRE(raw_size == raw.size());
  std::vector<unsigned char> prev(stride, 0), row(stride);
  for (uint32_t y = 0; y < img.height; ++y) {
    const unsigned char filter = raw[y * (stride + 1)];
    const unsigned char* src = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= size_t(channels) ? row[i - channels] : 0, b = prev[i];
      const int c = i >= size_t(channels) ? prev[i - channels] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4:
          pred = paeth(a, b, c);
          break;
        default:
          FAIL("bad PNG filter " << int(filter));
      }
      row[i] = static_cast<unsigned char>(src[i] + pred);
    }
    for (uint32_t x = 0; x < img.width; ++x) {
      const unsigned char* p = &row[size_t{x} * channels];
      const int alpha = channels == 4 ? p[3] : 255;
      uint32_t rgb = 0;
      for (int k = 0; k < 3; ++k)  // over white
        rgb = rgb << 8 | static_cast<uint32_t>((p[k] * alpha + 255 * (255 - alpha)) / 255);
      img.pixels.push_back(rgb);
    }
    prev = row;
  }
  return img;
}
#endif

// Renders svg with rsvg-convert and checks the PNG: the canvas size of the SVG, and enough ink of
// several colours that something was drawn (bars or spans in colour, text in black).
void check_renders(const std::string& name, const std::string& svg, uint32_t width) {
  INFO(name);
  const fs::path dir = fs::temp_directory_path() / "tl_test_charts";
  fs::create_directories(dir);
  const fs::path svg_path = dir / (name + ".svg"), png_path = dir / (name + ".png");
  std::ofstream(svg_path) << svg;
  fs::remove(png_path);
  const std::string cmd =
      "rsvg-convert -o '" + png_path.string() + "' '" + svg_path.string() + "' 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
#if defined(TL_TEST_WITH_ZLIB)
  const Image img = decode_png(png_path.string());
  CHECK(img.width == width);
  REQUIRE(img.pixels.size() == size_t{img.width} * img.height);
  size_t ink = 0;
  std::set<uint32_t> colors;
  for (uint32_t p : img.pixels) {
    if (p != 0xFFFFFF) ++ink;
    if (colors.size() < 64) colors.insert(p);
  }
  CHECK(ink > img.pixels.size() / 100);  // at least 1 % of the canvas is drawn on
  CHECK(colors.size() >= 4);
#else
  (void)width;
  MESSAGE("built without zlib: the PNG is not decoded");
#endif
}

}  // namespace

TEST_CASE("charts: bar, timeline and log-log charts render with rsvg-convert and are not blank") {
  if (!have_rsvg()) {
    MESSAGE("skipped: rsvg-convert not found (apt-get install librsvg2-bin)");
    return;
  }
  check_renders("bars",
                tl_example::bar_chart_svg("loop vs batched", "ms",
                                          {{"loop of 20000 matmuls", 412.5},
                                           {"dstack + one matmul", 3.1},
                                           {"x < & > \"quoted\"", 0.002}}),
                860);
  check_renders("timeline",
                tl_example::timeline_svg("timing methods", "us",
                                         {{"A: host clock", "launch", 0, 12},
                                          {"GPU", "kernel", 10, 250},
                                          {"B: synchronized", "wait", 12, 251},
                                          {"cuda:1", "matmul", 30, 180}}),
                860);
  check_renders("loglog",
                tl_example::log_log_chart_svg(
                    "time per op", "elements", "us per op",
                    {{"CPU", {1e2, 1e4, 1e6}, {1, 8, 600}}, {"GPU", {1e2, 1e4, 1e6}, {9, 9, 30}}}),
                860);
}

TEST_CASE("charts: refuse data that cannot be drawn to scale; write_chart honours TL_CHARTS_DIR") {
  CHECK_THROWS_AS(tl_example::bar_chart_svg("t", "ms", {{"nan", 0.0 / 0.0}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(tl_example::log_log_chart_svg("t", "x", "y", {{"s", {1, 0}, {1, 1}}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(tl_example::log_log_chart_svg("t", "x", "y", {{"s", {1, 2}, {1}}}),
                  std::invalid_argument);
  const fs::path dir = fs::temp_directory_path() / "tl_test_charts_dir";
  fs::remove_all(dir);
  setenv("TL_CHARTS_DIR", dir.c_str(), 1);
  const std::string path = tl_example::write_chart("c.svg", "<svg/>");
  unsetenv("TL_CHARTS_DIR");
  CHECK(path == (dir / "c.svg").string());
  CHECK(fs::exists(dir / "c.svg"));
  // Empty input draws an empty canvas rather than failing.
  CHECK(tl_example::bar_chart_svg("t", "ms", {}).find("</svg>") != std::string::npos);
  CHECK(tl_example::timeline_svg("t", "us", {}).find("</svg>") != std::string::npos);
}

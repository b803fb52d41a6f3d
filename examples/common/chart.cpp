// SVG writers for the example notebooks' charts (chart.h): fixed-size canvases, text escaped,
// scales computed from the data so every bar, span and point is drawn to scale.
#include "chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tl_example {
namespace {

constexpr double kWidth = 860;
const char* const kPalette[] = {"#4C72B0", "#DD8452", "#55A868", "#C44E52",
                                "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"};
constexpr int kColors = sizeof(kPalette) / sizeof(kPalette[0]);

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-2))
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else
    std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

// A grid line's label on a log axis: 0.01, 1, 1000, then 1e+06 beyond six digits.
std::string decade_label(double exponent) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::pow(10.0, exponent));
  return buf;
}

// Canvas: the svg element, a white background and the title.
std::string open_svg(double height, const std::string& title) {
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << kWidth << ' ' << height << "\" font-family=\"sans-serif\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kWidth / 2 << "\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">"
    << escape(title) << "</text>\n";
  return o.str();
}

std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 int size = 12) {
  std::ostringstream o;
  o << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"" << size << "\" text-anchor=\""
    << anchor << "\">" << escape(s) << "</text>\n";
  return o.str();
}

std::string rect(double x, double y, double w, double h, const char* fill) {
  std::ostringstream o;
  o << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << std::max(w, 1.0) << "\" height=\""
    << h << "\" fill=\"" << fill << "\"/>\n";
  return o.str();
}

std::string line(double x1, double y1, double x2, double y2, const char* stroke = "#444") {
  std::ostringstream o;
  o << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
    << "\" stroke=\"" << stroke << "\" stroke-width=\"1\"/>\n";
  return o.str();
}

void check_finite(double v, const char* what) {
  if (!std::isfinite(v)) throw std::invalid_argument(std::string("chart: ") + what + " not finite");
}

}  // namespace

std::string bar_chart_svg(const std::string& title, const std::string& unit,
                          const std::vector<Bar>& bars) {
  constexpr double kLeft = 260, kRight = 110, kTop = 44, kRow = 30;
  const double height = kTop + kRow * static_cast<double>(bars.size()) + 36;
  double top = 0;
  for (const Bar& b : bars) {
    check_finite(b.value, "bar value");
    top = std::max(top, b.value);
  }
  const double scale = top > 0 ? (kWidth - kLeft - kRight) / top : 0;
  std::string svg = open_svg(height, title);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    const double w = std::max(0.0, bars[i].value) * scale;
    svg += text(kLeft - 8, y + 19, bars[i].label, "end");
    svg += rect(kLeft, y + 5, w, kRow - 10, kPalette[i % kColors]);
    svg += text(kLeft + w + 6, y + 19, number(bars[i].value) + " " + unit);
  }
  svg += line(kLeft, kTop, kLeft, height - 30);
  svg += text(kLeft, height - 10, "0 " + unit + " (bars to scale)", "start", 11);
  return svg + "</svg>\n";
}

std::string timeline_svg(const std::string& title, const std::string& unit,
                         const std::vector<Span>& spans) {
  constexpr double kLeft = 170, kRight = 30, kTop = 44, kLane = 34;
  std::vector<std::string> lanes;
  double t0 = 0, t1 = 0;
  bool first = true;
  for (const Span& s : spans) {
    check_finite(s.start, "span start");
    check_finite(s.end, "span end");
    if (std::find(lanes.begin(), lanes.end(), s.lane) == lanes.end()) lanes.push_back(s.lane);
    t0 = first ? s.start : std::min(t0, s.start);
    t1 = first ? s.end : std::max(t1, s.end);
    first = false;
  }
  const double axis_y = kTop + kLane * static_cast<double>(lanes.size()) + 6;
  const double height = axis_y + 40;
  const double scale = t1 > t0 ? (kWidth - kLeft - kRight) / (t1 - t0) : 0;
  auto x_of = [&](double t) { return kLeft + (t - t0) * scale; };
  std::string svg = open_svg(height, title);
  for (size_t l = 0; l < lanes.size(); ++l)
    svg += text(kLeft - 8, kTop + kLane * static_cast<double>(l) + 21, lanes[l], "end");
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    const auto lane = std::find(lanes.begin(), lanes.end(), s.lane) - lanes.begin();
    const double y = kTop + kLane * static_cast<double>(lane);
    const double x = x_of(s.start), w = (s.end - s.start) * scale;
    svg += rect(x, y + 5, w, kLane - 10, kPalette[i % kColors]);
    if (w > 7.0 * static_cast<double>(s.label.size())) svg += text(x + 4, y + 21, s.label);
  }
  svg += line(kLeft, axis_y, kWidth - kRight, axis_y);
  for (int k = 0; k <= 4; ++k) {
    const double t = t0 + (t1 - t0) * k / 4;
    svg += line(x_of(t), axis_y, x_of(t), axis_y + 5);
    svg += text(x_of(t), axis_y + 18, number(t - t0) + " " + unit, "middle", 11);
  }
  return svg + "</svg>\n";
}

std::string log_log_chart_svg(const std::string& title, const std::string& x_label,
                              const std::string& y_label, const std::vector<Series>& series) {
  constexpr double kLeft = 80, kRight = 170, kTop = 44, kHeight = 420, kBottom = 50;
  double lx0 = 0, lx1 = 0, ly0 = 0, ly1 = 0;
  bool first = true;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size()) throw std::invalid_argument("chart: x and y differ in length");
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!(s.x[i] > 0 && s.y[i] > 0 && std::isfinite(s.x[i]) && std::isfinite(s.y[i])))
        throw std::invalid_argument("chart: log axes need positive finite values");
      const double lx = std::log10(s.x[i]), ly = std::log10(s.y[i]);
      lx0 = first ? lx : std::min(lx0, lx);
      lx1 = first ? lx : std::max(lx1, lx);
      ly0 = first ? ly : std::min(ly0, ly);
      ly1 = first ? ly : std::max(ly1, ly);
      first = false;
    }
  }
  // Whole decades, so the grid lines fall on 1, 10, 100 ...
  lx0 = std::floor(lx0), ly0 = std::floor(ly0);
  lx1 = std::max(std::ceil(lx1), lx0 + 1), ly1 = std::max(std::ceil(ly1), ly0 + 1);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (std::log10(x) - lx0) / (lx1 - lx0) * plot_w; };
  auto py = [&](double y) { return kTop + plot_h - (std::log10(y) - ly0) / (ly1 - ly0) * plot_h; };
  std::string svg = open_svg(kHeight, title);
  for (double d = lx0; d <= lx1; ++d) {
    const double x = px(std::pow(10.0, d));
    svg += line(x, kTop, x, kTop + plot_h, "#ddd");
    svg += text(x, kTop + plot_h + 16, decade_label(d), "middle", 11);
  }
  for (double d = ly0; d <= ly1; ++d) {
    const double y = py(std::pow(10.0, d));
    svg += line(kLeft, y, kLeft + plot_w, y, "#ddd");
    svg += text(kLeft - 6, y + 4, decade_label(d), "end", 11);
  }
  svg += line(kLeft, kTop + plot_h, kLeft + plot_w, kTop + plot_h);
  svg += line(kLeft, kTop, kLeft, kTop + plot_h);
  svg += text(kLeft + plot_w / 2, kHeight - 12, x_label, "middle");
  svg += text(14, kTop - 10, y_label, "start");
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const char* color = kPalette[k % kColors];
    std::ostringstream points;
    for (size_t i = 0; i < s.x.size(); ++i) points << px(s.x[i]) << ',' << py(s.y[i]) << ' ';
    svg += "<polyline fill=\"none\" stroke=\"" + std::string(color) +
           "\" stroke-width=\"2\" points=\"" + points.str() + "\"/>\n";
    for (size_t i = 0; i < s.x.size(); ++i) {
      std::ostringstream c;
      c << "<circle cx=\"" << px(s.x[i]) << "\" cy=\"" << py(s.y[i]) << "\" r=\"3.5\" fill=\""
        << color << "\"/>\n";
      svg += c.str();
    }
    const double ly = kTop + 10 + 22 * static_cast<double>(k);
    svg += rect(kLeft + plot_w + 14, ly, 14, 4, color);
    svg += text(kLeft + plot_w + 34, ly + 6, s.name);
  }
  return svg + "</svg>\n";
}

std::string write_chart(const std::string& file_name, const std::string& svg) {
  const char* dir = std::getenv("TL_CHARTS_DIR");
  std::filesystem::path path = dir != nullptr && *dir != '\0' ? dir : ".";
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  path /= file_name;
  std::ofstream out(path);
  out << svg;
  out.close();
  if (!out) throw std::runtime_error("cannot write the chart " + path.string());
  return path.string();
}

}  // namespace tl_example

// SVG charts the example notebooks draw of their main comparison: bars, a timeline drawn to
// scale, and time against size on log axes. Plain SVG 1.1 text, readable by any browser.
#pragma once

#include <string>
#include <vector>

namespace tl_example {

struct Bar {
  std::string label;
  double value = 0;
};

// One interval on a named lane ("CPU", "cuda:0", "A: host clock") of a timeline.
struct Span {
  std::string lane;
  std::string label;
  double start = 0, end = 0;
};

struct Series {
  std::string name;
  std::vector<double> x, y;  // same length; positive values (log axes)
};

// Horizontal bars, one per entry, each labelled with its value and `unit`.
std::string bar_chart_svg(const std::string& title, const std::string& unit,
                          const std::vector<Bar>& bars);

// Lanes top to bottom in order of first appearance, time to the right on one linear scale.
std::string timeline_svg(const std::string& title, const std::string& unit,
                         const std::vector<Span>& spans);

// Lines with markers on log-log axes (time per op against size, say).
std::string log_log_chart_svg(const std::string& title, const std::string& x_label,
                              const std::string& y_label, const std::vector<Series>& series);

// Writes svg to `file_name` inside $TL_CHARTS_DIR (the working directory when unset; the folder
// is created) and returns the path written. Throws std::runtime_error when it cannot write.
std::string write_chart(const std::string& file_name, const std::string& svg);

}  // namespace tl_example

// A check of a chrome trace against what the Trace Event Format and Perfetto's JSON importer need:
// the fields each phase must carry, complete events on one track that nest and never partly
// overlap, and flow arrows whose start and end pair up.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace tl_test {

inline void check_trace_event_format(const nlohmann::json& doc) {
  REQUIRE(doc.contains("traceEvents"));
  REQUIRE(doc["traceEvents"].is_array());
  // (pid, tid) -> complete events as (start, end) in microseconds.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> tracks;
  std::map<std::string, int> flow_starts, flow_ends;  // "cat/id" -> count
  for (const auto& e : doc["traceEvents"]) {
    CAPTURE(e.dump());
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    const std::string ph = e["ph"];
    CHECK((ph == "X" || ph == "i" || ph == "C" || ph == "s" || ph == "f" || ph == "M"));
    if (ph == "M") {
      CHECK(e.contains("name"));
      CHECK(e.contains("args"));
      continue;
    }
    REQUIRE(e.contains("ts"));
    REQUIRE(e.contains("name"));
    CHECK(e["ts"].is_number());
    if (ph != "C") REQUIRE(e.contains("tid"));
    if (ph == "X") {
      REQUIRE(e.contains("dur"));
      const double ts = e["ts"], dur = e["dur"];
      CHECK(dur >= 0);
      tracks[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].emplace_back(ts, ts + dur);
    } else if (ph == "s" || ph == "f") {
      REQUIRE(e.contains("id"));
      REQUIRE(e.contains("cat"));
      const std::string key = e["cat"].get<std::string>() + "/" + e["id"].dump();
      (ph == "s" ? flow_starts : flow_ends)[key] += 1;
      if (ph == "f") CHECK(e.value("bp", "") == "e");  // binds to the enclosing slice
    }
  }
  // On one track, events sorted by start (longer first on ties) must form a stack: each starts
  // after the previous sibling ended or inside an open one, and ends inside it. Times are
  // microseconds printed from nanoseconds, so a nanosecond of rounding is allowed.
  constexpr double kSlack = 1e-3;
  for (auto& [track, spans] : tracks) {
    CAPTURE(track.first);
    CAPTURE(track.second);
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open_ends;
    for (const auto& [start, end] : spans) {
      while (!open_ends.empty() && open_ends.back() <= start + kSlack) open_ends.pop_back();
      if (!open_ends.empty()) CHECK(end <= open_ends.back() + kSlack);
      open_ends.push_back(end);
    }
  }
  CHECK(flow_starts == flow_ends);
  for (const auto& [key, n] : flow_starts) {
    CAPTURE(key);
    CHECK(n == 1);
  }
}

}  // namespace tl_test

#include "cli/format.h"

#include <algorithm>
#include <cstdio>

#include "common/time_util.h"

namespace rota::cli {

std::string Table::Render() const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Bytes(const api::Json& v) {
  if (!v.is_number()) return "-";
  double b = v.get<double>();
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 || b >= 100 ? "%.0f%s" : "%.1f%s", b, units[u]);
  return buf;
}

std::string Percent(const api::Json& v) {
  if (!v.is_number()) return "-";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", v.get<double>());
  return buf;
}

std::string FormatMetric(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string WithUnit(const api::Json& v, const std::string& unit, double scale, int decimals) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v.get<double>() * scale);
  return buf + unit;
}

std::string Since(const api::Json& rfc3339, int64_t now_ms) {
  if (!rfc3339.is_string()) return "-";
  auto t = ParseRfc3339(rfc3339.get<std::string>());
  if (!t.ok()) return "?";
  int64_t s = std::max<int64_t>(0, (now_ms - *t) / 1000);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  if (s < 172800) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string Age(const api::Json& rfc3339, int64_t now_ms) {
  if (!rfc3339.is_string()) return "never";
  const std::string since = Since(rfc3339, now_ms);
  return since == "?" ? since : since + " ago";
}

std::string Str(const api::Json& obj, const char* key) {
  if (!obj.contains(key) || !obj[key].is_string() || obj[key].get<std::string>().empty()) return "-";
  return obj[key].get<std::string>();
}

Result<std::string> CliTime(const std::string& flag, const std::string& text, int64_t now_ms) {
  if (auto ago = ParseDurationMs(text); ago.ok()) return FormatRfc3339(now_ms - *ago);
  if (auto t = ParseRfc3339(text); t.ok()) return FormatRfc3339Ms(*t);
  return Status::InvalidArgument(flag + ": '" + text +
                                 "' is neither a duration ago (2h, 30m, 7d) nor an RFC 3339 time");
}

}  // namespace rota::cli

#include "reserve/cli_time.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/strings.h"
#include "common/time_util.h"

namespace rota::reserve {
namespace {

constexpr const char* kForms =
    "use now, +2h, +30m, today 14:00, tomorrow 09:00, 2026-11-23 14:00 (local time) or "
    "RFC 3339 like 2026-11-23T14:00:00Z";

bool Digits(const std::string& s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// "HH:MM" or "HH:MM:SS" -> seconds of the day (24:00 not allowed here).
bool ParseTimeOfDay(const std::string& s, int* secs) {
  int h, m, sec = 0;
  if (s.size() != 5 && s.size() != 8) return false;
  if (!Digits(s, 0, 2, &h) || s[2] != ':' || !Digits(s, 3, 2, &m)) return false;
  if (s.size() == 8 && (s[5] != ':' || !Digits(s, 6, 2, &sec))) return false;
  if (h > 23 || m > 59 || sec > 59) return false;
  *secs = h * 3600 + m * 60 + sec;
  return true;
}

// "YYYY-MM-DD" -> civil date.
bool ParseDate(const std::string& s, Civil* c) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!Digits(s, 0, 4, &c->year) || !Digits(s, 5, 2, &c->month) || !Digits(s, 8, 2, &c->day)) {
    return false;
  }
  return c->year >= 1970 && c->month >= 1 && c->month <= 12 && c->day >= 1 &&
         c->day <= DaysInMonth(c->year, c->month);
}

}  // namespace

Result<int64_t> ParseCliDuration(const std::string& text) {
  auto bad = [&] {
    return Status::InvalidArgument("malformed duration '" + text +
                                   "': use e.g. 2h, 90m, 1h30m, 1d or 45s");
  };
  std::string s(Trim(text));
  if (s.empty()) return bad();
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t b = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == b) return bad();
    double v;
    try {
      v = std::stod(s.substr(b, i - b));
    } catch (...) {
      return bad();
    }
    size_t u = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string unit = s.substr(u, i - u);
    double scale;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1e3;
    else if (unit == "m" || unit == "min") scale = 60e3;
    else if (unit == "h") scale = 3600e3;
    else if (unit == "d") scale = 86400e3;
    else if (unit == "w") scale = 7 * 86400e3;
    else return bad();
    total += v * scale;
    if (!std::isfinite(total) || total > 1e14) {
      return Status::InvalidArgument("duration '" + text + "' is too large");
    }
    if (i + 1 < s.size() && s[i] == ' ') ++i;  // "1d 4h", as FormatDurationMs writes
  }
  auto ms = static_cast<int64_t>(std::llround(total));
  if (ms <= 0) return Status::InvalidArgument("duration '" + text + "' must be positive");
  return ms;
}

Result<int> ParseClock(const std::string& text) {
  int h, m;
  if (text.size() != 5 || !Digits(text, 0, 2, &h) || text[2] != ':' || !Digits(text, 3, 2, &m) ||
      m > 59 || h > 24 || (h == 24 && m != 0)) {
    return Status::InvalidArgument("malformed time of day '" + text +
                                   "': expected HH:MM between 00:00 and 24:00");
  }
  return h * 60 + m;
}

Result<int64_t> ParseCliTime(const std::string& raw, int64_t now_ms, const TimeZone& zone) {
  const std::string text(Trim(raw));
  auto bad = [&] { return Status::InvalidArgument("malformed time '" + raw + "': " + kForms); };
  if (text.empty()) return bad();
  if (text == "now") return now_ms;
  if (text[0] == '+') {
    auto d = ParseCliDuration(text.substr(1));
    if (!d.ok()) return bad();
    return now_ms + *d;
  }
  const int64_t now_local_s = zone.ToLocal(FloorDiv(now_ms, 1000));
  const int64_t today = FloorDiv(now_local_s, 86400) * 86400;
  for (auto [word, offset_days] : {std::pair{"today", 0}, std::pair{"tomorrow", 1}}) {
    std::string w = word;
    if (text == w) return zone.ToUtc(today + offset_days * 86400) * 1000;
    if (StartsWith(text, w + " ")) {
      int secs;
      if (!ParseTimeOfDay(std::string(Trim(text.substr(w.size()))), &secs)) return bad();
      return zone.ToUtc(today + offset_days * 86400 + secs) * 1000;
    }
  }
  // RFC 3339 (with a zone designator) first.
  const char last = text.back();
  const bool has_zone = last == 'Z' || last == 'z' ||
                        (text.size() > 19 && (text[text.size() - 6] == '+' || text[text.size() - 6] == '-'));
  if (has_zone) {
    auto t = ParseRfc3339(text);
    if (!t.ok()) return bad();
    return *t;
  }
  Civil c;
  if (!ParseDate(text.substr(0, 10), &c)) return bad();
  int secs = 0;
  if (text.size() > 10) {
    if (text[10] != ' ' && text[10] != 'T' && text[10] != 't') return bad();
    if (!ParseTimeOfDay(text.substr(11), &secs)) return bad();
  }
  return zone.ToUtc(SecondsFromCivil(c) + secs) * 1000;
}

std::string FormatLocal(int64_t unix_ms, const TimeZone& zone) {
  Civil c = CivilFromSeconds(zone.ToLocal(FloorDiv(unix_ms, 1000)));
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d", c.year, c.month, c.day, c.hour,
                c.minute);
  return buf;
}

}  // namespace rota::reserve

#include "common/time_util.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace rota {
namespace {


bool ReadInt(const std::string& s, size_t* pos, int digits, int* out) {
  int v = 0;
  for (int i = 0; i < digits; ++i) {
    if (*pos >= s.size() || !std::isdigit(static_cast<unsigned char>(s[*pos]))) return false;
    v = v * 10 + (s[*pos] - '0');
    ++*pos;
  }
  *out = v;
  return true;
}

}  // namespace

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {  // H. Hinnant's algorithm
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

std::string FormatRfc3339(int64_t unix_ms) {
  time_t secs = static_cast<time_t>(unix_ms >= 0 ? unix_ms / 1000 : (unix_ms - 999) / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatRfc3339Ms(int64_t unix_ms) {
  std::string s = FormatRfc3339(unix_ms);
  int ms = static_cast<int>(((unix_ms % 1000) + 1000) % 1000);
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03d", ms);
  s.insert(s.size() - 1, frac);
  return s;
}

Result<int64_t> ParseRfc3339(const std::string& text) {
  auto bad = [&] {
    return Status::InvalidArgument("malformed time '" + text +
                                   "': expected RFC 3339 like 2026-11-22T09:00:00Z");
  };
  size_t p = 0;
  int y, mo, d, h, mi, s;
  if (!ReadInt(text, &p, 4, &y) || p >= text.size() || text[p++] != '-') return bad();
  if (!ReadInt(text, &p, 2, &mo) || p >= text.size() || text[p++] != '-') return bad();
  if (!ReadInt(text, &p, 2, &d) || p >= text.size()) return bad();
  char t = text[p++];
  if (t != 'T' && t != 't' && t != ' ') return bad();
  if (!ReadInt(text, &p, 2, &h) || p >= text.size() || text[p++] != ':') return bad();
  if (!ReadInt(text, &p, 2, &mi) || p >= text.size() || text[p++] != ':') return bad();
  if (!ReadInt(text, &p, 2, &s)) return bad();
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 ||
      s > 60) {
    return Status::InvalidArgument("time '" + text + "' is out of range");
  }
  int64_t ms = 0;
  if (p < text.size() && text[p] == '.') {
    ++p;
    int digits = 0;
    int64_t scale = 100;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
      if (digits < 3) ms += (text[p] - '0') * scale, scale /= 10;
      ++digits, ++p;
    }
    if (digits == 0) return bad();
  }
  int64_t offset_min = 0;
  if (p >= text.size()) return bad();
  if (text[p] == 'Z' || text[p] == 'z') {
    ++p;
  } else if (text[p] == '+' || text[p] == '-') {
    int sign = text[p++] == '-' ? -1 : 1;
    int oh, om;
    if (!ReadInt(text, &p, 2, &oh) || p >= text.size() || text[p++] != ':' ||
        !ReadInt(text, &p, 2, &om) || oh > 23 || om > 59) {
      return bad();
    }
    offset_min = sign * (oh * 60 + om);
  } else {
    return bad();
  }
  if (p != text.size()) return bad();
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + std::min(s, 59) - offset_min * 60;
  return secs * 1000 + ms;
}

Result<int64_t> ParseDurationMs(const std::string& text) {
  auto bad = [&] {
    return Status::InvalidArgument("malformed duration '" + text +
                                   "': expected a number with unit ms, s, m, h or d (e.g. 2s, 1h30m)");
  };
  if (text.empty()) return bad();
  double ms = 0;
  size_t pos = 0, parts = 0;
  while (pos < text.size()) {
    if (parts > 0 && text[pos] == ' ') ++pos;  // "1h 30m"
    // A part: a non-negative number, then its unit (bare seconds only alone).
    if (pos >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.'))
      return bad();
    size_t idx = 0;
    double v;
    try {
      v = std::stod(text.substr(pos), &idx);
    } catch (...) {
      return bad();
    }
    if (!std::isfinite(v) || v < 0) return bad();
    pos += idx;
    size_t end = pos;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
    const std::string unit = text.substr(pos, end - pos);
    pos = end;
    double scale;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1000;
    else if (unit.empty() && parts == 0 && pos == text.size()) scale = 1000;
    else if (unit == "m") scale = 60'000;
    else if (unit == "h") scale = 3'600'000;
    else if (unit == "d") scale = 86'400'000;
    else return bad();
    ms += v * scale;
    if (ms > 1e15) return Status::InvalidArgument("duration '" + text + "' is too large");
    ++parts;
  }
  return static_cast<int64_t>(std::llround(ms));
}

std::string FormatExactDuration(int64_t ms) {
  if (ms != 0 && ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace rota

#include "reserve/windows.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "common/strings.h"
#include "common/time_util.h"
#include "reserve/cli_time.h"
#include "reserve/json_fields.h"

namespace rota::reserve {
namespace {

using api::Json;

constexpr const char* kDayNames[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
constexpr size_t kMaxWindows = 100;

int DayIndex(const std::string& name) {
  for (int i = 0; i < 7; ++i) {
    if (ToLower(name) == kDayNames[i]) return i;
  }
  return -1;
}

Status ParseDays(const std::string& field, const Json& v, std::vector<int>* out) {
  if (!v.is_array() || v.empty()) {
    return Status::InvalidArgument(field + ": must be a non-empty array like [\"mon-fri\"]");
  }
  std::set<int> days;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string f = field + "[" + std::to_string(i) + "]";
    if (!v[i].is_string()) return Status::InvalidArgument(f + ": must be a string");
    std::string s = ToLower(v[i].get<std::string>());
    if (s == "*" || s == "all" || s == "daily") {
      for (int d = 0; d < 7; ++d) days.insert(d);
      continue;
    }
    if (s == "weekdays") s = "mon-fri";
    if (s == "weekends") s = "sat-sun";
    auto dash = s.find('-');
    int a = DayIndex(s.substr(0, dash));
    int b = dash == std::string::npos ? a : DayIndex(s.substr(dash + 1));
    if (a < 0 || b < 0) {
      return Status::InvalidArgument(f + ": '" + v[i].get<std::string>() +
                                     "' is not a day (mon..sun), range (mon-fri) or 'all'");
    }
    for (int d = a;; d = (d + 1) % 7) {
      days.insert(d);
      if (d == b) break;
    }
  }
  out->assign(days.begin(), days.end());
  return Status::Ok();
}

std::string ClockText(int minutes) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02d:%02d", minutes / 60, minutes % 60);
  return buf;
}

std::string Describe(const Window& w) {
  std::vector<std::string> days;
  for (int d : w.days) days.push_back(kDayNames[d]);
  return Join(days, ",") + " " + ClockText(w.from_min) + "-" + ClockText(w.to_min);
}

}  // namespace

Result<WeeklyWindows> WeeklyWindowsFromJson(const Json& wj, const std::string& path) {
  WeeklyWindows out;
  JsonFields w(wj, path);
  RETURN_IF_ERROR(w.Only({"zone", "allow"}));
  RETURN_IF_ERROR(w.Str("zone", &out.zone, false, 64));
  auto tz = TimeZone::Load(out.zone);
  if (!tz.ok()) return Status::InvalidArgument(path + ".zone: " + tz.status().message());
  out.tz = *tz;
  if (!w.Has("allow") || !wj["allow"].is_array() || wj["allow"].empty()) {
    return Status::InvalidArgument(path + ".allow: must be a non-empty array of {days, from, to}");
  }
  if (wj["allow"].size() > kMaxWindows) {
    return Status::InvalidArgument(path + ".allow: more than " + std::to_string(kMaxWindows) +
                                   " windows");
  }
  for (size_t i = 0; i < wj["allow"].size(); ++i) {
    const std::string at = path + ".allow[" + std::to_string(i) + "]";
    const Json& e = wj["allow"][i];
    JsonFields ef(e, at);
    RETURN_IF_ERROR(ef.Only({"days", "from", "to"}));
    Window win;
    if (!ef.Has("days")) return Status::InvalidArgument(at + ".days: required");
    RETURN_IF_ERROR(ParseDays(at + ".days", e["days"], &win.days));
    std::string from = "00:00", to = "24:00";
    RETURN_IF_ERROR(ef.Str("from", &from, false, 5));
    RETURN_IF_ERROR(ef.Str("to", &to, false, 5));
    auto fm = ParseClock(from);
    if (!fm.ok()) return fm.status().WithContext(at + ".from");
    auto tm = ParseClock(to);
    if (!tm.ok()) return tm.status().WithContext(at + ".to");
    if (*tm <= *fm) {
      return Status::InvalidArgument(at + ": to (" + to + ") must be after from (" + from +
                                     "); split windows that cross midnight in two");
    }
    win.from_min = *fm;
    win.to_min = *tm;
    out.windows.push_back(std::move(win));
  }
  return out;
}

Json ToJson(const WeeklyWindows& w) {
  if (w.windows.empty()) return nullptr;
  Json allow = Json::array();
  for (const auto& win : w.windows) {
    Json days = Json::array();
    for (int d : win.days) days.push_back(kDayNames[d]);
    allow.push_back({{"days", days}, {"from", ClockText(win.from_min)}, {"to", ClockText(win.to_min)}});
  }
  return Json{{"zone", w.zone}, {"allow", allow}};
}

std::string DescribeWindows(const std::vector<Window>& windows) {
  std::vector<std::string> parts;
  for (const auto& w : windows) parts.push_back(Describe(w));
  return Join(parts, "; ");
}

bool InWindows(const std::vector<Window>& windows, const TimeZone& tz, int64_t t_ms) {
  if (windows.empty()) return true;
  const int64_t local = tz.ToLocal(FloorDiv(t_ms, 1000));
  const int64_t sec = local - FloorDiv(local, 86400) * 86400;
  const int wd = WeekdayOf(local);
  for (const auto& w : windows) {
    if (std::count(w.days.begin(), w.days.end(), wd) && sec >= w.from_min * 60 &&
        sec < w.to_min * 60) {
      return true;
    }
  }
  return false;
}

std::string FirstOverlap(const std::vector<Window>& windows) {
  for (size_t i = 0; i < windows.size(); ++i) {
    for (size_t j = i + 1; j < windows.size(); ++j) {
      const Window& a = windows[i];
      const Window& b = windows[j];
      bool shared_day = std::any_of(a.days.begin(), a.days.end(), [&](int d) {
        return std::count(b.days.begin(), b.days.end(), d) > 0;
      });
      if (shared_day && a.from_min < b.to_min && b.from_min < a.to_min) {
        return Describe(a) + " and " + Describe(b);
      }
    }
  }
  return "";
}

}  // namespace rota::reserve

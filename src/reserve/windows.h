#pragma once
// Weekly time windows ("mon-fri 09:00-18:00 in Europe/Berlin"), shared by
// reservation policies (when GPUs may be reserved) and power policies (when a
// cap applies). Pure values and functions.

#include <cstdint>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "reserve/zone.h"

namespace rota::reserve {

// On `days` (0 = Monday .. 6 = Sunday), local time [from_min, to_min) minutes
// after midnight (to_min up to 1440).
struct Window {
  std::vector<int> days;
  int from_min = 0;
  int to_min = 1440;
};

// A zone and its windows, as in a policy's "windows" field:
// {zone?: "Europe/Berlin" (default UTC), allow: [{days: ["mon-fri", "sun"],
// from: "09:00", to: "18:00"}]} (1..100 windows; from < to; days as names,
// ranges "mon-fri", "weekdays", "weekends" or "all").
struct WeeklyWindows {
  std::string zone = "UTC";
  TimeZone tz;
  std::vector<Window> windows;  // empty: always
};

// Decodes `j` (the "windows" value); errors are InvalidArgument naming `path`
// and the field ("policy.windows.allow[1].from: ...").
Result<WeeklyWindows> WeeklyWindowsFromJson(const api::Json& j, const std::string& path);
// The "windows" value of `w` (null when it has no windows).
api::Json ToJson(const WeeklyWindows& w);
// "mon,tue 09:00-18:00; sat 10:00-12:00".
std::string DescribeWindows(const std::vector<Window>& windows);
// True when the local time of `t_ms` in `tz` lies in one of `windows` (always
// true when there are none).
bool InWindows(const std::vector<Window>& windows, const TimeZone& tz, int64_t t_ms);
// The first two windows that share a day and a time, as "mon 09:00-18:00 and
// mon 12:00-14:00"; "" when none overlap.
std::string FirstOverlap(const std::vector<Window>& windows);

}  // namespace rota::reserve

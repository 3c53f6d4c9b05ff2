#pragma once
// Times and durations as people type them on the command line. Pure: "now" and
// the zone are passed in.

#include <cstdint>
#include <string>

#include "common/status.h"
#include "reserve/zone.h"

namespace rota::reserve {

// Parses a point in time (returns Unix ms):
//   "now"; "+2h", "+30m", "+1d", "+1h30m" (now plus a duration);
//   "today 14:00", "tomorrow 09:00", "tomorrow" (00:00), in `zone`;
//   "2026-11-23 14:00", "2026-11-23 14:00:30", "2026-11-23T14:00", "2026-11-23"
//   (00:00), in `zone`;
//   RFC 3339 with Z or an offset ("2026-11-23T14:00:00Z", "...+01:00").
// InvalidArgument naming the text and the accepted forms otherwise.
Result<int64_t> ParseCliTime(const std::string& text, int64_t now_ms, const TimeZone& zone);

// Parses a duration: "2h", "90m", "1h30m", "1d", "45s", "1.5h". Returns ms (> 0).
Result<int64_t> ParseCliDuration(const std::string& text);

// "HH:MM" (00:00..24:00) as minutes since midnight.
Result<int> ParseClock(const std::string& text);

// "2026-11-23 14:00" rendering of `unix_ms` in `zone`.
std::string FormatLocal(int64_t unix_ms, const TimeZone& zone);

}  // namespace rota::reserve

#pragma once
// Conversions between Unix milliseconds and RFC 3339 text (always UTC on output).

#include <cstdint>
#include <string>

#include "common/status.h"

namespace rota {

// a / b rounded toward minus infinity (the day of a time before 1970).
// REQUIRES: b != 0.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12, day 1..31).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);
bool IsLeapYear(int64_t year);
// Days of `month` (1..12) in `year`.
int DaysInMonth(int64_t year, int month);

// "2026-11-22T10:00:00Z" (seconds precision).
std::string FormatRfc3339(int64_t unix_ms);
// "2026-11-22T10:00:00.123Z".
std::string FormatRfc3339Ms(int64_t unix_ms);
// Parses RFC 3339 ("2026-11-22T10:00:00Z", "...T10:00:00.5+02:00", lower-case t/z
// accepted). Years 1970..9999 only. Returns InvalidArgument naming the text on junk.
Result<int64_t> ParseRfc3339(const std::string& text);

// Parses a duration: "500ms", "2s", "1.5m", "24h", "30d", bare seconds "2", or
// parts added up, with or without a space: "1h30m", "1d 4h" (what
// FormatExactDuration and reserve::FormatDurationMs write).
// Returns milliseconds; InvalidArgument on junk or negative values.
Result<int64_t> ParseDurationMs(const std::string& text);

// `ms` in the largest unit that holds it exactly: "90m", "36h", "1500ms", "0s".
// For what is stored or sent and read back: ParseDurationMs gives `ms` again.
std::string FormatExactDuration(int64_t ms);

}  // namespace rota

#pragma once
// TimeZone: UTC offsets of a named zone, for policy time windows and the CLI's
// local-time input. libstdc++ 12 has no std::chrono tzdb, so this reads the
// system's TZif files (RFC 8536, /usr/share/zoneinfo or $TZDIR) and evaluates
// their POSIX TZ footer for instants after the last listed transition.
//
// Values are immutable and cheap to copy (shared data); thread-safe.

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace rota::reserve {

// A proleptic Gregorian date and wall-clock time (no zone).
struct Civil {
  int year = 1970, month = 1, day = 1;  // month 1..12, day 1..31
  int hour = 0, minute = 0, second = 0;
};
// Seconds since 1970-01-01T00:00:00 of a civil time (read as UTC) and back.
int64_t SecondsFromCivil(const Civil& c);
Civil CivilFromSeconds(int64_t s);
// 0 = Monday ... 6 = Sunday, of the day holding `s` (civil seconds).
int WeekdayOf(int64_t s);

class TimeZone {
 public:
  // UTC.
  TimeZone();
  static TimeZone Utc() { return TimeZone(); }
  // "UTC"/"Z", a fixed offset "+02:00"/"-05:30", or an IANA name
  // ("Europe/Berlin") read from $TZDIR or /usr/share/zoneinfo. NotFound for an
  // unknown name, InvalidArgument for a malformed one (no "..", no leading '/').
  static Result<TimeZone> Load(const std::string& name);
  // A zone from TZif bytes; `name` is its name in messages.
  static Result<TimeZone> FromTzif(const std::string& name, const std::string& data);
  // A zone from a POSIX TZ rule such as "CET-1CEST,M3.5.0,M10.5.0/3".
  static Result<TimeZone> FromPosix(const std::string& name, const std::string& rule);
  // This machine's zone: $TZ (an IANA name, ':' prefix allowed) or
  // /etc/localtime; UTC when neither can be read.
  static TimeZone Local();

  const std::string& name() const;
  // Seconds east of UTC in effect at `utc_s`.
  int32_t OffsetAt(int64_t utc_s) const;
  int64_t ToLocal(int64_t utc_s) const { return utc_s + OffsetAt(utc_s); }
  // The instant whose local time is `local_s`. An ambiguous local time (clocks
  // set back) gives the earlier instant; a skipped one (clocks set forward)
  // is moved forward by the gap.
  int64_t ToUtc(int64_t local_s) const;

  struct Data;

 private:
  explicit TimeZone(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
};

}  // namespace rota::reserve

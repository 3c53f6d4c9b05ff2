// The CLI's time parsers (reserve/cli_time.h: --start, --end, --for, windows' HH:MM) and the
// zones they read times in (reserve/zone.h: $TZ's POSIX rules, TZif files, fixed offsets).
// The input is "ZONE\nTEXT": ZONE is tried as a zone name and a POSIX rule, the whole input
// as TZif bytes; TEXT is parsed in each zone that loads, in UTC and in Europe/Berlin (a zone
// with summer time), at a few "now"s. Beyond "never crashes": a parsed duration is
// positive; what FormatLocal shows of a parsed time parses back (local times from
// 1970-01-02 to 9999-12-30: local dates before 1970 are refused on purpose).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "reserve/cli_time.h"
#include "reserve/zone.h"

namespace {

using rota::reserve::TimeZone;

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "cli_time_fuzz: %s\n  first:  %s\n  second: %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

const TimeZone& Berlin() {
  static const TimeZone zone = [] {
    auto z = TimeZone::Load("Europe/Berlin");
    return z.ok() ? *z : TimeZone::Utc();
  }();
  return zone;
}

void ParseIn(const std::string& text, const TimeZone& zone) {
  for (int64_t now : {int64_t{0}, int64_t{1'767'225'600'000}, int64_t{1'774'746'000'000}}) {
    auto t = rota::reserve::ParseCliTime(text, now, zone);
    if (!t.ok()) continue;
    const int64_t local_s = zone.ToLocal(*t / 1000);
    if (local_s < 86'400 || local_s >= 253'402'300'800 - 86'400) continue;
    const std::string shown = rota::reserve::FormatLocal(*t, zone);
    if (!rota::reserve::ParseCliTime(shown, now, zone).ok()) {
      Fail("FormatLocal's text does not parse", text, shown);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nl = input.find('\n');
  const std::string zone_text = nl == std::string::npos ? "" : input.substr(0, nl);
  const std::string text = nl == std::string::npos ? input : input.substr(nl + 1);

  std::vector<TimeZone> zones = {TimeZone::Utc(), Berlin()};
  if (auto z = TimeZone::Load(zone_text); z.ok()) zones.push_back(*z);
  if (auto z = TimeZone::FromPosix("fuzz", zone_text); z.ok()) zones.push_back(*z);
  if (auto z = TimeZone::FromTzif("fuzz", input); z.ok()) zones.push_back(*z);
  for (const TimeZone& z : zones) ParseIn(text, z);

  if (auto d = rota::reserve::ParseCliDuration(text); d.ok() && *d <= 0) {
    Fail("a parsed duration is not positive", text, std::to_string(*d));
  }
  (void)rota::reserve::ParseClock(text);
  return 0;
}

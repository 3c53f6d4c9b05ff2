#include "reserve/zone.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

#include "common/file_util.h"
#include "common/time_util.h"

namespace rota::reserve {
namespace {

// One POSIX TZ transition rule: Mm.w.d, Jn or n, at `time` seconds local.
struct Rule {
  char kind = 'M';  // 'M', 'J' (1..365, no Feb 29) or 'N' (0..365)
  int month = 0, week = 0, wday = 0, day = 0;
  int64_t time = 7200;
};

struct Posix {
  int32_t std_off = 0;  // seconds east
  int32_t dst_off = 0;
  bool has_dst = false;
  Rule start, end;
};

}  // namespace

struct TimeZone::Data {
  std::string name;
  std::vector<int64_t> transitions;  // ascending UTC seconds
  std::vector<int32_t> offsets;      // offset after each transition
  int32_t initial = 0;               // offset before the first transition
  std::optional<Posix> footer;       // after the last transition
};

namespace {

int64_t RuleDaySeconds(const Rule& r, int year) {
  int64_t days;
  if (r.kind == 'J') {
    days = DaysFromCivil(year, 1, 1) + r.day - 1 + (IsLeapYear(year) && r.day >= 60 ? 1 : 0);
  } else if (r.kind == 'N') {
    days = DaysFromCivil(year, 1, 1) + r.day;
  } else {
    int64_t first = DaysFromCivil(year, static_cast<unsigned>(r.month), 1);
    int first_wday = static_cast<int>(((first % 7) + 11) % 7);  // 0 = Sunday
    int d = 1 + (r.wday - first_wday + 7) % 7 + (r.week - 1) * 7;
    while (d > DaysInMonth(year, r.month)) d -= 7;
    days = first + d - 1;
  }
  return days * 86400 + r.time;
}

int32_t PosixOffsetAt(const Posix& p, int64_t utc_s) {
  if (!p.has_dst) return p.std_off;
  int year = CivilFromSeconds(utc_s + p.std_off).year;
  int64_t start = RuleDaySeconds(p.start, year) - p.std_off;
  int64_t end = RuleDaySeconds(p.end, year) - p.dst_off;
  bool dst = start < end ? (utc_s >= start && utc_s < end) : !(utc_s >= end && utc_s < start);
  return dst ? p.dst_off : p.std_off;
}

// ---- POSIX TZ parsing ----

class PosixParser {
 public:
  explicit PosixParser(const std::string& s) : s_(s) {}

  std::optional<Posix> Parse() {
    Posix p;
    int32_t off;
    if (!Name() || !Offset(&off)) return std::nullopt;
    p.std_off = -off;
    if (Done()) return p;
    if (!Name()) return std::nullopt;
    p.has_dst = true;
    p.dst_off = p.std_off + 3600;
    if (!Done() && s_[i_] != ',') {
      if (!Offset(&off)) return std::nullopt;
      p.dst_off = -off;
    }
    if (Done()) {  // no rule: the US rules, as glibc assumes
      p.start = Rule{'M', 3, 2, 0, 0, 7200};
      p.end = Rule{'M', 11, 1, 0, 0, 7200};
      return p;
    }
    if (s_[i_++] != ',' || !ParseRule(&p.start) || Done() || s_[i_++] != ',' ||
        !ParseRule(&p.end) || !Done()) {
      return std::nullopt;
    }
    return p;
  }

 private:
  bool Done() const { return i_ >= s_.size(); }
  bool Name() {
    size_t b = i_;
    if (!Done() && s_[i_] == '<') {
      while (!Done() && s_[i_] != '>') ++i_;
      if (Done()) return false;
      ++i_;
      return i_ - b >= 5;
    }
    while (!Done() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ - b >= 3;
  }
  bool Number(int max_digits, int* out) {
    int v = 0, n = 0;
    while (!Done() && std::isdigit(static_cast<unsigned char>(s_[i_])) && n < max_digits) {
      v = v * 10 + (s_[i_++] - '0');
      ++n;
    }
    *out = v;
    return n > 0;
  }
  // [+-]hh[:mm[:ss]] in seconds (sign as written).
  bool Offset(int32_t* out) {
    int sign = 1;
    if (!Done() && (s_[i_] == '+' || s_[i_] == '-')) sign = s_[i_++] == '-' ? -1 : 1;
    int h, m = 0, sec = 0;
    if (!Number(3, &h)) return false;
    if (!Done() && s_[i_] == ':') {
      ++i_;
      if (!Number(2, &m)) return false;
      if (!Done() && s_[i_] == ':') {
        ++i_;
        if (!Number(2, &sec)) return false;
      }
    }
    if (h > 167 || m > 59 || sec > 59) return false;
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
  bool ParseRule(Rule* r) {
    if (Done()) return false;
    if (s_[i_] == 'M') {
      ++i_;
      r->kind = 'M';
      if (!Number(2, &r->month) || Done() || s_[i_++] != '.' || !Number(1, &r->week) || Done() ||
          s_[i_++] != '.' || !Number(1, &r->wday)) {
        return false;
      }
      if (r->month < 1 || r->month > 12 || r->week < 1 || r->week > 5 || r->wday > 6) return false;
    } else if (s_[i_] == 'J') {
      ++i_;
      r->kind = 'J';
      if (!Number(3, &r->day) || r->day < 1 || r->day > 365) return false;
    } else {
      r->kind = 'N';
      if (!Number(3, &r->day) || r->day > 365) return false;
    }
    r->time = 7200;
    if (!Done() && s_[i_] == '/') {
      ++i_;
      int32_t t;
      if (!Offset(&t)) return false;
      r->time = t;
    }
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
};

// ---- TZif parsing ----

class Reader {
 public:
  Reader(const std::string& d, size_t pos) : d_(d), p_(pos) {}
  bool Has(size_t n) const { return p_ + n <= d_.size(); }
  int64_t Be(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(d_[p_++]);
    if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
    return static_cast<int64_t>(v);
  }
  uint8_t Byte() { return static_cast<uint8_t>(d_[p_++]); }
  void Skip(size_t n) { p_ += n; }
  size_t pos() const { return p_; }

 private:
  const std::string& d_;
  size_t p_;
};

struct Counts {
  int64_t isut, isstd, leap, time, type, chars;
};

bool ReadHeader(Reader& r, int* version, Counts* c) {
  if (!r.Has(44)) return false;
  std::string magic;
  for (int i = 0; i < 4; ++i) magic.push_back(static_cast<char>(r.Byte()));
  if (magic != "TZif") return false;
  uint8_t v = r.Byte();
  *version = v == 0 ? 1 : v - '0';
  r.Skip(15);
  c->isut = r.Be(4), c->isstd = r.Be(4), c->leap = r.Be(4);
  c->time = r.Be(4), c->type = r.Be(4), c->chars = r.Be(4);
  return c->isut >= 0 && c->isstd >= 0 && c->leap >= 0 && c->time >= 0 && c->type > 0 &&
         c->type <= 256 && c->chars >= 0;
}

size_t BlockSize(const Counts& c, int time_bytes) {
  return static_cast<size_t>(c.time * time_bytes + c.time + c.type * 6 + c.chars +
                             c.leap * (time_bytes + 4) + c.isstd + c.isut);
}

}  // namespace

int64_t SecondsFromCivil(const Civil& c) {
  return DaysFromCivil(c.year, static_cast<unsigned>(c.month), static_cast<unsigned>(c.day)) *
             86400 +
         c.hour * 3600 + c.minute * 60 + c.second;
}

Civil CivilFromSeconds(int64_t s) {
  int64_t z = FloorDiv(s, 86400);
  int64_t secs = s - z * 86400;
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  Civil c;
  c.year = static_cast<int>(y + (m <= 2));
  c.month = static_cast<int>(m);
  c.day = static_cast<int>(d);
  c.hour = static_cast<int>(secs / 3600);
  c.minute = static_cast<int>(secs / 60 % 60);
  c.second = static_cast<int>(secs % 60);
  return c;
}

int WeekdayOf(int64_t s) {
  int64_t days = FloorDiv(s, 86400);
  return static_cast<int>(((days + 3) % 7 + 7) % 7);  // 1970-01-01 was a Thursday (3)
}


TimeZone::TimeZone() {
  static const auto kUtc = [] {
    auto d = std::make_shared<Data>();
    d->name = "UTC";
    return std::shared_ptr<const Data>(d);
  }();
  data_ = kUtc;
}

const std::string& TimeZone::name() const { return data_->name; }

int32_t TimeZone::OffsetAt(int64_t utc_s) const {
  const Data& d = *data_;
  if (d.transitions.empty() || utc_s < d.transitions.front()) {
    if (d.transitions.empty() && d.footer) return PosixOffsetAt(*d.footer, utc_s);
    return d.initial;
  }
  if (utc_s >= d.transitions.back() && d.footer) return PosixOffsetAt(*d.footer, utc_s);
  auto it = std::upper_bound(d.transitions.begin(), d.transitions.end(), utc_s);
  return d.offsets[static_cast<size_t>(it - d.transitions.begin()) - 1];
}

int64_t TimeZone::ToUtc(int64_t local_s) const {
  const int64_t kTwoDays = 2 * 86400;
  int32_t before = OffsetAt(local_s - kTwoDays), after = OffsetAt(local_s + kTwoDays);
  int64_t a = local_s - before, b = local_s - after;
  bool a_ok = ToLocal(a) == local_s, b_ok = ToLocal(b) == local_s;
  if (a_ok && b_ok) return std::min(a, b);
  if (a_ok) return a;
  if (b_ok) return b;
  int64_t c = local_s - OffsetAt(local_s - OffsetAt(local_s));
  if (ToLocal(c) == local_s) return c;
  return a;  // in a gap: the earlier offset maps past the gap
}

Result<TimeZone> TimeZone::FromPosix(const std::string& name, const std::string& rule) {
  auto p = PosixParser(rule).Parse();
  if (!p) return Status::InvalidArgument("time zone '" + name + "': malformed rule '" + rule + "'");
  auto d = std::make_shared<Data>();
  d->name = name;
  d->initial = p->std_off;
  d->footer = *p;
  return TimeZone(std::move(d));
}

Result<TimeZone> TimeZone::FromTzif(const std::string& name, const std::string& data) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("time zone '" + name + "': not a valid TZif file (" + why + ")");
  };
  Reader r(data, 0);
  int version;
  Counts c;
  if (!ReadHeader(r, &version, &c)) return bad("header");
  int time_bytes = 4;
  if (version >= 2) {
    if (!r.Has(BlockSize(c, 4))) return bad("truncated");
    r.Skip(BlockSize(c, 4));
    if (!ReadHeader(r, &version, &c)) return bad("second header");
    time_bytes = 8;
  }
  if (!r.Has(BlockSize(c, time_bytes))) return bad("truncated");
  auto d = std::make_shared<Data>();
  d->name = name;
  std::vector<int64_t> times(static_cast<size_t>(c.time));
  for (auto& t : times) t = r.Be(time_bytes);
  std::vector<uint8_t> idx(static_cast<size_t>(c.time));
  for (auto& i : idx) i = r.Byte();
  std::vector<int32_t> type_off(static_cast<size_t>(c.type));
  for (auto& o : type_off) {
    o = static_cast<int32_t>(r.Be(4));
    r.Skip(2);  // isdst, desigidx
  }
  r.Skip(BlockSize(c, time_bytes) - static_cast<size_t>(c.time * time_bytes + c.time + c.type * 6));
  for (size_t i = 0; i < times.size(); ++i) {
    if (idx[i] >= type_off.size()) return bad("type index");
    if (i > 0 && times[i] <= times[i - 1]) return bad("transitions out of order");
    d->transitions.push_back(times[i]);
    d->offsets.push_back(type_off[idx[i]]);
  }
  d->initial = type_off[0];
  if (version >= 2 && r.pos() < data.size() && data[r.pos()] == '\n') {
    size_t end = data.find('\n', r.pos() + 1);
    if (end != std::string::npos && end > r.pos() + 1) {
      std::string rule = data.substr(r.pos() + 1, end - r.pos() - 1);
      auto p = PosixParser(rule).Parse();
      if (!p) return bad("footer '" + rule + "'");
      d->footer = *p;
    }
  }
  return TimeZone(std::move(d));
}

Result<TimeZone> TimeZone::Load(const std::string& name) {
  if (name == "UTC" || name == "Z" || name == "Etc/UTC" || name == "GMT") {
    return TimeZone();
  }
  if (!name.empty() && (name[0] == '+' || name[0] == '-')) {
    int sign = name[0] == '-' ? -1 : 1;
    if (name.size() != 6 || name[3] != ':' || !std::isdigit(static_cast<unsigned char>(name[1])) ||
        !std::isdigit(static_cast<unsigned char>(name[2])) ||
        !std::isdigit(static_cast<unsigned char>(name[4])) ||
        !std::isdigit(static_cast<unsigned char>(name[5]))) {
      return Status::InvalidArgument("time zone '" + name + "': offsets look like +02:00");
    }
    int h = (name[1] - '0') * 10 + (name[2] - '0'), m = (name[4] - '0') * 10 + (name[5] - '0');
    if (h > 23 || m > 59) return Status::InvalidArgument("time zone '" + name + "' is out of range");
    auto d = std::make_shared<Data>();
    d->name = name;
    d->initial = sign * (h * 3600 + m * 60);
    return TimeZone(std::move(d));
  }
  bool ok = !name.empty() && name.size() <= 64 && name[0] != '/' &&
            name.find("..") == std::string::npos;
  for (char ch : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '_' ||
                ch == '-' || ch == '+');
  }
  if (!ok) {
    return Status::InvalidArgument("time zone '" + name +
                                   "' is not a zone name like UTC, Europe/Berlin or +02:00");
  }
  const char* dir = std::getenv("TZDIR");
  std::string path = std::string(dir && *dir ? dir : "/usr/share/zoneinfo") + "/" + name;
  auto text = ReadFile(path);
  if (!text.ok()) return Status::NotFound("unknown time zone '" + name + "' (no " + path + ")");
  return FromTzif(name, *text);
}

TimeZone TimeZone::Local() {
  const char* tz = std::getenv("TZ");
  if (tz && *tz) {
    std::string name = tz[0] == ':' ? tz + 1 : tz;
    auto z = Load(name);
    if (z.ok()) return *z;
    auto p = FromPosix(name, name);
    if (p.ok()) return *p;
  }
  auto text = ReadFile("/etc/localtime");
  if (text.ok()) {
    auto z = FromTzif("local", *text);
    if (z.ok()) return *z;
  }
  return TimeZone();
}

}  // namespace rota::reserve

#include "host/proc_parse.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace rota::host {
namespace {

// Splits off the next whitespace-separated token of *text.
std::string_view NextToken(std::string_view* text) {
  size_t b = text->find_first_not_of(" \t\n");
  if (b == std::string_view::npos) {
    *text = {};
    return {};
  }
  size_t e = text->find_first_of(" \t\n", b);
  std::string_view tok = text->substr(b, e == std::string_view::npos ? e : e - b);
  *text = e == std::string_view::npos ? std::string_view() : text->substr(e);
  return tok;
}

// The whole token must be a decimal number.
template <typename T>
bool ParseNumber(std::string_view tok, T* out) {
  if (tok.empty()) return false;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), *out);
  return ec == std::errc() && p == tok.data() + tok.size();
}

std::string Quote(std::string_view tok) {
  constexpr size_t kMax = 40;
  std::string out = "\"" + SanitizeText(tok, kMax) + "\"";
  return out;
}

// Calls fn(line) for each line of text.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

Result<CpuTimes> ParseCpuLine(std::string_view name, std::string_view rest) {
  CpuTimes t;
  uint64_t* fields[] = {&t.user,   &t.nice, &t.system,  &t.idle,
                        &t.iowait, &t.irq,  &t.softirq, &t.steal};
  size_t n = 0;
  for (uint64_t* f : fields) {
    std::string_view tok = NextToken(&rest);
    if (tok.empty()) break;
    if (!ParseNumber(tok, f)) {
      return Status::InvalidArgument("line " + std::string(name) + ": bad counter " + Quote(tok));
    }
    ++n;
  }
  if (n < 4) {
    return Status::InvalidArgument("line " + std::string(name) + ": " + std::to_string(n) +
                                   " counters, need at least 4");
  }
  return t;
}

// Saturating difference: a counter that went backwards counts as 0.
uint64_t Delta(uint64_t prev, uint64_t cur) { return cur > prev ? cur - prev : 0; }

// "cpu0", "cpu17", ...
bool StartsWithCpuDigit(std::string_view key) {
  return key.size() > 3 && key.substr(0, 3) == "cpu" && key[3] >= '0' && key[3] <= '9';
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at text[i], or 0 if it is not valid.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  size_t len;
  uint32_t min;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(text[i + k]);
    if (!IsContinuation(cc)) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat out;
  bool have_total = false;
  Status error;
  ForEachLine(text, [&](std::string_view line) {
    if (!error.ok()) return;
    std::string_view rest = line;
    std::string_view key = NextToken(&rest);
    if (key == "cpu") {
      auto t = ParseCpuLine(key, rest);
      if (!t.ok()) {
        error = t.status();
        return;
      }
      out.total = *t;
      have_total = true;
    } else if (StartsWithCpuDigit(key)) {
      uint32_t id;
      if (!ParseNumber(key.substr(3), &id)) {
        error = Status::InvalidArgument("bad cpu line name " + Quote(key));
        return;
      }
      auto t = ParseCpuLine(key, rest);
      if (!t.ok()) {
        error = t.status();
        return;
      }
      out.cores.emplace_back(id, *t);
    } else if (key == "btime") {
      std::string_view tok = NextToken(&rest);
      int64_t v;
      if (!ParseNumber(tok, &v) || v < 0) {
        error = Status::InvalidArgument("bad btime " + Quote(tok));
        return;
      }
      out.btime_s = v;
    }
  });
  if (!error.ok()) return error;
  if (!have_total) return Status::InvalidArgument("no \"cpu\" line");
  return out;
}

double CpuBusyPercent(const CpuTimes& prev, const CpuTimes& cur) {
  uint64_t idle = Delta(prev.idle, cur.idle) + Delta(prev.iowait, cur.iowait);
  uint64_t busy = Delta(prev.user, cur.user) + Delta(prev.nice, cur.nice) +
                  Delta(prev.system, cur.system) + Delta(prev.irq, cur.irq) +
                  Delta(prev.softirq, cur.softirq) + Delta(prev.steal, cur.steal);
  uint64_t total = idle + busy;
  if (total == 0) return 0;
  double pct = 100.0 * static_cast<double>(busy) / static_cast<double>(total);
  return pct < 0 ? 0 : (pct > 100 ? 100 : pct);
}

uint64_t CpuBusyTicks(const CpuTimes& t) { return t.user + t.nice + t.system + t.irq + t.softirq; }

Result<MemInfo> ParseMeminfo(std::string_view text) {
  std::optional<uint64_t> total, available, free, buffers, cached;
  Status error;
  ForEachLine(text, [&](std::string_view line) {
    if (!error.ok()) return;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view key = line.substr(0, colon);
    std::optional<uint64_t>* slot = nullptr;
    if (key == "MemTotal")
      slot = &total;
    else if (key == "MemAvailable")
      slot = &available;
    else if (key == "MemFree")
      slot = &free;
    else if (key == "Buffers")
      slot = &buffers;
    else if (key == "Cached")
      slot = &cached;
    if (slot == nullptr) return;
    std::string_view rest = line.substr(colon + 1);
    std::string_view num = NextToken(&rest);
    std::string_view unit = NextToken(&rest);
    uint64_t v;
    if (!ParseNumber(num, &v)) {
      error = Status::InvalidArgument(std::string(key) + ": bad value " + Quote(num));
      return;
    }
    uint64_t mult = 1;
    if (unit == "kB") {
      mult = 1024;
    } else if (!unit.empty()) {
      error = Status::InvalidArgument(std::string(key) + ": unknown unit " + Quote(unit));
      return;
    }
    if (v > std::numeric_limits<uint64_t>::max() / mult) {
      error = Status::InvalidArgument(std::string(key) + ": value too large " + Quote(num));
      return;
    }
    *slot = v * mult;
  });
  if (!error.ok()) return error;
  if (!total) return Status::InvalidArgument("MemTotal missing");
  if (*total == 0) return Status::InvalidArgument("MemTotal is 0");
  MemInfo out;
  out.total_bytes = *total;
  if (available) {
    out.available_bytes = *available;
  } else if (free && buffers && cached) {
    out.available_bytes = *free + *buffers + *cached;
  } else {
    return Status::InvalidArgument("MemAvailable missing (and MemFree/Buffers/Cached too)");
  }
  if (out.available_bytes > out.total_bytes) out.available_bytes = out.total_bytes;
  return out;
}

Result<LoadAvg> ParseLoadavg(std::string_view text) {
  double v[3];
  for (double& d : v) {
    std::string_view tok = NextToken(&text);
    if (!ParseNumber(tok, &d) || !std::isfinite(d) || d < 0) {
      return Status::InvalidArgument("bad load average " + Quote(tok));
    }
  }
  return LoadAvg{v[0], v[1], v[2]};
}

Result<PidStat> ParsePidStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::InvalidArgument("no \"(comm)\" field");
  }
  PidStat out;
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  std::string_view rest = text.substr(close + 1);
  // Tokens after ')' start at field 3 (state).
  constexpr int kFirstField = 3;
  constexpr int kFlags = 9, kUtime = 14, kStime = 15, kStart = 22, kRss = 24;
  for (int field = kFirstField; field <= kRss; ++field) {
    std::string_view tok = NextToken(&rest);
    if (tok.empty()) {
      return Status::InvalidArgument("truncated: " + std::to_string(field - 1) + " fields, need " +
                                     std::to_string(kRss));
    }
    uint64_t* dest = nullptr;
    if (field == kFirstField) {
      if (tok.size() != 1) return Status::InvalidArgument("bad state " + Quote(tok));
      out.state = tok[0];
    } else if (field == kFlags) {
      dest = &out.flags;
    } else if (field == kUtime) {
      dest = &out.utime_ticks;
    } else if (field == kStime) {
      dest = &out.stime_ticks;
    } else if (field == kStart) {
      dest = &out.start_ticks;
    } else if (field == kRss) {
      dest = &out.rss_pages;
    }
    if (dest != nullptr && !ParseNumber(tok, dest)) {
      return Status::InvalidArgument("field " + std::to_string(field) + ": bad number " +
                                     Quote(tok));
    }
  }
  return out;
}

Result<uint64_t> ParseStatmRss(std::string_view text) {
  std::string_view size = NextToken(&text);
  std::string_view resident = NextToken(&text);
  uint64_t pages = 0;
  if (size.empty() || resident.empty()) return Status::InvalidArgument("truncated: need 2 fields");
  if (!ParseNumber(resident, &pages)) return Status::InvalidArgument("bad resident size " + Quote(resident));
  return pages;
}

Result<uint32_t> ParseStatusUid(std::string_view text) {
  std::optional<uint32_t> uid;
  bool bad = false;
  std::string_view bad_tok;
  ForEachLine(text, [&](std::string_view line) {
    if (uid || bad || line.substr(0, 4) != "Uid:") return;
    std::string_view rest = line.substr(4);
    std::string_view tok = NextToken(&rest);
    uint32_t v;
    if (ParseNumber(tok, &v)) {
      uid = v;
    } else {
      bad = true;
      bad_tok = tok;
    }
  });
  if (bad) return Status::InvalidArgument("bad Uid " + Quote(bad_tok));
  if (!uid) return Status::InvalidArgument("no Uid line");
  return *uid;
}

std::string FormatCommand(std::string_view raw, std::string_view comm, size_t max_bytes) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  if (raw.empty()) {
    std::string bracketed = "[" + std::string(comm) + "]";
    return SanitizeText(bracketed, max_bytes);
  }
  // Sanitizing never lengthens text, and a character that starts below max_bytes ends
  // within 3 more bytes: that much input is enough.
  std::string joined(raw.substr(0, max_bytes + 3));
  for (char& c : joined) {
    if (c == '\0') c = ' ';
  }
  return SanitizeText(joined, max_bytes);
}

std::string ParseCgroup(std::string_view text, size_t max_bytes) {
  std::string_view rota, v2, memory, cpu, systemd;
  ForEachLine(text, [&](std::string_view line) {
    // "hierarchy-id:controller,list:path"; the path itself may contain ':'.
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) return;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) return;
    std::string_view id = line.substr(0, c1);
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string_view path = line.substr(c2 + 1);
    if (path.empty() || path[0] != '/' || path == "/") return;
    if (path.substr(0, 6) == "/rota/" && rota.empty()) rota = path;
    if (id == "0" && controllers.empty()) {
      if (v2.empty()) v2 = path;
      return;
    }
    while (!controllers.empty()) {
      size_t comma = controllers.find(',');
      std::string_view c = controllers.substr(0, comma);
      if (c == "memory" && memory.empty()) memory = path;
      if (c == "cpu" && cpu.empty()) cpu = path;
      if (c == "name=systemd" && systemd.empty()) systemd = path;
      if (comma == std::string_view::npos) break;
      controllers.remove_prefix(comma + 1);
    }
  });
  for (std::string_view p : {rota, v2, memory, cpu, systemd}) {
    if (!p.empty()) return SanitizeText(p, max_bytes);
  }
  return "";
}

std::string SanitizeText(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  size_t i = 0;
  while (i < text.size()) {
    size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {
      if (out.size() + 1 > max_bytes) break;
      out += '?';
      ++i;
      continue;
    }
    if (out.size() + len > max_bytes) break;
    if (len == 1) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      out += (c < 0x20 || c == 0x7F) ? '?' : static_cast<char>(c);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace rota::host

#include "sim/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "common/file_util.h"
#include "common/strings.h"
#include "common/time_util.h"

namespace rota::sim {
namespace {

constexpr uint32_t kMaxGpus = 4096;
constexpr double kMaxDurationS = 366.0 * 24 * 3600;
constexpr double kYear10000S = 253402300800.0;  // 10000-01-01T00:00:00Z
constexpr size_t kMaxTraceBytes = size_t{1} << 30;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// The fields of one CSV line (RFC 4180 within a line: a field in double
// quotes may hold commas, and "" in it is a quote). Fields are trimmed.
std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') field += c;
      else if (i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
      else quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(Trim(field));
      field.clear();
    } else {
      field += c;
    }
  }
  out.push_back(Trim(field));
  return out;
}

// Text quoted in a message: at most 80 bytes of it.
std::string Quote(const std::string& s) {
  return "'" + (s.size() > 80 ? s.substr(0, 77) + "..." : s) + "'";
}

// A decimal number (an exponent allowed, as spreadsheets write; no hex, inf or nan).
bool ParseDouble(const std::string& s, double* out) {
  if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

Result<int64_t> ParseSubmit(const std::string& s) {
  double secs = 0;
  if (ParseDouble(s, &secs)) {
    if (secs < 0) return Status::InvalidArgument(Quote(s) + " is before 1970");
    if (secs >= kYear10000S) return Status::InvalidArgument(Quote(s) + " is after the year 9999");
    return static_cast<int64_t>(std::llround(secs * 1000));
  }
  std::string t = s;
  if (t.size() == 19 && t[10] == ' ') t[10] = 'T';
  if (t.size() == 19) t += "Z";
  auto ms = ParseRfc3339(t);
  if (!ms.ok()) return Status::InvalidArgument(Quote(s) + " is not a time (YYYY-MM-DD HH:MM:SS, RFC 3339 or seconds)");
  return *ms;
}

}  // namespace

Result<Trace> ParseTrace(const std::string& csv, const TraceReadOptions& options) {
  Trace out;
  constexpr std::string_view kBom = "\xEF\xBB\xBF";  // a UTF-8 byte order mark, as spreadsheets write
  std::vector<std::string> lines =
      Split(std::string_view(csv).substr(csv.compare(0, kBom.size(), kBom) == 0 ? kBom.size() : 0), '\n');
  if (lines.empty() || Trim(lines[0]).empty()) return Status::InvalidArgument("the trace is empty");
  std::map<std::string, size_t> col;
  {
    auto names = SplitCsvLine(lines[0]);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty()) continue;  // trailing commas of a spreadsheet export
      if (!col.emplace(names[i], i).second) {
        return Status::InvalidArgument("line 1: the column " + Quote(names[i]) + " appears twice");
      }
    }
  }
  auto find = [&](std::initializer_list<const char*> names) -> std::optional<size_t> {
    for (const char* n : names) {
      if (auto it = col.find(n); it != col.end()) return it->second;
    }
    return std::nullopt;
  };
  auto submit_col = find({"submit_time", "submit", "submitted"});
  auto duration_col = find({"duration_s", "duration"});
  auto gpus_col = find({"num_gpus", "gpus"});
  auto user_col = find({"user"});
  auto queue_col = find({"queue"});
  auto group_col = find({"group", "cluster"});
  if (!submit_col || !duration_col || !gpus_col) {
    return Status::InvalidArgument(
        "line 1: the header must name submit_time, duration_s (or duration) and num_gpus (or gpus); it is " +
        Quote(Trim(lines[0])));
  }
  for (size_t li = 1; li < lines.size(); ++li) {
    const std::string line = Trim(lines[li]);
    if (line.empty()) continue;
    auto fields = SplitCsvLine(line);
    auto bad = [&](const std::string& what) -> Status {
      ++out.bad_rows;
      const std::string m = "line " + std::to_string(li + 1) + ": " + what;
      if (!options.skip_bad_rows) return Status::InvalidArgument(m + " (skip bad rows with --skip-bad-rows)");
      if (out.warnings.size() < options.max_warnings) out.warnings.push_back(m);
      return Status::Ok();
    };
    auto field = [&](std::optional<size_t> c) -> std::string {
      return c && *c < fields.size() ? fields[*c] : std::string();
    };
    const size_t needed = std::max({*submit_col, *duration_col, *gpus_col}) + 1;
    if (fields.size() < needed) {
      RETURN_IF_ERROR(bad("has " + std::to_string(fields.size()) + " fields, needs at least " + std::to_string(needed)));
      continue;
    }
    TraceJob j;
    j.line = li + 1;
    auto submit = ParseSubmit(fields[*submit_col]);
    if (!submit.ok()) {
      RETURN_IF_ERROR(bad("submit_time: " + submit.status().message()));
      continue;
    }
    j.submit_ms = *submit;
    double dur = 0;
    if (!ParseDouble(fields[*duration_col], &dur) || dur < 0 || dur > kMaxDurationS) {
      RETURN_IF_ERROR(bad("duration: " + Quote(fields[*duration_col]) + " is not a duration in seconds (0..31622400)"));
      continue;
    }
    j.duration_ms = static_cast<int64_t>(std::llround(dur * 1000));
    double gpus = 0;
    if (!ParseDouble(fields[*gpus_col], &gpus) || gpus < 1 || gpus > kMaxGpus || gpus != std::floor(gpus)) {
      RETURN_IF_ERROR(bad("num_gpus: " + Quote(fields[*gpus_col]) + " is not a GPU count (1..4096)"));
      continue;
    }
    j.gpus = static_cast<uint32_t>(gpus);
    j.user = field(user_col);
    j.group = field(group_col);
    j.queue = field(queue_col);
    if (j.user.empty()) j.user = j.group.empty() ? "user" : j.group;
    out.jobs.push_back(std::move(j));
  }
  if (out.jobs.empty()) return Status::InvalidArgument("the trace has no usable job");
  std::stable_sort(out.jobs.begin(), out.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_ms < b.submit_ms; });
  return out;
}

Result<Trace> ReadTrace(const std::string& path, const TraceReadOptions& options) {
  auto text = ReadFile(path, kMaxTraceBytes);
  if (!text.ok()) return text.status().WithContext("trace " + path);
  auto t = ParseTrace(*text, options);
  if (!t.ok()) return t.status().WithContext("trace " + path);
  return t;
}

}  // namespace rota::sim

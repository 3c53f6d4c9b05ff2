#include "agent/metrics_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace rota::agent {
namespace {

bool ParseDouble(std::string_view text, double* out) {
  if (text.empty() || text.size() > 64) return false;
  const std::string copy(text);  // strtod needs a terminator
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace

std::vector<api::TaskMetricPoint> ParseMetricLine(std::string_view line, bool* malformed) {
  *malformed = false;
  if (line.substr(0, kMetricPrefix.size()) != kMetricPrefix) return {};
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<api::TaskMetricPoint> points;
  int64_t step = -1;
  size_t pairs = 0;
  std::string_view rest = line.substr(kMetricPrefix.size());
  while (!rest.empty()) {
    const size_t space = rest.find_first_of(" \t");
    std::string_view pair = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || ++pairs > kMaxPairsPerLine) {
      *malformed = true;
      return {};
    }
    const std::string_view name = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (name == "step") {
      int64_t s = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), s);
      if (ec != std::errc{} || p != value.data() + value.size() || s < 0 || s > api::kMaxMetricStep || step >= 0) {
        *malformed = true;
        return {};
      }
      step = s;
      continue;
    }
    api::TaskMetricPoint point;
    point.name = std::string(name);
    if (!api::ValidateMetricName(point.name).ok() || !ParseDouble(value, &point.value)) {
      *malformed = true;
      return {};
    }
    points.push_back(std::move(point));
  }
  if (points.empty()) {
    *malformed = true;
    return {};
  }
  for (auto& p : points) p.step = step;
  return points;
}

std::vector<api::TaskMetricPoint> MetricsTail::Read(const std::string& id, const std::vector<Source>& sources,
                                                    int64_t now_ms) {
  Task& task = tasks_[id];
  task.pending = task.committed;
  std::vector<api::TaskMetricPoint> out;
  std::string buf;
  for (const auto& source : sources) {
    Cursor& cur = task.pending[source.path];
    const int fd = ::open(source.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    // Most looks find nothing new: no buffer is filled for them.
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) <= cur.offset) {
      ::close(fd);
      continue;
    }
    buf.resize(std::min<uint64_t>(kMaxMetricReadBytes, static_cast<uint64_t>(st.st_size) - cur.offset));
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(cur.offset));
    ::close(fd);
    if (n <= 0) continue;
    buf.resize(static_cast<size_t>(n));
    size_t pos = 0;
    while (out.size() < api::kMaxMetricPointsPerMessage) {
      const size_t nl = buf.find('\n', pos);
      if (nl == std::string::npos) {
        // A line longer than a whole read: skipped, up to its end in a later read.
        if (pos == 0 && buf.size() == kMaxMetricReadBytes) {
          cur.in_long_line = true;
          pos = buf.size();
        }
        break;
      }
      const std::string_view line(buf.data() + pos, nl - pos);
      const uint64_t line_offset = cur.offset + pos;
      const bool skip = cur.in_long_line;
      cur.in_long_line = false;
      if (!skip) {
        bool malformed = false;
        auto points = ParseMetricLine(line, &malformed);
        if (malformed) ++malformed_;
        if (out.size() + points.size() > api::kMaxMetricPointsPerMessage) break;  // the next Read has it
        for (auto& p : points) {
          p.source = source.kind;
          p.seq = line_offset;
          p.time_ms = now_ms;
          out.push_back(std::move(p));
        }
      }
      pos = nl + 1;
    }
    cur.offset += pos;
  }
  return out;
}

void MetricsTail::Commit(const std::string& id) {
  auto it = tasks_.find(id);
  if (it != tasks_.end()) it->second.committed = it->second.pending;
}

}  // namespace rota::agent

#include "host/rapl.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <utility>

namespace rota::host {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxSysfsFileBytes = 4096;
constexpr size_t kMaxCpuStatBytes = 64 << 10;
constexpr int64_t kSlackMs = 1000;  // read-time jitter allowed in the plausibility check

const char* const kNotAvailable = "RAPL not available: ";

// Reads a small file. NotFound when missing, PermissionDenied on EACCES/EPERM, IoError
// otherwise; messages start with the path.
Result<std::string> ReadSmall(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = path + ": " + std::strerror(err);
    if (err == ENOENT || err == ENOTDIR) return Status::NotFound(msg);
    if (err == EACCES || err == EPERM) return Status::PermissionDenied(msg);
    return Status::IoError(msg);
  }
  std::string out;
  char buf[4096];
  while (out.size() <= max_bytes) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      std::string msg = path + ": " + std::strerror(err);
      if (err == EACCES || err == EPERM) return Status::PermissionDenied(msg);
      return Status::IoError(msg);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (out.size() > max_bytes) {
    return Status::IoError(path + ": more than " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\n\r");
  return s.substr(b, e - b + 1);
}

bool ParseU64(std::string_view tok, uint64_t* out) {
  if (tok.empty()) return false;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), *out);
  return ec == std::errc() && p == tok.data() + tok.size();
}

std::string Quote(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "\"";
  for (char c : s.substr(0, kMax)) {
    out +=
        (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
  }
  if (s.size() > kMax) out += "...";
  return out + "\"";
}

// Reads a file holding one decimal number (a sysfs attribute).
Result<uint64_t> ReadCounter(const std::string& path) {
  auto text = ReadSmall(path, kMaxSysfsFileBytes);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kPermissionDenied && path.ends_with("/energy_uj")) {
      return Status::PermissionDenied(
          text.status().message() +
          " (energy_uj is readable by root only since Linux 5.10 and the Nov 2020 stable "
          "kernels; run the agent as root or grant it read access)");
    }
    return text.status();
  }
  uint64_t v = 0;
  if (!ParseU64(Trim(*text), &v)) {
    return Status::InvalidArgument(path + ": not a number: " + Quote(Trim(*text)));
  }
  return v;
}

// "intel-rapl:3" -> (prefix "intel-rapl", 3). False for subzones ("intel-rapl:0:1"),
// other control types and the control-type directories.
bool ParsePackageZone(std::string_view dir, std::string_view* prefix, uint64_t* index) {
  for (std::string_view p : {std::string_view("intel-rapl"), std::string_view("amd-rapl")}) {
    if (dir.size() > p.size() + 1 && dir.starts_with(p) && dir[p.size()] == ':') {
      *prefix = p;
      return ParseU64(dir.substr(p.size() + 1), index);
    }
  }
  return false;
}

std::string Label(const std::string& zone, const std::string& name) {
  return name.empty() ? zone : zone + " (" + name + ")";
}

}  // namespace

Result<std::vector<RaplDomain>> FindRaplPackages(const std::string& powercap_root) {
  std::error_code ec;
  if (!fs::exists(powercap_root, ec)) {
    return Status::Unavailable(std::string(kNotAvailable) + powercap_root +
                               " does not exist (no powercap driver: not x86, a virtual "
                               "machine, or intel_rapl_msr not loaded)");
  }
  struct Found {
    std::string_view prefix;
    uint64_t index;
    std::string zone;
  };
  std::vector<Found> zones;
  fs::directory_iterator it(powercap_root, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string zone = it->path().filename().string();
    Found f;
    if (ParsePackageZone(zone, &f.prefix, &f.index)) {
      f.zone = std::move(zone);
      zones.push_back(std::move(f));
    }
  }
  if (ec) {
    return Status::Unavailable(std::string(kNotAvailable) + "cannot list " + powercap_root + ": " +
                               ec.message());
  }
  std::sort(zones.begin(), zones.end(), [](const Found& a, const Found& b) {
    return std::tie(a.prefix, a.index) < std::tie(b.prefix, b.index);
  });

  std::vector<RaplDomain> out;
  for (Found& f : zones) {
    RaplDomain d;
    d.zone = std::move(f.zone);
    d.path = (fs::path(powercap_root) / d.zone).string();
    auto name = ReadSmall(d.path + "/name", kMaxSysfsFileBytes);
    if (name.ok()) {
      d.name = std::string(Trim(*name));
      // psys, and anything else not a package: not CPU package energy.
      if (!d.name.starts_with("package-")) continue;
    } else {
      d.unavailable = name.status().message();
      out.push_back(std::move(d));
      continue;
    }
    auto max = ReadCounter(d.path + "/max_energy_range_uj");
    if (!max.ok()) {
      d.unavailable = max.status().message();
    } else if (*max == 0) {
      d.unavailable = d.path + "/max_energy_range_uj: is 0";
    } else {
      d.max_energy_range_uj = *max;
      auto energy = ReadCounter(d.path + "/energy_uj");
      if (!energy.ok()) d.unavailable = energy.status().message();
    }
    out.push_back(std::move(d));
  }
  if (out.empty()) {
    return Status::Unavailable(std::string(kNotAvailable) + "no package zone (intel-rapl:N " +
                               "named package-N) in " + powercap_root);
  }
  return out;
}

RaplMeter::RaplMeter(std::string powercap_root, Clock& clock, double max_package_watts)
    : root_(std::move(powercap_root)), clock_(clock), max_package_watts_(max_package_watts) {}

Result<RaplReading> RaplMeter::Read() {
  auto domains = FindRaplPackages(root_);
  if (!domains.ok()) {
    baselines_.clear();
    return domains.status();
  }
  const int64_t now_ms = clock_.MonotonicMs();
  const bool first = baselines_.empty();
  RaplReading reading;
  std::string why_none;  // reasons, for the error when no package could be read
  std::map<std::string, Baseline> next;

  for (const RaplDomain& d : *domains) {
    const std::string label = Label(d.zone, d.name);
    Result<uint64_t> energy = d.readable() ? ReadCounter(d.path + "/energy_uj")
                                           : Result<uint64_t>(Status::Unavailable(d.unavailable));
    if (!energy.ok()) {
      reading.notes.push_back(label + ": " + energy.status().message());
      if (!why_none.empty()) why_none += "; ";
      why_none += label + ": " + energy.status().message();
      continue;
    }
    ++reading.packages;
    const uint64_t cur = *energy;
    Baseline now{d.name, d.max_energy_range_uj, cur, now_ms};
    auto prev_it = baselines_.find(d.zone);
    if (prev_it == baselines_.end()) {
      if (!first) reading.notes.push_back(label + ": new, counted from the next read");
      next.emplace(d.zone, std::move(now));
      continue;
    }
    const Baseline& prev = prev_it->second;
    std::string implausible;
    uint64_t delta = 0;
    if (prev.name != d.name || prev.max_uj != d.max_energy_range_uj) {
      implausible = "zone changed (was " + prev.name + " with max_energy_range_uj " +
                    std::to_string(prev.max_uj) + ")";
    } else if (cur > d.max_energy_range_uj) {
      implausible = "energy_uj " + std::to_string(cur) + " above max_energy_range_uj " +
                    std::to_string(d.max_energy_range_uj);
    } else {
      delta = cur >= prev.energy_uj ? cur - prev.energy_uj
                                    : (d.max_energy_range_uj - prev.energy_uj) + cur;
      const int64_t elapsed_ms = std::max<int64_t>(now_ms - prev.read_ms, 0);
      // watts * ms = mJ; * 1000 = uJ.
      const double allowed_uj =
          max_package_watts_ * static_cast<double>(elapsed_ms + kSlackMs) * 1000.0;
      if (delta > d.max_energy_range_uj || static_cast<double>(delta) > allowed_uj) {
        implausible = "energy_uj went from " + std::to_string(prev.energy_uj) + " to " +
                      std::to_string(cur) + " in " + std::to_string(elapsed_ms) + " ms (a reset?)";
      }
    }
    if (!implausible.empty()) {
      reading.notes.push_back(label + ": " + implausible + "; baseline restarted");
    } else {
      total_uj_ += delta;
    }
    next.emplace(d.zone, std::move(now));
  }
  // Packages no longer listed (unreadable ones have their note already).
  for (const auto& [zone, b] : baselines_) {
    bool listed = false;
    for (const RaplDomain& d : *domains) listed = listed || d.zone == zone;
    if (!listed) reading.notes.push_back(Label(zone, b.name) + ": disappeared");
  }
  baselines_ = std::move(next);
  if (reading.packages == 0) {
    return Status::Unavailable(kNotAvailable + why_none);
  }
  reading.energy_mj = total_uj_ / 1000;
  return reading;
}

Result<uint64_t> ParseCpuStatUsageUsec(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    line = Trim(line);
    size_t sp = line.find_first_of(" \t");
    if (line.substr(0, sp) != "usage_usec") continue;
    std::string_view value =
        sp == std::string_view::npos ? std::string_view() : Trim(line.substr(sp));
    uint64_t v = 0;
    if (!ParseU64(value, &v)) {
      return Status::InvalidArgument("usage_usec: not a number: " + Quote(value));
    }
    return v;
  }
  return Status::InvalidArgument("no usage_usec line");
}

Result<uint64_t> ReadCgroupCpuUsageUsec(const std::string& cgroup_dir) {
  const std::string acct = (fs::path(cgroup_dir) / "cpuacct.usage").string();
  auto ns = ReadCounter(acct);
  if (ns.ok()) return *ns / 1000;
  if (ns.status().code() != StatusCode::kNotFound) return ns.status();
  const std::string path = (fs::path(cgroup_dir) / "cpu.stat").string();
  auto text = ReadSmall(path, kMaxCpuStatBytes);
  if (!text.ok()) return text.status();
  auto usage = ParseCpuStatUsageUsec(*text);
  if (!usage.ok()) return usage.status().WithContext(path);
  return usage;
}

Result<uint64_t> ReadTaskCpuUsageUsec(const std::vector<std::string>& cgroup_dirs) {
  if (cgroup_dirs.empty()) return Status::NotFound("the task has no cgroup");
  std::string why;
  Status first;
  for (size_t i = 0; i < cgroup_dirs.size(); ++i) {
    auto usage = ReadCgroupCpuUsageUsec(cgroup_dirs[i]);
    if (usage.ok()) return usage;
    if (i == 0) first = usage.status();
    if (!why.empty()) why += "; ";
    why += usage.status().message();
  }
  if (first.code() == StatusCode::kNotFound) return first;
  return Status::FromCode(first.code(), why);
}

}  // namespace rota::host

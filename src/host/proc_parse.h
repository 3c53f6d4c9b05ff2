#pragma once
// Pure parsers for the /proc files the host monitor reads. They take the file text,
// never touch the file system, and reject junk with InvalidArgument (the caller adds
// the file name as context). Thread-safe (no state).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace rota::host {

// CPU time counters of one "cpu" line of /proc/stat, in clock ticks. guest and
// guest_nice are left out: the kernel already counts them in user and nice.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
};

struct ProcStat {
  CpuTimes total;                                    // the "cpu " line
  std::vector<std::pair<uint32_t, CpuTimes>> cores;  // "cpuN" lines, in file order
  std::optional<int64_t> btime_s;                    // boot time, Unix seconds
};

// Parses /proc/stat. REQUIRES a "cpu " line with at least user, nice, system, idle.
Result<ProcStat> ParseProcStat(std::string_view text);

// Busy share of the time between two snapshots, 0..100. A counter that went backwards
// contributes 0 (per-cpu iowait is not monotonic on Linux); no elapsed time gives 0.
double CpuBusyPercent(const CpuTimes& prev, const CpuTimes& cur);

// Ticks the CPUs spent running something: user + nice + system + irq + softirq (not
// idle, iowait or steal, which is time another guest ran). The CPU time that package
// energy is split by (rapl.h).
uint64_t CpuBusyTicks(const CpuTimes& t);

struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;  // <= total_bytes
};

// Parses /proc/meminfo. REQUIRES MemTotal > 0. MemAvailable falls back to
// MemFree + Buffers + Cached (kernels before 3.14); error when those are missing too.
Result<MemInfo> ParseMeminfo(std::string_view text);

struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
};

// Parses /proc/loadavg ("0.01 0.05 0.02 1/87 4272"). Negative or non-finite -> error.
Result<LoadAvg> ParseLoadavg(std::string_view text);

// The fields of /proc/<pid>/stat the monitor uses.
struct PidStat {
  std::string comm;  // between the first '(' and the last ')'
  char state = '?';
  uint64_t flags = 0;        // field 9, PF_* flags
  uint64_t utime_ticks = 0;  // field 14
  uint64_t stime_ticks = 0;  // field 15
  uint64_t start_ticks = 0;  // field 22, clock ticks after boot
  uint64_t rss_pages = 0;    // field 24, resident set size in pages
};

// PF_KTHREAD in PidStat::flags: a kernel thread (no command line).
inline constexpr uint64_t kPfKthread = 0x00200000;

// Parses /proc/<pid>/stat. comm may contain spaces, '(' and ')': fields are read after
// the LAST ')'.
Result<PidStat> ParsePidStat(std::string_view text);

// The resident set size in pages: the second field of /proc/<pid>/statm
// ("size resident shared text lib data dt").
Result<uint64_t> ParseStatmRss(std::string_view text);

// The real uid from the "Uid:" line of /proc/<pid>/status.
Result<uint32_t> ParseStatusUid(std::string_view text);

// The command line from raw /proc/<pid>/cmdline bytes: NUL separators become spaces,
// trailing NULs are dropped. Empty raw text (kernel threads, zombies) gives "[comm]".
// The result is valid UTF-8 of at most max_bytes (see SanitizeText).
std::string FormatCommand(std::string_view raw_cmdline, std::string_view comm, size_t max_bytes);

// The cgroup path from /proc/<pid>/cgroup: a rota task's cgroup ("/rota/..." in
// any hierarchy: on v1 a task without limits is only in cpuacct, while its memory
// cgroup is the agent's); else the v2 line "0::/path" if its path is not "/", else
// the first non-"/" path of the v1 "memory", "cpu" and "name=systemd" hierarchies
// (in that order); "" when everything is "/" or nothing parses.
std::string ParseCgroup(std::string_view text, size_t max_bytes);

// Returns text as valid UTF-8 of at most max_bytes, cut at a character boundary. Bytes
// that are not part of a valid UTF-8 sequence and ASCII control characters become '?'.
std::string SanitizeText(std::string_view text, size_t max_bytes);

}  // namespace rota::host

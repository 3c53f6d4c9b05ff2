#pragma once
// Host monitoring from /proc: static facts about the node, periodic host samples
// (CPU, memory, load) and per-process details for the processes NVML reports on GPUs.
//
// Every reader takes a proc_root so tests can point it at a fake /proc tree. Process
// ids are those of the PID namespace proc_root belongs to: the agent must share the
// host's PID namespace for NVML's pids to match.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/types.h"
#include "common/clock.h"
#include "common/status.h"
#include "host/proc_parse.h"

namespace rota::host {

struct StaticInfo {
  std::string hostname;
  // Addresses of up interfaces, IPv4 first, then IPv6; loopback ones only when there is
  // nothing else. Link-local addresses (169.254/16, fe80::/10) are left out.
  std::vector<std::string> addresses;
  uint32_t cpus = 0;          // online CPUs ("cpuN" lines of <proc_root>/stat)
  uint64_t memory_bytes = 0;  // MemTotal
};

// Reads the hostname (gethostname), the interface addresses (getifaddrs), the online
// CPU count and MemTotal from proc_root. Errors name the file or call that failed.
Result<StaticInfo> ReadStaticInfo(const std::string& proc_root = "/proc");

// One interface address as getifaddrs reports it (the input of SelectAddresses).
struct InterfaceAddress {
  std::string interface;
  bool ipv6 = false;
  std::string text;         // "10.0.0.5", "2001:db8::1"
  bool loopback = false;    // IFF_LOOPBACK, or a loopback address
  bool link_local = false;  // 169.254/16 or fe80::/10
  bool up = true;           // IFF_UP
};

// The address choice of ReadStaticInfo, on its own for tests: up, not link-local,
// IPv4 before IPv6, duplicates removed, order of interfaces otherwise kept; loopback
// addresses only if no other address is left.
std::vector<std::string> SelectAddresses(const std::vector<InterfaceAddress>& all);

// Samples the host and describes GPU processes. Not thread-safe: one caller (the
// agent's sampling loop) owns it. `clock` must outlive the monitor.
class HostMonitor {
 public:
  // How long the cached uid, command and cgroup of a process are trusted.
  static constexpr int64_t kRefreshMs = 60'000;
  static constexpr int kMaxRefreshesPerCall = 16;
  // A new process's slow fields are read once more on the first call this long after
  // they were first read: a process seen just after its exec may not have dropped its
  // privileges yet (sudo, setpriv, runuser), and its uid must not stick for kRefreshMs.
  static constexpr int64_t kConfirmMs = 1000;
  // How long a uid -> user name lookup is trusted.
  static constexpr int64_t kUserRefreshMs = 300'000;

  explicit HostMonitor(std::string proc_root = "/proc", Clock& clock = RealClock::Get());
  HostMonitor(const HostMonitor&) = delete;
  HostMonitor& operator=(const HostMonitor&) = delete;

  // Host CPU (total and per core), memory and load. CPU percentages are busy shares of
  // the /proc/stat tick deltas since the previous successful Sample() (no sleeping);
  // the first call returns the shares since boot. A core that appears later starts from
  // zero. Counters that go backwards count as no time. Error (naming the file) when
  // /proc/stat, meminfo or loadavg cannot be read or parsed; the CPU baseline is then
  // left unchanged. cpu_busy_usec is the "cpu" line's CpuBusyTicks since boot in
  // microseconds; the CPU energy fields are the collector's (agent/collector.h).
  Result<api::HostSample> Sample();

  // Fills the host fields (uid, user, command, exe, start_time_ms, cpu_percent,
  // rss_bytes, cgroup) of each process from <proc_root>/<pid>; other fields are not
  // touched. exe is the target of the <pid>/exe link (the kernel's, as it reads,
  // " (deleted)" included; "" when it cannot be read, e.g. a kernel thread). The
  // same pid may appear several times (one process on several GPUs): all copies get the
  // same values.
  //  - cpu_percent: CPU time (user + system) since the previous Describe that saw the
  //    same process (same pid and start time), over the clock's monotonic time between
  //    the two calls, in % of one core; absent on the first sight or when no time passed.
  //  - A process that is gone (or whose stat cannot be read) has all host fields
  //    unset ("" / nullopt).
  //  - On the real /proc (proc_root "/proc"), CPU time comes from the process's CPU
  //    clock (clock_gettime, no text to format or parse) and RSS from statm, read
  //    through a descriptor kept open per process (re-read with pread: ~3x cheaper than
  //    open/read/close, and a descriptor stays bound to its process, so a reused pid is
  //    never mixed up with its predecessor: its read fails once the process is gone).
  //    stat is read on first sight (start time) and with the slow fields. About 40 %
  //    cheaper than one stat read per process (docs/benchmarks.md). Under another
  //    proc_root (tests' fake trees) stat is kept open and read on every call instead.
  //  - uid, user, command, exe, start time and cgroup are cached per (pid, start time).
  //    uid, command, exe and cgroup are re-read after kRefreshMs (a process may exec or
  //    move), once kConfirmMs after the first read (a process may still be dropping
  //    privileges), or on the next call when the command line was empty for a process
  //    that is not a kernel thread (caught mid-exec); at most kMaxRefreshesPerCall
  //    processes per call. Pids not in this call are forgotten and their descriptors closed.
  void Describe(std::span<api::GpuProcess* const> processes);
  // Describe() over every process of every GPU.
  void Describe(std::vector<api::GpuSample>& gpus);

  // At most this many processes keep their descriptor open; the others are opened
  // on every call. Default: RLIMIT_NOFILE / 4 processes, at most 1024.
  void set_max_open_processes(size_t n) { max_open_processes_ = n; }
  // Number of processes currently cached (for tests).
  size_t cached_processes() const { return procs_.size(); }

 private:
  // The per-process file kept open: /proc/<pid>/statm with the CPU clock, stat
  // without it.
  struct PidFiles {
    PidFiles() = default;
    PidFiles(PidFiles&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
    PidFiles& operator=(PidFiles&& o) noexcept;
    ~PidFiles();
    bool open() const { return fd >= 0; }
    int fd = -1;
  };
  struct Counters {
    uint64_t cpu_ns = 0;
    uint64_t rss_pages = 0;
    std::optional<uint64_t> start_ticks;  // set when read from stat
  };
  struct ProcEntry {
    uint64_t start_ticks = 0;
    std::optional<uint32_t> uid;
    std::string user;
    std::string command;
    std::string exe;
    bool reread_soon = false;  // command line was empty: exec in progress
    std::optional<int64_t> start_time_ms;
    std::string cgroup;
    int64_t read_ms = 0;        // monotonic time uid, command and cgroup were read
    int64_t first_read_ms = 0;  // ... first read (confirmed once read_ms is kConfirmMs later)
    bool cpu_baseline = false;  // cpu_ns and seen_ms are set
    uint64_t cpu_ns = 0;        // CPU time (user + system) at the last Describe
    int64_t seen_ms = 0;        // monotonic time of the last Describe
    uint64_t generation = 0;
    PidFiles files;  // closed when over max_open_processes_
  };
  // What one Describe call computed for a pid.
  struct ProcView {
    bool alive = false;
    const ProcEntry* entry = nullptr;
    std::optional<double> cpu_percent;
    uint64_t rss_bytes = 0;
  };
  struct UserName {
    std::string name;
    int64_t looked_up_ms = 0;
  };

  ProcView Inspect(uint32_t pid, int64_t now_ms, int* refreshes_left);
  // Reads the counters through the kept file (and the CPU clock). Error when the
  // process is gone.
  Result<Counters> ReadCounters(const PidFiles& files, uint32_t pid, const std::string& dir);
  // The counters from a stat just read (CPU time from the process's clock when used).
  Result<Counters> CountersFromStat(const PidStat& stat, uint32_t pid) const;
  // The process's CPU time from its CPU clock; error when it is gone.
  static Result<uint64_t> ProcessCpuNs(uint32_t pid);
  // Reads uid/user, command and cgroup of the process open as dirfd into *e. False if
  // the process is gone.
  bool ReadSlowFields(int dirfd, const std::string& dir, const PidStat& stat, int64_t now_ms,
                      ProcEntry* e);
  void Erase(std::unordered_map<uint32_t, ProcEntry>::iterator it);
  const std::string& UserFor(uint32_t uid, int64_t now_ms);
  std::optional<int64_t> BootTimeS();

  std::string proc_root_;
  bool cpu_clock_;  // proc_root_ is the real /proc: CPU time from process CPU clocks
  Clock& clock_;
  long ticks_per_s_;
  long page_size_;
  size_t max_open_processes_;
  size_t open_processes_ = 0;       // entries whose files are open
  std::optional<int64_t> btime_s_;  // read once: the kernel's value jitters with NTP
  CpuTimes prev_total_;
  std::unordered_map<uint32_t, CpuTimes> prev_cores_;
  std::unordered_map<uint32_t, ProcEntry> procs_;
  std::unordered_map<uint32_t, UserName> users_;
  uint64_t generation_ = 0;
  std::string buf_;  // reused read buffer
};

}  // namespace rota::host

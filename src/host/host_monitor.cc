#include "host/host_monitor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <unordered_set>
#include <utility>

#include "common/log.h"

namespace rota::host {
namespace {

constexpr size_t kMaxProcStatBytes = 16 << 20;   // /proc/stat: intr line grows with IRQs
constexpr size_t kMaxSmallFileBytes = 64 << 10;  // meminfo, loadavg, pid stat/status
constexpr size_t kMaxCgroupFileBytes = 64 << 10;

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string out(dir);
  out += '/';
  out += name;
  return out;
}

// NotFound when the file (or the process it belongs to) is gone, IoError otherwise.
Status ErrnoStatus(const char* verb, std::string_view dir, std::string_view name, int err) {
  std::string msg = std::string(verb) + " " + JoinPath(dir, name) + ": " + std::strerror(err);
  if (err == ENOENT || err == ESRCH) return Status::NotFound(msg);
  return Status::IoError(msg);
}

// Reads at most max_bytes of `name` relative to dirfd into *out, reusing its capacity.
// `dir` is the directory dirfd stands for, to name the file in errors ("" when name is
// absolute).
Status ReadAt(int dirfd, std::string_view dir, const char* name, size_t max_bytes,
              std::string* out) {
  out->clear();
  int fd = ::openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", dir, name, errno);
  Fd closer(fd);
  size_t chunk = 4096;
  while (out->size() < max_bytes) {
    size_t old = out->size();
    size_t want = std::min(chunk, max_bytes - old);
    out->resize(old + want);
    ssize_t n = ::read(fd, out->data() + old, want);
    if (n < 0) {
      out->resize(old);
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", dir, name, errno);
    }
    out->resize(old + static_cast<size_t>(n));
    if (n == 0) break;
    chunk = std::min<size_t>(chunk * 2, 1 << 20);
  }
  return Status::Ok();
}

// Reads at most max_bytes of an open file from offset 0 into *out (/proc files are
// regenerated on each read from 0). `path` names the file in errors.
// Reads the whole file open as fd from offset 0. `dir` and `name` only name it in errors (the
// path is built only then: this runs for every GPU process on every sample).
Status PreadAll(int fd, const std::string& dir, const char* name, size_t max_bytes,
                std::string* out) {
  out->clear();
  char chunk[4096];
  while (out->size() < max_bytes) {
    size_t want = std::min(sizeof(chunk), max_bytes - out->size());
    ssize_t n = ::pread(fd, chunk, want, static_cast<off_t>(out->size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", dir, name, errno);
    }
    out->append(chunk, static_cast<size_t>(n));
    // A short read of a /proc seq file means the whole record was returned.
    if (static_cast<size_t>(n) < want) break;
  }
  return Status::Ok();
}

// Reads and parses <dir>/<name>; errors carry the path.
template <typename Parser>
auto ReadAndParse(const std::string& dir, const char* name, size_t max_bytes, std::string* buf,
                  Parser parse) -> decltype(parse(std::string_view())) {
  std::string path = JoinPath(dir, name);
  Status st = ReadAt(AT_FDCWD, "", path.c_str(), max_bytes, buf);
  if (!st.ok()) return st;
  auto r = parse(std::string_view(*buf));
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

std::string LookupUserName(uint32_t uid) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 16384);
  constexpr size_t kMaxBuf = 1 << 20;
  while (true) {
    struct passwd pw;
    struct passwd* result = nullptr;
    int rc = ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < kMaxBuf) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0 || result == nullptr) return "";
    return SanitizeText(result->pw_name, api::kMaxNameLength);
  }
}

// A quarter of the descriptor limit (2 descriptors per process), at most 1024 processes.
size_t DefaultMaxOpenProcesses() {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 128;
  constexpr rlim_t kCap = 1024;
  return static_cast<size_t>(std::min<rlim_t>(rl.rlim_cur / 4, kCap));
}

}  // namespace

std::vector<std::string> SelectAddresses(const std::vector<InterfaceAddress>& all) {
  std::vector<std::string> chosen, loopback;
  std::unordered_set<std::string> seen;
  for (bool v6 : {false, true}) {
    for (const InterfaceAddress& a : all) {
      if (a.ipv6 != v6 || !a.up || a.link_local || a.text.empty()) continue;
      if (!seen.insert(a.text).second) continue;
      (a.loopback ? loopback : chosen).push_back(a.text);
    }
  }
  return chosen.empty() ? loopback : chosen;
}

Result<StaticInfo> ReadStaticInfo(const std::string& proc_root) {
  StaticInfo info;
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) {
    return Status::IoError(std::string("gethostname: ") + std::strerror(errno));
  }
  info.hostname = SanitizeText(host, api::kMaxNameLength);
  if (info.hostname.empty()) return Status::IoError("gethostname: empty hostname");

  struct ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) != 0) {
    return Status::IoError(std::string("getifaddrs: ") + std::strerror(errno));
  }
  std::vector<InterfaceAddress> all;
  for (struct ifaddrs* i = ifs; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    InterfaceAddress a;
    a.interface = i->ifa_name ? i->ifa_name : "";
    a.up = (i->ifa_flags & IFF_UP) != 0;
    a.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    char text[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET) {
      const auto* sin = reinterpret_cast<const struct sockaddr_in*>(i->ifa_addr);
      uint32_t host_order = ntohl(sin->sin_addr.s_addr);
      a.loopback = a.loopback || (host_order >> 24) == 127;
      a.link_local = (host_order >> 16) == 0xA9FE;  // 169.254/16
      if (::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)) == nullptr) continue;
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const struct sockaddr_in6*>(i->ifa_addr);
      a.ipv6 = true;
      a.loopback = a.loopback || IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
      a.link_local = IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr);
      if (::inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text)) == nullptr) continue;
    } else {
      continue;
    }
    a.text = text;
    all.push_back(std::move(a));
  }
  ::freeifaddrs(ifs);
  info.addresses = SelectAddresses(all);

  std::string buf;
  ASSIGN_OR_RETURN(ProcStat stat,
                   ReadAndParse(proc_root, "stat", kMaxProcStatBytes, &buf,
                                [](std::string_view t) { return ParseProcStat(t); }));
  info.cpus = static_cast<uint32_t>(stat.cores.size());
  if (info.cpus == 0) {
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    info.cpus = n > 0 ? static_cast<uint32_t>(n) : 1;
  }
  ASSIGN_OR_RETURN(MemInfo mem, ReadAndParse(proc_root, "meminfo", kMaxSmallFileBytes, &buf,
                                             [](std::string_view t) { return ParseMeminfo(t); }));
  info.memory_bytes = mem.total_bytes;
  return info;
}

HostMonitor::HostMonitor(std::string proc_root, Clock& clock)
    : proc_root_(std::move(proc_root)),
      cpu_clock_(proc_root_ == "/proc"),
      clock_(clock),
      ticks_per_s_(std::max(1L, ::sysconf(_SC_CLK_TCK))),
      page_size_(std::max(1L, ::sysconf(_SC_PAGESIZE))),
      max_open_processes_(DefaultMaxOpenProcesses()) {
  buf_.reserve(kMaxSmallFileBytes);
}

Result<api::HostSample> HostMonitor::Sample() {
  ASSIGN_OR_RETURN(ProcStat stat,
                   ReadAndParse(proc_root_, "stat", kMaxProcStatBytes, &buf_,
                                [](std::string_view t) { return ParseProcStat(t); }));
  ASSIGN_OR_RETURN(MemInfo mem, ReadAndParse(proc_root_, "meminfo", kMaxSmallFileBytes, &buf_,
                                             [](std::string_view t) { return ParseMeminfo(t); }));
  ASSIGN_OR_RETURN(LoadAvg load, ReadAndParse(proc_root_, "loadavg", kMaxSmallFileBytes, &buf_,
                                              [](std::string_view t) { return ParseLoadavg(t); }));
  if (!btime_s_ && stat.btime_s) btime_s_ = stat.btime_s;

  api::HostSample h;
  h.cpu_percent = CpuBusyPercent(prev_total_, stat.total);
  // Ticks to microseconds, in two parts so that no product can overflow.
  const uint64_t busy = CpuBusyTicks(stat.total), hz = static_cast<uint64_t>(ticks_per_s_);
  h.cpu_busy_usec = busy / hz * 1'000'000 + busy % hz * 1'000'000 / hz;
  prev_total_ = stat.total;
  size_t cores = std::min(stat.cores.size(), api::kMaxCores);
  h.per_core_percent.reserve(cores);
  std::unordered_map<uint32_t, CpuTimes> next_cores;
  next_cores.reserve(cores);
  for (size_t i = 0; i < cores; ++i) {
    const auto& [id, times] = stat.cores[i];
    auto prev = prev_cores_.find(id);
    h.per_core_percent.push_back(
        CpuBusyPercent(prev == prev_cores_.end() ? CpuTimes{} : prev->second, times));
    next_cores[id] = times;
  }
  prev_cores_ = std::move(next_cores);
  h.mem_total_bytes = mem.total_bytes;
  h.mem_available_bytes = mem.available_bytes;
  h.load1 = load.load1;
  h.load5 = load.load5;
  h.load15 = load.load15;
  return h;
}

std::optional<int64_t> HostMonitor::BootTimeS() {
  if (btime_s_) return btime_s_;
  std::string buf;
  auto stat = ReadAndParse(proc_root_, "stat", kMaxProcStatBytes, &buf,
                           [](std::string_view t) { return ParseProcStat(t); });
  if (stat.ok() && stat->btime_s) {
    btime_s_ = stat->btime_s;
  } else {
    ROTA_LOG(WARNING) << "no boot time, process start times unknown: "
                      << (stat.ok() ? "no btime line in " + proc_root_ + "/stat"
                                    : stat.status().message());
  }
  return btime_s_;
}

const std::string& HostMonitor::UserFor(uint32_t uid, int64_t now_ms) {
  auto [it, inserted] = users_.try_emplace(uid);
  if (inserted || now_ms - it->second.looked_up_ms >= kUserRefreshMs) {
    it->second.name = LookupUserName(uid);
    it->second.looked_up_ms = now_ms;
  }
  return it->second.name;
}

HostMonitor::PidFiles& HostMonitor::PidFiles::operator=(PidFiles&& o) noexcept {
  if (this != &o) {
    if (fd >= 0) ::close(fd);
    fd = std::exchange(o.fd, -1);
  }
  return *this;
}

HostMonitor::PidFiles::~PidFiles() {
  if (fd >= 0) ::close(fd);
}

Result<uint64_t> HostMonitor::ProcessCpuNs(uint32_t pid) {
  // The kernel's clock id of a process's CPU clock (CPUCLOCK_SCHED, whole thread
  // group), as glibc's clock_getcpuclockid builds it without its extra check syscall.
  const clockid_t id = static_cast<clockid_t>((~static_cast<clockid_t>(pid)) * 8 + 2);
  timespec ts{};
  if (::clock_gettime(id, &ts) != 0) {
    return Status::NotFound("CPU clock of process " + std::to_string(pid) + ": " +
                            std::strerror(errno));
  }
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

Result<HostMonitor::Counters> HostMonitor::CountersFromStat(const PidStat& stat,
                                                            uint32_t pid) const {
  Counters c;
  c.rss_pages = stat.rss_pages;
  c.start_ticks = stat.start_ticks;
  if (cpu_clock_) {
    ASSIGN_OR_RETURN(c.cpu_ns, ProcessCpuNs(pid));
  } else {
    c.cpu_ns = (stat.utime_ticks + stat.stime_ticks) * 1'000'000'000u /
               static_cast<uint64_t>(ticks_per_s_);
  }
  return c;
}

Result<HostMonitor::Counters> HostMonitor::ReadCounters(const PidFiles& files, uint32_t pid,
                                                        const std::string& dir) {
  if (!cpu_clock_) {
    RETURN_IF_ERROR(PreadAll(files.fd, dir, "stat", kMaxSmallFileBytes, &buf_));
    auto stat = ParsePidStat(buf_);
    if (!stat.ok()) return stat.status().WithContext(JoinPath(dir, "stat"));
    return CountersFromStat(*stat, pid);
  }
  // The statm read fails once this process is gone (the descriptor is bound to it),
  // so the pid's CPU clock read right after is this process's.
  RETURN_IF_ERROR(PreadAll(files.fd, dir, "statm", kMaxSmallFileBytes, &buf_));
  auto rss = ParseStatmRss(buf_);
  if (!rss.ok()) return rss.status().WithContext(JoinPath(dir, "statm"));
  Counters c;
  c.rss_pages = *rss;
  ASSIGN_OR_RETURN(c.cpu_ns, ProcessCpuNs(pid));
  return c;
}

bool HostMonitor::ReadSlowFields(int dirfd, const std::string& dir, const PidStat& stat,
                                 int64_t now_ms, ProcEntry* e) {
  Status st = ReadAt(dirfd, dir, "status", kMaxSmallFileBytes, &buf_);
  if (st.code() == StatusCode::kNotFound) return false;
  auto uid = st.ok() ? ParseStatusUid(buf_) : Result<uint32_t>(st);
  if (uid.ok()) {
    e->uid = *uid;
    e->user = UserFor(*uid, now_ms);
  } else {
    ROTA_LOG(DEBUG) << dir << "/status: " << uid.status().message();
    e->uid.reset();
    e->user.clear();
  }
  // 3 bytes more than kept, so that a UTF-8 character across the cap is seen whole.
  st = ReadAt(dirfd, dir, "cmdline", api::kMaxTextLength + 3, &buf_);
  if (st.code() == StatusCode::kNotFound) return false;
  std::string_view raw = st.ok() ? std::string_view(buf_) : std::string_view();
  e->reread_soon = raw.find_first_not_of('\0') == std::string_view::npos &&
                   (stat.flags & kPfKthread) == 0 && stat.state != 'Z';
  e->command = FormatCommand(raw, stat.comm, api::kMaxTextLength);
  // The executable, which enforcement's exemptions match (argv[0] is the process's
  // choice). Unreadable (kernel thread, gone) leaves it unknown.
  char exe[PATH_MAX];
  const ssize_t n = ::readlinkat(dirfd, "exe", exe, sizeof exe);
  e->exe = n > 0 && static_cast<size_t>(n) < sizeof exe
               ? SanitizeText(std::string_view(exe, static_cast<size_t>(n)), api::kMaxTextLength)
               : "";
  // No cgroup file (kernel without cgroups) is not a sign that the process is gone.
  st = ReadAt(dirfd, dir, "cgroup", kMaxCgroupFileBytes, &buf_);
  e->cgroup = st.ok() ? ParseCgroup(buf_, api::kMaxTextLength) : "";
  e->read_ms = now_ms;
  return true;
}

void HostMonitor::Erase(std::unordered_map<uint32_t, ProcEntry>::iterator it) {
  if (it->second.files.open()) --open_processes_;
  procs_.erase(it);
}

HostMonitor::ProcView HostMonitor::Inspect(uint32_t pid, int64_t now_ms, int* refreshes_left) {
  if (pid == 0) return {};
  std::string dir = proc_root_ + "/" + std::to_string(pid);
  std::optional<Counters> counters;
  auto it = procs_.find(pid);
  // Fast path: the descriptors kept open for this process.
  if (it != procs_.end() && it->second.files.open()) {
    auto c = ReadCounters(it->second.files, pid, dir);
    if (c.ok() && c->start_ticks.value_or(it->second.start_ticks) == it->second.start_ticks) {
      counters = std::move(c).value();
    } else {
      // That process is gone (ESRCH); the pid may already belong to a new one.
      Erase(it);
      it = procs_.end();
    }
  }
  bool refresh = it != procs_.end() && *refreshes_left > 0 &&
                 (it->second.reread_soon || now_ms - it->second.read_ms >= kRefreshMs ||
                  (it->second.read_ms - it->second.first_read_ms < kConfirmMs &&
                   now_ms - it->second.first_read_ms >= kConfirmMs));
  if (!counters || refresh) {
    // One directory handle for all reads: if the pid is reused meanwhile, openat fails
    // instead of reading the new process.
    Fd dirfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    Fd stat_fd(dirfd.get() >= 0 ? ::openat(dirfd.get(), "stat", O_RDONLY | O_CLOEXEC) : -1);
    Result<PidStat> stat = Status::NotFound(dir);
    if (stat_fd.get() >= 0) {
      Status read = PreadAll(stat_fd.get(), dir, "stat", kMaxSmallFileBytes, &buf_);
      stat = read.ok() ? ParsePidStat(buf_) : Result<PidStat>(read);
    }
    auto c = stat.ok() ? CountersFromStat(*stat, pid) : Result<Counters>(stat.status());
    if (!c.ok()) {
      ROTA_LOG(DEBUG) << "process " << pid << " looks gone: " << c.status().message();
      if (it != procs_.end()) Erase(it);
      return {};
    }
    if (it != procs_.end() && it->second.start_ticks != stat->start_ticks) {
      Erase(it);  // the pid now belongs to another process
      it = procs_.end();
    }
    if (it == procs_.end()) {
      ProcEntry e;
      e.start_ticks = stat->start_ticks;
      if (std::optional<int64_t> btime = BootTimeS()) {
        e.start_time_ms = *btime * 1000 + static_cast<int64_t>(stat->start_ticks * 1000 /
                                                               static_cast<uint64_t>(ticks_per_s_));
      }
      if (!ReadSlowFields(dirfd.get(), dir, *stat, now_ms, &e)) return {};
      e.first_read_ms = now_ms;
      it = procs_.emplace(pid, std::move(e)).first;
    } else if (refresh) {
      --*refreshes_left;
      if (!ReadSlowFields(dirfd.get(), dir, *stat, now_ms, &it->second)) {
        Erase(it);
        return {};
      }
    }
    if (!it->second.files.open() && open_processes_ < max_open_processes_) {
      PidFiles kept;
      kept.fd = cpu_clock_ ? ::openat(dirfd.get(), "statm", O_RDONLY | O_CLOEXEC)
                           : stat_fd.release();
      if (kept.open()) {
        it->second.files = std::move(kept);
        ++open_processes_;
      }
    }
    counters = std::move(c).value();
  }

  ProcEntry& e = it->second;
  ProcView v;
  v.alive = true;
  v.entry = &e;
  v.rss_bytes = counters->rss_pages * static_cast<uint64_t>(page_size_);
  const uint64_t cpu_ns = counters->cpu_ns;
  if (!e.cpu_baseline || now_ms > e.seen_ms) {
    if (e.cpu_baseline) {
      uint64_t delta = cpu_ns > e.cpu_ns ? cpu_ns - e.cpu_ns : 0;
      double cpu_s = static_cast<double>(delta) / 1e9;
      double wall_s = static_cast<double>(now_ms - e.seen_ms) / 1000.0;
      v.cpu_percent = 100.0 * cpu_s / wall_s;
    }
    e.cpu_ns = cpu_ns;
    e.seen_ms = now_ms;
    e.cpu_baseline = true;
  }
  e.generation = generation_;
  return v;
}

void HostMonitor::Describe(std::span<api::GpuProcess* const> processes) {
  ++generation_;
  int64_t now_ms = clock_.MonotonicMs();
  int refreshes_left = kMaxRefreshesPerCall;
  std::unordered_map<uint32_t, ProcView> views;
  views.reserve(processes.size());
  for (api::GpuProcess* p : processes) {
    if (p == nullptr) continue;
    auto [vit, inserted] = views.try_emplace(p->pid);
    if (inserted) vit->second = Inspect(p->pid, now_ms, &refreshes_left);
    const ProcView& v = vit->second;
    if (!v.alive) {
      p->uid.reset();
      p->user.clear();
      p->command.clear();
      p->exe.clear();
      p->start_time_ms.reset();
      p->cpu_percent.reset();
      p->rss_bytes.reset();
      p->cgroup.clear();
      continue;
    }
    const ProcEntry& e = *v.entry;
    p->uid = e.uid;
    p->user = e.user;
    p->command = e.command;
    p->exe = e.exe;
    p->start_time_ms = e.start_time_ms;
    p->cpu_percent = v.cpu_percent;
    p->rss_bytes = v.rss_bytes;
    p->cgroup = e.cgroup;
  }
  for (auto it = procs_.begin(); it != procs_.end();) {
    auto next = std::next(it);
    if (it->second.generation != generation_) Erase(it);
    it = next;
  }
}

void HostMonitor::Describe(std::vector<api::GpuSample>& gpus) {
  std::vector<api::GpuProcess*> all;
  for (api::GpuSample& g : gpus) {
    for (api::GpuProcess& p : g.processes) all.push_back(&p);
  }
  Describe(std::span<api::GpuProcess* const>(all));
}

}  // namespace rota::host

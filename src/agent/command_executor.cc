#include "agent/command_executor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <utmpx.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/time_util.h"
#include "host/proc_parse.h"

namespace rota::agent {
namespace {

constexpr size_t kMaxProcFileBytes = 64 * 1024;
constexpr size_t kMaxUtmpBytes = 4 << 20;
constexpr char kHeader[] = "Message from rota (GPU reservation enforcement) at ";

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Errno(int err) { return std::strerror(err); }

// Reads file `name` of the process directory `dirfd`; errno-carrying failure.
Result<std::string> ReadAt(int dirfd, const char* name, int* err) {
  Fd fd(::openat(dirfd, name, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    *err = errno;
    return Status::IoError(std::string(name) + ": " + Errno(errno));
  }
  std::string out;
  char buf[4096];
  while (out.size() < kMaxProcFileBytes) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = errno;
      return Status::IoError(std::string(name) + ": " + Errno(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// tty_nr (field 7) of /proc/<pid>/stat: fields are counted after the last ')'.
uint64_t ParseTtyNr(std::string_view stat) {
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return 0;
  std::string_view rest = stat.substr(close + 1);
  for (int field = 3; field <= 7; ++field) {
    size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) return 0;
    rest.remove_prefix(start);
    size_t end = rest.find(' ');
    std::string_view tok = rest.substr(0, end);
    if (field == 7) {
      uint64_t v = 0;
      for (char c : tok) {
        if (c < '0' || c > '9') return 0;  // negative or junk: no terminal
        v = v * 10 + static_cast<uint64_t>(c - '0');
        if (v > 0xFFFFFFFFu) return 0;
      }
      return v;
    }
    if (end == std::string_view::npos) return 0;
    rest.remove_prefix(end);
  }
  return 0;
}

// The kernel encodes tty_nr with new_encode_dev().
unsigned TtyMajor(uint64_t tty_nr) { return static_cast<unsigned>((tty_nr >> 8) & 0xfff); }
unsigned TtyMinor(uint64_t tty_nr) {
  return static_cast<unsigned>((tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00));
}

// What /proc says about a target that passed the checks.
struct Verified {
  uint64_t tty_nr = 0;  // 0: no controlling terminal
};

api::TargetResult Outcome(uint32_t pid, api::TargetOutcome o, std::string detail) {
  return api::TargetResult{pid, o, std::move(detail)};
}

// Checks that `t` still names the process the server saw: alive, not a zombie, same
// start time (±tolerance) and real uid == uid. nullopt when it does; else the result.
std::optional<api::TargetResult> Verify(const api::CommandTarget& t, uint32_t uid,
                                        std::optional<int64_t> btime_s, long ticks_per_s,
                                        Verified* out) {
  const std::string dir = "/proc/" + std::to_string(t.pid);
  Fd dirfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dirfd.get() < 0) {
    if (errno == ENOENT || errno == ESRCH) {
      return Outcome(t.pid, api::TargetOutcome::kGone, "no process " + std::to_string(t.pid));
    }
    return Outcome(t.pid, api::TargetOutcome::kError, dir + ": " + Errno(errno));
  }
  int err = 0;
  auto stat_text = ReadAt(dirfd.get(), "stat", &err);
  if (!stat_text.ok()) {
    if (err == ENOENT || err == ESRCH) {
      return Outcome(t.pid, api::TargetOutcome::kGone, "process " + std::to_string(t.pid) + " exited");
    }
    return Outcome(t.pid, api::TargetOutcome::kError, dir + "/" + stat_text.status().message());
  }
  auto stat = host::ParsePidStat(*stat_text);
  if (!stat.ok()) {
    return Outcome(t.pid, api::TargetOutcome::kError, dir + "/stat: " + stat.status().message());
  }
  if (stat->state == 'Z' || stat->state == 'X') {
    return Outcome(t.pid, api::TargetOutcome::kGone,
                   "process " + std::to_string(t.pid) + " exited (zombie)");
  }
  if (!btime_s) {
    return Outcome(t.pid, api::TargetOutcome::kError, "boot time unknown: cannot check the start time");
  }
  // The same formula as host::HostMonitor (GpuProcess::start_time_ms).
  int64_t start_ms = *btime_s * 1000 +
                     static_cast<int64_t>(stat->start_ticks * 1000 / static_cast<uint64_t>(ticks_per_s));
  if (std::llabs(start_ms - t.start_time_ms) > CommandExecutor::kStartTimeToleranceMs) {
    return Outcome(t.pid, api::TargetOutcome::kMismatch,
                   "pid " + std::to_string(t.pid) + " started at " + FormatRfc3339Ms(start_ms) +
                       ", not " + FormatRfc3339Ms(t.start_time_ms) + ": another process now");
  }
  auto status_text = ReadAt(dirfd.get(), "status", &err);
  if (!status_text.ok()) {
    if (err == ENOENT || err == ESRCH) {
      return Outcome(t.pid, api::TargetOutcome::kGone, "process " + std::to_string(t.pid) + " exited");
    }
    return Outcome(t.pid, api::TargetOutcome::kError, dir + "/" + status_text.status().message());
  }
  auto real_uid = host::ParseStatusUid(*status_text);
  if (!real_uid.ok()) {
    return Outcome(t.pid, api::TargetOutcome::kError, dir + "/status: " + real_uid.status().message());
  }
  if (*real_uid != uid) {
    return Outcome(t.pid, api::TargetOutcome::kMismatch,
                   "pid " + std::to_string(t.pid) + " belongs to uid " + std::to_string(*real_uid) +
                       ", not " + std::to_string(uid));
  }
  out->tty_nr = ParseTtyNr(*stat_text);
  return std::nullopt;
}

// A pidfd for `pid`, or -1 when the kernel has none (then kill() is used). *gone is
// set when the process does not exist.
int OpenPidfd(uint32_t pid, bool* gone) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
  if (fd >= 0) return static_cast<int>(fd);
  *gone = errno == ESRCH;
#else
  (void)pid;
  *gone = false;
#endif
  return -1;
}

int SendSignal(int pidfd, uint32_t pid, int sig) {
#ifdef SYS_pidfd_send_signal
  if (pidfd >= 0) return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
#else
  (void)pidfd;
#endif
  return ::kill(static_cast<pid_t>(pid), sig);
}

// The device path of a controlling terminal: the target's fd 0..2 when one of them is
// that terminal, else the conventional name of its device number (/dev/pts/N, /dev/ttyN).
std::optional<std::string> TerminalPath(uint32_t pid, uint64_t tty_nr) {
  std::vector<std::string> candidates;
  for (int fd = 0; fd <= 2; ++fd) {
    std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
    char buf[256];
    ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0) continue;
    std::string target(buf, static_cast<size_t>(n));
    if (target.rfind("/dev/", 0) == 0) candidates.push_back(target);
  }
  unsigned maj = TtyMajor(tty_nr), min = TtyMinor(tty_nr);
  if (maj >= 136 && maj <= 143) candidates.push_back("/dev/pts/" + std::to_string((maj - 136) * 256 + min));
  if (maj == 4 && min < 64) candidates.push_back("/dev/tty" + std::to_string(min));
  for (const auto& path : candidates) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && ::major(st.st_rdev) == maj &&
        ::minor(st.st_rdev) == min) {
      return path;
    }
  }
  return std::nullopt;
}

// Terminal paths of `user`'s login sessions (USER_PROCESS records) in the utmp file.
// The file is read directly rather than with getutxent(): that keeps global state and
// takes its lock with alarm(), neither of which suits a multi-threaded agent.
std::vector<std::string> UtmpTerminals(const std::string& utmp_path, const std::string& user) {
  std::vector<std::string> out;
  if (user.empty()) return out;
  auto data = ReadFile(utmp_path);
  if (!data.ok()) {
    if (data.status().code() != StatusCode::kNotFound) {
      ROTA_LOG(WARNING) << "cannot read " << utmp_path << ": " << data.status().message();
    }
    return out;
  }
  size_t n = std::min(data->size(), kMaxUtmpBytes) / sizeof(struct utmpx);
  for (size_t i = 0; i < n; ++i) {
    struct utmpx u;
    std::memcpy(&u, data->data() + i * sizeof(u), sizeof(u));
    if (u.ut_type != USER_PROCESS) continue;
    std::string name(u.ut_user, ::strnlen(u.ut_user, sizeof(u.ut_user)));
    std::string line(u.ut_line, ::strnlen(u.ut_line, sizeof(u.ut_line)));
    if (name != user || line.empty() || line[0] == '/' || line.find("..") != std::string::npos) continue;
    out.push_back("/dev/" + line);
  }
  return out;
}

// Writes `text` to terminal `path` if it is a tty owned by `uid`. OK when all of it
// was written; else why not.
Status WriteToTerminal(const std::string& path, uint32_t uid, const std::string& text) {
  if (path.rfind("/dev/", 0) != 0 || path.find("..") != std::string::npos) {
    return Status::InvalidArgument("not a device path");
  }
  Fd fd(::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return Status::IoError("cannot open: " + Errno(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::IoError("fstat: " + Errno(errno));
  if (!S_ISCHR(st.st_mode) || !::isatty(fd.get())) return Status::InvalidArgument("not a terminal");
  if (st.st_uid != uid) {
    return Status::PermissionDenied("owned by uid " + std::to_string(st.st_uid) + ", not " +
                                    std::to_string(uid));
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Status::Unavailable("terminal is not accepting output (wrote " + std::to_string(done) + " of " +
                                 std::to_string(text.size()) + " bytes)");
    }
    if (n < 0) return Status::IoError("write: " + Errno(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::string LocalTime() {
  std::time_t now = static_cast<std::time_t>(RealClock::Get().NowMs() / 1000);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", &tm);
  return std::string(buf, n);
}

// The header and the message, with "\r\n" line ends so that a terminal in raw mode
// shows it too.
std::string FormatWarning(const std::string& message) {
  std::string body = TerminalSafeText(message);
  std::string out = "\r\n" + std::string(kHeader) + LocalTime() + ":\r\n";
  for (char c : body) {
    if (c == '\n') out += '\r';
    out += c;
  }
  if (body.empty() || body.back() != '\n') out += "\r\n";
  return out;
}

}  // namespace

std::string TerminalSafeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b >= 0x20 ? b != 0x7f : (b == '\n' || b == '\t')) out += static_cast<char>(b);
      ++i;
      continue;
    }
    // A UTF-8 sequence: length from the lead byte, range of the second byte (no overlong
    // forms, no surrogates, nothing above U+10FFFF).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    bool valid = len > 0 && i + len <= text.size();
    for (size_t k = 1; valid && k < len; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      valid = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    }
    if (!valid) {
      ++i;  // drop the stray byte
      continue;
    }
    // U+0080..U+009F (C1 controls) are C2 80..C2 9F.
    bool c1 = b == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (!c1) out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

namespace {

std::optional<int64_t> ReadBootTimeS() {
  auto text = ReadFile("/proc/stat");
  if (!text.ok()) return std::nullopt;
  auto stat = host::ParseProcStat(*text);
  return stat.ok() ? stat->btime_s : std::nullopt;
}

}  // namespace

CommandExecutor::CommandExecutor(std::string utmp_path, uint32_t min_uid)
    : utmp_path_(std::move(utmp_path)),
      min_uid_(min_uid),
      ticks_per_s_(std::max(1L, ::sysconf(_SC_CLK_TCK))),
      btime_s_(ReadBootTimeS()) {
  if (!btime_s_) ROTA_LOG(WARNING) << "no boot time in /proc/stat: commands cannot check start times";
}

api::CommandResultMsg CommandExecutor::Execute(const api::CommandMsg& cmd) const {
  if (Status st = api::ValidateCommand(cmd); !st.ok()) {
    api::CommandResultMsg r;
    r.id = cmd.id;
    r.error = "invalid command: " + st.message();
    return r;
  }
  return cmd.action == api::CommandAction::kSignal ? Signal(cmd) : Warn(cmd);
}

std::vector<api::TargetResult> CommandExecutor::DenySystemUid(const api::CommandMsg& cmd) const {
  std::vector<api::TargetResult> out;
  for (const api::CommandTarget& t : cmd.targets) {
    out.push_back(Outcome(t.pid, api::TargetOutcome::kDenied,
                          "uid " + std::to_string(cmd.uid) + " is below --enforcement-min-uid " +
                              std::to_string(min_uid_) + " (root or a system account): never touched"));
  }
  ROTA_LOG(WARNING) << "command " << cmd.id << ": refused: uid " << cmd.uid << " is below "
                    << min_uid_ << " (root or a system account)";
  return out;
}

api::CommandResultMsg CommandExecutor::Signal(const api::CommandMsg& cmd) const {
  api::CommandResultMsg r;
  r.id = cmd.id;
  if (cmd.uid < min_uid_) {
    r.outcomes = DenySystemUid(cmd);
    return r;
  }
  const int sig = cmd.signal == api::CommandSignal::kKill ? SIGKILL : SIGTERM;
  const std::string sig_name = std::string("SIG") + api::CommandSignalName(cmd.signal);
  for (const api::CommandTarget& t : cmd.targets) {
    if (t.pid == 1 || static_cast<pid_t>(t.pid) == ::getpid()) {
      r.outcomes.push_back(Outcome(t.pid, api::TargetOutcome::kDenied,
                                   t.pid == 1 ? "refusing to signal pid 1" : "refusing to signal the agent"));
      continue;
    }
    bool gone = false;
    Fd pidfd(OpenPidfd(t.pid, &gone));
    if (gone) {
      r.outcomes.push_back(Outcome(t.pid, api::TargetOutcome::kGone, "no process " + std::to_string(t.pid)));
      continue;
    }
    Verified v;
    if (auto failed = Verify(t, cmd.uid, btime_s_, ticks_per_s_, &v)) {
      r.outcomes.push_back(std::move(*failed));
      continue;
    }
    if (SendSignal(pidfd.get(), t.pid, sig) != 0) {
      int err = errno;
      api::TargetOutcome o = err == ESRCH   ? api::TargetOutcome::kGone
                             : err == EPERM ? api::TargetOutcome::kDenied
                                            : api::TargetOutcome::kError;
      r.outcomes.push_back(Outcome(t.pid, o, sig_name + " to pid " + std::to_string(t.pid) + ": " + Errno(err)));
      continue;
    }
    ROTA_LOG(INFO) << "command " << cmd.id << ": sent " << sig_name << " to pid " << t.pid << " (uid "
                   << cmd.uid << ", gpu " << t.gpu << ")";
    r.outcomes.push_back(Outcome(t.pid, api::TargetOutcome::kSignalled, sig_name + " sent"));
  }
  return r;
}

api::CommandResultMsg CommandExecutor::Warn(const api::CommandMsg& cmd) const {
  api::CommandResultMsg r;
  r.id = cmd.id;
  if (cmd.uid < min_uid_) {
    r.outcomes = DenySystemUid(cmd);
    return r;
  }
  std::vector<std::string> paths;
  for (const api::CommandTarget& t : cmd.targets) {
    Verified v;
    if (auto failed = Verify(t, cmd.uid, btime_s_, ticks_per_s_, &v)) {
      r.outcomes.push_back(std::move(*failed));
      continue;
    }
    if (v.tty_nr == 0) continue;
    if (auto path = TerminalPath(t.pid, v.tty_nr)) paths.push_back(*path);
  }
  for (auto& p : UtmpTerminals(utmp_path_, cmd.user)) paths.push_back(std::move(p));

  const std::string text = FormatWarning(cmd.message);
  std::set<std::string> seen;
  for (const auto& path : paths) {
    if (!seen.insert(path).second) continue;
    if (r.terminals.size() >= api::kMaxCommandTerminals) break;
    if (path.size() > api::kMaxTerminalPathBytes) continue;
    Status st = WriteToTerminal(path, cmd.uid, text);
    if (st.ok()) {
      r.terminals.push_back(path);
    } else {
      ROTA_LOG(INFO) << "command " << cmd.id << ": not warning on " << path << ": " << st.message();
    }
  }
  ROTA_LOG(INFO) << "command " << cmd.id << ": warned uid " << cmd.uid << " on " << r.terminals.size()
                 << " terminal(s)";
  return r;
}

}  // namespace rota::agent

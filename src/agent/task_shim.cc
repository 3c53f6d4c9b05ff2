#include "agent/task_shim.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "agent/task_cgroup.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/process.h"

namespace rota::agent {
namespace {

using api::Json;

// Where the child failed before exec (reported through the pipe).
enum Stage : int { kStageGroups = 1, kStageGid, kStageUid, kStageRoot, kStageChdir, kStageExec, kStageCgroup };

const char* StageName(int stage) {
  switch (stage) {
    case kStageGroups: return "setting supplementary groups";
    case kStageGid: return "setgid";
    case kStageUid: return "setuid";
    case kStageRoot: return "refusing to run as root";
    case kStageChdir: return "changing to the working directory";
    case kStageExec: return "starting the command";
    case kStageCgroup: return "joining the task's cgroup";
  }
  return "starting";
}

// One line on stderr (the shim's log, shim.log). Plain write(2): the shim links no
// iostreams, whose start-up every task start would pay for.
void Complain(const std::string& what) {
  const std::string line = "rota task-shim: " + what + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

int64_t NowMs() { return RealClock::Get().NowMs(); }

// A log only its owner (and root) can read: 0600, owned by the task's user. The
// agent reads it as root for `rota logs`.
Result<int> OpenLog(const std::string& path, const ShimSpec& s) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  ::fchmod(fd, 0600);  // whatever the umask, or an older agent, made it
  if (s.uid && ::fchown(fd, *s.uid, s.gid.value_or(static_cast<gid_t>(-1))) != 0) {
    // Not fatal: the agent reads the logs; the user just cannot read them on the node.
  }
  return fd;
}

// What the task's process needs between the fork and exec, all prepared by the
// shim beforehand.
struct ChildPlan {
  std::vector<std::string> env_strings, argv;
  std::vector<char*> envp, args;          // null-terminated views of the above
  std::vector<std::string> candidates;    // argv[0] resolved against the task's PATH
  std::vector<std::string> join_files;  // written before exec: JoinFile of each cgroup
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // none: cleared
  std::string workdir;
  std::vector<int> ignore_signals;  // set to SIG_IGN after the reset
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  int error_fd = -1;  // where a failure before exec is reported (stage, errno)
};

// The child of vfork: it shares the shim's memory until exec, so it only makes
// system calls on the prepared plan, writes nothing but the error pipe, and
// leaves by execve or _exit. set*id go straight to the kernel (no libc
// bookkeeping in shared memory; the child is the only thread). Its signal
// dispositions and mask are its own (vfork does not share them). Not inlined:
// its locals live in a frame of their own below the shim's, never in stack
// slots the shim uses after vfork returns.
//
// `join_cgroups`: false when the child was created inside its cgroup (CloneIntoCgroup).
[[noreturn]] [[gnu::noinline]] void ExecTask(const ChildPlan& p, bool join_cgroups) {
  auto fail = [&p](int stage) {
    int msg[2] = {stage, errno};
    ssize_t ignored = ::write(p.error_fd, msg, sizeof msg);
    (void)ignored;
    ::_exit(127);
  };
  ::setpgid(0, 0);
  ResetSignalsInChild();
  for (int sig : p.ignore_signals) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(sig, &ign, nullptr);
  }
  ::dup2(p.stdin_fd, STDIN_FILENO);
  ::dup2(p.stdout_fd, STDOUT_FILENO);
  ::dup2(p.stderr_fd, STDERR_FILENO);
  for (size_t i = 0; join_cgroups && i < p.join_files.size(); ++i) {
    // "0": the writing thread (the child's only one)
    int fd = ::open(p.join_files[i].c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) fail(kStageCgroup);
    ::close(fd);
  }
  if (p.switch_user) {
    if (::syscall(SYS_setgroups, p.groups.size(), p.groups.data()) != 0) fail(kStageGroups);
    if (::syscall(SYS_setgid, p.gid) != 0) fail(kStageGid);
    if (::syscall(SYS_setuid, p.uid) != 0) fail(kStageUid);
    if (::getuid() == 0 || ::geteuid() == 0) fail(kStageRoot);
  }
  if (!p.workdir.empty() && ::chdir(p.workdir.c_str()) != 0) fail(kStageChdir);
  int last = ENOENT;
  for (const auto& c : p.candidates) {
    ::execve(c.c_str(), p.args.data(), p.envp.data());
    if (errno != ENOENT && errno != ENOTDIR) last = errno;
  }
  errno = last;
  fail(kStageExec);
  ::_exit(127);  // not reached
}

// The file the child writes "0" to, to join the cgroup `dir`. On v1 it is `tasks`: it
// moves the calling thread only, and the child of vfork is a process of one thread, so
// that is the whole process. A thread that moves itself is the kernel's shortcut in
// cgroup_procs_write_start: no write lock of cgroup_threadgroup_rwsem, which
// `cgroup.procs` takes and whose first taker after a quiet spell waits for an RCU grace
// period (median 3-5 ms against 0.5 ms through `tasks`, on the 2-core VM of the
// benchmarks with both cores busy; Linux 6.18). On v2 (where the
// clone into the cgroup was refused) it is `cgroup.procs`: v2's `cgroup.threads` is
// only for threaded cgroups.
// 1 or 2: the version of the cgroup hierarchy `dir` is in (2 when it is neither).
int CgroupVersion(const std::string& dir) {
  constexpr long kCgroup1Magic = 0x27e0eb;  // CGROUP_SUPER_MAGIC
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == kCgroup1Magic ? 1 : 2;
}

std::string JoinFile(const std::string& dir, int version) {
  return dir + (version == 1 ? "/tasks" : "/cgroup.procs");
}

// The one v2 cgroup directory of a task, opened for clone3's CLONE_INTO_CGROUP; -1 when
// it has v1 cgroups (they cannot be entered at clone), none, or it cannot be opened.
int OpenCgroup2(const std::vector<std::string>& cgroups, const std::vector<int>& versions) {
  if (cgroups.size() != 1 || versions[0] != 2) return -1;
  return ::open(cgroups[0].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

// Starts the child directly inside the cgroup `cgroup_fd` (clone3 with
// CLONE_INTO_CGROUP, Linux >= 5.7). A process that joins its cgroup after the fork
// (a write to cgroup.procs) waits for an RCU grace period on the kernel's
// cgroup_threadgroup_rwsem: 12 ms on a 2-core VM, ~20 ms on a 16-core server. One
// created in it takes no such lock. CLONE_VFORK without CLONE_VM: the child has its own
// copy of the (small, static) shim's memory, so it returns from the system call like a
// forked child, and the shim still resumes only once the child has exec'd or failed.
// Returns the pid in the parent, 0 in the child, -1 (errno set) when the kernel cannot.
pid_t CloneIntoCgroup(int cgroup_fd) {
#ifdef SYS_clone3
  struct CloneArgs {  // struct clone_args of linux/sched.h, version 2 (with cgroup)
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
  } args{};
  constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;
  args.flags = CLONE_VFORK | kCloneIntoCgroup;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cgroup_fd);
  return static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
#else
  (void)cgroup_fd;
  errno = ENOSYS;
  return -1;
#endif
}

// The task's process: created in its cgroup when `cgroup_fd` >= 0 and the kernel can,
// else by vfork, joining its cgroups before exec. The pid, or -1 (errno set).
[[gnu::noinline]] pid_t SpawnTask(const ChildPlan& plan, int cgroup_fd) {
  if (cgroup_fd >= 0) {
    const pid_t pid = CloneIntoCgroup(cgroup_fd);
    if (pid == 0) ExecTask(plan, /*join_cgroups=*/false);
    if (pid > 0) return pid;
  }
  const pid_t pid = ::vfork();
  if (pid == 0) ExecTask(plan, /*join_cgroups=*/true);
  return pid;
}

}  // namespace

Json ToJson(const ShimSpec& s) {
  Json j{{"argv", s.argv},       {"env", s.env},
         {"workdir", s.workdir}, {"user", s.user},
         {"stdout", s.stdout_path}, {"stderr", s.stderr_path},
         {"pid_file", s.pid_path}, {"status_file", s.status_path}};
  if (s.uid) j["uid"] = *s.uid;
  if (s.gid) j["gid"] = *s.gid;
  if (!s.groups.empty()) j["groups"] = s.groups;
  if (!s.cgroups.empty()) j["cgroups"] = s.cgroups;
  if (!s.ignore_signals.empty()) j["ignore_signals"] = s.ignore_signals;
  if (!s.env_files.empty()) j["env_files"] = s.env_files;
  if (!s.secrets_dir.empty()) j["secrets_dir"] = s.secrets_dir;
  return j;
}

Result<ShimSpec> ShimSpecFromJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("task spec: must be an object");
  ShimSpec s;
  try {
    s.argv = j.at("argv").get<std::vector<std::string>>();
    s.env = j.value("env", std::map<std::string, std::string>{});
    s.workdir = j.value("workdir", "");
    s.user = j.value("user", "");
    s.stdout_path = j.at("stdout").get<std::string>();
    s.stderr_path = j.at("stderr").get<std::string>();
    s.pid_path = j.at("pid_file").get<std::string>();
    s.status_path = j.at("status_file").get<std::string>();
    if (j.contains("uid")) s.uid = j["uid"].get<uint32_t>();
    if (j.contains("gid")) s.gid = j["gid"].get<uint32_t>();
    s.groups = j.value("groups", std::vector<uint32_t>{});
    s.cgroups = j.value("cgroups", std::vector<std::string>{});
    s.ignore_signals = j.value("ignore_signals", std::vector<int>{});
    s.env_files = j.value("env_files", std::map<std::string, std::string>{});
    s.secrets_dir = j.value("secrets_dir", "");
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("task spec: ") + e.what());
  }
  if (s.argv.empty() || s.argv[0].empty()) return Status::InvalidArgument("task spec: empty argv");
  for (int sig : s.ignore_signals) {
    if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP) {
      return Status::InvalidArgument("task spec: cannot ignore signal " + std::to_string(sig));
    }
  }
  if (s.uid && *s.uid == 0) return Status::InvalidArgument("task spec: tasks never run as root");
  if (s.uid && !s.gid) return Status::InvalidArgument("task spec: uid without gid");
  if (!s.uid && !s.groups.empty()) return Status::InvalidArgument("task spec: groups without uid");
  if (s.groups.size() > 65536) return Status::InvalidArgument("task spec: too many groups");
  for (const std::string* p : {&s.stdout_path, &s.stderr_path, &s.pid_path, &s.status_path}) {
    if (p->empty() || (*p)[0] != '/') return Status::InvalidArgument("task spec: paths must be absolute");
  }
  for (const auto& c : s.cgroups) {
    if (c.empty() || c[0] != '/' || c.find("..") != std::string::npos) {
      return Status::InvalidArgument("task spec: cgroup paths must be absolute");
    }
  }
  for (const auto& [var, path] : s.env_files) {
    if (var.empty() || var.find('=') != std::string::npos || path.empty() || path[0] != '/') {
      return Status::InvalidArgument("task spec: env_files needs variables and absolute paths");
    }
  }
  if (!s.secrets_dir.empty() && (s.secrets_dir[0] != '/' || s.secrets_dir.find("..") != std::string::npos)) {
    return Status::InvalidArgument("task spec: secrets_dir must be absolute");
  }
  return s;
}

std::string FormatPidFile(const TaskProcess& p) {
  std::string out = std::to_string(p.pid) + "\n";
  if (!p.boot_id.empty()) out += "boot_id " + p.boot_id + "\n";
  if (p.start_ticks) out += "start_ticks " + std::to_string(*p.start_ticks) + "\n";
  return out;
}

namespace {

std::optional<uint64_t> ParseDecimal(std::string_view t, size_t max_digits) {
  if (t.empty() || t.size() > max_digits || t.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  uint64_t v = 0;
  for (char c : t) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

std::string_view TrimSpace(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t' || t.front() == '\r')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r' || t.back() == '\n')) {
    t.remove_suffix(1);
  }
  return t;
}

}  // namespace

std::optional<TaskProcess> ParsePidFile(std::string_view text) {
  const size_t nl = text.find('\n');
  auto pid = ParseDecimal(TrimSpace(text.substr(0, nl)), 10);
  if (!pid || *pid <= 1 || *pid > 0x7fffffff) return std::nullopt;
  TaskProcess p;
  p.pid = static_cast<pid_t>(*pid);
  std::string_view rest = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = TrimSpace(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    std::string_view key = line.substr(0, sp), value = TrimSpace(line.substr(sp + 1));
    if (key == "boot_id" && !value.empty() && value.size() <= 64 &&
        value.find_first_of(" \t") == std::string_view::npos) {
      p.boot_id = std::string(value);
    } else if (key == "start_ticks") {
      p.start_ticks = ParseDecimal(value, 19);
    }
  }
  return p;
}

std::string ReadBootId(const char* path) {
  auto text = ReadFile(path, 4096);
  if (!text.ok()) return "";
  std::string_view id = TrimSpace(*text);
  if (id.size() > 64 || id.find_first_of(" \t\n") != std::string_view::npos) return "";
  return std::string(id);
}

std::optional<uint64_t> ReadStartTicks(pid_t pid) {
  auto text = ReadFile("/proc/" + std::to_string(pid) + "/stat", 64 * 1024);
  if (!text.ok()) return std::nullopt;
  // Fields are counted after the last ')': comm may hold spaces and parentheses.
  const size_t close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(*text).substr(close + 1);
  for (int field = 3; field <= 22; ++field) {
    const size_t b = rest.find_first_not_of(' ');
    if (b == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(b);
    const size_t e = rest.find(' ');
    if (field == 22) return ParseDecimal(rest.substr(0, e), 19);
    if (e == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(e);
  }
  return std::nullopt;
}

Json ToJson(const TaskExit& e) {
  Json j{{"exit_code", e.exit_code}, {"signal", e.signal}, {"ended_ms", e.ended_ms}};
  if (!e.error.empty()) j["error"] = e.error;
  return j;
}

Result<TaskExit> TaskExitFromJson(const Json& j) {
  TaskExit e;
  try {
    e.exit_code = j.at("exit_code").get<int>();
    e.signal = j.at("signal").get<int>();
    e.ended_ms = j.at("ended_ms").get<int64_t>();
    e.error = j.value("error", "");
  } catch (const std::exception& ex) {
    return Status::InvalidArgument(std::string("task status: ") + ex.what());
  }
  return e;
}

int RunTaskShim(const std::string& spec_file) {
  auto text = ReadFile(spec_file);
  if (!text.ok()) {
    Complain(text.status().message());
    return 2;
  }
  auto parsed = api::ParseJson(*text);
  auto spec = parsed.ok() ? ShimSpecFromJson(*parsed) : Result<ShimSpec>(parsed.status());
  if (!spec.ok()) {
    Complain(spec.status().message());
    return 2;
  }
  const ShimSpec& s = *spec;
  ::setsid();  // outlive the agent's session and its signals
  // The shim outlives signals meant for the task; the child resets them.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT}) ::sigaction(sig, &ign, nullptr);

  auto finish = [&](TaskExit e) {
    KillAndRemoveCgroups(s.cgroups);  // also when the task never started
    if (!s.secrets_dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(s.secrets_dir, ec);
    }
    Status st = WriteFileAtomic(s.status_path, ToJson(e).dump() + "\n", 0600);
    if (!st.ok()) {
      Complain(st.message());
      return 1;
    }
    return 0;
  };
  auto out = OpenLog(s.stdout_path, s);
  auto err = out.ok() ? OpenLog(s.stderr_path, s) : Result<int>(out.status());
  if (!out.ok() || !err.ok()) return finish({127, 0, NowMs(), (out.ok() ? err : out).status().message()});

  // Everything the child needs, prepared before the fork.
  ChildPlan plan;
  for (const auto& [k, v] : s.env) {
    if (!s.env_files.count(k)) plan.env_strings.push_back(k + "=" + v);
  }
  for (const auto& [k, path] : s.env_files) {
    auto value = ReadFile(path, 1 << 20);
    if (!value.ok()) return finish({127, 0, NowMs(), "cannot read the value of $" + k + ": " + value.status().message()});
    plan.env_strings.push_back(k + "=" + *value);
  }
  for (auto& e : plan.env_strings) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.argv = s.argv;
  for (auto& a : plan.argv) plan.args.push_back(a.data());
  plan.args.push_back(nullptr);
  if (s.argv[0].find('/') != std::string::npos) {
    plan.candidates.push_back(s.argv[0]);
  } else {
    auto path = s.env.find("PATH");
    std::string dirs = path == s.env.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      std::string dir = dirs.substr(start, end - start);
      plan.candidates.push_back((dir.empty() ? "." : dir) + "/" + s.argv[0]);
      start = end + 1;
    }
  }
  std::vector<int> versions;
  for (const auto& c : s.cgroups) {
    versions.push_back(CgroupVersion(c));
    plan.join_files.push_back(JoinFile(c, versions.back()));
  }
  plan.switch_user = s.uid.has_value();
  plan.uid = s.uid.value_or(0);
  plan.gid = s.gid.value_or(0);
  plan.groups.assign(s.groups.begin(), s.groups.end());
  plan.workdir = s.workdir;
  plan.ignore_signals = s.ignore_signals;
  plan.stdout_fd = *out;
  plan.stderr_fd = *err;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return finish({127, 0, NowMs(), "pipe failed"});
  plan.error_fd = pipefd[1];
  plan.stdin_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  // Signals are blocked across the fork: a signal sent to the task's group once
  // its pid is known stays pending in the child (blocked signals are not
  // discarded, even while the child still ignores them as the shim does) until
  // the child has its default handlers, and is delivered then.
  //
  // vfork: the child borrows the shim's memory until it execs, so no page tables
  // are copied and the shim takes no copy-on-write faults afterwards (a fifth of
  // the shim's CPU per start on a virtual machine; docs/benchmarks.md). The shim
  // is suspended meanwhile. See ExecTask for what the child may do.
  // On cgroup v2 the child is created inside its cgroup (CloneIntoCgroup); where the
  // kernel cannot (older than 5.7, v1), it joins after a vfork.
  const int cgroup_fd = OpenCgroup2(s.cgroups, versions);
  sigset_t all, old;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &old);
  const pid_t pid = SpawnTask(plan, cgroup_fd);
  if (cgroup_fd >= 0) ::close(cgroup_fd);
  if (pid < 0) {
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    return finish({127, 0, NowMs(), std::string("vfork: ") + std::strerror(errno)});
  }
  // The task's process group exists before its pid is published: the child made
  // it before exec, and the shim resumes only after that exec.
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(pipefd[1]);
  ::close(*out);
  ::close(*err);
  if (plan.stdin_fd >= 0) ::close(plan.stdin_fd);
  // With what tells this process apart from a later one with the same pid (after it
  // ended, or after a reboot): the agent checks both before it signals the task. The
  // child cannot be gone yet (the shim has not reaped it), so its start time is its own.
  TaskProcess record{pid, ReadBootId(), ReadStartTicks(pid)};
  if (!record.identified()) Complain("cannot read the boot id or the start time of pid " + std::to_string(pid));
  Status st = WriteFileAtomic(s.pid_path, FormatPidFile(record), 0600);
  if (!st.ok()) Complain(st.message());
  int msg[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(pipefd[0], msg, sizeof msg);
  } while (n < 0 && errno == EINTR);
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The task is over: nothing it started may outlive it.
  KillAndRemoveCgroups(s.cgroups);
  if (n == sizeof msg) {
    std::string why = std::string(StageName(msg[0])) + " failed: " + std::strerror(msg[1]);
    if (msg[0] == kStageExec) why = "cannot run '" + s.argv[0] + "': " + std::strerror(msg[1]);
    if (msg[0] == kStageChdir) why = "cannot change to " + s.workdir + ": " + std::strerror(msg[1]);
    return finish({127, 0, NowMs(), why});
  }
  TaskExit e;
  e.ended_ms = NowMs();
  if (WIFEXITED(status)) {
    e.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  }
  return finish(e);
}

}  // namespace rota::agent

// TaskRunner with the real `rota task-shim`: environment, logs, exit codes,
// signals to the whole process group, start failures, running as another
// user, and re-adoption by a new runner (an agent restart).

#include "agent/task_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/process.h"
#include "agent/task_test_util.h"
#include "common/test_util.h"
#include "host/proc_parse.h"
#include "host/rapl.h"

namespace rota::agent {
namespace {

namespace fs = std::filesystem;
using testing_tasks::MakeRunner;
using testing_tasks::Read;
using testing_tasks::TempDir;
using testing_tasks::WaitEnded;
using testing_tasks::WaitPidFile;

TEST(TaskRunnerTest, RunsWithExactlyTheGivenEnvironmentAndLogs) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  ::setenv("ROTA_AGENT_SECRET", "must-not-leak", 1);
  TaskRequest req;
  req.id = "job1.worker-0";
  req.argv = {"sh", "-c", "echo out:$ROTA_TASK_NAME:$ROTA_AGENT_SECRET:$(pwd); echo err >&2; exit 3"};
  req.env = {{"PATH", "/usr/bin:/bin"}, {"ROTA_TASK_NAME", "worker-0"}};
  req.workdir = "/tmp";
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  TaskStatus end = WaitEnded(r, req.id);
  ASSERT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(end.exit->exit_code, 3);
  EXPECT_EQ(end.exit->Code(), 3);
  EXPECT_EQ(Read(r.StdoutPath(req.id)), "out:worker-0::/tmp\n");
  EXPECT_EQ(Read(r.StderrPath(req.id)), "err\n");
  EXPECT_EQ(r.Start(req).status().code(), StatusCode::kAlreadyExists);
  ::unsetenv("ROTA_AGENT_SECRET");
}

TEST(TaskRunnerTest, SignalReachesTheWholeProcessGroup) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "grp";
  // A child in the background and one in the foreground, as a training script's
  // data loaders would be.
  req.argv = {"/bin/sh", "-c", "sleep 600 & echo $! > " + dir.path() + "/bg; sleep 600; wait"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->state, TaskState::kRunning);
  ASSERT_GT(st->pid, 1);
  pid_t bg = WaitPidFile(dir.path() + "/bg");
  ASSERT_GT(bg, 1);
  ASSERT_TRUE(r.Signal("grp", SIGTERM).ok());
  TaskStatus end = WaitEnded(r, "grp");
  ASSERT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(end.exit->signal, SIGTERM);
  EXPECT_EQ(end.exit->Code(), 128 + SIGTERM);
  EXPECT_TRUE(testutil::WaitFor([&] { return ::kill(bg, 0) != 0; }))
      << "the background child survived";
  EXPECT_EQ(r.Signal("grp", SIGTERM).code(), StatusCode::kConflict);  // ended
  EXPECT_EQ(r.Signal("nope", SIGTERM).code(), StatusCode::kNotFound);
}

TEST(TaskRunnerTest, CommandNotFoundAndBadWorkdirAreReported) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "missing";
  req.argv = {"no-such-command-rota", "x"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  TaskStatus end = WaitEnded(r, "missing");
  ASSERT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(end.exit->exit_code, 127);
  EXPECT_NE(end.exit->error.find("cannot run 'no-such-command-rota'"), std::string::npos)
      << end.exit->error;
  req.id = "baddir";
  req.argv = {"true"};
  req.workdir = "/nonexistent/dir";
  ASSERT_TRUE(r.Start(req).ok());
  end = WaitEnded(r, "baddir");
  EXPECT_NE(end.exit->error.find("/nonexistent/dir"), std::string::npos) << end.exit->error;
}

TEST(TaskRunnerTest, FilesAndFilePlaceholders) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "mpi.launcher-0";
  req.argv = {"/bin/sh", "-c", "cat {file:hostfile}; cat $ROTA_HOSTFILE"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  req.files = {{"hostfile", "10.0.0.1 slots=2\n"}};
  req.file_env = {{"ROTA_HOSTFILE", "hostfile"}};
  ASSERT_TRUE(r.Start(req).ok());
  TaskStatus end = WaitEnded(r, req.id);
  EXPECT_EQ(end.exit->exit_code, 0);
  EXPECT_EQ(Read(r.StdoutPath(req.id)), "10.0.0.1 slots=2\n10.0.0.1 slots=2\n");
}

// Bad requests: path tricks in ids and file names, empty argv, root as the user.
// Bad requests tried: ids with path tricks, a file name escaping the task directory,
// root, supplementary groups without a user, an empty command.
TEST(TaskRunnerTest, BadRequestsAreRefused) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.argv = {"true"};
  for (const char* id : {"", "..", "../x", "a/b", "a b"}) {
    req.id = id;
    EXPECT_EQ(r.Start(req).status().code(), StatusCode::kInvalidArgument) << id;
  }
  req.id = "f";
  req.files = {{"../etc", "x"}};
  EXPECT_EQ(r.Start(req).status().code(), StatusCode::kInvalidArgument);
  req.id = "root";
  req.files.clear();
  req.uid = 0;
  req.gid = 0;
  EXPECT_EQ(r.Start(req).status().code(), StatusCode::kInvalidArgument);
  req.id = "groups-without-user";
  req.uid.reset();
  req.gid.reset();
  req.groups = {27};
  EXPECT_EQ(r.Start(req).status().code(), StatusCode::kInvalidArgument);
  req.id = "empty";
  req.groups.clear();
  req.argv.clear();
  EXPECT_EQ(r.Start(req).status().code(), StatusCode::kInvalidArgument);
}

TEST(TaskRunnerTest, RunsAsTheJobOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (setuid to another user)";
  if (::getpwnam("rota-task-u") == nullptr) {
    SpawnOptions o;
    o.output_path = "/dev/null";
    auto pid = SpawnProcess({"useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                             "rota-task-u"}, o);
    ASSERT_TRUE(pid.ok());
    ASSERT_TRUE(WaitProcess(*pid, 30000).ok());
  }
  const passwd* pw = ::getpwnam("rota-task-u");
  ASSERT_NE(pw, nullptr);
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "as-user";
  req.argv = {"sh", "-c", "id -u; id -g; id -G"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  req.uid = pw->pw_uid;
  req.gid = pw->pw_gid;
  req.user = "rota-task-u";
  req.groups = {pw->pw_gid, 4242};  // the supplementary groups the agent resolved
  ASSERT_TRUE(r.Start(req).ok());
  TaskStatus end = WaitEnded(r, req.id);
  ASSERT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(end.exit->exit_code, 0) << end.exit->error;
  const std::string gid = std::to_string(pw->pw_gid);
  EXPECT_EQ(Read(r.StdoutPath(req.id)),
            std::to_string(pw->pw_uid) + "\n" + gid + "\n" + gid + " 4242\n");
}

// A task directory, as an agent left it, whose pid file says `pid_file` and whose
// task has not ended (no status.json).
void WriteTaskDir(const std::string& state_dir, const std::string& id, const std::string& pid_file) {
  const std::string dir = state_dir + "/tasks/" + id;
  ASSERT_TRUE(MakeDirs(dir, 0755).ok());
  ShimSpec s;
  s.argv = {"sleep", "60"};
  s.stdout_path = dir + "/stdout.log";
  s.stderr_path = dir + "/stderr.log";
  s.pid_path = dir + "/pid";
  s.status_path = dir + "/status.json";
  ASSERT_TRUE(WriteFileAtomic(dir + "/spec.json", ToJson(s).dump(), 0600).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/pid", pid_file, 0644).ok());
}

// Tests that need root skip without it, unless ROTA_REQUIRE_ROOT_TESTS=1 (CI).
#define SKIP_UNLESS_ROOT(why)                                                          \
  do {                                                                                 \
    if (::geteuid() != 0) {                                                            \
      const char* require = std::getenv("ROTA_REQUIRE_ROOT_TESTS");                    \
      if (require != nullptr && std::string(require) == "1") FAIL() << "needs root: " << why; \
      GTEST_SKIP() << "needs root: " << why;                                           \
    }                                                                                  \
  } while (0)

// A Unix user for the tests (no home, no login); its passwd entry or null.
const passwd* EnsureUser(const char* name) {
  if (::getpwnam(name) == nullptr) {
    SpawnOptions o;
    o.output_path = "/dev/null";
    auto pid = SpawnProcess({"useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name}, o);
    if (pid.ok()) (void)WaitProcess(*pid, 30000);
  }
  return ::getpwnam(name);
}

// Whether Unix user `uid` can open `path` for reading (a child that drops to it tries).
bool CanRead(uid_t uid, gid_t gid, const std::string& path) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(2);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ::_exit(fd >= 0 ? 0 : 1);
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}
uid_t OwnerOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}

// Security review, issue 41: task directories were 0755 and logs 0640 to the owner's
// primary group, readable by others (e.g. everyone in a shared `users` group). Now
// only the task's owner (and root: the agent serving `rota logs`) reads them.
TEST(TaskRunnerTest, TaskDirsAndLogsAreReadableOnlyByTheirOwner) {
  SKIP_UNLESS_ROOT("tasks run as another user");
  const passwd* owner_pw = EnsureUser("rota-task-u");
  ASSERT_NE(owner_pw, nullptr);
  const uid_t owner = owner_pw->pw_uid;
  const gid_t owner_gid = owner_pw->pw_gid;
  const passwd* other = EnsureUser("rota-task-v");
  ASSERT_NE(other, nullptr);
  const uid_t other_uid = other->pw_uid;
  // Both in the owner's primary group: what the group-readable logs leaked to.
  const gid_t shared_gid = owner_gid;
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "private";
  req.argv = {"sh", "-c", "cat \"$ROTA_HOSTFILE\"; echo secret; echo secret-err >&2; sleep 30"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  req.uid = owner;
  req.gid = owner_gid;
  req.user = "rota-task-u";
  req.groups = {owner_gid};
  req.files = {{"hostfile", "node-a slots=1\n"}};
  req.file_env = {{"ROTA_HOSTFILE", "hostfile"}};
  ASSERT_TRUE(r.Start(req).ok());
  ASSERT_TRUE(testutil::WaitFor([&] { return Read(r.StdoutPath(req.id)) == "node-a slots=1\nsecret\n"; }))
      << Read(r.StdoutPath(req.id)) << Read(dir.path() + "/tasks/private/shim.log");
  ASSERT_TRUE(r.Notify(req.id, "preempted soon").ok());

  const std::string task_dir = dir.path() + "/tasks/private";
  EXPECT_EQ(ModeOf(task_dir), 0711u);  // reachable by name, not listable
  EXPECT_EQ(OwnerOf(task_dir), 0u);    // the agent's: the owner cannot replace its records
  for (const char* name : {"stdout.log", "stderr.log", "hostfile", "preempt-notice"}) {
    SCOPED_TRACE(name);
    const std::string path = task_dir + "/" + name;
    EXPECT_EQ(ModeOf(path), 0600u);
    EXPECT_EQ(OwnerOf(path), owner);
    EXPECT_TRUE(CanRead(owner, owner_gid, path));
    EXPECT_FALSE(CanRead(other_uid, shared_gid, path)) << "another user of the owner's group reads it";
  }
  for (const char* name : {"spec.json", "pid", "shim.log"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(ModeOf(task_dir + "/" + name), 0600u);
    EXPECT_FALSE(CanRead(other_uid, shared_gid, task_dir + "/" + name));
  }
  // The agent (root) still reads the logs, as it does for `rota logs`.
  EXPECT_EQ(Read(r.StderrPath(req.id)), "secret-err\n");
  ASSERT_TRUE(r.Signal(req.id, SIGKILL).ok());
  TaskStatus end = WaitEnded(r, req.id);
  EXPECT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(ModeOf(task_dir + "/status.json"), 0600u);
}

// A task directory of an older agent (0755, logs 0640 to the group) is tightened
// when a new agent adopts it.
TEST(TaskRunnerTest, AdoptionTightensAnOlderAgentsTaskDir) {
  SKIP_UNLESS_ROOT("files owned by another user");
  const passwd* owner_pw = EnsureUser("rota-task-u");
  ASSERT_NE(owner_pw, nullptr);
  TempDir dir;
  WriteTaskDir(dir.path(), "old", "4242\n");
  const std::string task_dir = dir.path() + "/tasks/old";
  ::chmod(task_dir.c_str(), 0755);
  ShimSpec s;
  s.argv = {"sleep", "60"};
  s.uid = owner_pw->pw_uid;
  s.gid = owner_pw->pw_gid;
  s.stdout_path = task_dir + "/stdout.log";
  s.stderr_path = task_dir + "/stderr.log";
  s.pid_path = task_dir + "/pid";
  s.status_path = task_dir + "/status.json";
  ASSERT_TRUE(WriteFileAtomic(task_dir + "/spec.json", ToJson(s).dump(), 0600).ok());
  ASSERT_TRUE(WriteFileAtomic(task_dir + "/stdout.log", "out\n", 0640).ok());
  ASSERT_EQ(::chown((task_dir + "/stdout.log").c_str(), s.uid.value(), s.gid.value()), 0);
  ASSERT_TRUE(WriteFileAtomic(task_dir + "/hostfile", "node-a\n", 0644).ok());
  TaskRunner r = MakeRunner(dir.path());
  ASSERT_EQ(r.Adopt(), std::vector<std::string>{"old"});
  EXPECT_EQ(ModeOf(task_dir), 0711u);
  EXPECT_EQ(ModeOf(task_dir + "/stdout.log"), 0600u);
  EXPECT_EQ(ModeOf(task_dir + "/hostfile"), 0600u);
  EXPECT_EQ(OwnerOf(task_dir + "/hostfile"), owner_pw->pw_uid);  // still readable by its task
  EXPECT_EQ(ModeOf(task_dir + "/pid"), 0600u);
  EXPECT_EQ(OwnerOf(task_dir + "/spec.json"), 0u);
}

TEST(TaskRunnerTest, ARestartedAgentReadoptsRunningAndFinishedTasks) {
  TempDir dir;
  std::vector<std::string> slow_cgroups;
  {
    TaskRunner first = MakeRunner(dir.path());
    TaskRequest quick;
    quick.id = "quick";
    quick.argv = {"/bin/sh", "-c", "exit 7"};
    ASSERT_TRUE(first.Start(quick).ok());
    WaitEnded(first, "quick");
    TaskRequest slow;
    slow.id = "slow";
    slow.argv = {"/bin/sh", "-c", "sleep 0.5; exit 5"};
    ASSERT_TRUE(first.Start(slow).ok());
    slow_cgroups = first.Cgroups("slow");
  }  // the agent goes away; the tasks do not
  TaskRunner second = MakeRunner(dir.path());
  EXPECT_EQ(second.Adopt(), (std::vector<std::string>{"quick", "slow"}));
  // Its cgroups (none when not root) are known again, for its CPU time.
  EXPECT_EQ(second.Cgroups("slow"), slow_cgroups);
  auto quick = second.Poll("quick");
  ASSERT_TRUE(quick.ok());
  EXPECT_EQ(quick->state, TaskState::kExited);
  EXPECT_EQ(quick->exit->exit_code, 7);
  TaskStatus slow = WaitEnded(second, "slow");
  ASSERT_EQ(slow.state, TaskState::kExited);
  EXPECT_EQ(slow.exit->exit_code, 5);
  ASSERT_TRUE(second.Remove("quick").ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/tasks/quick"));
  EXPECT_EQ(second.Poll("quick").status().code(), StatusCode::kNotFound);
}

// A process group of its own that is not a task: what a task's pid may name after
// a reboot or after the task ended. Killed on destruction.
struct Bystander {
  pid_t pid = -1;
  Bystander() {
    SpawnOptions o;
    o.new_process_group = true;
    o.die_with_parent = true;
    auto p = SpawnProcess({"sleep", "60"}, o);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    pid = p.ok() ? *p : -1;
  }
  ~Bystander() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    (void)WaitProcess(pid, -1);
  }
  bool Alive() {
    if (pid <= 0) return false;
    auto st = WaitProcess(pid, 0);  // reaps it if it died
    if (st.ok()) pid = -1;
    return !st.ok();
  }
};

// Security review, issue 41: after a reboot the agent re-adopted task directories
// by pid alone (no boot id or start time) and could SIGKILL an unrelated process
// group that reuses the pid. Each record below names a live bystander; only the one
// that really identifies it (this boot, its start time) may be signalled.
TEST(TaskRunnerTest, ReadoptionNeverSignalsAProcessThatReusedThePid) {
  Bystander victim;
  TempDir dir;  // first to go: its task cleanup finds the bystander still unreaped
  ASSERT_GT(victim.pid, 0);
  const std::optional<uint64_t> ticks = ReadStartTicks(victim.pid);
  ASSERT_TRUE(ticks.has_value());
  const std::string boot = ReadBootId();
  ASSERT_FALSE(boot.empty());
  const std::string pid = std::to_string(victim.pid);
  const struct {
    const char* id;
    std::string pid_file;
    const char* why;  // in the lost task's error
  } cases[] = {
      // An older agent's record: the pid alone.
      {"old-record", pid + "\n", "without a boot id and start time"},
      // Before a reboot: the pid (and even its start time, ticks after that boot) recur.
      {"before-reboot",
       FormatPidFile({victim.pid, "00000000-1111-2222-3333-444444444444", ticks}),
       "the node rebooted since the task started"},
      // This boot, but the task ended and its pid went to another process.
      {"pid-reused", FormatPidFile({victim.pid, boot, *ticks + 1}), "now belongs to another process"},
  };
  for (const auto& c : cases) WriteTaskDir(dir.path(), c.id, c.pid_file);
  TaskRunner r = MakeRunner(dir.path());
  ASSERT_EQ(r.Adopt().size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    auto st = r.Poll(c.id);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->state, TaskState::kLost);
    EXPECT_NE(st->error.find(c.why), std::string::npos) << st->error;
    for (int sig : {SIGTERM, SIGKILL}) {
      Status sent = r.Signal(c.id, sig);
      EXPECT_EQ(sent.code(), StatusCode::kConflict) << sent.ToString();
    }
    EXPECT_TRUE(victim.Alive()) << "the bystander was signalled";
  }
  // The record of this very process is the task's: it runs and may be stopped.
  WriteTaskDir(dir.path(), "identified", FormatPidFile({victim.pid, boot, ticks}));
  TaskRunner second = MakeRunner(dir.path());
  second.Adopt();
  auto st = second.Poll("identified");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->state, TaskState::kRunning) << st->error;
  ASSERT_TRUE(second.Signal("identified", SIGKILL).ok());
  EXPECT_TRUE(testutil::WaitFor([&] { return !victim.Alive(); }));
}

// The shim records the boot id and the start time of the task's process with its pid.
TEST(TaskRunnerTest, TheShimRecordsTheBootIdAndStartTimeOfTheTask) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "recorded";
  req.argv = {"/bin/sleep", "30"};
  ASSERT_TRUE(r.Start(req).ok());
  const pid_t pid = WaitPidFile(dir.path() + "/tasks/recorded/pid");
  ASSERT_GT(pid, 1);
  auto record = ParsePidFile(Read(dir.path() + "/tasks/recorded/pid"));
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->pid, pid);
  EXPECT_EQ(record->boot_id, ReadBootId());
  EXPECT_EQ(record->start_ticks, ReadStartTicks(pid));
  EXPECT_TRUE(record->identified());
  ASSERT_TRUE(r.Signal("recorded", SIGKILL).ok());
  TaskStatus end = WaitEnded(r, "recorded");
  EXPECT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(end.exit->signal, SIGKILL);
}

TEST(TaskProcessTest, PidFileFormats) {
  auto p = ParsePidFile("4242\nboot_id abc-def\nstart_ticks 777\n");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->boot_id, "abc-def");
  EXPECT_EQ(p->start_ticks, 777u);
  EXPECT_EQ(ParsePidFile(FormatPidFile(*p))->start_ticks, 777u);
  auto old = ParsePidFile("4242\n");  // an older shim's
  ASSERT_TRUE(old.has_value());
  EXPECT_FALSE(old->identified());
  EXPECT_FALSE(ParsePidFile("4242\nstart_ticks x7\nboot_id a\n")->identified());
  EXPECT_FALSE(ParsePidFile("1\n").has_value());
  EXPECT_FALSE(ParsePidFile("-5\n").has_value());
  EXPECT_FALSE(ParsePidFile("").has_value());
  EXPECT_FALSE(ParsePidFile("12ab\n").has_value());
}

}  // namespace
}  // namespace rota::agent

// TaskRunner's cgroups with the real `rota task-shim`: limits, cancel reaching
// descendants that left the process group, one SIGTERM per process, cgroup v2's
// CLONE_INTO_CGROUP start, and the v1 and v2 layouts.

#include <sys/mount.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "agent/task_runner.h"
#include "agent/task_test_util.h"
#include "common/file_util.h"
#include "common/process.h"
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

// Needs root and writable cgroups (v1 here, v2 on current servers); skips otherwise.
bool CgroupsWritable() {
  if (::geteuid() != 0) return false;
  return ::access("/sys/fs/cgroup/cgroup.controllers", W_OK) == 0 ||
         ::access("/sys/fs/cgroup/cpu/cgroup.procs", W_OK) == 0;
}

bool AliveNotZombie(pid_t pid) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z';
}

// A task whose background child leaves the task's process group and session
// (setsid): only the cgroup still knows it. The child's pid goes to DIR/bg.
TaskRequest EscapingTask(const std::string& id, const std::string& dir) {
  TaskRequest req;
  req.id = id;
  req.argv = {"/bin/sh", "-c", "setsid sleep 600 & echo $! > " + dir + "/bg; sleep 600; wait"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  return req;
}

TEST(TaskRunnerTest, CgroupHoldsLimitsAndCancelReachesEscapedDescendants) {
  if (!CgroupsWritable()) GTEST_SKIP() << "needs root and writable cgroups";
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req = EscapingTask("cg", dir.path());
  req.limits.cpus = 0.5;
  req.limits.memory_bytes = 256ull << 20;
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->state, TaskState::kRunning);
  auto spec = api::ParseJson(*ReadFile(dir.path() + "/tasks/cg/spec.json"));
  ASSERT_TRUE(spec.ok());
  std::vector<std::string> cgroups = (*spec)["cgroups"].get<std::vector<std::string>>();
  ASSERT_FALSE(cgroups.empty());
  for (const auto& c : cgroups) {
    // The process joins its cgroup itself, right after the shim recorded its pid.
    EXPECT_TRUE(testutil::WaitFor([&] {
      auto procs = CgroupProcesses(c);
      return std::find(procs.begin(), procs.end(), st->pid) != procs.end();
    })) << c;
    if (c.find("/cpu/") != std::string::npos) {
      EXPECT_EQ(*ReadFile(c + "/cpu.cfs_quota_us"), "50000\n");
    } else if (c.find("/cpuacct/") != std::string::npos) {
      EXPECT_TRUE(ReadFile(c + "/cpuacct.usage").ok()) << c;
    } else if (c.find("/memory/") != std::string::npos) {
      EXPECT_EQ(*ReadFile(c + "/memory.limit_in_bytes"), std::to_string(256ull << 20) + "\n");
    } else {  // v2
      EXPECT_EQ(*ReadFile(c + "/cpu.max"), "50000 100000\n");
      EXPECT_EQ(*ReadFile(c + "/memory.max"), std::to_string(256ull << 20) + "\n");
    }
  }
  // Its CPU time is counted (v1: by the cpuacct cgroup), for CPU energy.
  EXPECT_EQ(r.Cgroups("cg"), cgroups);
  auto usage = host::ReadTaskCpuUsageUsec(cgroups);
  EXPECT_TRUE(usage.ok()) << usage.status().ToString();
  pid_t bg = WaitPidFile(dir.path() + "/bg");
  ASSERT_GT(bg, 1);
  ASSERT_TRUE(r.Signal("cg", SIGTERM).ok());
  TaskStatus end = WaitEnded(r, "cg");
  ASSERT_EQ(end.state, TaskState::kExited);
  EXPECT_TRUE(testutil::WaitFor([&] { return !AliveNotZombie(bg); })) << "the escaped child survived";
  // The shim removes the cgroups once their last process is gone.
  testutil::WaitFor([&] {
    return std::none_of(cgroups.begin(), cgroups.end(),
                        [](const std::string& c) { return ::access(c.c_str(), F_OK) == 0; });
  });
  for (const auto& c : cgroups) EXPECT_NE(::access(c.c_str(), F_OK), 0) << c << " was not removed";
}

TEST(TaskRunnerTest, TaskWithoutLimitsHasOneCgroupThatCancelStillReachesWhole) {
  if (!CgroupsWritable()) GTEST_SKIP() << "needs root and writable cgroups";
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  auto st = r.Start(EscapingTask("plain", dir.path()));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  const std::vector<std::string> cgroups = r.Cgroups("plain");
  ASSERT_EQ(cgroups.size(), 1u);  // v1: cpuacct only; v2: below rota/plain
  EXPECT_TRUE(cgroups[0].find("/cpuacct/") != std::string::npos ||
              cgroups[0].find("/rota/plain/") != std::string::npos)
      << cgroups[0];
  pid_t bg = WaitPidFile(dir.path() + "/bg");
  ASSERT_GT(bg, 1);
  EXPECT_TRUE(testutil::WaitFor([&] {
    auto procs = CgroupProcesses(cgroups[0]);
    return std::find(procs.begin(), procs.end(), bg) != procs.end();
  }));
  auto usage = host::ReadTaskCpuUsageUsec(cgroups);
  EXPECT_TRUE(usage.ok()) << usage.status().ToString();
  // The monitoring shows the process in its task's cgroup (which names the task),
  // not in the memory cgroup it inherited.
  auto proc_cgroup = ReadFile("/proc/" + std::to_string(bg) + "/cgroup");
  ASSERT_TRUE(proc_cgroup.ok());
  const std::string seen = host::ParseCgroup(*proc_cgroup, 4096);
  ASSERT_FALSE(seen.empty()) << *proc_cgroup;
  EXPECT_TRUE(cgroups[0].size() > seen.size() &&
              cgroups[0].compare(cgroups[0].size() - seen.size(), seen.size(), seen) == 0)
      << seen << " is not " << cgroups[0];
  ASSERT_TRUE(r.Signal("plain", SIGTERM).ok());
  ASSERT_EQ(WaitEnded(r, "plain").state, TaskState::kExited);
  EXPECT_TRUE(testutil::WaitFor([&] { return !AliveNotZombie(bg); })) << "the escaped child survived";
  EXPECT_TRUE(testutil::WaitFor([&] { return ::access(cgroups[0].c_str(), F_OK) != 0; }));
}

// A graceful stop: every process of the task gets one SIGTERM, not one for its
// process group and another for its cgroup (torchrun and many trainers take a
// second SIGTERM as "stop now, skip the checkpoint").
TEST(TaskRunnerTest, EachProcessGetsOneSigterm) {
  if (!CgroupsWritable()) GTEST_SKIP() << "needs root and writable cgroups";
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  TaskRequest req;
  req.id = "term";
  const std::string log = dir.path() + "/terms";
  req.argv = {"/bin/sh", "-c",
              "trap 'echo TERM >> " + log + "' TERM; echo $$ > " + dir.path() + "/ready; "
              "while :; do :; done"};  // builtins only: a trap runs as soon as its signal arrives
  req.env = {{"PATH", "/usr/bin:/bin"}};
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_GT(WaitPidFile(dir.path() + "/ready"), 1);
  ASSERT_TRUE(r.Signal("term", SIGTERM).ok());
  ASSERT_TRUE(testutil::WaitFor([&] { return ReadFile(log).ok(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a second one would be here by now
  EXPECT_EQ(Read(log), "TERM\n");
  ASSERT_TRUE(r.Signal("term", SIGKILL).ok());
  EXPECT_EQ(WaitEnded(r, "term").state, TaskState::kExited);
}

// A cgroup v2 hierarchy for a test: the host's when it has one, else a private
// cgroup2 mount on a temporary directory (a v1 host; empty, no controllers), unmounted
// at the end. path() is empty when neither is possible (not root, no mount rights).
class Cgroup2Root {
 public:
  Cgroup2Root() {
    if (::geteuid() != 0) return;
    if (::access("/sys/fs/cgroup/cgroup.controllers", W_OK) == 0) {
      path_ = "/sys/fs/cgroup";
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "rota-cgroup2-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return;
    if (::mount("none", tmpl.c_str(), "cgroup2", 0, nullptr) != 0) {
      ::rmdir(tmpl.c_str());
      return;
    }
    path_ = mounted_ = tmpl;
  }
  ~Cgroup2Root() {
    if (mounted_.empty()) return;
    ::rmdir((mounted_ + "/rota/plain").c_str());
    ::rmdir((mounted_ + "/rota").c_str());
    ::umount2(mounted_.c_str(), MNT_DETACH);
    ::rmdir(mounted_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, mounted_;
};

// On cgroup v2 the shim creates the task's process inside its cgroup (clone3 with
// CLONE_INTO_CGROUP) instead of having it join after the fork; either way the task
// runs in its own cgroup from its first instruction, and the cgroup ends with it.
TEST(TaskRunnerTest, OnCgroupV2TheTaskStartsInItsOwnCgroup) {
  Cgroup2Root root;
  if (root.path().empty()) GTEST_SKIP() << "needs root and a cgroup v2 hierarchy (or the right to mount one)";
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  r.set_cgroup_root(root.path());
  TaskRequest req = EscapingTask("v2", dir.path());
  req.argv = {"/bin/sh", "-c", "cat /proc/self/cgroup > " + dir.path() + "/cg.txt; " + req.argv[2]};
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  const std::vector<std::string> cgroups = r.Cgroups("v2");
  ASSERT_EQ(cgroups.size(), 1u);
  ASSERT_EQ(cgroups[0].rfind(root.path() + "/rota/plain/", 0), 0u) << cgroups[0];
  ASSERT_TRUE(testutil::WaitFor([&] {
    auto t = ReadFile(dir.path() + "/cg.txt");
    return t.ok() && !t->empty() && t->back() == '\n';
  }));
  // The v2 line of its /proc/PID/cgroup names its own cgroup (relative to the root).
  const std::string own = "0::" + cgroups[0].substr(root.path().size()) + "\n";
  EXPECT_NE(ReadFile(dir.path() + "/cg.txt")->find(own), std::string::npos)
      << *ReadFile(dir.path() + "/cg.txt") << " does not hold " << own;
  pid_t bg = WaitPidFile(dir.path() + "/bg");
  ASSERT_GT(bg, 1);
  EXPECT_TRUE(testutil::WaitFor([&] {
    auto procs = CgroupProcesses(cgroups[0]);
    return std::find(procs.begin(), procs.end(), bg) != procs.end();
  }));
  ASSERT_TRUE(r.Signal("v2", SIGTERM).ok());
  ASSERT_EQ(WaitEnded(r, "v2").state, TaskState::kExited);
  EXPECT_TRUE(testutil::WaitFor([&] { return !AliveNotZombie(bg); })) << "the escaped child survived";
  EXPECT_TRUE(testutil::WaitFor([&] { return ::access(cgroups[0].c_str(), F_OK) != 0; }));
}

// A fake hierarchy: a directory whose cgroup.procs exists (kernfs makes it in
// every new cgroup; here MakeLeaf only reads it).
void FakeHierarchy(const std::string& dir) {
  fs::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomic(dir + "/cgroup.procs", "", 0644).ok());
}

TEST(TaskCgroupTest, V1MakesTheCpuAndMemoryCgroupsOnlyForALimit) {
  TempDir dir;
  for (const char* c : {"cpu", "cpuacct", "memory"}) FakeHierarchy(dir.path() + "/" + c);
  auto plain = CreateTaskCgroups(dir.path(), "plain", {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(*plain, std::vector<std::string>{dir.path() + "/cpuacct/rota/plain"});
  EXPECT_FALSE(fs::exists(dir.path() + "/cpu/rota/plain"));
  EXPECT_FALSE(fs::exists(dir.path() + "/memory/rota/plain"));

  CgroupLimits cpu_only;
  cpu_only.cpus = 1.5;
  auto cpu = CreateTaskCgroups(dir.path(), "cpu", cpu_only);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ(*cpu, (std::vector<std::string>{dir.path() + "/cpuacct/rota/cpu", dir.path() + "/cpu/rota/cpu"}));
  EXPECT_EQ(*ReadFile(dir.path() + "/cpu/rota/cpu/cpu.cfs_quota_us"), "150000");
  EXPECT_FALSE(fs::exists(dir.path() + "/memory/rota/cpu"));

  CgroupLimits memory_only;
  memory_only.memory_bytes = 1 << 30;
  auto mem = CreateTaskCgroups(dir.path(), "mem", memory_only);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_EQ(*mem, (std::vector<std::string>{dir.path() + "/cpuacct/rota/mem", dir.path() + "/memory/rota/mem"}));
  EXPECT_EQ(*ReadFile(dir.path() + "/memory/rota/mem/memory.limit_in_bytes"), std::to_string(1 << 30));
}

TEST(TaskCgroupTest, V1CpuAndCpuacctMountedTogetherMakeOneDirectory) {
  TempDir dir;
  FakeHierarchy(dir.path() + "/cpu,cpuacct");
  fs::create_directory_symlink("cpu,cpuacct", dir.path() + "/cpu");
  fs::create_directory_symlink("cpu,cpuacct", dir.path() + "/cpuacct");
  CgroupLimits limits;
  limits.cpus = 0.5;
  auto dirs = CreateTaskCgroups(dir.path(), "t", limits);
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  ASSERT_EQ(dirs->size(), 1u);
  EXPECT_EQ(*ReadFile((*dirs)[0] + "/cpu.cfs_quota_us"), "50000");
  // Without cpuacct the cpu hierarchy holds the task, limit or not.
  TempDir bare;
  FakeHierarchy(bare.path() + "/cpu");
  auto cpu = CreateTaskCgroups(bare.path(), "t", {});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ(*cpu, std::vector<std::string>{bare.path() + "/cpu/rota/t"});
}

TEST(TaskCgroupTest, V2PutsTasksWithoutLimitsBelowAParentWithoutControllers) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/cgroup.controllers", "cpu memory pids\n", 0644).ok());
  auto plain = CreateTaskCgroups(dir.path(), "p", {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(*plain, std::vector<std::string>{dir.path() + "/rota/plain/p"});
  EXPECT_FALSE(fs::exists(dir.path() + "/rota/plain/cgroup.subtree_control"));  // hands nothing down
  CgroupLimits limits;
  limits.cpus = 2;
  limits.memory_bytes = 4096;
  auto limited = CreateTaskCgroups(dir.path(), "l", limits);
  ASSERT_TRUE(limited.ok()) << limited.status().ToString();
  EXPECT_EQ(*limited, std::vector<std::string>{dir.path() + "/rota/l"});
  EXPECT_EQ(*ReadFile(dir.path() + "/rota/cgroup.subtree_control"), "+cpu +memory");
  EXPECT_EQ(*ReadFile(dir.path() + "/rota/l/cpu.max"), "200000 100000");
  EXPECT_EQ(*ReadFile(dir.path() + "/rota/l/memory.max"), "4096");
}

TEST(TaskCgroupTest, BadNamesAndMissingHierarchiesAreRefused) {
  TempDir dir;
  EXPECT_EQ(CreateTaskCgroups(dir.path(), "../x", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateTaskCgroups(dir.path(), "", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateTaskCgroups(dir.path(), "a", {}).status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(CgroupProcesses(dir.path() + "/none").empty());
}

}  // namespace
}  // namespace rota::agent

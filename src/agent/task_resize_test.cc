// Malleable tasks: ResizeTaskCgroups on fake v1 and v2 roots, and
// TaskRunner::Resize with the real `rota task-shim` (the resources file, the
// resize signal, stale generations, unknown and ended tasks; the real v1
// cpu and cpuset cgroups when the test runs as root).

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "agent/task_runner.h"
#include "agent/task_test_util.h"
#include "common/file_util.h"
#include "common/test_util.h"

namespace rota::agent {
namespace {

namespace fs = std::filesystem;
using testing_tasks::MakeRunner;
using testing_tasks::Read;
using testing_tasks::TempDir;
using testing_tasks::WaitEnded;

void FakeHierarchy(const std::string& dir) {
  fs::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomic(dir + "/cgroup.procs", "", 0644).ok());
}

TEST(TaskCgroupResizeTest, V1CpusetCgroupInheritsTheRootAndResizeRewritesQuotaAndCpus) {
  TempDir dir;
  for (const char* c : {"cpu", "cpuacct", "memory", "cpuset"}) FakeHierarchy(dir.path() + "/" + c);
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/cpuset/cpuset.cpus", "0-7\n", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/cpuset/cpuset.mems", "0\n", 0644).ok());
  CgroupLimits limits;
  limits.cpus = 1.5;
  limits.cpuset = "0-1";
  auto dirs = CreateTaskCgroups(dir.path(), "t", limits);
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  EXPECT_EQ(*dirs, (std::vector<std::string>{dir.path() + "/cpuacct/rota/t", dir.path() + "/cpu/rota/t",
                                             dir.path() + "/cpuset/rota/t"}));
  EXPECT_EQ(Read(dir.path() + "/cpuset/rota/cpuset.cpus"), "0-7");
  EXPECT_EQ(Read(dir.path() + "/cpuset/rota/cpuset.mems"), "0");
  EXPECT_EQ(Read(dir.path() + "/cpuset/rota/t/cpuset.mems"), "0");
  EXPECT_EQ(Read(dir.path() + "/cpuset/rota/t/cpuset.cpus"), "0-1");
  EXPECT_EQ(Read(dir.path() + "/cpu/rota/t/cpu.cfs_quota_us"), "150000");

  ASSERT_TRUE(ResizeTaskCgroups(*dirs, 0.5, "2").ok());
  EXPECT_EQ(Read(dir.path() + "/cpu/rota/t/cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(Read(dir.path() + "/cpu/rota/t/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(Read(dir.path() + "/cpuset/rota/t/cpuset.cpus"), "2");
  // No CPU list: the cpuset stays.
  ASSERT_TRUE(ResizeTaskCgroups(*dirs, 3, "").ok());
  EXPECT_EQ(Read(dir.path() + "/cpu/rota/t/cpu.cfs_quota_us"), "300000");
  EXPECT_EQ(Read(dir.path() + "/cpuset/rota/t/cpuset.cpus"), "2");

  // A task without a CPU list gets no cpuset cgroup.
  CgroupLimits plain;
  plain.cpus = 1;
  auto other = CreateTaskCgroups(dir.path(), "u", plain);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/cpuset/rota/u"));
}

TEST(TaskCgroupResizeTest, V1CpusetRootWithoutCpusIsRefused) {
  TempDir dir;
  for (const char* c : {"cpuacct", "cpuset"}) FakeHierarchy(dir.path() + "/" + c);
  CgroupLimits limits;
  limits.cpuset = "0";
  auto dirs = CreateTaskCgroups(dir.path(), "t", limits);
  ASSERT_FALSE(dirs.ok());
  EXPECT_NE(dirs.status().message().find("cpuset.cpus"), std::string::npos) << dirs.status().message();
}

TEST(TaskCgroupResizeTest, V2WritesCpuMaxAndCpusetCpus) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/cgroup.controllers", "cpuset cpu memory pids\n", 0644).ok());
  CgroupLimits limits;
  limits.cpus = 2;
  limits.cpuset = "0-3";
  auto dirs = CreateTaskCgroups(dir.path(), "m", limits);
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  EXPECT_EQ(*dirs, std::vector<std::string>{dir.path() + "/rota/m"});
  EXPECT_EQ(Read(dir.path() + "/rota/m/cpu.max"), "200000 100000");
  EXPECT_EQ(Read(dir.path() + "/rota/m/cpuset.cpus"), "0-3");
  ASSERT_TRUE(ResizeTaskCgroups(*dirs, 0.25, "1").ok());
  EXPECT_EQ(Read(dir.path() + "/rota/m/cpu.max"), "25000 100000");
  EXPECT_EQ(Read(dir.path() + "/rota/m/cpuset.cpus"), "1");
  // A CPU list alone makes a controlled cgroup too (not one below rota/plain).
  CgroupLimits only_list;
  only_list.cpuset = "2";
  auto listed = CreateTaskCgroups(dir.path(), "n", only_list);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, std::vector<std::string>{dir.path() + "/rota/n"});
}

TEST(TaskCgroupResizeTest, ResizeNeedsACpuControllerAndCores) {
  TempDir dir;
  fs::create_directories(dir.path() + "/x");
  EXPECT_EQ(ResizeTaskCgroups({dir.path() + "/x"}, 1, "").code(), StatusCode::kConflict);
  EXPECT_EQ(ResizeTaskCgroups({dir.path() + "/x"}, 0, "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResizeTaskCgroups({}, 1, "0").code(), StatusCode::kConflict);
}

// A task that appends its resources file to DIR/seen on each SIGUSR2 (Python:
// a shell cannot trap a signal that was ignored when it started, as the resize
// signal is until the task installs its handler).
TaskRequest MalleableTask(const std::string& id, const std::string& dir) {
  TaskRequest req;
  req.id = id;
  req.argv = {"/usr/bin/python3", "-c",
              "import os, signal, time\n"
              "def seen(*_):\n"
              "    with open('" + dir + "/seen', 'a') as f: f.write(open(os.environ['ROTA_RESOURCES_FILE']).read())\n"
              "signal.signal(signal.SIGUSR2, seen)\n"
              "with open('" + dir + "/ready', 'w') as f: f.write(os.environ['ROTA_RESIZE_SIGNAL'] + '\\n')\n"
              "while True: time.sleep(0.05)\n"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  req.malleable = true;
  req.limits.cpus = 1;
  req.limits.cpuset = "0";
  req.gpus = {2};
  req.resize_signal = "USR2";
  return req;
}

void CheckResize(TaskRunner& r, const TempDir& dir, bool cgroups) {
  auto st = r.Start(MalleableTask("m", dir.path()));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->state, TaskState::kRunning);
  const std::string file = dir.path() + "/tasks/m/" + TaskRunner::kResourcesFile;
  auto initial = api::ParseJson(Read(file));
  ASSERT_TRUE(initial.ok()) << Read(file);
  EXPECT_EQ((*initial)["generation"], 0);
  EXPECT_EQ((*initial)["cpus"], 1.0);
  EXPECT_EQ((*initial)["cpuset"], "0");
  EXPECT_EQ((*initial)["gpus"], api::Json::array({2}));
  ASSERT_TRUE(testutil::WaitFor([&] { return Read(dir.path() + "/ready") == "USR2\n"; })) << Read(dir.path() + "/ready");

  ASSERT_TRUE(r.Resize("m", 0.5, "0-1", 1).ok());
  ASSERT_TRUE(testutil::WaitFor([&] { return Read(dir.path() + "/seen").find("\"generation\":1") != std::string::npos; }))
      << Read(dir.path() + "/seen");
  auto now = api::ParseJson(Read(file));
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)["cpus"], 0.5);
  EXPECT_EQ((*now)["cpuset"], "0-1");
  EXPECT_EQ((*now)["gpus"], api::Json::array({2}));  // kept
  if (cgroups) {
    int cpu_dirs = 0, cpuset_dirs = 0;
    for (const auto& c : r.Cgroups("m")) {
      cpu_dirs += fs::exists(c + "/cpu.cfs_quota_us") || fs::exists(c + "/cpu.max") ? 1 : 0;
      cpuset_dirs += fs::exists(c + "/cpuset.cpus") ? 1 : 0;
      if (fs::exists(c + "/cpu.cfs_quota_us")) {
        EXPECT_EQ(Read(c + "/cpu.cfs_quota_us"), "50000\n") << c;
      }
      if (fs::exists(c + "/cpu.max")) {
        EXPECT_EQ(Read(c + "/cpu.max"), "50000 100000\n") << c;
      }
      if (fs::exists(c + "/cpuset.cpus")) {
        EXPECT_EQ(Read(c + "/cpuset.cpus"), "0-1\n") << c;
      }
    }
    EXPECT_EQ(cpu_dirs, 1);
    EXPECT_EQ(cpuset_dirs, 1);
    // The kernel applies the CPU list to the task's process.
    auto status = ReadFile("/proc/" + std::to_string(st->pid) + "/status");
    ASSERT_TRUE(status.ok());
    EXPECT_NE(status->find("Cpus_allowed_list:\t0-1\n"), std::string::npos) << *status;
  }
  // A late (stale) resize and an unknown task are refused; nothing changes.
  Status stale = r.Resize("m", 2, "0", 1);
  EXPECT_EQ(stale.code(), StatusCode::kConflict) << stale.ToString();
  EXPECT_NE(stale.message().find("not newer"), std::string::npos) << stale.message();
  EXPECT_EQ(r.Resize("nope", 1, "", 5).code(), StatusCode::kNotFound);
  EXPECT_EQ((*api::ParseJson(Read(file)))["cpus"], 0.5);
  // A CPU list left out keeps the current one.
  ASSERT_TRUE(r.Resize("m", 1.25, "", 2).ok());
  EXPECT_EQ((*api::ParseJson(Read(file)))["cpuset"], "0-1");
  ASSERT_TRUE(r.Signal("m", SIGKILL).ok());
  ASSERT_EQ(WaitEnded(r, "m").state, TaskState::kExited);
  EXPECT_EQ(r.Resize("m", 1, "", 3).code(), StatusCode::kConflict);
}

TEST(TaskRunnerResizeTest, ResizeRewritesTheResourcesFileAndSignalsTheTask) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  r.set_cgroup_root("");
  CheckResize(r, dir, /*cgroups=*/false);
}

TEST(TaskRunnerResizeTest, ResizeRewritesTheRealCgroups) {
  if (::geteuid() != 0 || ::access("/sys/fs/cgroup/cpu/cgroup.procs", W_OK) != 0 ||
      ::access("/sys/fs/cgroup/cpuset/cgroup.procs", W_OK) != 0) {
    GTEST_SKIP() << "needs root and writable cgroup v1 cpu and cpuset hierarchies";
  }
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  CheckResize(r, dir, /*cgroups=*/true);
}

// The resize signal starts ignored: a task resized before it installs a handler,
// or one that never does, keeps running.
TEST(TaskRunnerResizeTest, ATaskWithoutAHandlerSurvivesTheSignal) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  r.set_cgroup_root("");
  TaskRequest req;
  req.id = "h";
  req.argv = {"/bin/sleep", "30"};
  req.malleable = true;
  req.limits.cpus = 1;
  ASSERT_TRUE(r.Start(req).ok());
  ASSERT_TRUE(r.Resize("h", 0.5, "", 1).ok());
  ASSERT_TRUE(r.Resize("h", 0.25, "", 2).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto st = r.Poll("h");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->state, TaskState::kRunning) << (st->exit ? st->exit->Code() : 0);
  ASSERT_TRUE(r.Signal("h", SIGKILL).ok());
  WaitEnded(r, "h");
}

TEST(TaskRunnerResizeTest, ATaskThatIsNotMalleableIsNotResized) {
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  r.set_cgroup_root("");
  TaskRequest req;
  req.id = "p";
  req.argv = {"/bin/sleep", "30"};
  ASSERT_TRUE(r.Start(req).ok());
  Status st = r.Resize("p", 1, "", 1);
  EXPECT_EQ(st.code(), StatusCode::kConflict);
  EXPECT_NE(st.message().find("not malleable"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir.path() + "/tasks/p/" + TaskRunner::kResourcesFile));
  ASSERT_TRUE(r.Signal("p", SIGKILL).ok());
  WaitEnded(r, "p");
}

}  // namespace
}  // namespace rota::agent

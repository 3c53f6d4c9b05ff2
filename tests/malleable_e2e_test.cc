// Malleable CPU parallelism end to end: a real `rota server` and `rota agent`;
// two `rota run --malleable 0.5:N` jobs whose Python tasks follow their
// allotment with rota's helper (python/rota/malleable.py). The first runs
// alone with the whole node; when the second starts, the first is resized to
// its share (new resources file + SIGUSR1) and grows back when the second ends.
// Each resize is an event of the job.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "common/file_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

constexpr char kFollower[] = R"py(
import os, sys, time
sys.path.insert(0, os.environ["ROTA_PY"])
from rota import malleable
def show(res, threads):
    print("gen %d cpus %g cpuset %s threads %d" % (res.generation, res.cpus,
          ",".join(map(str, res.cpuset)), threads), flush=True)
follower = malleable.follow(show)
deadline = time.time() + 90
while not os.path.exists(os.environ["STOP_FILE"]) and time.time() < deadline:
    time.sleep(0.05)
print("done after %d changes" % follower.changes, flush=True)
)py";

class MalleableE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ::chmod(dir_.path().c_str(), 0755);
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    node_ = "cpu-m-" + std::to_string(::getpid());
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = node_, .gpus = 0}, *server_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, node_); }, seconds(20)));
    cpus_ = NodeJson(*server_, node_).value("cpus", 0);
    Json extra{{"unix_user", ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name}};
    auto a = server_->CreateUser("alice", "user", extra);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    env_ = server_->CliEnv();
    env_["ROTA_TOKEN"] = *a;
    script_ = dir_.path() + "/follow.py";
    ASSERT_TRUE(WriteFileAtomic(script_, kFollower, 0644).ok());
  }

  int64_t Run(const std::string& stop_file) {
    CliResult r = RunCli({"run", "--name", "m", "--malleable", "0.5:" + std::to_string(cpus_), "--workdir", "/tmp",
                          "-o", "json", "--node", node_, "--env", std::string("ROTA_PY=") + ROTA_PYTHON_DIR,
                          "--env", "STOP_FILE=" + stop_file, "--", "/usr/bin/python3", script_},
                         env_);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto j = Json::parse(r.out, nullptr, false);
    return j.is_object() ? j.value("id", int64_t{0}) : 0;
  }

  std::string Log(int64_t id) { return RunCli({"logs", std::to_string(id)}, env_).out; }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
  std::string node_, script_;
  int cpus_ = 0;
  std::map<std::string, std::string> env_;
};

TEST_F(MalleableE2E, ARunningTaskIsResizedWhenAnotherStartsAndEnds) {
  ASSERT_GE(cpus_, 1) << NodeJson(*server_, node_).dump();
  const std::string all = std::to_string(cpus_);
  const std::string half = cpus_ == 1 ? "0.5" : std::to_string(cpus_ / 2);
  const int64_t first = Run(dir_.path() + "/stop-1");
  ASSERT_GT(first, 0);
  ASSERT_TRUE(WaitFor([&] { return Log(first).find("gen 0 cpus " + all + " ") != std::string::npos; }, seconds(30)))
      << Log(first) << server_->GetJson("/api/v1/jobs/" + std::to_string(first))->dump(2);

  const int64_t second = Run(dir_.path() + "/stop-2");
  ASSERT_GT(second, 0);
  ASSERT_TRUE(WaitFor([&] { return Log(second).find("gen 0 cpus " + half + " ") != std::string::npos; }, seconds(30)))
      << Log(second);
  // The first task saw its new allotment through the file and the signal.
  ASSERT_TRUE(WaitFor([&] {
    const std::string log = Log(first);
    return log.find("cpus " + half + " ") != std::string::npos && log.find("gen 0 cpus " + half) == std::string::npos;
  }, seconds(30))) << Log(first);

  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/stop-2", "", 0644).ok());
  Json end2 = WaitJobEnd(*server_, second, seconds(60));
  ASSERT_EQ(end2.value("state", ""), "succeeded") << end2.dump(2) << Log(second);
  // It grows back to the whole node.
  ASSERT_TRUE(WaitFor([&] {
    const std::string log = Log(first);
    const size_t shrunk = log.find("cpus " + half + " ");
    return shrunk != std::string::npos && log.find("cpus " + all + " ", shrunk) != std::string::npos;
  }, seconds(30))) << Log(first);

  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/stop-1", "", 0644).ok());
  Json end1 = WaitJobEnd(*server_, first, seconds(60));
  ASSERT_EQ(end1.value("state", ""), "succeeded") << end1.dump(2) << Log(first);
  EXPECT_NE(Log(first).find("done after 3 changes"), std::string::npos) << Log(first);
  int resized = 0;
  for (const auto& e : end1["events"]) resized += e.value("reason", "").rfind("resized: ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(resized, 2) << end1["events"].dump(2);
  // `rota job show` lists them.
  CliResult show = RunCli({"job", "show", std::to_string(first)}, env_);
  EXPECT_NE(show.out.find("resized: "), std::string::npos) << show.out << show.err;
}

}  // namespace
}  // namespace rota::testing

// `rota dev` and `rota server` as a user runs them.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <regex>

#include "common/file_util.h"
#include "common/process.h"
#include "common/strings.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

TEST(DevTest, StartsServerAndThreeSimulatedNodesThenStopsCleanly) {
  TempDir dir;
  Child dev({RotaBinary(), "dev", "--listen", "127.0.0.1:0", "--data-dir", dir.path() + "/data",
             "--interval", "0.5s"},
            {}, dir.path() + "/dev.log");
  ASSERT_TRUE(dev.Start().ok());
  std::string url, token;
  ASSERT_TRUE(WaitFor([&] {
    std::smatch m;
    std::string log = dev.Log();
    static const std::regex re(
        "export ROTA_SERVER=(http://127\\.0\\.0\\.1:[0-9]+) ROTA_TOKEN=(rota_[0-9a-f_]+)");
    if (!std::regex_search(log, m, re)) return false;
    url = m[1];
    token = m[2];
    return true;
  }, seconds(30))) << dev.Log();
  // The first printed token is the demo user's; without it reads are refused.
  EXPECT_NE(RunCli({"nodes"}, {{"ROTA_SERVER", url}}).exit_code, 0);
  std::map<std::string, std::string> env = {{"ROTA_SERVER", url}, {"ROTA_TOKEN", token}};
  api::Json nodes;
  ASSERT_TRUE(WaitFor([&] {
    CliResult r = RunCli({"nodes", "-o", "json"}, env);
    if (r.exit_code != 0) return false;
    auto j = api::ParseJson(r.out);
    if (!j.ok() || j->size() != 3) return false;
    nodes = *j;
    for (const auto& n : nodes) {
      if (n["state"] != "ready") return false;
    }
    return true;
  }, seconds(30))) << dev.Log();
  // Tasks run as their owners and must reach their task directories (the
  // preemption notice): the way down is traversable; the server's is private.
  for (const char* d : {"/data", "/data/nodes", "/data/nodes/gpu-a"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir.path() + d).c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0711u) << d;
  }
  struct stat server_dir {};
  ASSERT_EQ(::stat((dir.path() + "/data/server").c_str(), &server_dir), 0);
  EXPECT_EQ(server_dir.st_mode & 0077, 0u);
  std::map<std::string, int> gpus;
  for (const auto& n : nodes) gpus[n["name"]] = n["gpu_count"];
  EXPECT_EQ(gpus, (std::map<std::string, int>{{"gpu-a", 8}, {"gpu-b", 4}, {"gpu-c", 2}}));

  // A process started "by hand" with CUDA_VISIBLE_DEVICES lands on the default node.
  SpawnOptions opts;
  opts.env = {{"CUDA_VISIBLE_DEVICES", "2"}};
  auto pid = SpawnProcess({"sleep", "120"}, opts);
  ASSERT_TRUE(pid.ok());
  bool seen = WaitFor([&] {
    CliResult r = RunCli({"gpus", "-o", "json", "--node", "gpu-a"}, env);
    auto j = api::ParseJson(r.out);
    if (!j.ok()) return false;
    for (const auto& g : *j) {
      if (g["index"] == 2 && !g["processes"].empty()) return g["processes"][0]["pid"] == *pid;
    }
    return false;
  }, seconds(15));
  StopProcess(*pid, 1000);
  EXPECT_TRUE(seen);

  // A job still running when the demo stops is stopped with it: its simulated
  // node is gone, and nothing would ever adopt its task again.
  if (::geteuid() == 0) {  // alice is this Unix account: as root her jobs are refused
    std::smatch m;
    const std::string log = dev.Log();
    static const std::regex admin_re("as the admin:\n  export ROTA_SERVER=\\S+ ROTA_TOKEN=(rota_[0-9a-f_]+)");
    ASSERT_TRUE(std::regex_search(log, m, admin_re)) << log;
    CliResult set = RunCli({"user", "set", "alice", "--unix-user", "nobody"},
                           {{"ROTA_SERVER", url}, {"ROTA_TOKEN", m[1].str()}});
    ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  }
  CliResult run = RunCli({"run", "--gpus-per-task", "1", "-o", "json", "--", "sleep", "6171"}, env);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto job = api::ParseJson(run.out);
  ASSERT_TRUE(job.ok()) << run.out;
  const std::string id = std::to_string((*job)["id"].get<int64_t>());
  pid_t task_pid = 0;
  ASSERT_TRUE(WaitFor([&] {
    auto j = api::ParseJson(RunCli({"job", "show", id, "-o", "json"}, env).out);
    if (!j.ok() || (*j)["state"] != "running" || (*j)["tasks"].empty()) return false;
    task_pid = (*j)["tasks"][0].value("pid", 0);
    return task_pid > 1;
  }, seconds(30))) << dev.Log();
  ASSERT_EQ(::kill(task_pid, 0), 0);

  dev.Signal(SIGINT);
  auto st = WaitProcess(dev.pid(), 15000);
  ASSERT_TRUE(st.ok()) << dev.Log();
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << dev.Log();
  EXPECT_NE(dev.Log().find("stopped; data kept in"), std::string::npos);
  EXPECT_NE(dev.Log().find("stopped 1 running job task(s)"), std::string::npos) << dev.Log();
  EXPECT_TRUE(WaitFor([&] { return ::kill(task_pid, 0) != 0; }, seconds(5))) << "the job's task outlived rota dev";
  // The agents are gone with it.
  EXPECT_NE(RunCli({"nodes"}, env).exit_code, 0);
}

TEST(ServerCommandTest, PrintConfigMergesFileEnvAndFlags) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/s.yaml", "listen: 0.0.0.0:9000\nraw_retention: 6h\nlog_level: debug\n").ok());
  CliResult r = RunCli({"server", "--config", dir.path() + "/s.yaml", "--listen", "127.0.0.1:9100",
                        "--print-config"},
                       {{"ROTA_RAW_RETENTION", "2h"}, {"ROTA_JOIN_TOKEN", "abcdefabcdefabcdef"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("listen: 127.0.0.1:9100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("raw_retention: 2h"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("log_level: debug"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("abcdefabcdefabcdef"), std::string::npos) << "secret printed";
}

// Bad inputs tried: unknown key in the file, bad env value, missing file, bad flag value,
// agent without token, agent with a bad interval, agent with a bad label.
TEST(ServerCommandTest, BadConfigurationExitsWithUsageStatus) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/bad.yaml", "lissen: 1\n").ok());
  CliResult a = RunCli({"server", "--config", dir.path() + "/bad.yaml", "--print-config"});
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("unknown setting 'lissen'"), std::string::npos) << a.err;
  CliResult b = RunCli({"server", "--print-config"}, {{"ROTA_RAW_RETENTION", "soon"}});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("ROTA_RAW_RETENTION"), std::string::npos) << b.err;
  CliResult c = RunCli({"server", "--config", dir.path() + "/missing.yaml"});
  EXPECT_EQ(c.exit_code, 2);
  CliResult d = RunCli({"server", "--listen", "nowhere", "--print-config"});
  EXPECT_EQ(d.exit_code, 2);
  CliResult e = RunCli({"agent", "--server", "http://127.0.0.1:1"}, {{"ROTA_JOIN_TOKEN", ""}});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("join token is required"), std::string::npos) << e.err;
  CliResult f = RunCli({"agent", "--server", "http://127.0.0.1:1", "--token", "t", "--interval", "0.1s"});
  EXPECT_EQ(f.exit_code, 2);
  EXPECT_NE(f.err.find("between 0.5s and 60s"), std::string::npos) << f.err;
  CliResult g = RunCli({"agent", "--server", "http://127.0.0.1:1", "--token", "t", "--label", "novalue"});
  EXPECT_EQ(g.exit_code, 2);
  CliResult h = RunCli({"agent", "--server", "127.0.0.1:1", "--token", "t"});
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_NE(h.err.find("must look like http://"), std::string::npos) << h.err;
}

TEST(ServerCommandTest, JoinTokenIsGeneratedOnceWithPrivateMode) {
  TempDir dir;
  ServerProcess s(dir.path() + "/data");
  ASSERT_TRUE(s.Start().ok());  // harness passes --join-token; start a second without one
  s.child().Stop();
  Child plain({RotaBinary(), "server", "--listen", "127.0.0.1:0", "--data-dir", dir.path() + "/fresh"}, {},
              dir.path() + "/fresh.log");
  ASSERT_TRUE(plain.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir.path() + "/fresh/server.url").ok(); }, seconds(20)))
      << plain.Log();
  auto token = ReadFile(dir.path() + "/fresh/join-token");
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(Trim(*token).size(), 48u);
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/fresh/join-token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(plain.Stop(), 0);
}

}  // namespace
}  // namespace rota::testing

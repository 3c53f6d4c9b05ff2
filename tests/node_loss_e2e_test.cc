// Node loss end to end: `rota server` and real agents on simulated nodes. A
// node whose agent froze comes back and stops the task of a superseded launch;
// a link taken down in a network namespace is seen from both ends; a node cut
// off from its server (dead or frozen) stops the tasks of the jobs that opted in.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "common/clock.h"
#include "common/process.h"
#include "common/time_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

// A node whose agent stops answering (frozen, its task still running): the gang
// restarts elsewhere; when the agent answers again, its task of the superseded
// launch is stopped, and its GPU is not handed out while that task lives.
TEST(NodeLossE2E, AReturningNodeStopsTheTaskOfASupersededLaunch) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: jobs run as nobody";
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  server.SetEnv("ROTA_JOB_PORTS", "30500-30999");
  ASSERT_TRUE(server.Start().ok()) << server.child().Log();
  std::vector<std::unique_ptr<AgentProcess>> agents;
  // Node names of this test process's own (simulated processes are found by node name).
  const std::string suffix = "-" + std::to_string(::getpid());
  for (const char* name : {"gpu-l1", "gpu-l2", "gpu-l3"}) {
    agents.push_back(
        std::make_unique<AgentProcess>(dir.path(), SimGpuNode{.name = name + suffix, .gpus = 1}, server));
    ASSERT_TRUE(agents.back()->Start().ok());
  }
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, "gpu-l1" + suffix) && NodeReady(server, "gpu-l2" + suffix) &&
                                   NodeReady(server, "gpu-l3" + suffix); }, seconds(20)));
  auto alice = server.CreateUser("alice", "user", Json{{"unix_user", "nobody"}});
  ASSERT_TRUE(alice.ok());
  Json spec{{"name", "gang"}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
            {"restart", {{"policy", "on-failure"}, {"backoff", "1s"}}},
            {"groups", {{{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 1}}}}};
  auto r = server.CallAs(*alice, "POST", "/api/v1/jobs", spec.dump());
  ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  const std::string path = "/api/v1/jobs/" + std::to_string(Json::parse(r->body)["id"].get<int64_t>());
  auto job = [&] {
    auto j = server.GetJson(path);
    return j.ok() ? *j : Json::object();
  };
  ASSERT_TRUE(WaitFor([&] {
    Json j = job();
    if (j.value("state", "") != "running") return false;
    for (const auto& t : j["tasks"]) if (t.value("pid", 0) == 0) return false;
    return true;
  }, seconds(30))) << job().dump(2);
  const Json first = job()["tasks"][0];
  const std::string node = first["node"];
  const pid_t pid = first["pid"].get<pid_t>();
  AgentProcess* frozen = nullptr;
  for (auto& a : agents) {
    if (a->node_name() == node) frozen = a.get();
  }
  ASSERT_NE(frozen, nullptr);
  frozen->child().Signal(SIGSTOP);
  // The gang restarts on the two other nodes.
  ASSERT_TRUE(WaitFor([&] {
    Json j = job();
    if (j.value("restart_count", 0) < 1 || j.value("state", "") != "running") return false;
    for (const auto& t : j["tasks"]) if (t.value("node", "") == node) return false;
    return true;
  }, seconds(60))) << job().dump(2);
  ASSERT_EQ(::kill(pid, 0), 0) << "the frozen node's task still runs";
  const int64_t back_ms = RealClock::Get().NowMs();
  frozen->child().Signal(SIGCONT);
  // Back: the superseded task is stopped.
  EXPECT_TRUE(WaitFor([&] { return ::kill(pid, 0) != 0; }, seconds(30)))
      << "task " << pid << " of the superseded launch still runs on " << node;
  // The job's events say so, dated when it was done (not when the gang moved).
  bool told = false;
  for (const auto& e : job().value("events", Json::array())) {
    if (e.value("reason", "").find("left from a launch superseded") == std::string::npos) continue;
    told = true;
    auto at = ParseRfc3339(e.value("time", ""));
    ASSERT_TRUE(at.ok()) << e.dump();
    EXPECT_GE(*at, back_ms - 1000) << e.dump();
  }
  EXPECT_TRUE(told) << job().dump(2);
  auto c = server.CallAs(*alice, "POST", path + "/cancel");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(WaitJobEnd(server, Json::parse(r->body)["id"].get<int64_t>(), seconds(60)).value("state", ""),
            "cancelled");
}

// A node cut off from the server stops the tasks of a job that opted in
// (stop_after_disconnect) once the outage lasts that long, and reports why when
// the server is back; a job that did not opt in keeps running. The server is
// either killed (the connection drops at once) or frozen (the agent gives up on
// a silent server after its --server-timeout, 2 s here).
void CutOffStopsTheJobsThatOptedIn(bool freeze) {
  TempDir dir;
  auto server = std::make_unique<ServerProcess>(dir.path() + "/server");
  ASSERT_TRUE(server->Start().ok()) << server->child().Log();
  const std::string node = "gpu-d-" + std::to_string(::getpid());
  AgentProcess agent(dir.path(), SimGpuNode{.name = node, .gpus = 2}, *server, {"--server-timeout", "2s"});
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server, node); }, seconds(20)));
  auto alice = server->CreateUser("alice", "user", Json{{"unix_user", "nobody"}});
  ASSERT_TRUE(alice.ok());
  auto submit = [&](const std::string& name, const char* stop_after) {
    Json spec{{"name", name}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 1}}}}};
    if (stop_after) spec["stop_after_disconnect"] = stop_after;
    auto r = server->CallAs(*alice, "POST", "/api/v1/jobs", spec.dump());
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() && r->status == 201 ? Json::parse(r->body)["id"].get<int64_t>() : int64_t{0};
  };
  const int64_t opted = submit("opted-in", "3s");
  const int64_t kept = submit("kept", nullptr);
  ASSERT_GT(opted, 0);
  ASSERT_GT(kept, 0);
  auto pid_of = [&](int64_t id) -> pid_t {
    auto j = server->GetJson("/api/v1/jobs/" + std::to_string(id));
    if (!j.ok() || j->value("state", "") != "running" || (*j)["tasks"].empty()) return 0;
    return (*j)["tasks"][0].value("pid", 0);
  };
  ASSERT_TRUE(WaitFor([&] { return pid_of(opted) > 0 && pid_of(kept) > 0; }, seconds(30)));
  const pid_t opted_pid = pid_of(opted), kept_pid = pid_of(kept);
  const std::string data_dir = server->data_dir();
  const uint16_t port = server->port();
  server->child().Signal(freeze ? SIGSTOP : SIGKILL);
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return ::kill(opted_pid, 0) != 0; }, seconds(30)))
      << "the opted-in task still runs without its server";
  // Killed: the outage starts at the cut. Frozen: the agent counts it from when it gives up
  // on the silent server, --server-timeout (2 s) after the last message it heard, which
  // came up to one sample interval (0.5 s) before the cut. Either way, 3 s more must pass.
  EXPECT_GE(std::chrono::steady_clock::now() - cut, std::chrono::milliseconds(freeze ? 4400 : 2900))
      << "stopped before the outage lasted 3 s";
  EXPECT_EQ(::kill(kept_pid, 0), 0) << "a job that did not opt in was stopped";
  // The server is back: the end is reported with why; the other job runs on.
  if (freeze) {
    server->child().Signal(SIGCONT);
  } else {
    server = std::make_unique<ServerProcess>(data_dir, port);
    ASSERT_TRUE(server->Start().ok()) << server->child().Log();
  }
  Json ended = WaitJobEnd(*server, opted, seconds(60));
  EXPECT_EQ(ended.value("state", ""), "failed") << ended.dump(2);
  EXPECT_NE(ended.value("reason", "").find("no contact with the server"), std::string::npos) << ended.dump(2);
  auto k = server->GetJson("/api/v1/jobs/" + std::to_string(kept));
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->value("state", ""), "running") << k->dump(2);
  auto c = server->CallAs(*alice, "POST", "/api/v1/jobs/" + std::to_string(kept) + "/cancel");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(WaitJobEnd(*server, kept, seconds(60)).value("state", ""), "cancelled");
}

// Runs a command (argv) and returns its exit status (-1 when it could not run).
int Run(const std::vector<std::string>& argv) {
  auto pid = SpawnProcess(argv, SpawnOptions{});
  if (!pid.ok()) return -1;
  auto status = WaitProcess(*pid, 10'000);
  return status.ok() ? *status : -1;
}

// A network namespace joined to this one by a veth pair (/30): host_addr here,
// ns_addr inside. Taking the link down cuts it off without closing anything:
// both ends only hear silence. Needs root and iproute2.
class LinkedNetns {
 public:
  LinkedNetns() {
    const int pid = ::getpid();
    name_ = "rota-t" + std::to_string(pid);
    host_if_ = "rh" + std::to_string(pid);
    const std::string ns_if = "rn" + std::to_string(pid);
    const std::string net = "10.213." + std::to_string((pid >> 6) & 255) + ".";
    const int base = (pid & 63) * 4;
    host_addr_ = net + std::to_string(base + 1);
    ns_addr_ = net + std::to_string(base + 2);
    ok_ = Run({"/usr/sbin/ip", "netns", "add", name_}) == 0 &&
          Run({"/usr/sbin/ip", "link", "add", host_if_, "type", "veth", "peer", "name", ns_if}) == 0 &&
          Run({"/usr/sbin/ip", "link", "set", ns_if, "netns", name_}) == 0 &&
          Run({"/usr/sbin/ip", "addr", "add", host_addr_ + "/30", "dev", host_if_}) == 0 &&
          Run({"/usr/sbin/ip", "link", "set", host_if_, "up"}) == 0 &&
          Run({"/usr/sbin/ip", "-n", name_, "addr", "add", ns_addr_ + "/30", "dev", ns_if}) == 0 &&
          Run({"/usr/sbin/ip", "-n", name_, "link", "set", ns_if, "up"}) == 0 &&
          Run({"/usr/sbin/ip", "-n", name_, "link", "set", "lo", "up"}) == 0;
  }
  ~LinkedNetns() {
    Run({"/usr/sbin/ip", "netns", "del", name_});  // takes the veth pair with it
    Run({"/usr/sbin/ip", "link", "del", host_if_});
  }
  bool ok() const { return ok_; }
  bool SetLink(bool up) { return Run({"/usr/sbin/ip", "link", "set", host_if_, up ? "up" : "down"}) == 0; }
  const std::string& name() const { return name_; }
  const std::string& host_addr() const { return host_addr_; }

 private:
  std::string name_, host_if_, host_addr_, ns_addr_;
  bool ok_ = false;
};

// A node behind a link that goes down: the server finds it unreachable and
// restarts the gang elsewhere; the node, hearing nothing from the server, stops
// its task of the job (which opted in to stop_after_disconnect) by itself, so
// no second copy runs while the link is down; when the link is back the job
// runs on, once.
TEST(NodeLossE2E, ALinkDownIsSeenFromBothEnds) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, jobs run as nobody";
  if (::access("/usr/sbin/ip", X_OK) != 0) GTEST_SKIP() << "needs iproute2 (/usr/sbin/ip)";
  LinkedNetns ns;
  ASSERT_TRUE(ns.ok()) << "cannot make a network namespace";
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  server.SetListenHost(ns.host_addr());
  ASSERT_TRUE(server.Start().ok()) << server.child().Log();
  const std::string suffix = "-" + std::to_string(::getpid());
  const std::string far = "gpu-far" + suffix, near = "gpu-near" + suffix;
  AgentProcess far_agent(dir.path(), SimGpuNode{.name = far, .gpus = 1}, server, {"--server-timeout", "2s"});
  far_agent.UseNetns(ns.name(), server.url());
  ASSERT_TRUE(far_agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, far); }, seconds(20))) << far_agent.child().Log();
  auto alice = server.CreateUser("alice", "user", Json{{"unix_user", "nobody"}});
  ASSERT_TRUE(alice.ok());
  Json spec{{"name", "far"}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
            {"restart", {{"policy", "on-failure"}, {"backoff", "1s"}}}, {"stop_after_disconnect", "3s"},
            {"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 1}}}}};
  auto r = server.CallAs(*alice, "POST", "/api/v1/jobs", spec.dump());
  ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  const int64_t id = Json::parse(r->body)["id"].get<int64_t>();
  auto job = [&] {
    auto j = server.GetJson("/api/v1/jobs/" + std::to_string(id));
    return j.ok() ? *j : Json::object();
  };
  ASSERT_TRUE(WaitFor([&] {
    Json j = job();
    return j.value("state", "") == "running" && !j["tasks"].empty() && j["tasks"][0].value("pid", 0) > 0;
  }, seconds(30))) << job().dump(2);
  const pid_t far_pid = job()["tasks"][0]["pid"].get<pid_t>();
  AgentProcess near_agent(dir.path(), SimGpuNode{.name = near, .gpus = 1}, server);
  ASSERT_TRUE(near_agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, near); }, seconds(20)));

  ASSERT_TRUE(ns.SetLink(false));
  // The node stops its task by itself...
  EXPECT_TRUE(WaitFor([&] { return ::kill(far_pid, 0) != 0; }, seconds(30)))
      << "the task still runs on the node cut off";
  // ...and the server restarts the job on the other node.
  ASSERT_TRUE(WaitFor([&] {
    Json j = job();
    return j.value("state", "") == "running" && j.value("restart_count", 0) >= 1 && !j["tasks"].empty() &&
           j["tasks"][0].value("node", "") == near && j["tasks"][0].value("pid", 0) > 0;
  }, seconds(60))) << job().dump(2);
  ASSERT_TRUE(ns.SetLink(true));
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, far); }, seconds(30))) << "the node did not come back";
  Json j = job();
  EXPECT_EQ(j.value("state", ""), "running") << j.dump(2);
  EXPECT_EQ(j["tasks"][0].value("node", ""), near) << j.dump(2);
  auto c = server.CallAs(*alice, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(WaitJobEnd(server, id, seconds(60)).value("state", ""), "cancelled");
}

TEST(NodeLossE2E, ANodeWhoseServerDiedStopsTheJobsThatOptedIn) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: jobs run as nobody";
  CutOffStopsTheJobsThatOptedIn(false);
}

TEST(NodeLossE2E, ANodeWhoseServerFrozeStopsTheJobsThatOptedIn) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: jobs run as nobody";
  CutOffStopsTheJobsThatOptedIn(true);
}

}  // namespace
}  // namespace rota::testing

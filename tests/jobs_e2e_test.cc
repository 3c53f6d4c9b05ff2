// Jobs end to end: `rota server` and two real agents on simulated nodes; jobs
// submitted through the API and the CLI run as their owner's Unix user, with
// the framework environment rota generates, restart as a gang after a failure,
// can be cancelled, and bad requests are refused.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "common/process.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

// Checks that TF_CONFIG and the TF1-style flags describe one cluster, listens
// on its own port and connects to every other task, then prints "ok".
constexpr char kTfCheck[] = R"py(
import json, os, socket, sys, time
cfg = json.loads(os.environ["TF_CONFIG"])
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:])
cluster, task = cfg["cluster"], cfg["task"]
assert flags["job_name"] == task["type"], (flags, task)
assert int(flags["task_index"]) == task["index"], (flags, task)
assert flags["ps_hosts"].split(",") == cluster["ps"], (flags, cluster)
assert flags["worker_hosts"].split(",") == cluster["worker"], (flags, cluster)
assert len(cluster["chief"]) == 1 and len(cluster["worker"]) == 2 and len(cluster["ps"]) == 1
me = cluster[task["type"]][task["index"]]
host, port = me.rsplit(":", 1)
assert port == os.environ["ROTA_PORT"], (port, os.environ["ROTA_PORT"])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("", int(port)))
srv.listen(16)
srv.settimeout(0.2)
others = [a for role in cluster.values() for a in role if a != me]
pending, deadline = set(others), time.time() + 60
while pending and time.time() < deadline:
    for addr in list(pending):
        h, p = addr.rsplit(":", 1)
        try:
            socket.create_connection((h, int(p)), timeout=1).close()
            pending.discard(addr)
        except OSError:
            pass
    try:
        srv.accept()[0].close()
    except OSError:
        pass
    time.sleep(0.1)
assert not pending, pending
print("ok", task["type"], task["index"], os.environ["CUDA_VISIBLE_DEVICES"], flush=True)
end = time.time() + 3  # let slower peers reach us (the job ends when the chief does)
while time.time() < end:
    try:
        srv.accept()[0].close()
    except OSError:
        pass
)py";

// MPI launcher: the hostfile and ROTA_MPI_HOSTS name the workers' addresses with
// one slot per GPU, {num_procs} is their sum.
constexpr char kMpiCheck[] = R"py(
import json, os, sys
hostfile = open(os.environ["ROTA_HOSTFILE"]).read().split("\n")
lines = [l for l in hostfile if l]
slots = {l.split()[0]: int(l.split()[1].split("=")[1]) for l in lines}
hosts = dict((h.rsplit(":", 1)[0], int(h.rsplit(":", 1)[1])) for h in os.environ["ROTA_MPI_HOSTS"].split(","))
assert slots == hosts, (slots, hosts)
assert sum(slots.values()) == int(sys.argv[1]) == 4, (slots, sys.argv)
assert sys.argv[2] == os.environ["ROTA_HOSTFILE"], sys.argv
print("hostfile ok", json.dumps(slots))
)py";

// JAX: every process agrees on the coordinator and the process count, process 0
// listens on the coordinator's port and every other process reaches it.
constexpr char kJaxCheck[] = R"py(
import os, socket, time
coord, n, pid = os.environ["COORDINATOR_ADDRESS"], int(os.environ["NUM_PROCESSES"]), int(os.environ["PROCESS_ID"])
assert n == 3 and 0 <= pid < n, (n, pid)
host, port = coord.rsplit(":", 1)
hosts = os.environ["ROTA_HOSTS"].split(",")
assert host == hosts[0] and port == os.environ["ROTA_PORTS"].split(",")[0], (coord, hosts)
if pid == 0:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("", int(port)))
    srv.listen(8)
    srv.settimeout(60)
    for _ in range(n - 1):
        srv.accept()[0].close()
else:
    deadline = time.time() + 60
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            break
        except OSError:
            assert time.time() < deadline, "coordinator unreachable"
            time.sleep(0.1)
print("jax ok", pid, n, coord)
)py";

class JobsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    server_->SetEnv("ROTA_JOB_PORTS", "31000-31499");  // apart from other tests running at once
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    for (const char* name : {"gpu-x", "gpu-y"}) {
      agents_.push_back(std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = name, .gpus = 2},
                                                       *server_));
      ASSERT_TRUE(agents_.back()->Start().ok());
    }
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "gpu-x") && NodeReady(*server_, "gpu-y"); },
                        seconds(20)));
    // Jobs run as the owner's Unix user: `nobody` when we are root.
    Json extra = Json::object();
    if (::geteuid() == 0) extra["unix_user"] = "nobody";
    else extra["unix_user"] = ::getpwuid(::geteuid())->pw_name;
    auto a = server_->CreateUser("alice", "user", extra);
    auto b = server_->CreateUser("bob", "user", extra);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    alice_ = *a;
    bob_ = *b;
    script_ = dir_.path() + "/tf_check.py";
    ASSERT_TRUE(WriteFileAtomic(script_, kTfCheck, 0644).ok());
    ::chmod(dir_.path().c_str(), 0755);
  }

  Result<Json> Submit(const Json& spec, const std::string& token) {
    ASSIGN_OR_RETURN(auto r, server_->CallAs(token, "POST", "/api/v1/jobs", spec.dump()));
    if (r.status != 201) return Status::InvalidArgument(std::to_string(r.status) + " " + r.body);
    return Json::parse(r.body);
  }

  Json WaitEnd(int64_t id) { return WaitJobEnd(*server_, id, seconds(90)); }

  std::string Log(int64_t id, const std::string& task, const std::string& token) {
    auto r = server_->CallAs(token, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs?task=" + task);
    if (!r.ok() || r->status != 200) return "<" + (r.ok() ? r->body : r.status().message()) + ">";
    return Json::parse(r->body).value("data", "");
  }

  std::string StderrLog(int64_t id, const std::string& task) {
    auto r = server_->CallAs(alice_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs?stream=stderr&task=" + task);
    return r.ok() ? r->body : r.status().message();
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
  std::string alice_, bob_, script_;
};

TEST_F(JobsE2E, TensorflowClusterIsConsistentAndEveryAddressReachable) {
  Json spec{{"name", "tf-check"},
            {"framework", "tensorflow"},
            {"command", {"/usr/bin/python3", script_, "--ps_hosts={ps_hosts}",
                         "--worker_hosts={worker_hosts}", "--job_name={job_name}",
                         "--task_index={task_index}"}},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "chief"}, {"gpus_per_task", 1}},
                        {{"role", "ps"}},
                        {{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 1}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  Json end = WaitEnd(id);
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2) << "\n" << Log(id, "chief-0", alice_)
                                                 << Log(id, "worker-1", alice_) << StderrLog(id, "chief-0");
  for (const char* t : {"chief-0", "ps-0", "worker-0", "worker-1"}) {
    EXPECT_NE(Log(id, t, alice_).find("ok "), std::string::npos) << t << ": " << Log(id, t, alice_);
  }
  // Three distinct GPUs: one for the chief and one for each worker.
  std::set<std::string> gpus;
  for (const auto& t : end["tasks"]) {
    for (const auto& g : t["gpus"]) gpus.insert(t["node"].get<std::string>() + "/" + g.dump());
  }
  EXPECT_EQ(gpus.size(), 3u) << end.dump(2);
}

TEST_F(JobsE2E, MpiLauncherGetsTheWorkersHostfile) {
  const std::string script = dir_.path() + "/mpi_check.py";
  ASSERT_TRUE(WriteFileAtomic(script, kMpiCheck, 0644).ok());
  Json spec{{"name", "mpi-check"},
            {"framework", "mpi"},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "launcher"},
                         {"command", {"/usr/bin/python3", script, "{num_procs}", "{hostfile}"}}},
                        {{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 2}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  Json end = WaitEnd(id);
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2) << StderrLog(id, "launcher-0");
  EXPECT_NE(Log(id, "launcher-0", alice_).find("hostfile ok"), std::string::npos);
  // The workers held both nodes' GPUs and ran nothing.
  int held = 0;
  for (const auto& t : end["tasks"]) {
    if (t.value("role", "") == "worker") {
      EXPECT_FALSE(t.value("runs", true));
      held += static_cast<int>(t["gpus"].size());
    }
  }
  EXPECT_EQ(held, 4);
}

TEST_F(JobsE2E, JaxProcessesAgreeOnTheCoordinatorAndReachIt) {
  const std::string script = dir_.path() + "/jax_check.py";
  ASSERT_TRUE(WriteFileAtomic(script, kJaxCheck, 0644).ok());
  Json spec{{"name", "jax-check"},
            {"framework", "jax"},
            {"workdir", "/tmp"},
            {"command", {"/usr/bin/python3", script}},
            {"groups", {{{"role", "worker"}, {"replicas", 3}, {"gpus_per_task", 1}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  Json end = WaitEnd(id);
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2) << StderrLog(id, "worker-1");
  for (const char* t : {"worker-0", "worker-1", "worker-2"}) {
    EXPECT_NE(Log(id, t, alice_).find("jax ok"), std::string::npos) << t;
  }
}

TEST_F(JobsE2E, AFailedTaskRestartsTheGangAndTheRestartCountIsVisible) {
  Json spec{{"name", "flaky"},
            {"shell", true},
            {"command", {"if [ \"$ROTA_RESTART_COUNT\" = 0 ] && [ \"$ROTA_TASK_INDEX\" = 1 ]; then "
                         "exit 3; fi; sleep 1; echo attempt $ROTA_RESTART_COUNT"}},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 1}}}},
            {"restart", {{"policy", "on-failure"}, {"max_restarts", 2}, {"backoff", "1s"}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  Json end = WaitEnd(id);
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
  EXPECT_EQ(end.value("restart_count", 0), 1);
  EXPECT_EQ(Log(id, "worker-1", alice_), "attempt 1\n");
  const std::string events = end["events"].dump();
  EXPECT_NE(events.find("exited with status 3; restarting the gang"), std::string::npos) << events;

  // Without restarts the same failure fails the job, naming the task.
  spec["restart"] = {{"policy", "never"}};
  auto never = Submit(spec, alice_);
  ASSERT_TRUE(never.ok());
  Json failed = WaitEnd((*never)["id"]);
  EXPECT_EQ(failed.value("state", ""), "failed");
  EXPECT_NE(failed.value("reason", "").find("worker-1"), std::string::npos) << failed.dump(2);
}

TEST_F(JobsE2E, APortTakenOnTheNodeIsAvoidedWithoutARestart) {
  // Something outside rota listens on the first job port (the range is 31000-31499).
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(holder, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(31000);
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << "port 31000 busy";
  ASSERT_EQ(::listen(holder, 1), 0);
  Json spec{{"name", "port"}, {"command", {"/bin/sh", "-c", "echo port=$ROTA_PORT"}}, {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Json end = WaitEnd((*job)["id"]);
  ::close(holder);
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
  EXPECT_EQ(end.value("restart_count", -1), 0);
  EXPECT_NE(end["events"].dump().find("placing the job again on other ports"), std::string::npos)
      << end.dump(2);
  const std::string out = Log((*job)["id"], "worker-0", alice_);
  EXPECT_EQ(out.rfind("port=", 0), 0u) << out;
  EXPECT_NE(out, "port=31000\n");
}

TEST_F(JobsE2E, CancelStopsEveryTaskAndTheEndedJobCannotBeCancelledAgain) {
  Json spec{{"name", "long"}, {"command", {"sleep", "600"}}, {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}, {"replicas", 2}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string path = "/api/v1/jobs/" + std::to_string((*job)["id"].get<int64_t>());
  ASSERT_TRUE(WaitFor([&] {
    auto j = server_->GetJson(path);
    return j.ok() && (*j).value("state", "") == "running";
  }, seconds(30)));
  EXPECT_EQ(server_->CallAs(bob_, "POST", path + "/cancel")->status, 403);
  EXPECT_EQ(server_->CallAs(alice_, "POST", path + "/cancel")->status, 200);
  Json end = WaitEnd((*job)["id"]);
  EXPECT_EQ(end.value("state", ""), "cancelled") << end.dump(2);
  for (const auto& t : end["tasks"]) EXPECT_EQ(t.value("signal", 0), 15) << t.dump();
  EXPECT_EQ(server_->CallAs(alice_, "POST", path + "/cancel")->status, 409);
}

// Regression: three concurrent log views (as three people looking at a job in the web UI)
// froze the HTTP server: each request waited for the agent's answer on a network thread, and
// the answer could only be read by those same threads (two answered 503 after 10 s, /healthz
// took 9.8 s meanwhile). Now 12 views at once all answer with the log, and /healthz stays fast.
TEST_F(JobsE2E, ConcurrentLogViewsDoNotFreezeTheServer) {
  Json spec{{"name", "chatty"},
            {"command", {"sh", "-c", "echo started; exec sleep 600"}},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}, {"replicas", 1}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  ASSERT_TRUE(WaitFor([&] { return Log(id, "worker-0", alice_).find("started") != std::string::npos; },
                      seconds(30)));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> viewers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 12; ++i) {
    viewers.emplace_back([&] {
      if (Log(id, "worker-0", alice_).find("started") != std::string::npos) ++ok;
    });
  }
  auto health = server_->Call("GET", "/healthz");
  const auto health_took = std::chrono::steady_clock::now() - start;
  for (auto& v : viewers) v.join();
  const auto all_took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(ok.load(), 12);
  EXPECT_LT(health_took, std::chrono::seconds(1));
  EXPECT_LT(all_took, std::chrono::seconds(5));
  EXPECT_EQ(server_->CallAs(alice_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel")->status, 200);
  WaitEnd(id);
}

// Bad requests tried: unknown framework, zero replicas, more GPUs per task than
// any node has, a command that does not exist on the node (the job fails with
// the reason), logs of another user's job, a task name with a path trick, an
// unknown task, a malformed id, cancel of an unknown job.
TEST_F(JobsE2E, BadRequestsAreRefusedWithFittingStatus) {
  auto status = [&](const std::string& method, const std::string& path, const Json& body,
                    const std::string& token) {
    auto r = server_->CallAs(token, method, path, body.is_null() ? "" : body.dump());
    return r.ok() ? r->status : -1;
  };
  Json base{{"name", "x"}, {"command", {"true"}}, {"groups", {{{"role", "worker"}}}}};
  Json unknown_fw = base;
  unknown_fw["framework"] = "caffe";
  EXPECT_EQ(status("POST", "/api/v1/jobs", unknown_fw, alice_), 400);
  Json zero = base;
  zero["groups"][0]["replicas"] = 0;
  EXPECT_EQ(status("POST", "/api/v1/jobs", zero, alice_), 400);
  Json huge = base;
  huge["groups"][0]["gpus_per_task"] = 16;
  auto r = server_->CallAs(alice_, "POST", "/api/v1/jobs", huge.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("has 2"), std::string::npos) << r->body;
  // More CPUs per task than any node has (the nodes are this machine): refused too,
  // not left pending forever.
  Json cpu_hungry = base;
  cpu_hungry["groups"][0]["cpus_per_task"] = 4096;
  r = server_->CallAs(alice_, "POST", "/api/v1/jobs", cpu_hungry.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("more CPUs or memory than any node has"), std::string::npos) << r->body;
  EXPECT_EQ(status("POST", "/api/v1/jobs", base, ""), 401);

  Json missing = base;
  missing["command"] = {"no-such-command-rota"};
  missing["workdir"] = "/tmp";
  auto job = Submit(missing, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  Json end = WaitEnd(id);
  EXPECT_EQ(end.value("state", ""), "failed");
  EXPECT_NE(end.value("reason", "").find("cannot run 'no-such-command-rota'"), std::string::npos)
      << end.dump(2);
  const std::string logs = "/api/v1/jobs/" + std::to_string(id) + "/logs";
  EXPECT_EQ(status("GET", logs + "?task=worker-0", nullptr, bob_), 403);
  EXPECT_EQ(status("GET", logs + "?task=../../etc/passwd", nullptr, alice_), 400);
  EXPECT_EQ(status("GET", logs + "?task=worker-9", nullptr, alice_), 404);
  EXPECT_EQ(status("GET", "/api/v1/jobs/abc", nullptr, alice_), 400);
  EXPECT_EQ(status("POST", "/api/v1/jobs/99999/cancel", nullptr, alice_), 404);
}

// A job's environment often carries API keys: others see the names only.
TEST_F(JobsE2E, OthersSeeAJobsEnvironmentNamesButNotItsValues) {
  Json spec{{"name", "secret"},
            {"command", {"sleep", "30"}},
            {"env", {{"WANDB_API_KEY", "supersecret123"}}},
            {"groups", {{{"role", "worker"}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const std::string path = "/api/v1/jobs/" + std::to_string((*job)["id"].get<int64_t>());
  auto env_as = [&](const std::string& token, const std::string& what) -> std::string {
    auto r = server_->CallAs(token, "GET", what);
    if (!r.ok() || r->status != 200) return "HTTP error";
    auto j = Json::parse(r->body);
    const Json& one = j.contains("jobs") ? j["jobs"][0] : j;
    return one["spec"]["env"].value("WANDB_API_KEY", "absent");
  };
  EXPECT_EQ(env_as(alice_, path), "supersecret123");
  EXPECT_EQ(env_as(bob_, path), "(hidden)");
  EXPECT_EQ(env_as(bob_, "/api/v1/jobs?limit=1"), "(hidden)");
  EXPECT_EQ(env_as(alice_, "/api/v1/jobs?limit=1"), "supersecret123");
  EXPECT_EQ(env_as(server_->admin_token(), path), "supersecret123");
  auto r = server_->CallAs(bob_, "GET", path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body.find("supersecret123"), std::string::npos) << r->body;
  ASSERT_TRUE(server_->CallAs(alice_, "POST", path + "/cancel", "").ok());
}

TEST_F(JobsE2E, CliRunWaitsAndExitsWithTheJobsStatus) {
  auto env = server_->CliEnv();
  env["ROTA_TOKEN"] = alice_;
  CliResult ok = RunCli({"run", "--name", "hello", "--workers", "2", "--workdir", "/tmp", "--wait",
                         "--", "sh", "-c", "echo rank $ROTA_TASK_INDEX of $ROTA_HOSTS"},
                        env);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("succeeded"), std::string::npos) << ok.out;
  CliResult bad = RunCli({"run", "--workdir", "/tmp", "--wait", "--", "sh", "-c", "exit 2"}, env);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  CliResult list = RunCli({"jobs", "--mine"}, env);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("hello"), std::string::npos) << list.out;
  // Two jobs, one a page: the newest, and a note where the next page starts.
  CliResult page = RunCli({"jobs", "--mine", "--limit", "1"}, env);
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_EQ(page.out.find("hello"), std::string::npos) << page.out;
  EXPECT_NE(page.out.find("(more jobs follow: rota jobs --before 2 --limit 1 --mine)"), std::string::npos)
      << page.out;
  // A job submitted between two pages moves an offset page, not one below an id.
  CliResult third = RunCli({"run", "--workdir", "/tmp", "--", "true"}, env);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  CliResult next = RunCli({"jobs", "--mine", "--limit", "1", "--before", "2"}, env);
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.out.find("hello"), std::string::npos) << next.out;
  EXPECT_EQ(next.out.find("more jobs follow"), std::string::npos) << next.out;
  auto second = server_->CallAs(alice_, "GET", "/api/v1/jobs?mine=true&limit=1&before=2", "");
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->status, 200) << second->body;
  const Json rest = Json::parse(second->body);
  ASSERT_EQ(rest["jobs"].size(), 1u) << second->body;
  EXPECT_EQ(rest["jobs"][0]["name"], "hello");
  EXPECT_FALSE(rest.contains("truncated")) << second->body;
  auto shifted = server_->CallAs(alice_, "GET", "/api/v1/jobs?mine=true&limit=1&offset=1", "");
  ASSERT_TRUE(shifted.ok());
  EXPECT_EQ(Json::parse(shifted->body)["jobs"][0]["id"], 2) << shifted->body;
  // The page just newer than job 1: job 2, with job 3 newer still.
  auto newer = server_->CallAs(alice_, "GET", "/api/v1/jobs?mine=true&limit=1&after=1", "");
  ASSERT_TRUE(newer.ok());
  const Json up = Json::parse(newer->body);
  ASSERT_EQ(up["jobs"].size(), 1u) << newer->body;
  EXPECT_EQ(up["jobs"][0]["id"], 2);
  EXPECT_EQ(up.value("truncated", false), true) << newer->body;
  auto both = server_->CallAs(alice_, "GET", "/api/v1/jobs?after=1&limit=5", "");
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(Json::parse(both->body)["jobs"].size(), 2u) << both->body;
  EXPECT_EQ(Json::parse(both->body)["jobs"][0]["id"], 3) << both->body;  // newest first
  for (const char* bad : {"before=x", "before=0", "after=-1", "before=3&after=1", "before=3&offset=1"}) {
    auto r = server_->CallAs(alice_, "GET", std::string("/api/v1/jobs?") + bad, "");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
  }
  EXPECT_EQ(RunCli({"jobs", "--limit", "0"}, env).exit_code, 2);
  EXPECT_EQ(RunCli({"jobs", "--before", "2", "--offset", "1"}, env).exit_code, 2);
  EXPECT_EQ(RunCli({"jobs", "--before", "99999999999999999999"}, env).exit_code, 2);
  CliResult zero = RunCli({"jobs", "--before", "0"}, env);
  EXPECT_NE(zero.exit_code, 0) << zero.out;
  EXPECT_EQ(zero.out.find("hello"), std::string::npos) << zero.out;
  CliResult logs = RunCli({"logs", "1", "--task", "worker-1"}, env);
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("rank 1 of "), std::string::npos) << logs.out;
  // What it asked for is shown, pending or not.
  CliResult show = RunCli({"job", "show", "1"}, env);
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("Asks:      2 worker x 0 GPUs; time limit none"), std::string::npos) << show.out;
  CliResult usage = RunCli({"run", "--framework", "caffe", "--", "true"}, env);
  EXPECT_EQ(usage.exit_code, 1) << usage.out << usage.err;
  EXPECT_NE(usage.err.find("unknown framework"), std::string::npos) << usage.err;
}

// A workstation with two kinds of cards (GPUs 0 and 2: RTX 2080 Ti; 1 and 3:
// GTX 1080 Ti): a job asking a model runs on that model's GPUs only, one
// naming none gets GPUs of one model, and one asking more of a model than the
// node has is refused at submission.
TEST(MixedModelsE2E, AJobAskingAModelGetsOnlyThatModelsGpus) {
  TempDir dir;
  ServerProcess server(dir.path() + "/server");
  server.SetEnv("ROTA_JOB_PORTS", "31500-31599");  // apart from other tests running at once
  ASSERT_TRUE(server.Start().ok()) << server.child().Log();
  const std::string node = "ws-" + std::to_string(::getpid());
  SimGpuNode ws{.name = node, .gpus = 4};
  ws.models = {"NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti",
               "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce GTX 1080 Ti"};
  AgentProcess agent(dir.path(), ws, server);
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, node); }, seconds(20)));
  Json extra = Json::object();
  extra["unix_user"] = ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name;
  auto alice = server.CreateUser("alice", "user", extra);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  auto env = server.CliEnv();
  env["ROTA_TOKEN"] = *alice;
  ::chmod(dir.path().c_str(), 0755);

  // Runs `rota run` with `args` printing the task's GPUs; the GPUs the job got
  // (from the API) and what the task saw, or "" when the run failed.
  auto run = [&](std::vector<std::string> args) -> std::pair<std::string, std::string> {
    std::vector<std::string> argv = {"run", "--workdir", "/tmp"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const char* a : {"--", "sh", "-c", "echo gpus=$CUDA_VISIBLE_DEVICES"}) argv.push_back(a);
    CliResult r = RunCli(argv, env);
    const size_t at = r.out.find("Submitted job ");
    if (r.exit_code != 0 || at == std::string::npos) return {"", r.out + r.err};
    const std::string id = std::to_string(std::stoll(r.out.substr(at + 14)));
    const Json job = WaitJobEnd(server, std::stoll(id), seconds(30));
    if (job.value("state", "") != "succeeded") return {"", job.dump()};
    CliResult logs = RunCli({"logs", id}, env);
    return {job["tasks"][0]["gpus"].dump(), logs.out};
  };
  auto [got, seen] = run({"--gpus-per-task", "2", "--gpu-model", "1080"});
  EXPECT_EQ(got, "[1,3]") << seen;
  EXPECT_NE(seen.find("gpus=1,3"), std::string::npos) << seen;
  std::tie(got, seen) = run({"--gpus-per-task", "1", "--gpu-model", "rtx 2080"});
  EXPECT_EQ(got, "[0]") << seen;
  std::tie(got, seen) = run({"--gpus-per-task", "2"});  // any model: one model's pair
  EXPECT_EQ(got, "[0,2]") << seen;
  EXPECT_NE(seen.find("gpus=0,2"), std::string::npos) << seen;

  CliResult never = RunCli({"run", "--workdir", "/tmp", "--gpus-per-task", "3", "--gpu-model",
                            "1080", "--", "true"},
                           env);
  EXPECT_NE(never.exit_code, 0);
  EXPECT_NE((never.out + never.err).find("needs 3 1080 GPUs; the largest node, " + node + ", has 2"),
            std::string::npos)
      << never.out << never.err;
}

}  // namespace
}  // namespace rota::testing

// Job arrays end to end: `rota server` and a real agent on a simulated node.
// An array submitted through the CLI runs every member with its index in argv
// and ROTA_ARRAY_INDEX, never more than its cap at once, retries a failed
// member on its own, and shows as one line in `rota jobs`; arrays and single
// members are cancelled; bad arrays are refused with a clear 400.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <chrono>
#include <vector>

#include "common/file_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

// Checks argv against ROTA_ARRAY_INDEX, prints its start and end times; index
// 1 fails its first attempt (the member alone is retried).
constexpr char kMember[] = R"py(
import os, sys, time
index = sys.argv[1]
assert index == os.environ["ROTA_ARRAY_INDEX"], (index, os.environ["ROTA_ARRAY_INDEX"])
assert os.environ["ROTA_ARRAY_ID"].isdigit()
start = time.time()
time.sleep(0.4)
if index == "1" and os.environ.get("ROTA_RESTART_COUNT") == "0":
    sys.exit(3)
print("member", index, os.environ["ROTA_ARRAY_ID"], start, time.time(), flush=True)
)py";

// A trial: argv against ROTA_TRIAL_PARAMS; fails when --fail is given.
constexpr char kTrial[] = R"py(
import json, os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
params = json.loads(os.environ["ROTA_TRIAL_PARAMS"])
assert params == {k[2:]: v for k, v in args.items() if k != "--fail"}, (params, args)
print("trial", json.dumps(params, sort_keys=True, separators=(",", ":")), flush=True)
sys.exit(1 if "--fail" in args else 0)
)py";

// A trial that reports its loss: twice its lr at step 1 on stdout, its lr at step
// 2 in $ROTA_METRICS_FILE (with lines that are not metrics, and a malformed one).
constexpr char kReporter[] = R"py(
import os, sys
lr = float(sys.argv[1])
print("epoch 1 done", flush=True)
print("rota-metric loss=%g step=1" % (2 * lr), flush=True)
print("rota-metric loss=oops", flush=True)
with open(os.environ["ROTA_METRICS_FILE"], "a") as f:
    f.write("rota-metric loss=%g acc=%g step=2\n" % (lr, 1 - lr / 10))
)py";

// A trial reporting `loss` = its lr at steps 1..3, then training on for a minute
// (reporting) unless rota stops it: on SIGTERM it prints the preemption notice
// it was given and exits 0.
constexpr char kLearner[] = R"py(
import os, signal, sys, time
lr = float(sys.argv[1])
def stopped(*_):
    with open(os.environ["ROTA_PREEMPT_NOTICE"]) as f:
        print("notice:", f.read().strip(), flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stopped)
for step in range(1, 4):
    print("rota-metric loss=%g step=%d" % (lr, step), flush=True)
if lr > 5:
    for step in range(4, 600):
        print("rota-metric loss=%g step=%d" % (lr, step), flush=True)
        time.sleep(0.1)
)py";

class ArraysE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    server_->SetEnv("ROTA_JOB_PORTS", "32600-32699");  // apart from other tests running at once
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = "arr-x", .gpus = 2}, *server_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "arr-x"); }, seconds(20)));
    Json extra = Json::object();
    extra["unix_user"] = ::geteuid() == 0 ? std::string("nobody") : std::string(::getpwuid(::geteuid())->pw_name);
    auto a = server_->CreateUser("alice", "user", extra);
    auto b = server_->CreateUser("bob", "user", extra);
    ASSERT_TRUE(a.ok() && b.ok());
    alice_ = *a;
    bob_ = *b;
    script_ = dir_.path() + "/member.py";
    ASSERT_TRUE(WriteFileAtomic(script_, kMember, 0644).ok());
    trial_ = dir_.path() + "/trial.py";
    ASSERT_TRUE(WriteFileAtomic(trial_, kTrial, 0644).ok());
    ::chmod(dir_.path().c_str(), 0755);
  }

  std::map<std::string, std::string> Env(const std::string& token) {
    auto env = server_->CliEnv();
    env["ROTA_TOKEN"] = token;
    return env;
  }

  Result<net::ClientResponse> Post(const Json& body, const std::string& token) {
    return server_->CallAs(token, "POST", "/api/v1/jobs", body.dump());
  }

  Json Array(int64_t id) {
    auto r = server_->CallAs(alice_, "GET", "/api/v1/arrays/" + std::to_string(id) + "?limit=1000");
    return r.ok() && r->status == 200 ? Json::parse(r->body) : Json();
  }

  std::string Log(int64_t job) {
    auto r = server_->CallAs(alice_, "GET", "/api/v1/jobs/" + std::to_string(job) + "/logs?task=worker-0");
    return r.ok() && r->status == 200 ? Json::parse(r->body).value("data", "") : "";
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
  std::string alice_, bob_, script_, trial_;
};

TEST_F(ArraysE2E, MembersRunWithTheirIndexAtMostTheCapAtOnceAndRetryAlone) {
  CliResult run = RunCli({"run", "--name", "seeds", "--array", "0-5%2", "--workdir", "/tmp", "--restart",
                          "on-failure", "--wait", "--", "/usr/bin/python3", script_, "{index}"},
                         Env(alice_));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_NE(run.out.find("Submitted array a"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("6 succeeded"), std::string::npos) << run.out;
  const int64_t id = std::stoll(run.out.substr(run.out.find("array a") + 7));
  Json a = Array(id);
  ASSERT_EQ(a["members"].size(), 6u) << a.dump(2);
  EXPECT_EQ(a["counts"], Json({{"succeeded", 6}})) << a.dump(2);
  EXPECT_EQ(a.value("indices", ""), "0-5%2");
  // Each member ran once with its own index (index 1 twice: its retry), never
  // more than two at once.
  std::vector<std::pair<double, double>> runs;
  for (size_t i = 0; i < 6; ++i) {
    const Json& m = a["members"][i];
    EXPECT_EQ(m["array"]["index"], static_cast<int>(i));
    EXPECT_EQ(m["array"]["id"], id);
    EXPECT_EQ(m.value("restart_count", -1), i == 1 ? 1 : 0) << m.dump(2);
    const std::string log = Log(m["id"]);
    std::istringstream in(log);
    std::string word, index, array;
    double start = 0, end = 0;
    in >> word >> index >> array >> start >> end;
    ASSERT_EQ(word, "member") << log;
    EXPECT_EQ(index, std::to_string(i));
    EXPECT_EQ(array, std::to_string(id));
    runs.emplace_back(start, end);
  }
  for (const auto& [start, end] : runs) {
    int at_once = 0;
    for (const auto& [s, e] : runs) at_once += s <= start && start < e ? 1 : 0;
    EXPECT_LE(at_once, 2) << "at " << start;
  }
  // One line in `rota jobs`, with its counts; its members in `rota job show aN`.
  CliResult jobs = RunCli({"jobs", "--mine"}, Env(alice_));
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find("a" + std::to_string(id)), std::string::npos) << jobs.out;
  EXPECT_NE(jobs.out.find("[0-5%2] 6 succeeded"), std::string::npos) << jobs.out;
  EXPECT_EQ(std::count(jobs.out.begin(), jobs.out.end(), '\n'), 2) << jobs.out;  // the header and the array
  CliResult show = RunCli({"job", "show", "a" + std::to_string(id)}, Env(alice_));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("6 members, at most 2 at once"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("succeeded"), std::string::npos) << show.out;
}

TEST_F(ArraysE2E, ABigArrayIsCancelledWholeOrOneMemberAtATime) {
  Json spec{{"name", "wide"},
            {"command", {"sleep", "30"}},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}}}},
            {"array", {{"indices", "0-1999"}, {"max_running", 2}}}};
  auto r = Post(spec, alice_);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 201) << r->body;
  const Json array = Json::parse(r->body)["array"];
  const int64_t id = array["id"];
  EXPECT_EQ(array.value("size", 0), 2000);
  // Two run; the others wait for the cap, saying so.
  ASSERT_TRUE(WaitFor([&] { return Array(id)["counts"].value("running", 0) == 2; }, seconds(20))) << Array(id).dump();
  Json a = Array(id);
  EXPECT_EQ(a["counts"].value("pending", 0), 1998);
  EXPECT_NE(a["members"][5].value("reason", "").find("is at its cap"), std::string::npos) << a["members"][5].dump();
  // One member cancelled; bob may not cancel alice's array.
  const int64_t first = a["members"][0]["id"];
  auto one = server_->CallAs(alice_, "POST", "/api/v1/jobs/" + std::to_string(first) + "/cancel", "");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->status, 200) << one->body;
  auto denied = server_->CallAs(bob_, "POST", "/api/v1/arrays/" + std::to_string(id) + "/cancel", "");
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403) << denied->body;
  // The rest at once.
  CliResult cancel = RunCli({"cancel", "a" + std::to_string(id)}, Env(alice_));
  ASSERT_EQ(cancel.exit_code, 0) << cancel.out << cancel.err;
  EXPECT_NE(cancel.out.find("Cancelling array a"), std::string::npos) << cancel.out;
  ASSERT_TRUE(WaitFor([&] { return Array(id)["counts"].value("cancelled", 0) == 2000; }, seconds(30)))
      << Array(id)["counts"].dump();
  // GET /api/v1/jobs?members=false leaves members out.
  auto plain = server_->CallAs(alice_, "GET", "/api/v1/jobs?members=false", "");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Json::parse(plain->body)["jobs"].size(), 0u) << plain->body;
}

TEST_F(ArraysE2E, BadArraysAreRefusedWithTheReason) {
  Json spec{{"name", "bad"}, {"command", {"echo", "{index}"}}, {"groups", {{{"role", "worker"}}}}};
  struct Case {
    Json array;
    std::string why;
  };
  for (const Case& c : std::vector<Case>{{"5-2", "runs backwards"},
                                         {"0-9%0", "N must be 1"},
                                         {"0-100000", "more than 100000 members"},
                                         {7, "must be a string"},
                                         {{{"indices", "0-3"}, {"max_running", 0}}, "max_running"},
                                         {{{"indices", "0-3"}, {"cap", 1}}, "array.cap: unknown field"}}) {
    Json s = spec;
    s["array"] = c.array;
    auto r = Post(s, alice_);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << c.array.dump() << ": " << r->body;
    EXPECT_NE(r->body.find(c.why), std::string::npos) << c.array.dump() << ": " << r->body;
  }
  // Placeholders go into argv only, never into a shell string.
  Json shell{{"name", "sh"},
             {"shell", true},
             {"command", {"echo {index}"}},
             {"groups", {{{"role", "worker"}}}},
             {"array", "0-3"}};
  auto r = Post(shell, alice_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("argv only"), std::string::npos) << r->body;
  auto none = server_->CallAs(alice_, "GET", "/api/v1/arrays/999", "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->status, 404) << none->body;
  auto listed = server_->CallAs(alice_, "GET", "/api/v1/arrays?mine=true", "");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(Json::parse(listed->body)["arrays"].size(), 0u) << listed->body;
}

TEST_F(ArraysE2E, AGridSweepRunsEveryTrialWithItsParameters) {
  CliResult run = RunCli({"run", "--name", "grid", "--sweep", "lr=0.1,0.01", "--sweep", "bs=32,64", "--max-running",
                          "2", "--workdir", "/tmp", "--wait", "--", "/usr/bin/python3", trial_, "--lr", "{lr}", "--bs",
                          "{bs}"},
                         Env(alice_));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_NE(run.out.find("Submitted sweep a"), std::string::npos) << run.out;
  const int64_t id = std::stoll(run.out.substr(run.out.find("sweep a") + 7));
  Json a = Array(id);
  ASSERT_EQ(a["members"].size(), 4u) << a.dump(2);
  EXPECT_EQ(a["sweep"]["method"], "grid");
  std::set<std::string> seen;
  for (const auto& m : a["members"]) {
    EXPECT_EQ(m.value("state", ""), "succeeded") << m.dump();
    seen.insert(m["params"].dump());
    EXPECT_NE(Log(m["id"]).find("trial " + m["params"].dump()), std::string::npos) << Log(m["id"]) << m.dump();
  }
  EXPECT_EQ(seen, (std::set<std::string>{R"({"bs":"32","lr":"0.1"})", R"({"bs":"64","lr":"0.1"})",
                                         R"({"bs":"32","lr":"0.01"})", R"({"bs":"64","lr":"0.01"})"}));
  CliResult show = RunCli({"sweep", "show", std::to_string(id)}, Env(alice_));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("LR"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("0.01"), std::string::npos) << show.out;
}

TEST_F(ArraysE2E, ARandomSweepStopsLaunchingAfterItsBudgetOfFailures) {
  const std::string file = dir_.path() + "/sweep.yaml";
  ASSERT_TRUE(WriteFileAtomic(file,
                              "name: failing\n"
                              "command: [/usr/bin/python3, " + trial_ + ", --lr, '{lr}', --fail, '1']\n"
                              "workdir: /tmp\n"
                              "groups: [{role: worker}]\n"
                              "sweep:\n"
                              "  method: random\n"
                              "  count: 6\n"
                              "  seed: 3\n"
                              "  max_running: 1\n"
                              "  max_failures: 2\n"
                              "  parameters:\n"
                              "    lr: {loguniform: [0.0001, 0.1]}\n",
                              0644).ok());
  CliResult run = RunCli({"sweep", "-f", file, "--wait"}, Env(alice_));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  ASSERT_NE(run.out.find("Submitted sweep a"), std::string::npos) << run.out << run.err;
  const int64_t id = std::stoll(run.out.substr(run.out.find("sweep a") + 7));
  Json a = Array(id);
  EXPECT_EQ(a["counts"], Json({{"failed", 2}, {"cancelled", 4}})) << a.dump(2);
  EXPECT_NE(a["members"][5].value("reason", "").find("2 trial(s) failed (max_failures 2)"), std::string::npos)
      << a["members"][5].dump();
  // Random draws are in range, written with 6 significant digits.
  for (const auto& m : a["members"]) {
    const double lr = std::stod(m["params"].value("lr", "0"));
    EXPECT_GE(lr, 0.0001 * 0.9999) << m.dump();
    EXPECT_LE(lr, 0.1) << m.dump();
  }
  // A sweep with ranges but no method random, or the wrong parameter, is refused.
  Json bad{{"name", "bad"},
           {"command", {"echo", "{lr}"}},
           {"groups", {{{"role", "worker"}}}},
           {"sweep", {{"parameters", {{"lr", {{"uniform", Json::array({0, 1})}}}}}}}};
  auto r = Post(bad, alice_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("method random"), std::string::npos) << r->body;
}

// Trials report metrics on stdout and in their metrics file; the sweep's table
// sorts them by the metric, the job's points read back in order.
TEST_F(ArraysE2E, TrialsReportMetricsAndTheSweepIsSortedByThem) {
  const std::string reporter = dir_.path() + "/reporter.py";
  ASSERT_TRUE(WriteFileAtomic(reporter, kReporter, 0644).ok());
  CliResult run = RunCli({"run", "--name", "metrics", "--sweep", "lr=3,1,2", "--workdir", "/tmp", "--wait", "--",
                          "/usr/bin/python3", reporter, "{lr}"},
                         Env(alice_));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const int64_t id = std::stoll(run.out.substr(run.out.find("sweep a") + 7));
  Json a = Array(id);
  ASSERT_EQ(a["members"].size(), 3u) << a.dump(2);
  std::map<std::string, int64_t> job_of;  // lr -> job id
  for (const auto& m : a["members"]) {
    job_of[m["params"].value("lr", "")] = m.value("id", 0);
    // The last point is the file's (step 2); min and max over both.
    const Json loss = m["metrics"]["loss"];
    const double lr = std::stod(m["params"].value("lr", "0"));
    EXPECT_DOUBLE_EQ(loss.value("last", -1.0), lr) << m.dump(2);
    EXPECT_DOUBLE_EQ(loss.value("min", -1.0), lr) << m.dump(2);
    EXPECT_DOUBLE_EQ(loss.value("max", -1.0), 2 * lr) << m.dump(2);
    EXPECT_EQ(loss.value("count", 0), 2) << m.dump(2);
    EXPECT_EQ(loss.value("last_step", 0), 2) << m.dump(2);
    EXPECT_EQ(m["metrics"]["acc"].value("count", 0), 1) << m.dump(2);
  }
  // The job's points, oldest first: stdout's step 1, then the file's step 2.
  auto points = server_->CallAs(alice_, "GET", "/api/v1/jobs/" + std::to_string(job_of["2"]) + "/metrics");
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->status, 200) << points->body;
  Json pj = Json::parse(points->body);
  ASSERT_EQ(pj["metrics"].size(), 3u) << pj.dump(2);  // the malformed line is not a point
  std::vector<std::string> seen;
  for (const auto& p : pj["metrics"]) seen.push_back(p.value("name", "") + "@" + std::to_string(p.value("step", -1)));
  EXPECT_EQ(seen[0], "loss@1") << pj.dump(2);
  EXPECT_EQ(std::set<std::string>(seen.begin() + 1, seen.end()), (std::set<std::string>{"loss@2", "acc@2"}));
  EXPECT_EQ(server_->CallAs(alice_, "GET", "/api/v1/jobs/999999/metrics")->status, 404);
  EXPECT_EQ(server_->CallAs(alice_, "GET", "/api/v1/jobs/1/metrics?limit=0")->status, 400);

  // Sorted by loss, lowest first (lr 1, 2, 3); --max: highest first.
  CliResult show = RunCli({"sweep", "show", std::to_string(id)}, Env(alice_));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("Sorted by acc, lowest first"), std::string::npos) << show.out;  // the first name
  CliResult by_loss = RunCli({"sweep", "show", std::to_string(id), "--metric", "loss"}, Env(alice_));
  ASSERT_EQ(by_loss.exit_code, 0) << by_loss.err;
  EXPECT_NE(by_loss.out.find("BEST loss"), std::string::npos) << by_loss.out;
  // The line of the table whose JOB column is `job`.
  auto row_of = [](const std::string& out, int64_t job) {
    std::istringstream lines(out);
    std::string line;
    for (size_t n = 0; std::getline(lines, line); ++n) {
      std::istringstream cols(line);
      std::string trial, id;
      if (cols >> trial >> id && id == std::to_string(job)) return n;
    }
    return std::string::npos;
  };
  EXPECT_LT(row_of(by_loss.out, job_of["1"]), row_of(by_loss.out, job_of["2"])) << by_loss.out;
  EXPECT_LT(row_of(by_loss.out, job_of["2"]), row_of(by_loss.out, job_of["3"])) << by_loss.out;
  CliResult highest = RunCli({"sweep", "show", std::to_string(id), "--metric", "loss", "--max"}, Env(alice_));
  ASSERT_EQ(highest.exit_code, 0) << highest.err;
  EXPECT_LT(row_of(highest.out, job_of["3"]), row_of(highest.out, job_of["1"])) << highest.out;
  CliResult job_points = RunCli({"job", "metrics", std::to_string(job_of["1"])}, Env(alice_));
  ASSERT_EQ(job_points.exit_code, 0) << job_points.err;
  EXPECT_NE(job_points.out.find("loss"), std::string::npos) << job_points.out;
  EXPECT_NE(job_points.out.find("0.9"), std::string::npos) << job_points.out;  // acc = 1 - 1/10
}

// A sweep with the median rule: the two trials that complete set the bar, the
// third (ten times worse, running on) is stopped early within seconds, is told
// why in its notice and ends succeeded, shown so in `rota sweep show`.
TEST_F(ArraysE2E, ATrialWorseThanTheMedianIsStoppedEarlyAndEndsSucceeded) {
  const std::string learner = dir_.path() + "/learner.py";
  ASSERT_TRUE(WriteFileAtomic(learner, kLearner, 0644).ok());
  const std::string file = dir_.path() + "/median.yaml";
  ASSERT_TRUE(WriteFileAtomic(file,
                              "name: median\n"
                              "command: [/usr/bin/python3, " + learner + ", '{lr}']\n"
                              "workdir: /tmp\n"
                              "groups: [{role: worker}]\n"
                              "sweep:\n"
                              "  max_running: 1\n"
                              "  parameters: {lr: [1, 2, 9]}\n"
                              "  early_stopping: {rule: median, metric: loss, min_trials: 2}\n",
                              0644).ok());
  const auto t0 = std::chrono::steady_clock::now();
  CliResult run = RunCli({"sweep", "-f", file, "--wait"}, Env(alice_));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, seconds(40));  // not the minute it would train
  const int64_t id = std::stoll(run.out.substr(run.out.find("sweep a") + 7));
  Json a = Array(id);
  ASSERT_EQ(a["members"].size(), 3u) << a.dump(2);
  EXPECT_EQ(a["sweep"]["early_stopping"].value("rule", ""), "median") << a.dump(2);
  const Json& bad = a["members"][2];
  EXPECT_EQ(bad.value("state", ""), "succeeded") << bad.dump(2);
  EXPECT_EQ(bad.value("reason", "").rfind("stopped early", 0), 0u) << bad.dump(2);
  EXPECT_EQ(a["members"][0].value("reason", "").find("stopped early"), std::string::npos) << a.dump(2);
  EXPECT_NE(Log(bad.value("id", 0)).find("notice: stopped early"), std::string::npos) << Log(bad.value("id", 0));
  CliResult show = RunCli({"sweep", "show", std::to_string(id)}, Env(alice_));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("Sorted by loss, lowest first"), std::string::npos) << show.out;  // the rule's
  EXPECT_NE(show.out.find("stopped early"), std::string::npos) << show.out;
  // A rule that cannot be is refused with the field.
  Json wrong{{"name", "bad"},
             {"command", {"echo", "{lr}"}},
             {"groups", {{{"role", "worker"}}}},
             {"sweep", {{"parameters", {{"lr", {1, 2}}}}, {"early_stopping", {{"rule", "asha"}}}}}};
  auto r = Post(wrong, alice_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("sweep.early_stopping"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace rota::testing

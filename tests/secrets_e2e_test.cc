// Secrets end to end (docs/design-secrets.md): `rota server`, a real agent and two
// real Unix users. A task reads its owner's secret from $ROTA_SECRETS_DIR and an
// env var; another user's task cannot open it and the API refuses that user; the
// value is nowhere else: not in any process's argv, in other processes'
// environments, the job's API view, `rota job show`, the logs, the agent's or
// server's files; the file is gone once the task ended; admins delete but never
// read; bad input is refused naming why.
//
// Needs root (useradd, tasks as other users); skips otherwise.

#include <dirent.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/stat.h>

#include "common/file_util.h"
#include "common/process.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

constexpr char kValue[] = "s3cr3t-VALUE-7f2c91d0e4";
// Its sha256: what the task prints (never the value).
constexpr char kValueSha256[] = "c2d2eec768c1677d0c1d7e01ab7cc214bf598b3daf7e5101931dcced89ec336b";
constexpr char kReader[] = R"py(
import hashlib, os, stat, sys, time
d = os.environ["ROTA_SECRETS_DIR"]
p = os.path.join(d, "alice-tok")
v = open(p, "rb").read()
st = os.stat(p)
print("dir=" + d, flush=True)
print("sha=" + hashlib.sha256(v).hexdigest(), flush=True)
print("env_ok=%s" % (os.environ.get("TOKEN", "").encode() == v), flush=True)
print("mode=%o owner_is_me=%s dirmode=%o" % (stat.S_IMODE(st.st_mode), st.st_uid == os.getuid(),
      stat.S_IMODE(os.stat(d).st_mode)), flush=True)
end = time.time() + 60
while not os.path.exists(sys.argv[1]) and time.time() < end:
    time.sleep(0.05)
)py";

constexpr char kIntruder[] = R"py(
import os, sys
for path in sys.argv[1:]:
    try:
        open(path, "rb").read()
        print("READ " + path, flush=True)
    except OSError as e:
        print("denied %s %s" % (path, e.__class__.__name__), flush=True)
try:
    os.listdir(os.path.dirname(os.path.dirname(sys.argv[1])))
    print("LISTED", flush=True)
except OSError:
    print("no listing", flush=True)
)py";

Result<uid_t> EnsureUnixUser(const std::string& name) {
  if (const passwd* pw = ::getpwnam(name.c_str()); pw != nullptr) return pw->pw_uid;
  SpawnOptions opts;
  opts.output_path = "/dev/null";
  ASSIGN_OR_RETURN(pid_t pid,
                   SpawnProcess({"useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name}, opts));
  ASSIGN_OR_RETURN(int st, WaitProcess(pid, 30000));
  const passwd* pw = ::getpwnam(name.c_str());
  if (pw == nullptr) return Status::Internal("useradd " + name + " failed (status " + std::to_string(st) + ")");
  return pw->pw_uid;
}

// Every regular file under `root` whose bytes contain `needle`.
std::vector<std::string> FilesContaining(const std::string& root, const std::string& needle) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    auto text = ReadFile(it->path().string(), 64 << 20);
    if (text.ok() && text->find(needle) != std::string::npos) out.push_back(it->path().string());
  }
  return out;
}

// /proc/PID/<what> of every process whose bytes contain `needle`, but for `except` pids.
std::vector<std::string> ProcsContaining(const char* what, const std::string& needle, const std::set<pid_t>& except) {
  std::vector<std::string> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || except.count(pid)) continue;
    auto text = ReadFile(std::string("/proc/") + e->d_name + "/" + what, 1 << 20);
    if (text.ok() && text->find(needle) != std::string::npos) out.push_back(std::string(e->d_name) + "/" + what);
  }
  ::closedir(d);
  return out;
}

std::string Field(const std::string& log, const std::string& key) {
  const size_t p = log.find(key + "=");
  if (p == std::string::npos) return "";
  const size_t end = log.find_first_of(" \n", p);
  return log.substr(p + key.size() + 1, end == std::string::npos ? std::string::npos : end - p - key.size() - 1);
}

class SecretsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) return;
    auto a = EnsureUnixUser("rota-sec-a");
    auto b = EnsureUnixUser("rota-sec-b");
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    alice_uid_ = *a;
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    server_->SetEnv("ROTA_JOB_PORTS", "33500-33599");
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    agent_ = std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = "sec-n", .gpus = 2}, *server_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "sec-n"); }, seconds(20)));
    auto ta = server_->CreateUser("alice", "user", Json{{"unix_user", "rota-sec-a"}});
    auto tb = server_->CreateUser("bob", "user", Json{{"unix_user", "rota-sec-b"}});
    ASSERT_TRUE(ta.ok() && tb.ok()) << ta.status().ToString() << tb.status().ToString();
    alice_ = *ta;
    bob_ = *tb;
    ::chmod(dir_.path().c_str(), 0755);
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/reader.py", kReader, 0644).ok());
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/intruder.py", kIntruder, 0644).ok());
  }

  std::map<std::string, std::string> CliAs(const std::string& token) {
    auto env = server_->CliEnv();
    env["ROTA_TOKEN"] = token;
    return env;
  }

  Result<net::ClientResponse> Submit(const std::string& token, const Json& spec) {
    return server_->CallAs(token, "POST", "/api/v1/jobs", spec.dump());
  }

  Json Spec(const std::string& name, std::vector<std::string> command, Json secrets) {
    Json spec{{"name", name}, {"command", command}, {"workdir", "/tmp"},
              {"groups", {{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 0}}}}};
    if (!secrets.is_null()) spec["secrets"] = secrets;
    return spec;
  }

  std::string Log(int64_t id, const std::string& token) {
    auto r = server_->CallAs(token, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs?task=worker-0");
    if (!r.ok() || r->status != 200) return "<" + (r.ok() ? r->body : r.status().message()) + ">";
    return Json::parse(r->body).value("data", "");
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
  std::string alice_, bob_;
  uid_t alice_uid_ = 0;
};

TEST_F(SecretsE2E, OnlyTheOwnersTaskReadsItAndTheValueIsNowhereElse) {
  ROTA_SKIP_UNLESS_ROOT("tasks run as two Unix users");
  // Created with the CLI from a file; listed without the value.
  const std::string value_file = dir_.path() + "/value";
  ASSERT_TRUE(WriteFileAtomic(value_file, kValue, 0600).ok());
  CliResult made = RunCli({"secret", "create", "alice-tok", "--from-file", value_file}, CliAs(alice_));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("alice-tok created (23 bytes, owned by alice)"), std::string::npos) << made.out;
  ASSERT_TRUE(std::filesystem::remove(value_file));
  CliResult listed = RunCli({"secrets"}, CliAs(alice_));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("alice-tok"), std::string::npos);
  EXPECT_EQ(listed.out.find(kValue), std::string::npos);
  // bob does not see it, nor use it.
  EXPECT_EQ(RunCli({"secrets"}, CliAs(bob_)).out.find("alice-tok"), std::string::npos);
  auto refused = Submit(bob_, Spec("steal", {"/bin/true"}, Json::array({"alice-tok"})));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << refused->body;
  EXPECT_NE(refused->body.find("'alice-tok' is not bob's"), std::string::npos) << refused->body;

  // alice's task reads it, as a file (0400, hers, in a 0700 directory) and a variable.
  const std::string go = dir_.path() + "/go";
  CliResult run = RunCli({"run", "--secret", "alice-tok:TOKEN", "--name", "reader", "--workdir", "/tmp", "--",
                          "/usr/bin/python3", dir_.path() + "/reader.py", go},
                         CliAs(alice_));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.out.rfind("Submitted job ", 0), 0u) << run.out;
  const int64_t id = std::stoll(run.out.substr(14));
  std::string log;
  ASSERT_TRUE(WaitFor([&] { return (log = Log(id, alice_)).find("dirmode=") != std::string::npos; }, seconds(30)))
      << log << server_->GetJson("/api/v1/jobs/" + std::to_string(id))->dump(2);
  EXPECT_NE(log.find("sha=" + std::string(kValueSha256)), std::string::npos) << log;
  EXPECT_NE(log.find("env_ok=True"), std::string::npos) << log;
  EXPECT_NE(log.find("mode=400 owner_is_me=True dirmode=700"), std::string::npos) << log;
  const std::string secrets_dir = Field(log, "dir");
  ASSERT_EQ(secrets_dir.rfind("/dev/shm/rota-secrets/", 0), 0u) << log;
  struct stat st {};
  ASSERT_EQ(::stat((secrets_dir + "/alice-tok").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice_uid_);
  EXPECT_EQ(*ReadFile(secrets_dir + "/alice-tok"), kValue);

  // While it runs: bob's task cannot open it (nor list the directories).
  auto intruder = Submit(bob_, Spec("intruder", {"/usr/bin/python3", dir_.path() + "/intruder.py",
                                                 secrets_dir + "/alice-tok", secrets_dir},
                                    nullptr));
  ASSERT_TRUE(intruder.ok());
  ASSERT_EQ(intruder->status, 201) << intruder->body;
  const int64_t bob_job = Json::parse(intruder->body)["id"];
  Json bob_end = WaitJobEnd(*server_, bob_job, seconds(30));
  EXPECT_EQ(bob_end.value("state", ""), "succeeded") << bob_end.dump(2);
  const std::string bob_log = Log(bob_job, bob_);
  EXPECT_NE(bob_log.find("denied " + secrets_dir + "/alice-tok PermissionError"), std::string::npos) << bob_log;
  EXPECT_EQ(bob_log.find("READ"), std::string::npos) << bob_log;
  EXPECT_NE(bob_log.find("no listing"), std::string::npos) << bob_log;

  // No process shows it in its argv; none but alice's task has it in its environment.
  std::set<pid_t> task_pids;
  Json job = *server_->GetJson("/api/v1/jobs/" + std::to_string(id));
  for (const auto& t : job["tasks"]) task_pids.insert(t.value("pid", 0));
  EXPECT_EQ(ProcsContaining("cmdline", kValue, {}), std::vector<std::string>{});
  EXPECT_EQ(ProcsContaining("environ", kValue, task_pids), std::vector<std::string>{});
  // Not in the API's view of the job, as its owner or the admin, nor `rota job show`.
  EXPECT_EQ(job.dump().find(kValue), std::string::npos);
  EXPECT_NE(job.dump().find("alice-tok:TOKEN"), std::string::npos);  // the name is
  auto as_alice = server_->CallAs(alice_, "GET", "/api/v1/jobs/" + std::to_string(id));
  ASSERT_TRUE(as_alice.ok());
  EXPECT_EQ(as_alice->body.find(kValue), std::string::npos);
  CliResult show = RunCli({"job", "show", std::to_string(id)}, CliAs(alice_));
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out.find(kValue), std::string::npos);

  ASSERT_TRUE(WriteFileAtomic(go, "", 0644).ok());
  Json end = WaitJobEnd(*server_, id, seconds(30));
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
  // Gone once the task ended.
  EXPECT_TRUE(WaitFor([&] { return ::access(secrets_dir.c_str(), F_OK) != 0; }, seconds(5))) << secrets_dir;
  // Not in the logs, nor in any file of the server (its store holds it sealed) or the agent.
  EXPECT_EQ(Log(id, alice_).find(kValue), std::string::npos);
  EXPECT_EQ(FilesContaining(dir_.path(), kValue), std::vector<std::string>{});

  // Every use is in the trail.
  auto events = server_->GetJson("/api/v1/auth/events");
  ASSERT_TRUE(events.ok());
  EXPECT_NE(events->dump().find("secret_used"), std::string::npos) << events->dump(2);
  EXPECT_EQ(events->dump().find(kValue), std::string::npos);
}

TEST_F(SecretsE2E, AdminsDeleteButNeverReadAndBadInputIsRefused) {
  ROTA_SKIP_UNLESS_ROOT("real agents and users");
  auto made = server_->CallAs(alice_, "POST", "/api/v1/secrets", Json{{"name", "tok"}, {"value", kValue}}.dump());
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  EXPECT_EQ(made->body.find(kValue), std::string::npos);

  // The admin lists its metadata, cannot use it in a job, and deletes it.
  auto list = server_->GetJson("/api/v1/secrets");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["secrets"][0].value("owner", ""), "alice");
  EXPECT_EQ(list->dump().find(kValue), std::string::npos);
  auto use = Submit(server_->admin_token(), Spec("admin-read", {"/bin/true"}, Json::array({"tok"})));
  ASSERT_TRUE(use.ok());
  EXPECT_EQ(use->status, 403) << use->body;
  auto bob_rm = server_->CallAs(bob_, "DELETE", "/api/v1/secrets/tok");
  ASSERT_TRUE(bob_rm.ok());
  EXPECT_EQ(bob_rm->status, 404) << bob_rm->body;
  CliResult rm = RunCli({"secret", "rm", "tok"}, server_->CliEnv());
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(server_->GetJson("/api/v1/secrets")->at("secrets").size(), 0u);

  // Unknown secret, bad name, oversize, empty, a path on a host task.
  auto unknown = Submit(alice_, Spec("u", {"/bin/true"}, Json::array({"tok"})));
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  EXPECT_NE(unknown->body.find("no secret named 'tok'"), std::string::npos) << unknown->body;
  auto bad_name = server_->CallAs(alice_, "POST", "/api/v1/secrets", Json{{"name", "a b"}, {"value", "x"}}.dump());
  ASSERT_TRUE(bad_name.ok());
  EXPECT_EQ(bad_name->status, 400);
  EXPECT_NE(bad_name->body.find("must be 1..64"), std::string::npos) << bad_name->body;
  auto big = server_->CallAs(alice_, "POST", "/api/v1/secrets",
                             Json{{"name", "big"}, {"value", std::string(64 * 1024 + 1, 'x')}}.dump());
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->status, 400);
  EXPECT_NE(big->body.find("65537 bytes"), std::string::npos) << big->body;
  CliResult empty = RunCli({"secret", "create", "e", "--from-literal", ""}, CliAs(alice_));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("empty"), std::string::npos) << empty.err;
  CliResult bad_ref = RunCli({"run", "--secret", "x:1BAD", "--", "/bin/true"}, CliAs(alice_));
  EXPECT_NE(bad_ref.exit_code, 0);
  EXPECT_NE(bad_ref.err.find("neither an environment variable"), std::string::npos) << bad_ref.err;
  auto path = Submit(alice_, Spec("p", {"/bin/true"}, Json::array({"x:/run/x"})));
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->status, 400);
  EXPECT_NE(path->body.find("container tasks"), std::string::npos) << path->body;
}

// A job that waits while its secret is deleted fails when it is placed, saying
// why, instead of trying again every round.
TEST_F(SecretsE2E, AJobWhoseSecretWasDeletedWhileItWaitedFailsSayingWhy) {
  ROTA_SKIP_UNLESS_ROOT("tasks run as a Unix user");
  auto made = server_->CallAs(alice_, "POST", "/api/v1/secrets", Json{{"name", "gone"}, {"value", kValue}}.dump());
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  // Both GPUs held; the job naming the secret waits behind it.
  Json blocker = Spec("blocker", {"/bin/sleep", "600"}, nullptr);
  blocker["groups"][0]["gpus_per_task"] = 2;
  auto held = Submit(alice_, blocker);
  ASSERT_TRUE(held.ok());
  ASSERT_EQ(held->status, 201) << held->body;
  const int64_t blocker_id = Json::parse(held->body)["id"];
  ASSERT_TRUE(WaitFor([&] { return server_->GetJson("/api/v1/jobs/" + std::to_string(blocker_id))->value("state", "") ==
                                   "running"; },
                      seconds(30)));
  Json waiter = Spec("waiter", {"/bin/true"}, Json::array({"gone:TOKEN"}));
  waiter["groups"][0]["gpus_per_task"] = 1;
  auto queued = Submit(alice_, waiter);
  ASSERT_TRUE(queued.ok());
  ASSERT_EQ(queued->status, 201) << queued->body;
  const int64_t id = Json::parse(queued->body)["id"];
  auto rm = server_->CallAs(alice_, "DELETE", "/api/v1/secrets/gone");
  ASSERT_TRUE(rm.ok());
  ASSERT_EQ(rm->status, 204) << rm->body;
  ASSERT_EQ(server_->CallAs(alice_, "POST", "/api/v1/jobs/" + std::to_string(blocker_id) + "/cancel", "")->status, 200);
  Json end = WaitJobEnd(*server_, id, seconds(30));
  EXPECT_EQ(end.value("state", ""), "failed") << end.dump(2);
  EXPECT_NE(end.value("reason", "").find("no secret named 'gone'"), std::string::npos) << end.dump(2);
  EXPECT_EQ(end.value("restart_count", -1), 0) << end.dump(2);
}

}  // namespace
}  // namespace rota::testing

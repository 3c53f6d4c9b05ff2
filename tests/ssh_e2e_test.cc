// Agentless (ssh) nodes end to end: a real OpenSSH server (sshd) on a loopback
// port, `rota server` reaching it with its generated key, jobs launched,
// followed, logged and cancelled over SSH as their owner's Unix user — through
// setpriv when the node is reached as root, directly when it is reached as the
// owner — and followed on after a server restart.
//
// Needs root (sshd switches users; a test user is created) and OpenSSH's
// sshd; skips otherwise, unless ROTA_REQUIRE_SSHD=1 (set by scripts/test.sh,
// which installs openssh-server), which turns a skip into a failure.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "common/file_util.h"
#include "common/process.h"
#include "common/run_command.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

constexpr char kUser[] = "rota-ssh-u";
constexpr char kSshd[] = "/usr/sbin/sshd";

uint16_t FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

Status RunOk(const std::vector<std::string>& argv) {
  auto r = RunCommand(argv, {});
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return Status::Internal(argv[0] + " failed: " + r->err);
  return Status::Ok();
}

bool Alive(pid_t pid) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z';
}

class SshE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const bool required = std::getenv("ROTA_REQUIRE_SSHD") != nullptr &&
                          std::string(std::getenv("ROTA_REQUIRE_SSHD")) == "1";
    if (::geteuid() != 0 || ::access(kSshd, X_OK) != 0) {
      if (required) FAIL() << "ROTA_REQUIRE_SSHD=1 but not root or no " << kSshd;
      GTEST_SKIP() << "needs root and OpenSSH's sshd";
    }
    if (::getpwnam(kUser) == nullptr) {
      ASSERT_TRUE(RunOk({"useradd", "--create-home", "--shell", "/bin/sh", kUser}).ok());
    }
    // sshd (without PAM) refuses locked accounts; '*' is unlocked but has no password.
    ASSERT_TRUE(RunOk({"usermod", "-p", "*", kUser}).ok());
    ::chmod(dir_.path().c_str(), 0755);
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    server_->SetEnv("ROTA_JOB_PORTS", "31500-31999");
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    auto key = server_->GetJson("/api/v1/ssh-key");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    StartSshd((*key)["public_key"].get<std::string>());
    auto a = server_->CreateUser("alice", "user", Json{{"unix_user", kUser}});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    alice_ = *a;
    auto b = server_->CreateUser("bob", "user", Json{{"unix_user", "nobody"}});
    ASSERT_TRUE(b.ok());
    bob_ = *b;
  }

  void StartSshd(const std::string& public_key) {
    const std::string d = dir_.path() + "/sshd";
    ASSERT_TRUE(MakeDirs(d, 0755).ok());
    ASSERT_TRUE(MakeDirs("/run/sshd", 0755).ok());
    ASSERT_TRUE(RunOk({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", d + "/host_key"}).ok());
    ASSERT_TRUE(WriteFileAtomic(d + "/authorized_keys", public_key + "\n", 0644).ok());
    port_ = FreePort();
    ASSERT_TRUE(WriteFileAtomic(d + "/sshd_config",
                                "Port " + std::to_string(port_) +
                                    "\nListenAddress 127.0.0.1\nHostKey " + d +
                                    "/host_key\nPidFile " + d + "/sshd.pid\nAuthorizedKeysFile " +
                                    d + "/authorized_keys\nUsePAM no\nStrictModes no\n"
                                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                                    "PermitRootLogin prohibit-password\nLogLevel VERBOSE\n",
                                0644)
                    .ok());
    sshd_ = Child({kSshd, "-D", "-e", "-f", d + "/sshd_config"}, {}, d + "/sshd.log");
    ASSERT_TRUE(sshd_.Start().ok());
    ASSERT_TRUE(WaitFor([&] {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port_);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(fd);
      return ok;
    }, seconds(10))) << sshd_.Log();
  }

  std::string Url(const std::string& login) const {
    return "ssh://" + login + "@127.0.0.1:" + std::to_string(port_);
  }

  void AddNode(const std::string& name, const std::string& login) {
    auto r = RunCli({"ssh-node", "add", name, Url(login), "--gpus", "2", "--gpu-model", "Test GPU",
                     "--label", "site=lab"},
                    server_->CliEnv());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, name); }, seconds(30)))
        << server_->child().Log() << sshd_.Log();
  }

  Result<Json> Submit(const Json& spec, const std::string& token) {
    ASSIGN_OR_RETURN(auto r, server_->CallAs(token, "POST", "/api/v1/jobs", spec.dump()));
    if (r.status != 201) return Status::InvalidArgument(std::to_string(r.status) + " " + r.body);
    return Json::parse(r.body);
  }

  std::string Log(int64_t id, const std::string& task, const std::string& stream = "stdout") {
    auto r = server_->CallAs(alice_, "GET", "/api/v1/jobs/" + std::to_string(id) +
                                                "/logs?task=" + task + "&stream=" + stream);
    if (!r.ok() || r->status != 200) return "<" + (r.ok() ? r->body : r.status().message()) + ">";
    return Json::parse(r->body).value("data", "");
  }

  bool WaitRunning(int64_t id) {
    return WaitFor([&] {
      auto j = server_->GetJson("/api/v1/jobs/" + std::to_string(id));
      return j.ok() && (*j).value("state", "") == "running";
    }, seconds(30));
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  Child sshd_;
  uint16_t port_ = 0;
  std::string alice_, bob_;
};

TEST_F(SshE2E, JobRunsAsItsOwnerWithExactArgvEnvAndLogs) {
  AddNode("sshbox", "root");
  auto node = NodeJson(*server_, "sshbox");
  EXPECT_EQ(node["gpus"].size(), 2u) << node.dump(2);
  auto listed = RunCli({"ssh-nodes"}, server_->CliEnv());
  EXPECT_NE(listed.out.find("reachable"), std::string::npos) << listed.out;

  Json spec{{"name", "over-ssh"},
            {"command", {"/bin/sh", "-c",
                         "printf '%s|' \"$@\"; echo; id -un; echo \"cvd=$CUDA_VISIBLE_DEVICES "
                         "idx=$ROTA_TASK_INDEX home=$HOME\"; pwd",
                         "sh", "a b", "it's", "$(id)", "*"}},
            {"groups", {{{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 1},
                         {"nodes", {"sshbox"}}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  Json end = WaitJobEnd(*server_, id, seconds(60));
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2) << Log(id, "worker-0", "stderr");
  const std::string home = ::getpwnam(kUser)->pw_dir;
  for (int i = 0; i < 2; ++i) {
    std::string out = Log(id, "worker-" + std::to_string(i));
    EXPECT_EQ(out.substr(0, out.find('\n')), "a b|it's|$(id)|*|") << out;
    EXPECT_NE(out.find(std::string("\n") + kUser + "\n"), std::string::npos) << out;
    EXPECT_NE(out.find("idx=" + std::to_string(i) + " home=" + home), std::string::npos) << out;
    EXPECT_NE(out.find("\n" + home + "\n"), std::string::npos) << out;  // default workdir
  }
  std::set<std::string> gpus;
  for (const auto& t : end["tasks"]) gpus.insert(t["gpus"].dump());
  EXPECT_EQ(gpus.size(), 2u) << end.dump(2);

  // Bad input: a command that does not exist fails the job with the reason.
  Json missing{{"name", "missing"},
               {"command", {"rota-no-such-command-ssh"}},
               {"groups", {{{"role", "worker"}, {"nodes", {"sshbox"}}}}}};
  auto bad = Submit(missing, alice_);
  ASSERT_TRUE(bad.ok());
  Json failed = WaitJobEnd(*server_, (*bad)["id"], seconds(60));
  EXPECT_EQ(failed.value("state", ""), "failed") << failed.dump(2);
  EXPECT_NE(failed.dump().find("rota-no-such-command-ssh"), std::string::npos) << failed.dump(2);
}

TEST_F(SshE2E, CancelStopsTheTaskAndAServerRestartKeepsFollowingIt) {
  AddNode("sshbox", "root");
  Json spec{{"name", "long"},
            {"command", {"/bin/sh", "-c", "sleep 600 & wait"}},
            {"groups", {{{"role", "worker"}, {"nodes", {"sshbox"}}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = (*job)["id"];
  ASSERT_TRUE(WaitRunning(id));
  auto running = server_->GetJson("/api/v1/jobs/" + std::to_string(id));
  const pid_t pid = (*running)["tasks"][0].value("pid", 0);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(Alive(pid));
  auto st = ReadFile("/proc/" + std::to_string(pid) + "/status");
  ASSERT_TRUE(st.ok());
  const std::string uid_line = "Uid:\t" + std::to_string(::getpwnam(kUser)->pw_uid) + "\t";
  EXPECT_NE(st->find(uid_line), std::string::npos) << "the task does not run as " << kUser;

  // The server dies and comes back: the task is still followed.
  server_->child().Kill();
  ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "sshbox"); }, seconds(30)));
  EXPECT_TRUE(Alive(pid));
  const std::string path = "/api/v1/jobs/" + std::to_string(id);
  EXPECT_EQ(server_->CallAs(alice_, "POST", path + "/cancel")->status, 200);
  Json end = WaitJobEnd(*server_, id, seconds(60));
  EXPECT_EQ(end.value("state", ""), "cancelled") << end.dump(2);
  EXPECT_EQ(end["tasks"][0].value("signal", 0), SIGTERM) << end.dump(2);
  EXPECT_TRUE(WaitFor([&] { return !Alive(pid); }, seconds(10)));
}

TEST_F(SshE2E, ANodeReachedAsAUserRunsOnlyThatUsersTasks) {
  AddNode("mine", kUser);
  Json spec{{"name", "direct"},
            {"command", {"id", "-un"}},
            {"groups", {{{"role", "worker"}, {"nodes", {"mine"}}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Json end = WaitJobEnd(*server_, (*job)["id"], seconds(60));
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
  EXPECT_EQ(Log((*job)["id"], "worker-0"), std::string(kUser) + "\n");

  // bob's Unix user is not the login: refused with the reason.
  auto other = Submit(spec, bob_);
  ASSERT_TRUE(other.ok());
  Json refused = WaitJobEnd(*server_, (*other)["id"], seconds(60));
  EXPECT_EQ(refused.value("state", ""), "failed") << refused.dump(2);
  EXPECT_NE(refused.dump().find("can run tasks only for that Unix user"), std::string::npos)
      << refused.dump(2);
}

// Bad input tried: non-ssh URLs, option injection in host and user, bad ports,
// unknown fields, an existing node's name, non-admins, removal of an unknown
// node and of a node with a running task.
TEST_F(SshE2E, BadDeclarationsAreRefused) {
  auto post = [&](const Json& body, const std::string& token) {
    auto r = server_->CallAs(token, "POST", "/api/v1/ssh-nodes", body.dump());
    return r.ok() ? r->status : -1;
  };
  const std::string admin = server_->admin_token();
  for (const char* url : {"http://x@y", "ssh://y", "ssh://-oProxyCommand=sh@y", "ssh://u@-oX",
                          "ssh://u@h:0", "ssh://u@h:99999", "ssh://u@h/x"}) {
    EXPECT_EQ(post(Json{{"name", "n1"}, {"url", url}}, admin), 400) << url;
  }
  EXPECT_EQ(post(Json{{"name", "n1"}, {"url", Url("root")}, {"gpus", 65}}, admin), 400);
  EXPECT_EQ(post(Json{{"name", "n1"}, {"url", Url("root")}, {"extra", 1}}, admin), 400);
  EXPECT_EQ(post(Json{{"name", "bad name"}, {"url", Url("root")}}, admin), 400);
  EXPECT_EQ(post(Json{{"name", "n1"}, {"url", Url("root")}}, alice_), 403);
  EXPECT_EQ(post(Json{{"name", "n1"}, {"url", Url("root")}}, ""), 401);
  EXPECT_EQ(server_->CallAs(alice_, "GET", "/api/v1/ssh-key", "")->status, 403);
  AddNode("sshbox", "root");
  EXPECT_EQ(post(Json{{"name", "sshbox"}, {"url", Url("root")}}, admin), 409);
  EXPECT_EQ(server_->Call("DELETE", "/api/v1/ssh-nodes/nope")->status, 404);

  Json spec{{"name", "long"},
            {"command", {"sleep", "600"}},
            {"groups", {{{"role", "worker"}, {"nodes", {"sshbox"}}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok());
  ASSERT_TRUE(WaitRunning((*job)["id"]));
  EXPECT_EQ(server_->Call("DELETE", "/api/v1/ssh-nodes/sshbox")->status, 409);
  EXPECT_EQ(server_->CallAs(alice_, "POST", "/api/v1/jobs/" + std::to_string((*job)["id"].get<int64_t>()) +
                                                "/cancel")->status,
            200);
  WaitJobEnd(*server_, (*job)["id"], seconds(60));
  auto removed = RunCli({"ssh-node", "remove", "sshbox"}, server_->CliEnv());
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  auto list = server_->GetJson("/api/v1/ssh-nodes");
  EXPECT_EQ((*list)["ssh_nodes"].size(), 0u);
}

}  // namespace
}  // namespace rota::testing

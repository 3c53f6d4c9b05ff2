// Agentless (ssh) nodes end to end: a real OpenSSH server (sshd) on a loopback
// port, `rota server` reaching it with its generated key, jobs launched,
// followed, logged and cancelled over SSH as their owner's Unix user — through
// setpriv when the node is reached as root, directly when it is reached as the
// owner — and followed on after a server restart. Host keys: pinned at
// declaration (given, by fingerprint, or as scanned), a wrong pin refused, a
// node whose key changes no longer reached until pinned again.
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
    RunSshd();
  }

  // (Re)starts sshd on port_ with the host key in sshd/host_key.
  void RunSshd() {
    const std::string d = dir_.path() + "/sshd";
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

  // The server's host key replaced by a new one, as a reinstalled node (or a man
  // in the middle) would present: sshd and its sessions (the shared connection)
  // end, then sshd starts again with the new key.
  void ReplaceHostKey() {
    const std::string d = dir_.path() + "/sshd";
    sshd_.KillTree();
    ::unlink((d + "/host_key").c_str());
    ::unlink((d + "/host_key.pub").c_str());
    ASSERT_TRUE(RunOk({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", d + "/host_key"}).ok());
    RunSshd();
  }

  std::string HostKey() const {
    auto pub = ReadFile(dir_.path() + "/sshd/host_key.pub");
    return pub.ok() ? pub->substr(0, pub->find('\n')) : "";
  }

  // "SHA256:..." of sshd's host key, as ssh-keygen prints it.
  std::string HostKeyFingerprint() const { return Fingerprint(dir_.path() + "/sshd/host_key.pub"); }

  static std::string Fingerprint(const std::string& pub_file) {
    auto r = RunCommand({"ssh-keygen", "-lf", pub_file}, {});
    if (!r.ok() || r->exit_code != 0) return "<no fingerprint>";
    size_t start = r->out.find(' ') + 1;
    return r->out.substr(start, r->out.find(' ', start) - start);
  }

  Result<net::ClientResponse> PostNode(const Json& body) const {
    return server_->Call("POST", "/api/v1/ssh-nodes", body.dump());
  }

  Json SshNode(const std::string& name) const {
    auto list = server_->GetJson("/api/v1/ssh-nodes");
    if (!list.ok()) return Json();
    for (const auto& n : (*list)["ssh_nodes"]) {
      if (n.value("name", "") == name) return n;
    }
    return Json();
  }

  std::string Url(const std::string& login) const {
    return "ssh://" + login + "@127.0.0.1:" + std::to_string(port_);
  }

  void AddNode(const std::string& name, const std::string& login,
               std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"ssh-node", "add",         name,       Url(login), "--gpus",
                                     "2",        "--gpu-model", "Test GPU", "--label",  "site=lab"};
    args.insert(args.end(), more.begin(), more.end());
    auto r = RunCli(args, server_->CliEnv());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    add_output_ = r.out;
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
  std::string add_output_;  // of the last AddNode
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

// --host-key with the node's key, or with its fingerprint: pinned, and the node works.
TEST_F(SshE2E, HostKeyGivenAndMatchingIsPinnedAndTheNodeWorks) {
  const std::string fp = HostKeyFingerprint();
  AddNode("bykey", "root", {"--host-key", HostKey() + " root@node"});
  EXPECT_NE(add_output_.find(fp), std::string::npos) << add_output_;
  EXPECT_NE(add_output_.find("as given"), std::string::npos) << add_output_;
  Json node = SshNode("bykey");
  EXPECT_EQ(node.value("host_key_source", ""), "given") << node.dump(2);
  EXPECT_EQ(node.value("host_key_fingerprint", ""), fp) << node.dump(2);
  EXPECT_EQ(node.value("host_key", ""), HostKey().substr(0, HostKey().rfind(' ')));

  AddNode("byfp", kUser, {"--host-key", fp});
  EXPECT_EQ(SshNode("byfp").value("host_key_source", ""), "fingerprint");
  EXPECT_EQ(SshNode("byfp").value("host_key_fingerprint", ""), fp);
  // The node's known hosts file holds exactly the pinned key.
  auto known = ReadFile(dir_.path() + "/server/ssh/known_hosts.d/byfp");
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(*known, "[127.0.0.1]:" + std::to_string(port_) + " " +
                        HostKey().substr(0, HostKey().rfind(' ')) + "\n");

  Json spec{{"name", "pinned"},
            {"command", {"id", "-un"}},
            {"groups", {{{"role", "worker"}, {"nodes", {"byfp"}}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Json end = WaitJobEnd(*server_, (*job)["id"], seconds(60));
  EXPECT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
  auto listed = RunCli({"ssh-node", "list"}, server_->CliEnv());
  EXPECT_NE(listed.out.find(fp), std::string::npos) << listed.out;
}

// A pin the node does not match (its key is another one): refused naming both
// fingerprints, and nothing is stored.
TEST_F(SshE2E, WrongHostKeyIsRefusedNamingBothFingerprintsAndNothingIsStored) {
  const std::string other = dir_.path() + "/other_key";
  ASSERT_TRUE(RunOk({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other}).ok());
  auto other_pub = ReadFile(other + ".pub");
  ASSERT_TRUE(other_pub.ok());
  const std::string other_fp = Fingerprint(other + ".pub");
  for (const std::string& pin : {*other_pub, other_fp}) {
    auto r = PostNode(Json{{"name", "mitm"}, {"url", Url("root")}, {"host_key", pin}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 409) << r->body;
    EXPECT_NE(r->body.find("host key mismatch"), std::string::npos) << r->body;
    EXPECT_NE(r->body.find(other_fp), std::string::npos) << r->body;
    EXPECT_NE(r->body.find(HostKeyFingerprint()), std::string::npos) << r->body;
  }
  auto cli =
      RunCli({"ssh-node", "add", "mitm", Url("root"), "--host-key", other_fp}, server_->CliEnv());
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.err.find(other_fp), std::string::npos) << cli.err;
  auto list = server_->GetJson("/api/v1/ssh-nodes");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["ssh_nodes"].size(), 0u) << list->dump(2);
  EXPECT_FALSE(NodeReady(*server_, "mitm"));
  EXPECT_NE(::access((dir_.path() + "/server/ssh/known_hosts.d/mitm").c_str(), F_OK), 0);

  // Nothing listens there: without a whole key there is nothing to pin (503).
  const std::string nowhere = "ssh://root@127.0.0.1:" + std::to_string(FreePort());
  auto down = PostNode(Json{{"name", "down"}, {"url", nowhere}});
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(down->status, 503) << down->body;
  EXPECT_NE(down->body.find("presented no host key"), std::string::npos) << down->body;
  auto down_fp = PostNode(Json{{"name", "down"}, {"url", nowhere}, {"host_key", other_fp}});
  EXPECT_EQ(down_fp->status, 503) << down_fp->body;
  // A whole key is pinned unchecked, for a node not up yet.
  auto later = PostNode(Json{{"name", "later"}, {"url", nowhere}, {"host_key", *other_pub}});
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->status, 201) << later->body;
  EXPECT_EQ(Json::parse(later->body).value("host_key_fingerprint", ""), other_fp);
}

// No pin: the key presented at declaration is pinned and its fingerprint shown;
// when sshd's key is replaced the node is no longer reached, its error naming
// both fingerprints, until an admin pins the new key.
TEST_F(SshE2E, ScannedKeyIsShownAndAChangedHostKeyIsNotReached) {
  const std::string first = HostKeyFingerprint();
  AddNode("sshbox", "root");
  EXPECT_NE(add_output_.find("host key " + first + " (ssh-ed25519)"), std::string::npos)
      << add_output_;
  EXPECT_NE(add_output_.find("ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub"), std::string::npos)
      << add_output_;
  EXPECT_EQ(SshNode("sshbox").value("host_key_source", ""), "scanned");

  ReplaceHostKey();
  const std::string second = HostKeyFingerprint();
  ASSERT_NE(first, second);
  ASSERT_TRUE(WaitFor([&] { return !NodeReady(*server_, "sshbox"); }, seconds(30)))
      << server_->child().Log();
  std::string error;
  ASSERT_TRUE(WaitFor(
      [&] {
        error = SshNode("sshbox").value("error", "");
        return error.find("host key mismatch") != std::string::npos;
      },
      seconds(30)))
      << error;
  EXPECT_NE(error.find("expected " + first), std::string::npos) << error;
  EXPECT_NE(error.find(second), std::string::npos) << error;
  EXPECT_NE(error.find("rota ssh-node pin sshbox"), std::string::npos) << error;
  // Nothing runs there meanwhile.
  Json spec{{"name", "refused"},
            {"command", {"true"}},
            {"groups", {{{"role", "worker"}, {"nodes", {"sshbox"}}}}}};
  auto job = Submit(spec, alice_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto pending = server_->GetJson("/api/v1/jobs/" + std::to_string((*job)["id"].get<int64_t>()));
  EXPECT_EQ(pending->value("state", ""), "pending") << pending->dump(2);

  // Rotation: a wrong pin changes nothing; the new key's fingerprint pins it.
  auto wrong = RunCli({"ssh-node", "pin", "sshbox", "--host-key", first}, server_->CliEnv());
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find(second), std::string::npos) << wrong.err;
  auto pinned = RunCli({"ssh-node", "pin", "sshbox", "--host-key", second}, server_->CliEnv());
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  EXPECT_NE(pinned.out.find(second), std::string::npos) << pinned.out;
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "sshbox"); }, seconds(30)))
      << SshNode("sshbox").dump(2);
  Json end = WaitJobEnd(*server_, (*job)["id"], seconds(60));
  EXPECT_EQ(end.value("state", ""), "succeeded") << end.dump(2);

  // The pin outlives a restart (written again from the store).
  server_->child().Kill();
  ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "sshbox"); }, seconds(30)));
  EXPECT_EQ(SshNode("sshbox").value("host_key_fingerprint", ""), second);

  // The security trail holds who pinned which key; the refused pin left nothing.
  auto trail = server_->GetJson("/api/v1/auth/events");
  ASSERT_TRUE(trail.ok()) << trail.status().ToString();
  std::vector<std::string> pins;
  for (const Json& e : (*trail)["events"]) {
    if (e.value("username", "") != "sshbox") continue;
    pins.push_back(e.value("action", "") + " " + e.value("detail", ""));
    EXPECT_EQ(e.value("actor", ""), "admin") << e.dump();
  }
  ASSERT_EQ(pins.size(), 2u) << trail->dump(2);
  EXPECT_EQ(pins[0].rfind("ssh_node_pinned ", 0), 0u) << pins[0];  // newest first
  EXPECT_NE(pins[0].find(second), std::string::npos) << pins[0];
  EXPECT_NE(pins[0].find("(fingerprint)"), std::string::npos) << pins[0];
  EXPECT_EQ(pins[1].rfind("ssh_node_added ", 0), 0u) << pins[1];
  EXPECT_NE(pins[1].find(first), std::string::npos) << pins[1];
}

// Bad --host-key input: 400 naming the field and the forms accepted.
TEST_F(SshE2E, BadHostKeysAreRefusedWith400) {
  const std::string fp = HostKeyFingerprint();
  const std::string key = HostKey();
  for (const Json& bad :
       {Json("garbage"), Json("SHA256:"), Json(fp.substr(0, fp.size() - 3)),
        Json("MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48"), Json("ssh-ed25519 AAAA"),
        Json("ssh-dss " + key.substr(12)), Json("ssh-ed25519 " + key.substr(12, 30) + "!"),
        Json(42), Json::array({key})}) {
    auto r = PostNode(Json{{"name", "n1"}, {"url", Url("root")}, {"host_key", bad}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << bad.dump() << " " << r->body;
    EXPECT_NE(r->body.find("host_key"), std::string::npos) << r->body;
  }
  auto garbage = PostNode(Json{{"name", "n1"}, {"url", Url("root")}, {"host_key", "garbage"}});
  EXPECT_NE(garbage->body.find("SHA256:... fingerprint"), std::string::npos) << garbage->body;
  auto cli =
      RunCli({"ssh-node", "add", "n1", Url("root"), "--host-key", "nonsense"}, server_->CliEnv());
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.err.find("host_key"), std::string::npos) << cli.err;
  EXPECT_EQ((*server_->GetJson("/api/v1/ssh-nodes"))["ssh_nodes"].size(), 0u);

  // The pin route: bad keys, unknown fields, unknown nodes, non-admins.
  AddNode("sshbox", "root");
  const std::string pin = "/api/v1/ssh-nodes/sshbox/host-key";
  EXPECT_EQ(server_->Call("POST", pin, Json{{"host_key", "garbage"}}.dump())->status, 400);
  EXPECT_EQ(server_->Call("POST", pin, Json{{"key", fp}}.dump())->status, 400);
  EXPECT_EQ(server_->Call("POST", pin, "[1]")->status, 400);
  EXPECT_EQ(server_->Call("POST", "/api/v1/ssh-nodes/nope/host-key", "{}")->status, 404);
  EXPECT_EQ(server_->CallAs(alice_, "POST", pin, "{}")->status, 403);
  auto again = server_->Call("POST", pin, "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(Json::parse(again->body).value("host_key_fingerprint", ""), fp);
}

}  // namespace
}  // namespace rota::testing

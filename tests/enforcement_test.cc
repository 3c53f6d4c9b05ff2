// Reservation enforcement end to end, as the issue describes it: user A reserves
// simulated GPU 1; a process of another real Unix user B appears on it; rota
// warns B's terminal (a pty this test holds), emails B and A through a real
// SMTP server on loopback, SIGTERMs B's processes, SIGKILLs the one that
// ignores SIGTERM, leaves A's own process alone, and audits every step.
//
// Needs root (useradd, setuid, signals across users); skips otherwise.

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/process.h"
#include "common/time_util.h"
#include "notify/notify_test_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

// Creates Unix user `name` (no home, no login shell) unless it exists; its uid.
Result<uid_t> EnsureUnixUser(const std::string& name) {
  if (const passwd* pw = ::getpwnam(name.c_str()); pw != nullptr) return pw->pw_uid;
  SpawnOptions opts;
  opts.output_path = "/dev/null";
  ASSIGN_OR_RETURN(pid_t pid,
                   SpawnProcess({"useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                                 name},
                                opts));
  ASSIGN_OR_RETURN(int st, WaitProcess(pid, 30000));
  const passwd* pw = ::getpwnam(name.c_str());
  if (pw == nullptr) {
    return Status::Internal("useradd " + name + " failed (status " + std::to_string(st) + ")");
  }
  return pw->pw_uid;
}

// Starts argv as `uid` on simulated GPU `gpu` of `node`. With `tty_slave` set
// the process gets it as its controlling terminal and stdio (a login session).
Result<pid_t> StartAs(uid_t uid, const std::vector<std::string>& argv, const std::string& node,
                      const std::string& gpu, int tty_slave = -1) {
  std::vector<std::string> env_strings = {"PATH=/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=" + gpu,
                                          "ROTA_SIM_NODE=" + node};
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  const passwd* pw = ::getpwuid(uid);
  if (pw == nullptr) return Status::NotFound("no user with uid " + std::to_string(uid));
  const gid_t gid = pw->pw_gid;
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Unavailable("fork failed");
  if (pid == 0) {
    ::setsid();
    if (tty_slave >= 0) {
      ::ioctl(tty_slave, TIOCSCTTY, 0);
      ::dup2(tty_slave, 0);
      ::dup2(tty_slave, 1);
      ::dup2(tty_slave, 2);
    } else {
      int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(126);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

// Children of this test and how they ended: Running() reaps a child that
// exited and keeps its wait status for Status().
class Reaper {
 public:
  bool Running(pid_t pid) {
    if (status_.count(pid) != 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == 0) return true;
    status_[pid] = r == pid ? status : -1;
    return false;
  }
  // The wait status of an ended child; -1 when unknown.
  int Status(pid_t pid) const {
    auto it = status_.find(pid);
    return it == status_.end() ? -1 : it->second;
  }

 private:
  std::map<pid_t, int> status_;
};

// "killed by signal N" or how else `status` ended.
std::string Describe(int status) {
  if (status == -1) return "unknown";
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

// The pids named by the events with `action`.
std::set<int64_t> PidsOf(const api::Json& events, const std::string& action) {
  std::set<int64_t> out;
  for (const auto& e : events) {
    if (e["action"] != action) continue;
    for (const auto& p : e["pids"]) out.insert(p["pid"].get<int64_t>());
  }
  return out;
}

// The first event with `action`, or null.
api::Json FirstEvent(const api::Json& events, const std::string& action) {
  for (const auto& e : events) {
    if (e["action"] == action) return e;
  }
  return nullptr;
}

// The per-pid outcome of `pid` in the first event with `action`; "" when absent.
std::string PidOutcome(const api::Json& events, const std::string& action, int64_t pid) {
  for (const auto& e : events) {
    if (e["action"] != action) continue;
    for (const auto& p : e["pids"]) {
      if (p["pid"] == pid) return p.value("outcome", "");
    }
  }
  return "";
}

// Reads what is available on the pty master.
std::string Drain(int master) {
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST(EnforcementE2E, WarnsEmailsTermsThenKillsOnlyTheIntruder) {
  ROTA_SKIP_UNLESS_ROOT("creates Unix users, signals across users");
  auto uid_a = EnsureUnixUser("rota-e2e-a");
  auto uid_b = EnsureUnixUser("rota-e2e-b");
  ASSERT_TRUE(uid_a.ok()) << uid_a.status().ToString();
  ASSERT_TRUE(uid_b.ok()) << uid_b.status().ToString();

  TempDir dir;
  notify::testing::TempDir mail_dir;
  auto sink = notify::testing::SmtpSink::Start(mail_dir.path(), {});
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();

  ServerProcess server(dir.path() + "/server");
  server.SetEnv("ROTA_SMTP_URL", (*sink)->Url());
  server.SetEnv("ROTA_SMTP_TLS", "off");
  server.SetEnv("ROTA_SMTP_FROM", "rota@example.test");
  server.SetEnv("ROTA_GRACE_EMAIL", "1s");
  server.SetEnv("ROTA_GRACE_TERM", "3s");
  server.SetEnv("ROTA_GRACE_KILL", "3s");
  ASSERT_TRUE(server.Start().ok()) << server.child().Log();
  // A node name of this test process's own: simulated processes are found by node name.
  const std::string node = "node-e" + std::to_string(::getpid());
  AgentProcess agent(dir.path(), SimGpuNode{.name = node, .gpus = 2}, server);
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, node); }, seconds(20)))
      << agent.child().Log();

  auto alice = server.CreateUser("alice", "user", {{"unix_user", "rota-e2e-a"}});
  ASSERT_TRUE(server.CreateUser("bob", "user", {{"unix_user", "rota-e2e-b"}}).ok());
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();

  const int64_t now = RealClock::Get().NowMs();
  api::Json reservation{{"node", node},
                        {"gpus", {1}},
                        {"start", FormatRfc3339(now - now % 1000 + 1000)},
                        {"end", FormatRfc3339(now + 3600'000)},
                        {"title", "alice's experiment"}};
  auto created = server.CallAs(*alice, "POST", "/api/v1/reservations", reservation.dump());
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201) << created->body;
  const std::string reservation_path =
      "/api/v1/reservations/" +
      std::to_string(api::Json::parse(created->body)["id"].get<int64_t>());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = server.GetJson(reservation_path);
        return r.ok() && (*r)["state"] == "running";
      },
      seconds(10)));  // the reservation has begun

  // A's own process on the GPU.
  auto a_proc = StartAs(*uid_a, {"/bin/sleep", "600"}, node, "1");
  ASSERT_TRUE(a_proc.ok());

  // B, logged in on a terminal this test holds, starts two processes on GPU 1.
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  ASSERT_EQ(::fchown(slave, *uid_b, static_cast<gid_t>(-1)), 0);
  ASSERT_EQ(::fcntl(master, F_SETFL, O_NONBLOCK), 0);
  auto b_plain = StartAs(*uid_b, {"/bin/sleep", "600"}, node, "1", slave);
  auto b_stubborn = StartAs(*uid_b, {"/bin/sh", "-c", "trap '' TERM; exec /bin/sleep 600"},
                            node, "1", slave);
  ASSERT_TRUE(b_plain.ok());
  ASSERT_TRUE(b_stubborn.ok());

  // 1. The warning on B's terminal.
  std::string screen;
  EXPECT_TRUE(WaitFor([&] {
    screen += Drain(master);
    return screen.find("rota") != std::string::npos && screen.find("GPU") != std::string::npos;
  }, seconds(20))) << screen << "\nserver log:\n" << server.child().Log();

  // 2. Email to B and to A (the reservation owner), naming the GPU, the node
  // and the offender.
  auto mails = (*sink)->WaitMessages(2, seconds(20));
  std::set<std::string> rcpts;
  for (const auto& m : mails) {
    rcpts.insert(m.rcpt_tos.begin(), m.rcpt_tos.end());
    const std::string text = notify::testing::ParseMessage(m.data).parts["text/plain"];
    for (const std::string& want :
         {std::string("GPU 1"), node, std::string("rota-e2e-b"),
          std::to_string(*b_plain), std::string("alice's experiment")}) {
      EXPECT_NE(text.find(want), std::string::npos) << want << " missing in mail:\n" << text;
    }
    EXPECT_EQ(text.find("1970-"), std::string::npos) << "unset reservation time in:\n" << text;
  }
  EXPECT_TRUE(rcpts.count("bob@example.test")) << "recipients: " << rcpts.size();
  EXPECT_TRUE(rcpts.count("alice@example.test")) << "recipients: " << rcpts.size();

  // 3. SIGTERM ends the plain process; 4. SIGKILL the one that ignores SIGTERM.
  Reaper reaper;
  EXPECT_TRUE(WaitFor([&] { return !reaper.Running(*b_plain); }, seconds(20)));
  EXPECT_TRUE(WaitFor([&] { return !reaper.Running(*b_stubborn); }, seconds(20)));
  const int plain_status = reaper.Status(*b_plain);
  const int stubborn_status = reaper.Status(*b_stubborn);
  EXPECT_TRUE(plain_status != -1 && WIFSIGNALED(plain_status) && WTERMSIG(plain_status) == SIGTERM)
      << "plain process: " << Describe(plain_status);
  EXPECT_TRUE(stubborn_status != -1 && WIFSIGNALED(stubborn_status) &&
              WTERMSIG(stubborn_status) == SIGKILL)
      << "SIGTERM-ignoring process: " << Describe(stubborn_status);
  // A's process is untouched.
  EXPECT_TRUE(reaper.Running(*a_proc)) << Describe(reaper.Status(*a_proc));

  // 5. The audit log shows each step: one violation of B's with the steps as
  // distinct events, in order, each naming the right pids.
  api::Json violation;
  ASSERT_TRUE(WaitFor([&] {
    auto list = server.GetJson("/api/v1/violations?node=" + node);
    if (!list.ok()) return false;
    const api::Json& items = (*list).contains("violations") ? (*list)["violations"] : *list;
    for (const auto& v : items) {
      if (v["unix_user"] != "rota-e2e-b") continue;
      auto full = server.GetJson("/api/v1/violations/" + std::to_string(v["id"].get<int64_t>()));
      if (full.ok() && !FirstEvent((*full)["events"], "kill_result").is_null()) {
        violation = *full;
        return true;
      }
    }
    return false;
  }, seconds(20))) << server.child().Log();
  const api::Json& events = violation["events"];
  const std::string audit = events.dump();
  EXPECT_EQ(violation["gpu"], 1) << audit;
  EXPECT_EQ(violation["reservation_owner"], "alice") << audit;
  int64_t last_t = 0;
  for (const char* step : {"open", "warn", "email", "term", "kill"}) {
    api::Json e = FirstEvent(events, step);
    ASSERT_FALSE(e.is_null()) << step << " missing in " << audit;
    EXPECT_GE(e["t_ms"].get<int64_t>(), last_t) << step << " out of order in " << audit;
    last_t = e["t_ms"].get<int64_t>();
  }
  for (const char* report : {"warn_result", "term_result", "kill_result"}) {
    ASSERT_FALSE(FirstEvent(events, report).is_null()) << report << " missing in " << audit;
  }
  EXPECT_EQ(FirstEvent(events, "warn_result")["outcome"], "ok") << audit;
  EXPECT_NE(FirstEvent(events, "warn_result")["detail"].get<std::string>().find("pts/"),
            std::string::npos)
      << audit;
  const std::string email_detail = FirstEvent(events, "email")["detail"];
  EXPECT_NE(email_detail.find("bob@example.test"), std::string::npos) << audit;
  EXPECT_NE(email_detail.find("alice@example.test"), std::string::npos) << audit;
  // SIGTERM went to both of B's processes, SIGKILL only to the one that survived it.
  const std::set<int64_t> termed = PidsOf(events, "term");
  EXPECT_TRUE(termed.count(*b_plain)) << audit;
  EXPECT_TRUE(termed.count(*b_stubborn)) << audit;
  EXPECT_EQ(PidOutcome(events, "term_result", *b_plain), "signalled") << audit;
  EXPECT_EQ(PidsOf(events, "kill"), std::set<int64_t>{*b_stubborn}) << audit;
  EXPECT_EQ(PidOutcome(events, "kill_result", *b_stubborn), "signalled") << audit;
  EXPECT_EQ(FirstEvent(events, "kill_result")["outcome"], "ok") << audit;
  // A's process is named by no event.
  for (const auto& e : events) {
    for (const auto& p : e["pids"]) EXPECT_NE(p["pid"], *a_proc) << audit;
  }

  // The CLI shows it too.
  auto env = server.CliEnv();
  CliResult cli = RunCli({"violations", "--node", node}, env);
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("rota-e2e-b"), std::string::npos) << cli.out;

  ::kill(*a_proc, SIGKILL);
  ::waitpid(*a_proc, nullptr, 0);
  ::close(master);
  ::close(slave);
}

}  // namespace
}  // namespace rota::testing

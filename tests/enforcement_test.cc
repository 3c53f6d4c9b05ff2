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
#include <set>
#include <thread>

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

bool Alive(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  return r == 0;
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
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (creates Unix users, signals across users)";
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
  AgentProcess agent(dir.path(), SimGpuNode{.name = "node-e", .gpus = 2}, server);
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(server, "node-e"); }, seconds(20)))
      << agent.child().Log();

  auto alice = server.CreateUser("alice", "user", {{"unix_user", "rota-e2e-a"}});
  ASSERT_TRUE(server.CreateUser("bob", "user", {{"unix_user", "rota-e2e-b"}}).ok());
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();

  const int64_t now = RealClock::Get().NowMs();
  api::Json reservation{{"node", "node-e"},
                        {"gpus", {1}},
                        {"start", FormatRfc3339(now - now % 1000 + 1000)},
                        {"end", FormatRfc3339(now + 3600'000)},
                        {"title", "alice's experiment"}};
  auto created = server.CallAs(*alice, "POST", "/api/v1/reservations", reservation.dump());
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201) << created->body;
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the reservation has begun

  // A's own process on the GPU.
  auto a_proc = StartAs(*uid_a, {"/bin/sleep", "600"}, "node-e", "1");
  ASSERT_TRUE(a_proc.ok());

  // B, logged in on a terminal this test holds, starts two processes on GPU 1.
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  ASSERT_EQ(::fchown(slave, *uid_b, static_cast<gid_t>(-1)), 0);
  ASSERT_EQ(::fcntl(master, F_SETFL, O_NONBLOCK), 0);
  auto b_plain = StartAs(*uid_b, {"/bin/sleep", "600"}, "node-e", "1", slave);
  auto b_stubborn = StartAs(*uid_b, {"/bin/sh", "-c", "trap '' TERM; exec /bin/sleep 600"},
                            "node-e", "1", slave);
  ASSERT_TRUE(b_plain.ok());
  ASSERT_TRUE(b_stubborn.ok());

  // 1. The warning on B's terminal.
  std::string screen;
  EXPECT_TRUE(WaitFor([&] {
    screen += Drain(master);
    return screen.find("rota") != std::string::npos && screen.find("GPU") != std::string::npos;
  }, seconds(20))) << screen << "\nserver log:\n" << server.child().Log();

  // 2. Email to B and to A (the reservation owner).
  auto mails = (*sink)->WaitMessages(2, seconds(20));
  std::set<std::string> rcpts;
  for (const auto& m : mails) rcpts.insert(m.rcpt_tos.begin(), m.rcpt_tos.end());
  EXPECT_TRUE(rcpts.count("bob@example.test")) << "recipients: " << rcpts.size();
  EXPECT_TRUE(rcpts.count("alice@example.test")) << "recipients: " << rcpts.size();

  // 3. SIGTERM ends the plain process; 4. SIGKILL the one that ignores SIGTERM.
  EXPECT_TRUE(WaitFor([&] { return !Alive(*b_plain); }, seconds(20)));
  EXPECT_TRUE(WaitFor([&] { return !Alive(*b_stubborn); }, seconds(20)));
  int status = 0;
  // Both are reaped by Alive(); A's process is untouched.
  EXPECT_TRUE(Alive(*a_proc));
  (void)status;

  // 5. The audit log shows each step.
  api::Json violation;
  ASSERT_TRUE(WaitFor([&] {
    auto list = server.GetJson("/api/v1/violations?node=node-e");
    if (!list.ok()) return false;
    const api::Json& items = (*list).contains("violations") ? (*list)["violations"] : *list;
    for (const auto& v : items) {
      auto full = server.GetJson("/api/v1/violations/" + std::to_string(v["id"].get<int64_t>()));
      if (!full.ok()) continue;
      std::string events = (*full).dump();
      if (events.find("sigkill") != std::string::npos ||
          events.find("SIGKILL") != std::string::npos) {
        violation = *full;
        return true;
      }
    }
    return false;
  }, seconds(20))) << server.child().Log();
  const std::string audit = violation.dump();
  for (const char* step : {"warn", "email", "rota-e2e-b"}) {
    EXPECT_NE(audit.find(step), std::string::npos) << step << " missing in " << audit;
  }
  EXPECT_NE(audit.find(std::to_string(*b_plain)), std::string::npos) << audit;
  EXPECT_EQ(audit.find("\"pid\":" + std::to_string(*a_proc)), std::string::npos) << audit;

  // The CLI shows it too.
  auto env = server.CliEnv();
  CliResult cli = RunCli({"violations", "--node", "node-e"}, env);
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("rota-e2e-b"), std::string::npos) << cli.out;

  ::kill(*a_proc, SIGKILL);
  ::waitpid(*a_proc, nullptr, 0);
  ::close(master);
  ::close(slave);
}

}  // namespace
}  // namespace rota::testing

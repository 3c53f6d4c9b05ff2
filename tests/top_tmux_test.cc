// `rota top` on a real terminal: tmux runs it against `rota dev` at 3 and at 100
// nodes; what the terminal shows is read back with capture-pane.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "common/file_util.h"
#include "common/process.h"
#include "common/strings.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using std::chrono::seconds;

bool HaveTmux() { return ::access("/usr/bin/tmux", X_OK) == 0; }

// A `rota dev` with `nodes` simulated nodes, and its CLI environment.
struct Dev {
  Dev(const TempDir& dir, int nodes)
      : child({RotaBinary(), "dev", "--listen", "127.0.0.1:0", "--data-dir", dir.path() + "/data",
               "--nodes", std::to_string(nodes)},
              {}, dir.path() + "/dev.log") {}
  Status Start() {
    RETURN_IF_ERROR(child.Start());
    bool up = WaitFor([&] {
      std::smatch m;
      std::string log = child.Log();
      static const std::regex re(
          "export ROTA_SERVER=(http://127\\.0\\.0\\.1:[0-9]+) ROTA_TOKEN=(rota_[0-9a-f_]+)");
      if (!std::regex_search(log, m, re)) return false;
      url = m[1];
      token = m[2];
      return true;
    }, seconds(60));
    return up ? Status::Ok() : Status::Unavailable("rota dev did not start: " + child.Log());
  }
  Child child;
  std::string url, token;
};

// A tmux server of its own (a socket in the test's directory) with one window.
class Tmux {
 public:
  explicit Tmux(const TempDir& dir) : dir_(dir.path()), socket_(dir.path() + "/tmux.sock") {}
  ~Tmux() { Run({"kill-server"}); }
  CliResult Run(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"/usr/bin/tmux", "-S", socket_};
    argv.insert(argv.end(), args.begin(), args.end());
    SpawnOptions opts;
    opts.output_path = dir_ + "/tmux.out";
    opts.error_path = dir_ + "/tmux.err";
    ::unlink(opts.output_path.c_str());  // each call reads only its own output
    ::unlink(opts.error_path.c_str());
    CliResult r;
    auto pid = SpawnProcess(argv, opts);
    if (!pid.ok()) return r;
    auto st = WaitProcess(*pid, 10000);
    if (st.ok() && WIFEXITED(*st)) r.exit_code = WEXITSTATUS(*st);
    auto out = ReadFile(opts.output_path);
    auto err = ReadFile(opts.error_path);
    r.out = out.ok() ? *out : "";
    r.err = err.ok() ? *err : "";
    return r;
  }
  // The pane's text, one string per row.
  std::vector<std::string> Screen() const {
    std::vector<std::string> rows;
    std::istringstream in(Run({"capture-pane", "-p", "-t", "top"}).out);
    for (std::string line; std::getline(in, line);) rows.push_back(line);
    return rows;
  }
  // What the pane's shell and its children (rota top) are doing, for a failure message.
  std::string PaneProcess() const {
    const std::string pid = Format("#{pane_pid}");
    std::string out = "pane_pid=" + pid;
    auto children = ReadFile("/proc/" + pid + "/task/" + pid + "/children");
    std::istringstream ids(children.ok() ? *children : "");
    for (std::string child; ids >> child;) {
      std::error_code ec;
      for (const auto& t : std::filesystem::directory_iterator("/proc/" + child + "/task", ec)) {
        auto stat = ReadFile(t.path().string() + "/stat");
        auto wchan = ReadFile(t.path().string() + "/wchan");
        out += "\n  thread " + t.path().filename().string() + ": " +
               (stat.ok() ? std::string(Trim(*stat)) : "?") + " wchan=" + (wchan.ok() ? *wchan : "?");
      }
    }
    return out;
  }
  std::string Format(const std::string& fmt) const {
    return std::string(Trim(Run({"display-message", "-p", "-t", "top", fmt}).out));
  }
  void Keys(const std::vector<std::string>& keys) const {
    std::vector<std::string> args = {"send-keys", "-t", "top"};
    args.insert(args.end(), keys.begin(), keys.end());
    Run(args);
  }
  bool WaitScreen(const std::function<bool(const std::vector<std::string>&)>& pred, int secs = 20) const {
    return WaitFor([&] { return pred(Screen()); }, seconds(secs));
  }

 private:
  std::string dir_;
  std::string socket_;
};

std::string Joined(const std::vector<std::string>& rows) { return Join(rows, "\n"); }

bool Has(const std::vector<std::string>& rows, const std::string& text) {
  return Joined(rows).find(text) != std::string::npos;
}

// Starts `rota top` in a detached tmux session of cols x rows, under a shell that says how
// it ended ("rota top exited with status N") on the normal screen and then waits. Not tmux's
// remain-on-exit: tmux reaps a pane's process from its SIGCHLD handler, and Debian's tmux
// (libutempter) sets SIGCHLD to its default for a moment while it removes the pane's utmp
// entry, which it does as the pane's terminal closes, i.e. just as rota top exits: a SIGCHLD
// falling into that moment is lost, the pane stays a zombie and "Pane is dead" never comes
// (seen with strace, one run in four).
void StartTop(const Tmux& tmux, const Dev& dev, int cols, int rows) {
  CliResult r = tmux.Run({"new-session", "-d", "-s", "top", "-x", std::to_string(cols), "-y", std::to_string(rows),
                          "/bin/sh", "-c", "\"$@\"; echo \"rota top exited with status $?\"; exec sleep 600", "sh",
                          "env", "ROTA_SERVER=" + dev.url, "ROTA_TOKEN=" + dev.token, "TERM=xterm-256color",
                          RotaBinary(), "top", "--refresh", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(TopTmux, HundredNodesFitTheTerminalAndKeysPageExpandAndFilter) {
  if (!HaveTmux()) GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh --test installs it)";
  TempDir dir;
  Dev dev(dir, 100);
  ASSERT_TRUE(dev.Start().ok()) << dev.child.Log();
  Tmux tmux(dir);
  StartTop(tmux, dev, 100, 50);
  ASSERT_TRUE(tmux.WaitScreen([](const auto& s) { return Has(s, "Nodes 100: 100 ready") && Has(s, "GPUs 790:"); }, 60))
      << Joined(tmux.Screen());
  EXPECT_EQ(tmux.Format("#{alternate_on}"), "1");
  auto screen = tmux.Screen();
  ASSERT_EQ(screen.size(), 50u) << Joined(screen);
  EXPECT_EQ(screen[0].rfind("rota top", 0), 0u) << screen[0];
  // `rota dev --nodes 100`: gpu-a (8 GPUs), gpu-b (4), gpu-c (2), then gpu-004..gpu-100 (8 each).
  EXPECT_NE(screen[1].find("GPUs 790:"), std::string::npos) << screen[1];
  EXPECT_NE(screen[2].find("My jobs: "), std::string::npos) << screen[2];
  EXPECT_EQ(screen[3].rfind("NODE", 0), 0u) << screen[3];
  EXPECT_EQ(screen[4].rfind("gpu-004 ", 0), 0u) << screen[4];
  EXPECT_NE(screen[49].find("q quit"), std::string::npos) << screen[49];
  EXPECT_NE(screen[49].find("1-45/100"), std::string::npos) << screen[49];

  tmux.Keys({"PageDown"});
  ASSERT_TRUE(tmux.WaitScreen([](const auto& s) { return s.size() == 50 && Has({s[49]}, "2-46/100"); }))
      << Joined(tmux.Screen());
  tmux.Keys({"g", "Enter"});  // gpu-004 opens into its 8 GPUs
  ASSERT_TRUE(tmux.WaitScreen([](const auto& s) {
    return s.size() == 50 && s[4].rfind("gpu-004 ", 0) == 0 && s[5].rfind("    0 ", 0) == 0 &&
           s[12].rfind("    7 ", 0) == 0 && s[13].rfind("gpu-005 ", 0) == 0;
  })) << Joined(tmux.Screen());
  tmux.Keys({"/", "gpu-09", "Enter"});  // gpu-090 .. gpu-099
  ASSERT_TRUE(tmux.WaitScreen([](const auto& s) {
    return s.size() == 50 && s[4].rfind("gpu-090 ", 0) == 0 && Has({s[49]}, "1-10/10");
  })) << Joined(tmux.Screen());
  tmux.Run({"resize-window", "-t", "top", "-x", "70", "-y", "20"});
  ASSERT_TRUE(tmux.WaitScreen([](const auto& s) {
    return s.size() == 20 && s[0].rfind("rota top", 0) == 0 && Has({s[19]}, "q quit");
  })) << Joined(tmux.Screen());
  for (const auto& row : tmux.Screen()) EXPECT_LE(row.size(), 70u) << row;

  tmux.Keys({"q"});
  ASSERT_TRUE(WaitFor([&] { return Has(tmux.Screen(), "rota top exited with status 0"); }, seconds(10)))
      << Joined(tmux.Screen()) << "\n" << tmux.PaneProcess();
  EXPECT_EQ(tmux.Format("#{alternate_on}"), "0");  // the terminal was given back
}

TEST(TopTmux, ThreeNodesShowTheDemoUsersJobsAndCtrlCGivesTheTerminalBack) {
  if (!HaveTmux()) GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh --test installs it)";
  TempDir dir;
  Dev dev(dir, 3);
  ASSERT_TRUE(dev.Start().ok()) << dev.child.Log();
  std::map<std::string, std::string> env = {{"ROTA_SERVER", dev.url}, {"ROTA_TOKEN", dev.token}};
  if (::geteuid() == 0) {  // alice is this Unix account: as root her jobs are refused
    std::smatch m;
    const std::string log = dev.child.Log();
    static const std::regex admin_re("as the admin:\n  export ROTA_SERVER=\\S+ ROTA_TOKEN=(rota_[0-9a-f_]+)");
    ASSERT_TRUE(std::regex_search(log, m, admin_re)) << log;
    CliResult set = RunCli({"user", "set", "alice", "--unix-user", "nobody"},
                           {{"ROTA_SERVER", dev.url}, {"ROTA_TOKEN", m[1].str()}});
    ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  }
  ASSERT_TRUE(WaitFor([&] {  // the job is placed once the nodes have joined
    auto j = api::ParseJson(RunCli({"nodes", "-o", "json"}, env).out);
    if (!j.ok() || !j->is_array() || j->size() != 3) return false;
    for (const auto& n : *j) {
      if (n.value("state", "") != "ready") return false;
    }
    return true;
  }, seconds(60))) << dev.child.Log();
  CliResult run = RunCli({"run", "--name", "top-sleeper", "--gpus-per-task", "2", "--", "sleep", "300"}, env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Tmux tmux(dir);
  StartTop(tmux, dev, 80, 24);
  ASSERT_TRUE(tmux.WaitScreen([](const auto& s) {
    return Has(s, "Nodes 3: 3 ready") && Has(s, "My jobs: 1 running") && Has(s, "top-sleeper");
  }, 60)) << Joined(tmux.Screen());
  auto screen = tmux.Screen();
  ASSERT_EQ(screen.size(), 24u);
  EXPECT_NE(screen[0].find("user "), std::string::npos) << screen[0];
  EXPECT_NE(Joined(screen).find("gpu-c "), std::string::npos);
  EXPECT_NE(screen[23].find("1-3/3"), std::string::npos) << screen[23];
  tmux.Keys({"C-c"});
  ASSERT_TRUE(WaitFor([&] { return Has(tmux.Screen(), "rota top exited with status 0"); }, seconds(10)))
      << Joined(tmux.Screen()) << "\n" << tmux.PaneProcess();
  EXPECT_EQ(tmux.Format("#{alternate_on}"), "0");
}

}  // namespace
}  // namespace rota::testing

#include "dev/dev_cluster.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "agent/task_runner.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"
#include "server/accounts/accounts.h"
#include "server/server.h"

namespace rota::dev {
namespace {

// The simulated nodes stand for machines that stop with the demo: the tasks
// their agents left running (a real agent's tasks outlive it, to be adopted
// again) are stopped too, SIGTERM then SIGKILL after `grace_ms`. Returns how
// many were running. Their jobs read as failed when the demo starts again on
// the same data.
size_t StopLeftTasks(const std::string& exe, const std::vector<std::string>& node_dirs, int64_t grace_ms) {
  struct Node {
    std::unique_ptr<agent::TaskRunner> runner;
    std::vector<std::string> running;
  };
  std::vector<Node> nodes;
  size_t count = 0;
  for (const auto& dir : node_dirs) {
    Node n{std::make_unique<agent::TaskRunner>(std::vector<std::string>{exe, "task-shim"}, dir), {}};
    for (const auto& id : n.runner->Adopt()) {
      auto st = n.runner->Poll(id);
      if (!st.ok() || st->state != agent::TaskState::kRunning) continue;
      // The pid is the task's only while that process carries the task's notice
      // path (a task of an earlier demo may have ended, its pid taken since).
      auto env = ReadFile("/proc/" + std::to_string(st->pid) + "/environ");
      const std::string mark = std::string("ROTA_PREEMPT_NOTICE=") + dir + "/tasks/" + id + "/" +
                               agent::TaskRunner::kNoticeFile + '\0';
      if (!env.ok() || env->find(mark) == std::string::npos) continue;
      if (n.runner->Signal(id, SIGTERM).ok()) n.running.push_back(id);
    }
    count += n.running.size();
    nodes.push_back(std::move(n));
  }
  // Waits until every task ended or `ms` passed; true when all ended.
  auto wait = [&](int64_t ms) {
    for (int64_t waited = 0;; waited += 50) {
      bool any = false;
      for (auto& n : nodes) {
        std::erase_if(n.running, [&](const std::string& id) {
          auto st = n.runner->Poll(id);
          return !st.ok() || st->state != agent::TaskState::kRunning;
        });
        any = any || !n.running.empty();
      }
      if (!any) return true;
      if (waited >= ms) return false;
      ::usleep(50'000);
    }
  };
  if (!wait(grace_ms)) {
    for (auto& n : nodes) {
      for (const auto& id : n.running) (void)n.runner->Signal(id, SIGKILL);
    }
    (void)wait(2000);
  }
  return count;
}

}  // namespace

std::vector<SimNodeSpec> DefaultNodes() {
  return {
      {"gpu-a", "NVIDIA A100-SXM4-80GB", 8, 81920, 400, 60, true},
      {"gpu-b", "Tesla V100-SXM2-32GB", 4, 32768, 300, 40, false},
      {"gpu-c", "Tesla T4", 2, 15360, 70, 10, false},
  };
}

Result<std::vector<SimNodeSpec>> DevNodes(int count) {
  if (count < 1 || count > kMaxDevNodes) {
    return Status::InvalidArgument("--nodes must be between 1 and " +
                                   std::to_string(kMaxDevNodes) + ", not " +
                                   std::to_string(count));
  }
  std::vector<SimNodeSpec> nodes = DefaultNodes();
  nodes.resize(std::min<size_t>(nodes.size(), count));
  for (int i = static_cast<int>(nodes.size()) + 1; i <= count; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "gpu-%03d", i);
    nodes.push_back({name, "NVIDIA A100-SXM4-80GB", 8, 81920, 400, 60, false});
  }
  return nodes;
}

std::string SimConfigJson(const SimNodeSpec& node, const std::string& state_dir) {
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < node.gpus; ++i) {
    gpus.push_back({{"model", node.model},
                    {"memory_mib", node.memory_mib},
                    {"power_limit_w", node.power_limit_w},
                    {"idle_power_w", node.idle_power_w}});
  }
  nlohmann::json j{
      {"node", node.name}, {"default_node", node.default_node}, {"tasks_under", state_dir}, {"gpus", gpus}};
  return j.dump(2) + "\n";
}

Result<std::string> FindSimNvmlLibrary() {
  if (const char* env = std::getenv("ROTA_SIM_NVML_LIB"); env != nullptr && *env != '\0') {
    if (::access(env, R_OK) == 0) return std::string(env);
    return Status::NotFound(std::string("ROTA_SIM_NVML_LIB=") + env + " is not readable");
  }
  ASSIGN_OR_RETURN(std::string exe, SelfExecutable());
  std::string dir = exe.substr(0, exe.rfind('/'));
  for (const char* rel : {"/../lib/sim/libnvidia-ml.so.1", "/../lib/rota/sim/libnvidia-ml.so.1"}) {
    std::string path = dir + rel;
    if (::access(path.c_str(), R_OK) == 0) {
      char real[PATH_MAX];
      if (::realpath(path.c_str(), real) != nullptr) return std::string(real);
      return path;
    }
  }
  return Status::NotFound("simulated libnvidia-ml.so.1 not found next to " + exe +
                          " (set ROTA_SIM_NVML_LIB to its path)");
}

namespace {

// Niceness of the simulated nodes' agents (and so of their jobs).
constexpr int kNodeNice = 10;

struct AgentChild {
  SimNodeSpec spec;
  std::vector<std::string> argv;
  SpawnOptions spawn;
  pid_t pid = 0;
};

struct DemoAccount {
  std::string username, password, token;
};

// Creates (or, in a reused data dir, resets) the demo admin and user and gives
// each a fresh API token.
Result<std::vector<DemoAccount>> SetUpDemoAccounts(server::Accounts& accounts,
                                                   const std::string& admin_password) {
  std::string me = "rota";
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr) me = pw->pw_name;
  ASSIGN_OR_RETURN(std::string alice_password, RandomHex(8));
  std::vector<DemoAccount> out = {{"alice", alice_password, ""}, {"admin", admin_password, ""}};
  const int64_t now = RealClock::Get().NowMs();
  for (auto& account : out) {
    server::UserPatch patch;
    patch.password = account.password;
    auto user = accounts.FindUser(account.username);
    if (user.ok()) {
      ASSIGN_OR_RETURN(*user, accounts.UpdateUser(user->id, patch, now));
    } else {
      patch.username = account.username;
      patch.display_name = account.username == "alice" ? "Alice (demo user)" : "Administrator";
      patch.email = account.username + "@localhost";
      // The demo user is you on every node, so your processes are hers.
      if (account.username == "alice") patch.unix_user = me;
      patch.role = account.username == "admin" ? server::Role::kAdmin : server::Role::kUser;
      ASSIGN_OR_RETURN(user, accounts.CreateUser(patch, now));
    }
    ASSIGN_OR_RETURN(auto token, accounts.IssueToken(user->id, "api", "rota dev", 0, now));
    account.token = token.first;
  }
  return out;
}

int Fail(const Status& st) {
  std::cerr << "rota dev: " << st.message() << "\n";
  return 1;
}

}  // namespace

Result<server::ServerConfig> DevServerConfig(const DevOptions& options,
                                             const std::string& data_dir,
                                             const std::map<std::string, std::string>& env) {
  server::ServerConfig config;
  RETURN_IF_ERROR(server::ApplySetting(&config, "listen", "127.0.0.1:8080", "rota dev"));
  // Short enforcement graces so the demo shows the whole ladder in about a minute.
  config.grace_email_ms = 20'000;
  config.grace_term_ms = 45'000;
  config.grace_kill_ms = 10'000;
  if (!options.config_file.empty()) {
    RETURN_IF_ERROR(server::LoadConfigFile(&config, options.config_file));
  }
  RETURN_IF_ERROR(server::ApplyEnv(&config, env));
  if (!options.listen.empty()) {
    RETURN_IF_ERROR(server::ApplySetting(&config, "listen", options.listen, "--listen"));
  }
  if (!options.log_level.empty()) {
    RETURN_IF_ERROR(server::ApplySetting(&config, "log_level", options.log_level, "--log-level"));
  }
  config.data_dir = data_dir + "/server";
  return config;
}

int RunDev(const DevOptions& options) {
  // Signals are handled by sigwait below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (options.print_config) {
    auto config = DevServerConfig(
        options, options.data_dir.empty() ? "TEMPORARY-DIR" : options.data_dir,
        server::ProcessEnv());
    if (!config.ok()) return Fail(config.status());
    std::cout << server::ConfigToYaml(*config);
    return 0;
  }
  std::string data_dir = options.data_dir;
  if (data_dir.empty()) {
    char tmpl[] = "/tmp/rota-dev-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return Fail(Status::IoError("cannot create a temporary directory"));
    data_dir = tmpl;
  }
  // Absolute: the simulated nodes tell their own tasks by their directories.
  data_dir = std::filesystem::absolute(data_dir).lexically_normal().string();
  while (data_dir.size() > 1 && data_dir.back() == '/') data_dir.pop_back();
  auto node_specs = DevNodes(options.nodes);
  if (!node_specs.ok()) return Fail(node_specs.status());
  auto sim_lib = FindSimNvmlLibrary();
  if (!sim_lib.ok()) return Fail(sim_lib.status());
  auto exe = SelfExecutable();
  if (!exe.ok()) return Fail(exe.status());

  auto merged = DevServerConfig(options, data_dir, server::ProcessEnv());
  if (!merged.ok()) return Fail(merged.status());
  server::ServerConfig config = std::move(*merged);
  if (config.admin_password.empty()) {
    auto generated = RandomHex(8);
    if (!generated.ok()) return Fail(generated.status());
    config.admin_password = *generated;
  }
  const std::string admin_password = config.admin_password;
  auto server = server::Server::Start(config, RealClock::Get());
  if (!server.ok()) {
    return Fail(server.status().WithContext("cannot start the server (another rota dev running? "
                                            "try --listen 127.0.0.1:0)"));
  }
  const std::string url = (*server)->url();
  auto demo = SetUpDemoAccounts((*server)->accounts(), admin_password);
  if (!demo.ok()) return Fail(demo.status().WithContext("demo accounts"));

  // Job tasks run as their owners (nobody here): they must reach their task
  // directories (the preemption notice, ROTA_PREEMPT_NOTICE) under the nodes'
  // state directories, as on a real node (the agent's is 0711). Traversable,
  // not listable; the server's own directory stays 0700.
  for (const std::string& dir : {data_dir, data_dir + "/nodes"}) {
    if (Status s = MakeDirs(dir, 0711); !s.ok()) return Fail(s);
    if (::chmod(dir.c_str(), 0711) != 0) return Fail(Status::IoError("cannot chmod " + dir));
  }
  std::vector<AgentChild> agents;
  for (const auto& spec : *node_specs) {
    std::string node_dir = data_dir + "/nodes/" + spec.name;
    if (Status s = MakeDirs(node_dir, 0711); !s.ok()) return Fail(s);
    std::string sim_config = node_dir + "/sim-nvml.json";
    if (Status s = WriteFileAtomic(sim_config, SimConfigJson(spec, node_dir)); !s.ok()) return Fail(s);
    AgentChild child;
    child.spec = spec;
    // No CPU energy: the simulated nodes share this machine, whose RAPL counters each
    // would report in full.
    child.argv = {*exe, "agent", "--server", url, "--name", spec.name, "--state-dir", node_dir,
                  "--interval", options.interval, "--nvml-lib", *sim_lib, "--label", "dev=true",
                  "--powercap-root", ""};
    child.spawn.env = {{"ROTA_SIM_NVML_CONFIG", sim_config},
                       {"ROTA_JOIN_TOKEN", (*server)->join_token()},
                       {"ROTA_LOG_LEVEL", config.log_level}};
    child.spawn.output_path = node_dir + "/agent.log";
    // Yours alone, though its directory is traversable (0711 above).
    if (int fd = ::open(child.spawn.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600); fd >= 0) {
      ::fchmod(fd, 0600);
      ::close(fd);
    }
    child.spawn.die_with_parent = true;  // agents stop if `rota dev` is killed
    // The simulated nodes stand for other machines: their agents and jobs yield the
    // CPU to the control plane, so the API stays responsive when jobs fill the box.
    child.spawn.nice = kNodeNice;
    auto pid = SpawnProcess(child.argv, child.spawn);
    if (!pid.ok()) return Fail(pid.status());
    child.pid = *pid;
    agents.push_back(std::move(child));
  }

  std::cout << "\n"
            << "rota dev is running: a server and " << agents.size() << " simulated GPU nodes\n"
            << "  web UI:    " << url << "/\n"
            << "  API:       " << url << "/api/v1   (docs: " << url << "/api/v1/docs)\n"
            << "  metrics:   " << url << "/metrics\n"
            << "  data:      " << data_dir << "\n"
            << "  nodes:     ";
  for (size_t i = 0; i < agents.size() && i < 4; ++i) {
    std::cout << (i ? ", " : "") << agents[i].spec.name << " (" << agents[i].spec.gpus << " x "
              << agents[i].spec.model << ")";
  }
  if (agents.size() > 4) std::cout << " and " << agents.size() - 4 << " more like the last";
  std::cout << "\n  accounts:  ";
  for (const auto& a : *demo) {
    std::cout << a.username << " / " << a.password << (a.username == "admin" ? " (admin)" : "")
              << "   ";
  }
  std::cout << "\n\nIn another terminal, as the demo user alice (your Unix account):\n"
            << "  export ROTA_SERVER=" << url << " ROTA_TOKEN=" << (*demo)[0].token << "\n"
            << "  " << *exe << " nodes     (also: gpus, top)\n"
            << "as the admin:\n"
            << "  export ROTA_SERVER=" << url << " ROTA_TOKEN=" << (*demo)[1].token << "\n\n"
            << "Pretend to be a CUDA job on GPU 2 of gpu-a (the simulated GPUs see it):\n"
            << "  CUDA_VISIBLE_DEVICES=2 sleep 600 &\n"
            << "  on another node:  ROTA_SIM_NODE=gpu-b CUDA_VISIBLE_DEVICES=0,1 sleep 600 &\n\n"
            << "Reserve a GPU as alice and run on it:\n"
            << "  " << *exe << " reserve --node gpu-a --gpus 1 --duration 2h --title demo\n"
            << "  ROTA_NODE=gpu-a ROTA_SIM_NODE=gpu-a " << *exe << " exec -- sleep 600 &\n"
            << "Run a job as alice (2 tasks, a GPU each; tasks run as her Unix account, never as root):\n"
            << (::geteuid() == 0 ? "  (you are root: first, as the admin, " + *exe +
                                       " user set alice --unix-user nobody)\n"
                                 : std::string())
            << "  " << *exe << " run --workers 2 --gpus-per-task 1 --wait -- sh -c "
            << "'echo task $ROTA_TASK_INDEX on GPU $CUDA_VISIBLE_DEVICES'\n"
            << "  " << *exe << " logs 1 --task worker-1\n"
            << "See enforcement: as the admin reserve GPU 3 of gpu-a, then as alice\n"
            << "  CUDA_VISIBLE_DEVICES=3 sleep 600 &   (warned now, SIGTERM after 45 s)\n"
            << "  " << *exe << " violations\n\n"
            << "Press Ctrl-C to stop.\n"
            << std::flush;

  // Wait for a signal; restart agents that die on their own.
  while (true) {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig != SIGCHLD) break;
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& a : agents) {
        if (a.pid != pid) continue;
        ROTA_LOG(WARNING) << "agent " << a.spec.name << " exited (status " << status
                          << "); restarting it; log: " << a.spawn.output_path;
        ::sleep(1);
        auto again = SpawnProcess(a.argv, a.spawn);
        a.pid = again.ok() ? *again : 0;
      }
    }
  }
  std::cout << "\nstopping...\n";
  for (auto& a : agents) {
    if (a.pid > 0) ::kill(a.pid, SIGTERM);
  }
  for (auto& a : agents) StopProcess(a.pid, 3000);
  std::vector<std::string> node_dirs;
  for (const auto& a : agents) node_dirs.push_back(data_dir + "/nodes/" + a.spec.name);
  const size_t tasks = StopLeftTasks(*exe, node_dirs, 5000);
  if (tasks > 0) std::cout << "stopped " << tasks << " running job task(s) of the simulated nodes\n";
  (*server)->Stop();
  std::cout << "stopped; data kept in " << data_dir << "\n";
  return 0;
}

}  // namespace rota::dev

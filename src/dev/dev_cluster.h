#pragma once
// `rota dev`: a server and simulated GPU nodes on this machine, for trying
// rota and for tests. The server runs in this process; each node is a real
// `rota agent` child process whose NVML is the project's simulated
// libnvidia-ml.so.1 configured for that node — the same code paths as
// production, nothing mocked.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/config.h"

namespace rota::dev {

struct SimNodeSpec {
  std::string name;
  std::string model;
  int gpus = 0;
  int memory_mib = 0;
  int power_limit_w = 0;
  int idle_power_w = 0;
  bool default_node = false;  // claims hand-started processes without ROTA_SIM_NODE
};

// The demo cluster: 8, 4 and 2 GPUs of different models.
std::vector<SimNodeSpec> DefaultNodes();

// `count` simulated nodes: the first of DefaultNodes(), then "gpu-004", "gpu-005", ... with
// 8 A100s each (to see the UI and the scheduler at 100 x 8 GPUs).
// Errors: count outside 1..kMaxDevNodes.
inline constexpr int kMaxDevNodes = 500;
Result<std::vector<SimNodeSpec>> DevNodes(int count);

// JSON config of the simulated NVML library for one node whose agent keeps its
// state (and its tasks' directories) in `state_dir`, an absolute path: the node
// shows only its own agent's job tasks, not those of another cluster's node of
// the same name on this host.
std::string SimConfigJson(const SimNodeSpec& node, const std::string& state_dir);

// Finds the simulated libnvidia-ml.so.1: ROTA_SIM_NVML_LIB, then next to the
// executable (../lib/sim/ in the build tree, ../lib/rota/sim/ installed).
Result<std::string> FindSimNvmlLibrary();

struct DevOptions {
  std::string data_dir;             // "" -> a new temporary directory
  std::string config_file;          // a `rota server` YAML config ("" -> none)
  std::string listen;               // "" -> config/env, else 127.0.0.1:8080
  std::string interval = "1s";      // agent sample interval
  std::string log_level;            // "" -> config/env, else info
  int nodes = 3;                    // simulated nodes (DevNodes)
  bool print_config = false;        // print the server's effective config and exit
};

// The configuration of the dev cluster's server, merged as `rota server` merges its own
// (lowest first): server defaults; the demo's (listen 127.0.0.1:8080, enforcement graces
// of 20 s / 45 s / 10 s so the ladder shows in a minute); the config file; `env` (ROTA_*);
// the flags. The data directory is always `data_dir`/server. Errors name the setting.
Result<server::ServerConfig> DevServerConfig(const DevOptions& options,
                                             const std::string& data_dir,
                                             const std::map<std::string, std::string>& env);

// Runs the dev cluster until SIGINT/SIGTERM. Returns the exit status.
int RunDev(const DevOptions& options);

}  // namespace rota::dev

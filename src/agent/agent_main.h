#pragma once
// `rota agent`: flags -> collaborators -> Agent, until SIGINT/SIGTERM.

#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::agent {

struct AgentFlags {
  // The YAML config file (agent/agent_config.h); "" : flags only. The flags named in
  // `given` (config keys, e.g. "server_pin") override the file's settings.
  std::string config_file;
  std::set<std::string> given;
  std::string server;
  std::string token;
  std::string token_file;
  std::string ca_file;     // trust for an https:// server (net/tls.h)
  std::string server_pin;  // ... or its key's pin, sha256//...
  std::string name;
  std::string state_dir = "/var/lib/rota-agent";
  std::string interval = "2s";
  std::string buffer = "10m";
  std::string server_timeout = "20s";
  std::vector<std::string> labels;  // KEY=VALUE
  std::string nvml_library = "libnvidia-ml.so.1";
  // RAPL's powercap tree (CPU package energy); "" reports none.
  std::string powercap_root = "/sys/class/powercap";
  std::string log_level;
  // Enforcement never signals processes of uids below this (0..4294967294).
  int64_t enforcement_min_uid = 1000;
};

// Returns the exit status: 0 after a clean stop, 2 on bad flags or config, 1 on other
// errors. SIGHUP rereads the config file: log_level applies at once, the other settings
// that changed are logged as needing a restart.
int RunAgent(const AgentFlags& cli_flags);

// What `rota agent join` was given.
struct JoinFlags {
  std::string server;
  std::string token;
  std::string server_pin;
  std::string ca_file;
  std::string name;
  std::vector<std::string> labels;
  std::string config_file = "/etc/rota/agent.yaml";
  bool no_enable = false;  // write the config only
};
// `rota agent join URL --token T`: writes the config file (0600, the token in it) and,
// when systemd runs this machine, enables and starts rota-agent.service; says what to
// run otherwise. Exit status as RunAgent.
int RunAgentJoin(const JoinFlags& flags);

// The node id kept in <state_dir>/node-id, created on first use.
Result<std::string> LoadOrCreateNodeId(const std::string& state_dir);

}  // namespace rota::agent

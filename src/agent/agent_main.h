#pragma once
// `rota agent`: flags -> collaborators -> Agent, until SIGINT/SIGTERM.

#include <string>
#include <vector>

#include "common/status.h"

namespace rota::agent {

struct AgentFlags {
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

// Returns the exit status: 0 after a clean stop, 2 on bad flags, 1 on other errors.
int RunAgent(const AgentFlags& flags);

// The node id kept in <state_dir>/node-id, created on first use.
Result<std::string> LoadOrCreateNodeId(const std::string& state_dir);

}  // namespace rota::agent

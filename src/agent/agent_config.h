#pragma once
// The agent's YAML config file (/etc/rota/agent.yaml in the rota-agent package): a flat
// map whose keys are the `rota agent` flags with '_' for '-' (server, token_file,
// server_pin, state_dir, interval, labels: a map, ...). Flags given on the command line
// override the file. `rota agent join` writes one.

#include <set>
#include <string>
#include <vector>

#include "agent/agent_main.h"
#include "common/status.h"

namespace rota::agent {

// The keys a config file may hold, in a stable order.
const std::vector<std::string>& AgentConfigKeys();

// Merges the file's text into `flags`; `path` names it in messages. InvalidArgument
// naming the key for an unknown key, a value of the wrong shape or bad YAML.
Status LoadAgentConfigText(AgentFlags* flags, const std::string& text, const std::string& path);
// The same from a file (NotFound / IoError when it cannot be read).
Status LoadAgentConfigFile(AgentFlags* flags, const std::string& path);

// `file` (the config file's settings over the defaults) with the keys in `given` (the flags
// named on the command line, as config keys) taken from `flags`.
AgentFlags MergeAgentFlags(const AgentFlags& file, const AgentFlags& flags, const std::set<std::string>& given);

// YAML text of `flags`' settings that differ from the defaults (the token as given).
std::string AgentConfigToYaml(const AgentFlags& flags);

// The keys whose values differ between `a` and `b` (what a SIGHUP found changed).
std::vector<std::string> ChangedAgentKeys(const AgentFlags& a, const AgentFlags& b);

}  // namespace rota::agent

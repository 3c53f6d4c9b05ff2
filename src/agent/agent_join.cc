// `rota agent join`: the agent's config file from a URL and a token, then the service.

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/agent_main.h"
#include "api/codec.h"
#include "common/file_util.h"
#include "common/run_command.h"
#include "net/tls.h"

namespace rota::agent {
namespace {

int JoinUsage(const std::string& message) {
  std::cerr << "rota agent join: " << message << "\n";
  return 2;
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

int RunAgentJoin(const JoinFlags& flags) {
  if (auto urls = AgentConnectUrls(flags.server); !urls.ok()) return JoinUsage(urls.status().message());
  if (flags.token.empty()) return JoinUsage("--token is required (the server's <data_dir>/join-token)");
  if (flags.token.find_first_of("\r\n") != std::string::npos) return JoinUsage("--token must be one line");
  if (!flags.server_pin.empty()) {
    if (Status st = net::ValidatePin(flags.server_pin); !st.ok()) return JoinUsage("--server-pin: " + st.message());
  }
  if (!flags.ca_file.empty() && !ReadFile(flags.ca_file).ok()) {
    return JoinUsage("--ca-file " + flags.ca_file + " is not readable");
  }
  if (!flags.name.empty() && !api::IsValidNodeName(flags.name)) {
    return JoinUsage("node name '" + flags.name + "' is not valid (1-63 of [A-Za-z0-9._-])");
  }
  AgentFlags config;
  config.server = flags.server;
  config.token = flags.token;
  config.server_pin = flags.server_pin;
  config.ca_file = flags.ca_file;
  config.name = flags.name;
  for (const auto& label : flags.labels) {
    size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0) return JoinUsage("--label '" + label + "' must be KEY=VALUE");
    config.labels.push_back(label);
  }
  const std::string text = "# Written by rota agent join; settings as `rota agent --help` (docs/packaging.md).\n" +
                           AgentConfigToYaml(config);
  // What is written must load back (the service reads it at start).
  AgentFlags check;
  if (Status st = LoadAgentConfigText(&check, text, flags.config_file); !st.ok()) {
    std::cerr << "rota agent join: internal error, the config does not load back: " << st.message() << "\n";
    return 1;
  }
  if (Status st = MakeDirs(DirName(flags.config_file), 0755); !st.ok()) {
    std::cerr << "rota agent join: " << st.message() << "\n";
    return 1;
  }
  // 0600: the join token is a secret.
  if (Status st = WriteFileAtomic(flags.config_file, text, 0600); !st.ok()) {
    std::cerr << "rota agent join: " << st.message() << "\n";
    return 1;
  }
  std::cout << "wrote " << flags.config_file << " (mode 0600)\n";
  const std::string by_hand = "rota agent --config " + flags.config_file;
  if (flags.no_enable) {
    std::cout << "start the agent with: systemctl enable --now rota-agent.service (systemd) or " << by_hand << "\n";
    return 0;
  }
  struct stat st {};
  if (::stat("/run/systemd/system", &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::cout << "systemd is not running here: start the agent with " << by_hand
              << " (as root, under your service manager)\n";
    return 0;
  }
  RunOptions options;
  options.timeout_ms = 60'000;
  auto out = RunCommand({"systemctl", "enable", "--now", "rota-agent.service"}, options);
  if (!out.ok() || out->exit_code != 0) {
    std::cerr << "rota agent join: systemctl enable --now rota-agent.service failed: "
              << (out.ok() ? out->err : out.status().message()) << "\n"
              << "  the config is written; start the agent with " << by_hand << "\n";
    return 1;
  }
  std::cout << "rota-agent.service enabled and started (journalctl -u rota-agent to follow it)\n";
  return 0;
}

}  // namespace rota::agent

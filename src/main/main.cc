// rota: one binary, many subcommands. Parses flags and hands over; no logic here.

#include <CLI/CLI.hpp>

#include <iostream>

#include "agent/agent_main.h"
#include "cli/commands.h"
#include "dev/dev_cluster.h"
#include "server/server_main.h"

namespace {
constexpr const char* kVersion = "0.1.0";
}

int main(int argc, char** argv) {
  CLI::App app{"rota — GPU cluster manager: monitor, reserve, enforce, launch, schedule"};
  app.require_subcommand(1);
  // A flag given twice takes its last value, as most Unix tools do.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", kVersion);

  // rota server
  rota::server::ServerFlags server_flags;
  auto* server = app.add_subcommand("server", "Run the control plane (REST API, store, agent gateway)");
  server->add_option("-c,--config", server_flags.config_file, "YAML config file");
  server->add_option("--listen", server_flags.listen, "ADDRESS:PORT to listen on (default 127.0.0.1:8080)");
  server->add_option("--data-dir", server_flags.data_dir, "Directory for the database and secrets");
  server->add_option("--join-token", server_flags.join_token, "Token agents must present (default: generated)");
  server->add_option("--log-level", server_flags.log_level, "debug, info, warning or error");
  server->add_flag("--print-config", server_flags.print_config, "Print the effective config and exit");

  // rota agent
  rota::agent::AgentFlags agent_flags;
  auto* agent = app.add_subcommand("agent", "Run the node agent (monitoring; one per GPU node)");
  agent->add_option("--server", agent_flags.server, "Server URL, e.g. http://10.0.0.1:8080")->required();
  agent->add_option("--token", agent_flags.token, "Join token (or ROTA_JOIN_TOKEN)");
  agent->add_option("--token-file", agent_flags.token_file, "File holding the join token");
  agent->add_option("--name", agent_flags.name, "Node name (default: hostname)");
  agent->add_option("--state-dir", agent_flags.state_dir, "Agent state directory (default /var/lib/rota-agent)");
  agent->add_option("--interval", agent_flags.interval, "Sample interval, 0.5s..60s (default 2s)");
  agent->add_option("--buffer", agent_flags.buffer, "History kept while the server is unreachable (default 10m)");
  agent->add_option("--label", agent_flags.labels, "Node label KEY=VALUE (repeatable)");
  agent->add_option("--nvml-lib", agent_flags.nvml_library, "NVML library to load (default libnvidia-ml.so.1)");
  agent->add_option("--log-level", agent_flags.log_level, "debug, info, warning or error");

  // rota dev
  rota::dev::DevOptions dev_options;
  auto* dev = app.add_subcommand("dev", "Run a server and 3 simulated GPU nodes on this machine (demo)");
  dev->add_option("--data-dir", dev_options.data_dir, "Data directory (default: a new temporary one)");
  dev->add_option("--listen", dev_options.listen, "ADDRESS:PORT for the server (default 127.0.0.1:8080)");
  dev->add_option("--interval", dev_options.interval, "Agent sample interval (default 1s)");
  dev->add_option("--log-level", dev_options.log_level, "debug, info, warning or error");

  // Client commands.
  rota::cli::ClientOptions client;
  rota::cli::OutputOptions output;
  auto add_client_flags = [&](CLI::App* cmd) {
    cmd->add_option("--server", client.server, "Server URL (or ROTA_SERVER)");
    cmd->add_option("-o,--output", output.format, "Output format: table or json");
  };
  auto* nodes = app.add_subcommand("nodes", "List nodes and their state");
  add_client_flags(nodes);
  std::string gpus_node;
  auto* gpus = app.add_subcommand("gpus", "List GPUs: utilisation, memory, temperature, power, users, processes");
  add_client_flags(gpus);
  gpus->add_option("--node", gpus_node, "Only this node");
  rota::cli::TopOptions top_options;
  auto* top = app.add_subcommand("top", "Live view of nodes and GPUs, refreshed in place");
  add_client_flags(top);
  top->add_option("--node", top_options.node, "Only this node");
  top->add_option("--frames", top_options.frames, "Exit after this many frames (default: run until Ctrl-C)");
  top->add_option("--refresh", top_options.refresh_s, "Seconds between redraws (default 1)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (server->parsed()) return rota::server::RunServer(server_flags);
  if (agent->parsed()) return rota::agent::RunAgent(agent_flags);
  if (dev->parsed()) return rota::dev::RunDev(dev_options);
  if (nodes->parsed()) return rota::cli::RunNodes(client, output);
  if (gpus->parsed()) return rota::cli::RunGpus(client, output, gpus_node);
  if (top->parsed()) return rota::cli::RunTop(client, output, top_options);
  return 2;
}

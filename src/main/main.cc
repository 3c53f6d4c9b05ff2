// rota: one binary, many subcommands. Parses flags and hands over; no logic here.

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "agent/agent_main.h"
#include "agent/task_shim.h"
#include "cli/commands.h"
#include "dev/dev_cluster.h"
#include "server/queues/queues.h"
#include "server/server_main.h"
#include "server/store_backup_main.h"
#include "server/store_check_main.h"
#include "server/store_migrate_main.h"
#include "sim/simulate.h"

namespace {
constexpr const char* kVersion = "0.1.0";

// A finite number >= 0 (CLI::NonNegativeNumber lets nan and inf through).
const CLI::Validator kFiniteNonNegative(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v) || v < 0) return "must be a finite number >= 0";
      return "";
    },
    "NUMBER>=0");

// A whole number of at least `min`.
CLI::Validator AtLeast(long long min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno != 0 || v < min) {
          return "must be a whole number of " + std::to_string(min) + " or more";
        }
        return "";
      },
      "INT>=" + std::to_string(min));
}
}  // namespace

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
  server->add_option("--store", server_flags.store,
                     "Where the store is: sqlite:PATH or postgresql://user@host/db "
                     "(default: the data dir's rota.db)");
  server->add_option("--join-token", server_flags.join_token, "Token agents must present (default: generated)");
  server->add_option("--log-level", server_flags.log_level, "debug, info, warning or error");
  server->add_flag("--print-config", server_flags.print_config, "Print the effective config and exit");

  // rota store migrate
  rota::server::StoreMigrateFlags migrate_flags;
  auto* store_cmd = app.add_subcommand("store", "Administer a server's store (run where the store is)");
  store_cmd->require_subcommand(1);
  auto* store_migrate = store_cmd->add_subcommand(
      "migrate", "Copy a stopped server's SQLite store into an empty PostgreSQL database, every row, counts checked");
  store_migrate->add_option("--from", migrate_flags.from, "The SQLite store: sqlite:PATH (e.g. sqlite:/var/lib/rota/rota.db)")
      ->required();
  store_migrate->add_option("--to", migrate_flags.to, "The PostgreSQL store: postgresql://user@host/db")->required();
  store_migrate->add_flag("--overwrite", migrate_flags.overwrite,
                          "Replace the rows of a target that already holds a store");
  rota::server::StoreCheckFlags check_flags;
  auto* store_check = store_cmd->add_subcommand(
      "check", "Check a store's integrity (orphan rows, broken rules, SQLite's own checks); a server may run");
  store_check->add_option("--store", check_flags.store, "sqlite:PATH or postgresql://user@host/db (or ROTA_STORE)");
  store_check->add_flag("--json", check_flags.json, "Print the report as JSON");

  // rota admin backup | restore
  rota::server::AdminBackupFlags backup_flags;
  auto* admin_cmd = app.add_subcommand("admin", "Back up and restore a server's store (run where the store is)");
  admin_cmd->require_subcommand(1);
  auto* admin_backup = admin_cmd->add_subcommand(
      "backup", "Copy the store into FILE while the server runs: one consistent snapshot (SQLite's online "
                "backup; pg_dump for PostgreSQL)");
  auto* admin_restore = admin_cmd->add_subcommand(
      "restore", "Put a backup back under a stopped server (an older backup is migrated; a newer one refused)");
  for (auto* cmd : {admin_backup, admin_restore}) {
    cmd->add_option("file", backup_flags.file, "The backup file")->required();
    cmd->add_option("-c,--config", backup_flags.config_file, "The server's YAML config file");
    cmd->add_option("--data-dir", backup_flags.data_dir, "The server's data dir (its rota.db)");
    cmd->add_option("--store", backup_flags.store, "The store: sqlite:PATH or postgresql://user@host/db");
  }
  admin_restore->add_flag("--overwrite", backup_flags.overwrite, "Replace the store that is there");

  // rota agent
  rota::agent::AgentFlags agent_flags;
  auto* agent = app.add_subcommand("agent", "Run the node agent (monitoring; one per GPU node)");
  agent->add_option("-c,--config", agent_flags.config_file,
                    "YAML config file (keys as the flags, '_' for '-'; flags override it; /etc/rota/agent.yaml "
                    "in the package)");
  agent->add_option("--server", agent_flags.server, "Server URL, e.g. https://10.0.0.1:8080 (or server: in --config)");
  agent->add_option("--token", agent_flags.token, "Join token (or ROTA_JOIN_TOKEN)");
  agent->add_option("--token-file", agent_flags.token_file, "File holding the join token");
  agent->add_option("--ca-file", agent_flags.ca_file,
                    "CA certificate(s) to trust for an https:// server (the server's <data_dir>/tls/ca.pem)");
  agent->add_option("--server-pin", agent_flags.server_pin,
                    "Trust the https:// server whose key has this pin, sha256//... (printed by rota server)");
  agent->add_option("--name", agent_flags.name, "Node name (default: hostname)");
  agent->add_option("--state-dir", agent_flags.state_dir, "Agent state directory (default /var/lib/rota-agent)");
  agent->add_option("--interval", agent_flags.interval, "Sample interval, 0.5s..60s (default 2s)");
  agent->add_option("--buffer", agent_flags.buffer, "History kept while the server is unreachable (default 10m)");
  agent->add_option("--server-timeout", agent_flags.server_timeout,
                    "Drop the connection after this long without a word from the server (pinged at half), "
                    "2s..10m (default 20s)");
  agent->add_option("--label", agent_flags.labels, "Node label KEY=VALUE (repeatable)");
  agent->add_option("--nvml-lib", agent_flags.nvml_library, "NVML library to load (default libnvidia-ml.so.1)");
  agent->add_option("--powercap-root", agent_flags.powercap_root,
                    "Where RAPL's CPU package energy counters are (default /sys/class/powercap; \"\": "
                    "no CPU energy)");
  agent->add_option("--enforcement-min-uid", agent_flags.enforcement_min_uid,
                    "Never signal processes of uids below this: root and system accounts (default 1000)");
  agent->add_option("--log-level", agent_flags.log_level, "debug, info, warning or error");
  rota::agent::JoinFlags join_flags;
  auto* agent_join = agent->add_subcommand(
      "join", "Write this node's agent config (/etc/rota/agent.yaml, 0600) and enable rota-agent.service");
  agent_join->add_option("url", join_flags.server, "Server URL, e.g. https://10.0.0.1:8080")->required();
  agent_join->add_option("--token", join_flags.token, "The server's join token")->required();
  agent_join->add_option("--server-pin", join_flags.server_pin, "Trust the https:// server with this key pin");
  agent_join->add_option("--ca-file", join_flags.ca_file, "CA certificate(s) to trust for an https:// server");
  agent_join->add_option("--name", join_flags.name, "Node name (default: hostname)");
  agent_join->add_option("--label", join_flags.labels, "Node label KEY=VALUE (repeatable)");
  agent_join->add_option("--config", join_flags.config_file, "Where to write (default /etc/rota/agent.yaml)");
  agent_join->add_flag("--no-enable", join_flags.no_enable, "Write the config only");

  // rota dev
  rota::dev::DevOptions dev_options;
  auto* dev = app.add_subcommand("dev", "Run a server and 3 simulated GPU nodes on this machine (demo)");
  dev->add_option("--data-dir", dev_options.data_dir, "Data directory (default: a new temporary one)");
  dev->add_option("--config", dev_options.config_file,
                  "A rota server YAML config (ROTA_* environment variables apply too)");
  dev->add_option("--listen", dev_options.listen, "ADDRESS:PORT for the server (default 127.0.0.1:8080)");
  dev->add_option("--interval", dev_options.interval, "Agent sample interval (default 1s)");
  dev->add_option("--log-level", dev_options.log_level, "debug, info, warning or error");
  dev->add_flag("--print-config", dev_options.print_config,
               "Print the server's effective config and exit");
  dev->add_option("--nodes", dev_options.nodes,
                  "Simulated nodes (default 3: 8, 4 and 2 GPUs; more: 8 GPUs each, up to 500)");

  // Client commands.
  rota::cli::ClientOptions client;
  rota::cli::OutputOptions output;
  auto add_client_flags = [&](CLI::App* cmd) {
    cmd->add_option("--server", client.server, "Server URL (or ROTA_SERVER)");
    cmd->add_option("--ca-file", client.ca_file, "CA certificate(s) to trust for an https:// server (or ROTA_CA_FILE)");
    cmd->add_option("--server-pin", client.server_pin, "Trust the https:// server whose key has this pin, sha256//... (or ROTA_SERVER_PIN)");
    cmd->add_option("-o,--output", output.format, "Output format: table or json");
  };
  auto* nodes = app.add_subcommand("nodes", "List nodes and their state; drain, resume or revoke one (admin)");
  add_client_flags(nodes);
  std::string drain_node, drain_reason;
  auto* nodes_drain = nodes->add_subcommand("drain", "Start no new job on a node; running jobs go on (admin)");
  auto* nodes_resume = nodes->add_subcommand("resume", "Let jobs start on a drained node again (admin)");
  for (auto* cmd : {nodes_drain, nodes_resume}) {
    add_client_flags(cmd);
    cmd->add_option("name", drain_node, "Node name")->required();
  }
  nodes_drain->add_option("--reason", drain_reason, "Why, shown to users whose jobs wait for it");
  auto* nodes_revoke = nodes->add_subcommand(
      "revoke", "Revoke a node's own credential: its agent must enrol again with the join token (admin)");
  add_client_flags(nodes_revoke);
  nodes_revoke->add_option("name", drain_node, "Node name")->required();
  auto* servers_cmd = app.add_subcommand(
      "servers", "List the rota servers sharing this store: role, address, version, last renewal");
  add_client_flags(servers_cmd);
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

  // Accounts.
  rota::cli::LoginOptions login_options;
  auto* login = app.add_subcommand("login", "Sign in and save an API token for the CLI");
  login->add_option("--server", client.server, "Server URL (or ROTA_SERVER)");
  login->add_option("--ca-file", client.ca_file, "CA certificate(s) to trust for an https:// server (or ROTA_CA_FILE)");
  login->add_option("--server-pin", client.server_pin, "Trust the https:// server whose key has this pin, sha256//... (or ROTA_SERVER_PIN)");
  login->add_option("-u,--user", login_options.username, "Username (prompted when absent)");
  login->add_option("--ttl", login_options.ttl, "Token lifetime, e.g. 30d (default and most: the server's api_token_max_ttl, 90d)");
  auto* logout = app.add_subcommand("logout", "Revoke the saved CLI token and forget it");
  logout->add_option("--server", client.server, "Server URL (or ROTA_SERVER)");
  logout->add_option("--ca-file", client.ca_file, "CA certificate(s) to trust for an https:// server (or ROTA_CA_FILE)");
  logout->add_option("--server-pin", client.server_pin, "Trust the https:// server whose key has this pin, sha256//... (or ROTA_SERVER_PIN)");
  auto* whoami = app.add_subcommand("whoami", "Show the signed-in user");
  add_client_flags(whoami);
  std::string passwd_user;
  auto* passwd = app.add_subcommand("passwd", "Change your password (asks the current one; "
                                              "admins: --user NAME sets another's); every "
                                              "token of the user is revoked");
  add_client_flags(passwd);
  passwd->add_option("-u,--user", passwd_user, "Whose password (admin; default: your own)");
  auto* users = app.add_subcommand("users", "List users (admin)");
  add_client_flags(users);
  rota::cli::UserEdit user_edit;
  auto* user = app.add_subcommand("user", "Add, change or remove a user (admin; users may change "
                                          "their own name, email and password)");
  user->require_subcommand(1);
  auto add_user_flags = [&](CLI::App* cmd, bool with_fields) {
    add_client_flags(cmd);
    cmd->add_option("username", user_edit.username, "Username")->required();
    if (!with_fields) return;
    cmd->add_option("--display-name", user_edit.display_name, "Display name");
    cmd->add_option("--email", user_edit.email, "Email address");
    cmd->add_option("--unix-user", user_edit.unix_user, "Unix account on the nodes (default: the username)");
    cmd->add_option("--role", user_edit.role, "user or admin");
    cmd->add_option("--group", user_edit.groups, "Group membership (repeatable; replaces all)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_flag("--password-stdin", user_edit.password_stdin, "Read the password from stdin (your own: the current one on the line before)");
  };
  auto* user_add = user->add_subcommand("add", "Create a user (prints a generated password "
                                               "unless --password-stdin)");
  add_user_flags(user_add, true);
  auto* user_set = user->add_subcommand("set", "Change a user");
  add_user_flags(user_set, true);
  user_set->add_flag("--disable", user_edit.disable, "Disable the account (ends its sessions)");
  user_set->add_flag("--enable", user_edit.enable, "Enable the account");
  auto* user_rm = user->add_subcommand("rm", "Delete a user without reservations");
  add_user_flags(user_rm, false);
  rota::cli::GroupEdit group_edit;
  auto* groups = app.add_subcommand("groups", "List groups and their members");
  add_client_flags(groups);
  auto* group = app.add_subcommand("group", "Add or remove a group (admin; members are set with rota user set --group)");
  group->require_subcommand(1);
  auto* group_add = group->add_subcommand("add", "Create a group");
  add_client_flags(group_add);
  group_add->add_option("name", group_edit.name, "Group name")->required();
  group_add->add_option("--description", group_edit.description, "What the group is");
  auto* group_rm = group->add_subcommand("rm", "Delete a group");
  add_client_flags(group_rm);
  group_rm->add_option("name", group_edit.name, "Group name")->required();
  rota::cli::TokenEdit token_edit;
  auto* tokens = app.add_subcommand("tokens", "List your API tokens");
  add_client_flags(tokens);
  auto* token = app.add_subcommand("token", "Create or revoke an API token");
  token->require_subcommand(1);
  auto* token_create = token->add_subcommand("create", "Create an API token (printed once)");
  add_client_flags(token_create);
  token_create->add_option("--name", token_edit.name, "What the token is for");
  token_create->add_option("--ttl", token_edit.ttl, "Lifetime, e.g. 30d (default and most: the server's api_token_max_ttl, 90d)");
  auto* token_revoke = token->add_subcommand("revoke", "Revoke a token by id");
  add_client_flags(token_revoke);
  token_revoke->add_option("id", token_edit.id, "Token id (rota tokens)")->required();

  // Enforcement audit log.
  rota::cli::ViolationsOptions violations_options;
  auto* violations = app.add_subcommand("violations", "GPU-usage violations and the enforcement "
                                                      "steps taken (audit log)");
  add_client_flags(violations);
  violations->add_option("id", violations_options.id, "Show this violation with its events");
  violations->add_option("--node", violations_options.node, "Only this node");
  violations->add_option("--user", violations_options.user, "Only this offender (Unix user or rota username)");
  violations->add_flag("--open", violations_options.open, "Only open violations");
  violations->add_flag("--resolved", violations_options.resolved, "Only resolved violations");
  violations->add_option("--from", violations_options.from, "Open at or after: 2h (ago) or RFC 3339");
  violations->add_option("--to", violations_options.to, "Opened before: 2h (ago) or RFC 3339");
  violations->add_option("--limit", violations_options.limit, "At most this many (1..1000, default 100)");

  // Reservations and policies.
  rota::cli::ReserveOptions reserve_options;
  auto* reserve = app.add_subcommand("reserve", "Reserve GPUs of one node for a time range");
  add_client_flags(reserve);
  reserve->add_option("--node", reserve_options.node, "Node name")->required();
  reserve->add_option("--gpus", reserve_options.gpus, "GPU indices, e.g. 0,1");
  reserve->add_option("--count", reserve_options.count, "Any N free GPUs of the node");
  reserve->add_flag("--whole-node", reserve_options.whole_node, "Every GPU of the node");
  reserve->add_option("--start", reserve_options.start,
                      "now (default), +2h, tomorrow 09:00, 2026-11-23 14:00 (local) or RFC 3339");
  reserve->add_option("--end", reserve_options.end, "End time (same forms as --start)");
  reserve->add_option("--duration", reserve_options.duration, "Length instead of --end, e.g. 2h, 1h30m");
  reserve->add_option("--title", reserve_options.title, "What it is for")->required();
  reserve->add_option("--description", reserve_options.description, "Details");
  rota::cli::ReservationListOptions res_list;
  auto* reservations = app.add_subcommand("reservations", "List reservations (default: current and future)");
  add_client_flags(reservations);
  reservations->add_flag("--mine", res_list.mine, "Only mine");
  reservations->add_option("--user", res_list.user, "Only this user's");
  reservations->add_option("--node", res_list.node, "Only on this node");
  reservations->add_option("--from", res_list.from, "Overlapping this time or later");
  reservations->add_option("--to", res_list.to, "Overlapping this time or earlier");
  reservations->add_option("--state", res_list.state, "upcoming, running, ended or cancelled");
  reservations->add_flag("--all", res_list.all, "Include past reservations");
  reservations->add_option("--limit", res_list.limit, "At most this many (1..1000, default 100)");
  rota::cli::ReservationEdit res_edit;
  auto* reservation = app.add_subcommand("reservation", "Show, edit or cancel one reservation");
  reservation->require_subcommand(1);
  auto* res_show = reservation->add_subcommand("show", "Show a reservation");
  auto* res_edit_cmd = reservation->add_subcommand("edit", "Move, extend, shorten or retitle a reservation");
  auto* res_cancel = reservation->add_subcommand("cancel", "Cancel (or, when running, end now)");
  std::string edit_start, edit_end, edit_title, edit_description;
  for (auto* cmd : {res_show, res_edit_cmd, res_cancel}) {
    add_client_flags(cmd);
    cmd->add_option("id", res_edit.id, "Reservation id")->required();
  }
  auto* edit_start_opt = res_edit_cmd->add_option("--start", edit_start, "New start");
  auto* edit_end_opt = res_edit_cmd->add_option("--end", edit_end, "New end (now: end it now)");
  auto* edit_title_opt = res_edit_cmd->add_option("--title", edit_title, "New title");
  auto* edit_desc_opt = res_edit_cmd->add_option("--description", edit_description, "New description");
  auto* policies = app.add_subcommand("policies", "List reservation policies");
  add_client_flags(policies);
  rota::cli::PolicyEdit policy_edit;
  auto* policy = app.add_subcommand("policy", "Create, update or delete a reservation policy (admin)");
  policy->require_subcommand(1);
  auto* policy_create = policy->add_subcommand("create", "Create a policy from a JSON or YAML file");
  auto* policy_update = policy->add_subcommand("update", "Replace a policy from a JSON or YAML file");
  auto* policy_delete = policy->add_subcommand("delete", "Delete a policy");
  for (auto* cmd : {policy_create, policy_update, policy_delete}) add_client_flags(cmd);
  for (auto* cmd : {policy_update, policy_delete}) {
    cmd->add_option("policy", policy_edit.ref, "Policy id or name")->required();
  }
  for (auto* cmd : {policy_create, policy_update}) {
    cmd->add_option("-f,--file", policy_edit.file, "Policy file (JSON or YAML)")->required();
  }
  rota::cli::ExecOptions exec_options;
  auto* exec = app.add_subcommand("exec", "Run a command on the GPUs you hold on this node now "
                                          "(sets CUDA_VISIBLE_DEVICES)");
  exec->add_option("--server", client.server, "Server URL (or ROTA_SERVER)");
  exec->add_option("--ca-file", client.ca_file, "CA certificate(s) to trust for an https:// server (or ROTA_CA_FILE)");
  exec->add_option("--server-pin", client.server_pin, "Trust the https:// server whose key has this pin, sha256//... (or ROTA_SERVER_PIN)");
  exec->add_option("--node", exec_options.node, "Node (default: $ROTA_NODE, else the hostname)");
  exec->add_option("command", exec_options.command, "CMD ARGS... (after --)");
  exec->positionals_at_end();  // everything from CMD on belongs to CMD

  // Jobs.
  rota::cli::RunOptions run_options;
  auto* run = app.add_subcommand("run", "Run a (distributed) job: rota run [flags] -- CMD ARGS...");
  add_client_flags(run);
  run->add_option("-f,--file", run_options.file, "Job spec file (JSON or YAML) instead of the flags");
  run->add_option("--name", run_options.name, "Job name");
  run->add_option("--framework", run_options.framework, "generic (default), tensorflow, pytorch, mpi or jax");
  run->add_option("--workers", run_options.workers, "Worker tasks")->check(AtLeast(1));
  run->add_option("--ps", run_options.ps, "Parameter servers (tensorflow)")->check(AtLeast(0));
  run->add_flag("--chief", run_options.chief, "Add a chief task (tensorflow)");
  run->add_option("--nodes", run_options.nodes, "Nodes (pytorch)")->check(AtLeast(1));
  run->add_option("--gpus-per-node", run_options.gpus_per_node, "GPUs per node (pytorch)")
      ->check(AtLeast(0));
  run->add_option("--gpus-per-task", run_options.gpus_per_task, "GPUs per task")->check(AtLeast(0));
  run->add_option("--malleable", run_options.malleable,
                  "MIN:MAX CPU cores: tasks placed with MIN and resized while they run (ROTA_RESOURCES_FILE)");
  run->add_option("--node", run_options.nodes_list, "Only on these nodes (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--label", run_options.labels, "Only on nodes with KEY=VALUE (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--gpu-model", run_options.gpu_model,
                  "Only GPUs whose model contains this, any case (e.g. A100)");
  run->add_option("--env", run_options.env, "NAME=VALUE for every task (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--secret", run_options.secrets,
                  "NAME: a secret of yours in the file $ROTA_SECRETS_DIR/NAME; NAME:ENV_VAR: in that "
                  "variable too (repeatable; rota secrets lists them)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--workdir", run_options.workdir, "Working directory (default: your home on the node)");
  run->add_option("--restart", run_options.restart, "never (default), on-failure or exit-code");
  run->add_option("--max-restarts", run_options.max_restarts, "Restarts allowed (default 3)")
      ->check(AtLeast(0));
  run->add_option("--time-limit", run_options.time_limit, "Stop the job after this long, e.g. 12h");
  run->add_option("--stop-after-disconnect", run_options.stop_after_disconnect,
                  "A node cut off from the server this long stops the job's tasks itself, e.g. 5m");
  run->add_flag("--shell", run_options.shell, "Run the command as one string through /bin/sh -c");
  run->add_flag("--process-per-node", run_options.process_per_node,
                "pytorch: one process per node holding all its GPUs (for torchrun)");
  run->add_option("--queue", run_options.queue, "Queue (default: the default queue)");
  run->add_option("--priority", run_options.priority, "Priority within the queue's bounds");
  auto* preemptible = run->add_flag("--preemptible,!--no-preemptible", run_options.preemptible,
                                    "May be stopped (SIGTERM, ROTA_PREEMPT_NOTICE) and requeued for others "
                                    "(default: the queue's; --no-preemptible or --preemptible=false: never)");
  run->add_flag("--spread", run_options.spread, "Tasks on as many nodes as possible");
  run->add_option("--sweep", run_options.sweep,
                  "A sweep parameter (repeatable): NAME=V1,V2,... (a grid), or NAME=uniform:LO:HI, "
                  "loguniform:LO:HI, int:LO:HI with --random; {NAME} in the command")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--random", run_options.sweep_random, "Random search: this many trials (default: the grid)")
      ->check(AtLeast(1));
  run->add_option("--seed", run_options.sweep_seed, "Random search: the seed (the same trials for the same seed)");
  run->add_option("--max-running", run_options.max_running, "Sweep: at most this many trials at once")
      ->check(AtLeast(1));
  run->add_option("--max-trials", run_options.max_trials, "Sweep: the budget of trials")->check(AtLeast(1));
  run->add_option("--max-failures", run_options.max_failures,
                  "Sweep: launch no more trials once this many failed")->check(AtLeast(1));
  run->add_option("--early-stopping", run_options.early_stopping,
                  "Sweep: stop trials doing worse, RULE:METRIC[:min|max] with RULE median or asha "
                  "(e.g. asha:loss, median:accuracy:max)");
  run->add_option("--array", run_options.array,
                  "An array job: indices such as 0-99, 0,3,7-9 or 1-20:5, optionally %N to run at most N at once; "
                  "{index} in the command and ROTA_ARRAY_INDEX in the env");
  run->add_flag("--wait", run_options.wait, "Follow the job to its end; exit 0 only if it succeeded");
  run->add_option("command", run_options.command, "CMD ARGS... (after --)");
  run->positionals_at_end();
  bool jobs_mine = false;
  std::string jobs_state;
  auto* jobs_cmd = app.add_subcommand("jobs", "List jobs");
  add_client_flags(jobs_cmd);
  jobs_cmd->add_flag("--mine", jobs_mine, "Only mine");
  jobs_cmd->add_option("--state", jobs_state, "pending, starting, running, succeeded, failed or cancelled");
  rota::cli::JobsListOptions jobs_list;
  jobs_cmd->add_option("--limit", jobs_list.limit, "How many, newest first (1..1000; default 100)");
  jobs_cmd->add_option("--offset", jobs_list.offset, "Skip this many of the newest");
  auto* jobs_before = jobs_cmd->add_option("--before", jobs_list.before, "Only jobs older than this job id (the next page)");
  std::string queue_name;
  auto* queue_cmd = app.add_subcommand("queue", "Pending jobs in the scheduler's order, with why they wait");
  add_client_flags(queue_cmd);
  queue_cmd->add_option("--queue", queue_name, "Only this queue");
  rota::cli::QueueEdit queue_edit;
  auto* queues_cmd = app.add_subcommand("queues", "List queues; create, set or delete one (admin)");
  add_client_flags(queues_cmd);
  auto* queues_create = queues_cmd->add_subcommand("create", "Create a queue");
  auto* queues_set = queues_cmd->add_subcommand("set", "Change a queue (the flags given)");
  auto* queues_delete = queues_cmd->add_subcommand("delete", "Delete a queue with no unfinished job");
  for (auto* cmd : {queues_create, queues_set, queues_delete}) {
    add_client_flags(cmd);
    cmd->add_option("name", queue_edit.name, "Queue name")->required();
  }
  for (auto* cmd : {queues_create, queues_set}) {
    cmd->add_option("--priority", queue_edit.priority, "Queue priority: higher queues go first");
    cmd->add_option("--min-priority", queue_edit.min_priority, "Lowest job priority allowed");
    cmd->add_option("--max-priority", queue_edit.max_priority, "Highest job priority allowed");
    cmd->add_option("--users", queue_edit.users, "Only these users (a,b; empty: anyone)");
    cmd->add_option("--groups", queue_edit.groups, "Only these groups (a,b)");
    cmd->add_option("--max-gpus", queue_edit.max_gpus, "GPUs all its jobs hold at once (0: no limit)");
    cmd->add_option("--default-time-limit", queue_edit.default_time_limit, "Time limit of jobs that set none (0: none)");
    cmd->add_option("--max-time-limit", queue_edit.max_time_limit,
                    "Longest time limit a job may ask; jobs must then have one (0: no maximum)");
    cmd->add_option("--preemptible", queue_edit.preemptible, "Jobs preemptible by default (true/false)");
    cmd->add_option("--description", queue_edit.description, "Description");
  }
  rota::cli::QuotaEdit quota_edit;
  auto* quotas_cmd = app.add_subcommand("quotas", "List quotas; set or delete one (admin)");
  add_client_flags(quotas_cmd);
  auto* quotas_set = quotas_cmd->add_subcommand("set", "Set a user's or group's quota (the flags given)");
  auto* quotas_delete = quotas_cmd->add_subcommand("delete", "Delete a user's or group's quota");
  for (auto* cmd : {quotas_set, quotas_delete}) {
    add_client_flags(cmd);
    cmd->add_option("kind", quota_edit.kind, "user or group")->required();
    cmd->add_option("name", quota_edit.name, "User or group name")->required();
  }
  quotas_set->add_option("--max-gpus", quota_edit.max_gpus, "GPUs held at once (0: no limit)");
  quotas_set->add_option("--max-gpu-hours", quota_edit.max_gpu_hours,
                         "GPU-hours per quota period (0: no limit)")
      ->check(kFiniteNonNegative);
  quotas_set->add_option("--share", quota_edit.share, "Fair-share weight (default 1)")->check(kFiniteNonNegative);
  rota::cli::UsageOptions usage_options;
  auto* usage_cmd = app.add_subcommand("usage", "GPU-hours, utilisation and GPU and CPU energy by user, group, "
                                                "job, reservation, node or area (yours; everyone's for admins)");
  auto* energy_cmd =
      app.add_subcommand("energy", "GPU and CPU energy and average power by node, area, user or group");
  for (auto* cmd : {usage_cmd, energy_cmd}) {
    add_client_flags(cmd);
    cmd->add_option("--by", usage_options.by, "user, group, job, reservation, node or area");
    cmd->add_option("--from", usage_options.from, "Start: a duration ago (7d) or an RFC 3339 time (default 30d)");
    cmd->add_option("--to", usage_options.to, "End (default now)");
    cmd->add_option("--node", usage_options.node, "Only this node");
    cmd->add_option("--label", usage_options.label, "With --by area: the node label naming areas (e.g. rack)");
    cmd->add_option("--user", usage_options.user, "Only this user (admins)");
  }
  rota::cli::PowerOptions power_options;
  auto* power_cmd = app.add_subcommand("power", "GPU power limits in force, power policies and their log");
  add_client_flags(power_cmd);
  power_cmd->add_option("--node", power_options.node, "Only this node");
  auto* power_policies = power_cmd->add_subcommand("policies", "List the power policies");
  auto* power_events = power_cmd->add_subcommand("events", "Limits set, restored and refused; policy changes");
  power_events->add_option("--node", power_options.node, "Only this node");
  power_events->add_option("--limit", power_options.limit, "At most this many (default 50)");
  auto* power_policy = power_cmd->add_subcommand("policy", "Add or remove a power policy (admin)");
  power_policy->require_subcommand(1);
  auto* power_add = power_policy->add_subcommand("add", "Add a power cap per GPU or a power budget");
  auto* power_rm = power_policy->add_subcommand("rm", "Remove a power policy");
  for (auto* cmd : {power_policies, power_events, power_add, power_rm}) add_client_flags(cmd);
  power_add->add_option("name", power_options.name, "Policy name")->required();
  power_rm->add_option("name", power_options.name, "Policy name or id")->required();
  power_add->add_option("--limit", power_options.limit_w, "Watts per GPU (250, 250W)");
  power_add->add_option("--budget", power_options.budget_w, "Watts for all GPUs in scope (2.4kW), divided by demand");
  power_add->add_option("--node", power_options.nodes, "Only GPUs of this node (repeatable)");
  power_add->add_option("--model", power_options.models, "Only GPUs whose model contains this (repeatable)");
  power_add->add_option("--label", power_options.labels, "Only nodes with this KEY=VALUE label (repeatable)");
  power_add->add_option("--window", power_options.windows, "Only at these times: 'mon-fri 09:00-18:00' (repeatable)");
  power_add->add_option("--zone", power_options.zone, "Time zone of the windows (default UTC)");
  power_add->add_option("--description", power_options.description, "What the policy is for");
  rota::cli::SweepOptions sweep_options;
  auto* sweep_cmd = app.add_subcommand("sweep", "Run a hyperparameter sweep from a file (a job spec with sweep:), "
                                                "or show one");
  add_client_flags(sweep_cmd);
  sweep_cmd->add_option("-f,--file", sweep_options.file, "The job spec with its sweep section (JSON or YAML)");
  sweep_cmd->add_flag("--wait", sweep_options.wait, "Wait until every trial ended; exit 0 when all succeeded");
  auto* sweep_show = sweep_cmd->add_subcommand("show", "The trials of a sweep: parameters, state, metrics");
  add_client_flags(sweep_show);
  sweep_show->add_option("id", sweep_options.id, "Sweep (array) id, N or aN")->required();
  sweep_show->add_option("--metric", sweep_options.metric,
                         "Sort the trials by this metric, best first (default: the early-stopping rule's, else the "
                         "first one reported)");
  sweep_show->add_flag("--max", sweep_options.maximize, "Higher values of the metric are better (default: lower)");
  std::string job_id;
  auto* job_cmd = app.add_subcommand("job", "Show a job");
  job_cmd->require_subcommand(1);
  auto* job_show = job_cmd->add_subcommand("show", "Show a job with its tasks and events");
  add_client_flags(job_show);
  job_show->add_option("id", job_id, "Job id, or aN for array N")->required();
  auto* job_metrics = job_cmd->add_subcommand("metrics", "The metrics a job's tasks reported (rota-metric lines)");
  add_client_flags(job_metrics);
  job_metrics->add_option("id", job_id, "Job id")->required();
  auto* cancel = app.add_subcommand("cancel", "Cancel a job (SIGTERM, then SIGKILL)");
  add_client_flags(cancel);
  cancel->add_option("id", job_id, "Job id, or aN for a whole array")->required();
  rota::cli::LogsOptions logs_options;
  auto* logs = app.add_subcommand("logs", "Print a job task's log");
  logs->add_option("--server", client.server, "Server URL (or ROTA_SERVER)");
  logs->add_option("--ca-file", client.ca_file, "CA certificate(s) to trust for an https:// server (or ROTA_CA_FILE)");
  logs->add_option("--server-pin", client.server_pin, "Trust the https:// server whose key has this pin, sha256//... (or ROTA_SERVER_PIN)");
  logs->add_option("id", logs_options.id, "Job id")->required();
  logs->add_option("--task", logs_options.task, "Task, e.g. worker-1 (default: the first)");
  logs->add_flag("--stderr", logs_options.use_stderr, "stderr instead of stdout");
  logs->add_flag("-f,--follow", logs_options.follow, "Keep printing until the job ends");

  // Agentless nodes.
  rota::cli::SshNodeEdit ssh_edit;
  auto* ssh_nodes = app.add_subcommand("ssh-nodes", "List agentless nodes reached over SSH");
  add_client_flags(ssh_nodes);
  auto* ssh_node =
      app.add_subcommand("ssh-node", "Declare, pin or remove an agentless node (admin)");
  ssh_node->require_subcommand(1);
  auto* ssh_add = ssh_node->add_subcommand("add", "Declare a node: rota ssh-node add NAME ssh://user@host[:port]");
  auto* ssh_pin = ssh_node->add_subcommand(
      "pin",
      "Pin a node to its host key again (after a change on purpose): rota ssh-node pin NAME");
  auto* ssh_remove = ssh_node->add_subcommand("remove", "Forget a node");
  auto* ssh_list = ssh_node->add_subcommand("list", "List agentless nodes (as rota ssh-nodes)");
  add_client_flags(ssh_list);
  for (auto* cmd : {ssh_add, ssh_pin, ssh_remove}) {
    add_client_flags(cmd);
    cmd->add_option("name", ssh_edit.name, "Node name")->required();
  }
  for (auto* cmd : {ssh_add, ssh_pin}) {
    cmd->add_option("--host-key", ssh_edit.host_key,
                    "The node's host key: a line of its /etc/ssh/ssh_host_*_key.pub, or its "
                    "SHA256:... fingerprint (ssh-keygen -lf); checked against what it presents. "
                    "Default: the key it presents now, whose fingerprint is shown to compare");
  }
  ssh_add->add_option("url", ssh_edit.url, "ssh://user@host[:port] (root: tasks run as each job's owner)")
      ->required();
  ssh_add->add_option("--gpus", ssh_edit.gpus, "GPUs, when the node has no nvidia-smi");
  ssh_add->add_option("--gpu-model", ssh_edit.gpu_model, "Their model");
  ssh_add->add_option("--label", ssh_edit.labels, "KEY=VALUE (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* ssh_key = app.add_subcommand("ssh-key", "Print the server's SSH public key (admin)");
  add_client_flags(ssh_key);

  // Secrets.
  rota::cli::SecretEdit secret_edit;
  auto* secrets_list = app.add_subcommand("secrets", "List the secrets you may use (admins: all; never values)");
  add_client_flags(secrets_list);
  auto* secret = app.add_subcommand("secret", "Create or remove a secret for jobs (rota run --secret NAME)");
  secret->require_subcommand(1);
  auto* secret_create = secret->add_subcommand("create", "rota secret create NAME --from-file F | --from-literal V [--group G]");
  auto* secret_rm = secret->add_subcommand("rm", "Remove a secret (its owner, its group's members, or an admin)");
  for (auto* cmd : {secret_create, secret_rm}) {
    add_client_flags(cmd);
    cmd->add_option("name", secret_edit.name, "Secret name ([A-Za-z0-9._-], up to 64)")->required();
  }
  auto* from_file = secret_create->add_option("--from-file", secret_edit.from_file, "Read the value from this file (up to 64 KiB)");
  auto* from_literal = secret_create->add_option("--from-literal", secret_edit.from_literal,
                                                 "The value itself (visible in your shell history and ps: prefer --from-file)");
  secret_create->add_option("--group", secret_edit.group, "Owned by this group of yours (its members use it)");

  // rota simulate
  rota::sim::SimulateOptions sim;
  auto* simulate = app.add_subcommand("simulate", "Replay a cluster trace through the scheduler under "
                                                  "rota's policy and the baselines");
  simulate->add_option("--trace", sim.trace, "CSV trace (submit_time, duration_s, num_gpus[, user, queue])")
      ->required();
  simulate->add_option("--policy", sim.policies,
                       "rota, fifo, easy, sjf, srtf or las (repeatable; default: all)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  simulate->add_option("--nodes", sim.nodes, "Nodes (default: sized to --load)")->check(AtLeast(1));
  simulate->add_option("--gpus-per-node", sim.gpus_per_node, "GPUs per node (default 8)");
  simulate->add_option("--pooled", sim.pooled_gpus, "One pool of this many GPUs, no node layout (not with --nodes)")
      ->check(AtLeast(1));
  simulate->add_option("--load", sim.load, "Offered load that sizes the cluster when --nodes is not given (default 0.9)");
  simulate->add_option("--from", sim.from, "Window start, UTC (YYYY-MM-DD[ HH:MM:SS])");
  simulate->add_option("--to", sim.to, "Window end (exclusive)");
  simulate->add_option("--preempt-cost", sim.preempt_cost, "Progress a preempted job loses (default 30s)");
  simulate->add_flag("--skip-bad-rows", sim.skip_bad_rows, "Skip bad rows (reported) instead of refusing the trace");
  simulate->add_option("-o,--output", sim.output, "table (default) or json");
  simulate->add_option("--plot", sim.plot, "Write an SVG picture (JCT CDF, utilisation) to this file");
  std::string sim_queues;
  simulate->add_option("--queues", sim_queues,
                       "JSON file of the queues the trace's queue column names (as GET /api/v1/queues gives)");

  // The agent's per-task supervisor (not for users: the agent starts it).
  std::string shim_spec;
  auto* shim = app.add_subcommand("task-shim", "")->group("");
  shim->add_option("spec", shim_spec, "Task spec file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message; a usage error is status 2 whatever its kind
    // (help and version are 0).
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (shim->parsed()) return rota::agent::RunTaskShim(shim_spec);
  run_options.preemptible_given = preemptible->count() > 0;
  if (simulate->parsed()) {
    if (!sim_queues.empty()) {
      auto queues = rota::server::QueuesFromJsonFile(sim_queues);
      if (!queues.ok()) {
        std::cerr << "rota: --queues: " << queues.status().message() << "\n";
        return 2;
      }
      sim.queues = std::move(*queues);
      sim.queues_given = true;
    }
    return rota::sim::RunSimulate(sim);
  }
  if (server->parsed()) return rota::server::RunServer(server_flags);
  if (store_migrate->parsed()) return rota::server::RunStoreMigrate(migrate_flags);
  if (admin_backup->parsed()) return rota::server::RunAdminBackup(backup_flags);
  if (admin_restore->parsed()) return rota::server::RunAdminRestore(backup_flags);
  if (store_check->parsed()) return rota::server::RunStoreCheck(check_flags);
  if (agent_join->parsed()) return rota::agent::RunAgentJoin(join_flags);
  if (agent->parsed()) {
    // Which flags were named on the command line: they override --config's settings.
    for (const CLI::Option* opt : agent->get_options()) {
      if (opt->count() == 0 || opt->get_lnames().empty()) continue;
      std::string key = opt->get_lnames().front();
      for (char& c : key) c = c == '-' ? '_' : c;
      if (key == "label") key = "labels";
      if (key == "nvml_lib") key = "nvml_library";
      agent_flags.given.insert(key);
    }
    return rota::agent::RunAgent(agent_flags);
  }
  if (dev->parsed()) return rota::dev::RunDev(dev_options);
  if (nodes_drain->parsed() || nodes_resume->parsed()) {
    return rota::cli::RunNodeDrain(client, output, drain_node, nodes_drain->parsed(), drain_reason);
  }
  if (nodes_revoke->parsed()) return rota::cli::RunNodeRevoke(client, output, drain_node);
  if (nodes->parsed()) return rota::cli::RunNodes(client, output);
  if (servers_cmd->parsed()) return rota::cli::RunServers(client, output);
  if (gpus->parsed()) return rota::cli::RunGpus(client, output, gpus_node);
  if (top->parsed()) return rota::cli::RunTop(client, output, top_options);
  if (login->parsed()) return rota::cli::RunLogin(client, login_options);
  if (logout->parsed()) return rota::cli::RunLogout(client);
  if (whoami->parsed()) return rota::cli::RunWhoami(client, output);
  if (passwd->parsed()) return rota::cli::RunPasswd(client, passwd_user);
  if (users->parsed()) return rota::cli::RunUsers(client, output);
  if (user->parsed()) {
    user_edit.action = user_add->parsed() ? "add" : user_set->parsed() ? "set" : "rm";
    return rota::cli::RunUserEdit(client, output, user_edit);
  }
  if (groups->parsed()) return rota::cli::RunGroups(client, output, {"list", "", ""});
  if (group->parsed()) {
    group_edit.action = group_add->parsed() ? "add" : "rm";
    return rota::cli::RunGroups(client, output, group_edit);
  }
  if (tokens->parsed()) return rota::cli::RunTokens(client, output, {"list", "", "", ""});
  if (token->parsed()) {
    token_edit.action = token_create->parsed() ? "create" : "revoke";
    return rota::cli::RunTokens(client, output, token_edit);
  }
  if (violations->parsed()) return rota::cli::RunViolations(client, output, violations_options);
  if (reserve->parsed()) return rota::cli::RunReserve(client, output, reserve_options);
  if (reservations->parsed()) return rota::cli::RunReservations(client, output, res_list);
  if (reservation->parsed()) {
    res_edit.action = res_show->parsed() ? "show" : res_edit_cmd->parsed() ? "edit" : "cancel";
    if (edit_start_opt->count()) res_edit.start = edit_start;
    if (edit_end_opt->count()) res_edit.end = edit_end;
    if (edit_title_opt->count()) res_edit.title = edit_title;
    if (edit_desc_opt->count()) res_edit.description = edit_description;
    return rota::cli::RunReservationCommand(client, output, res_edit);
  }
  if (policies->parsed()) return rota::cli::RunPolicies(client, output);
  if (policy->parsed()) {
    policy_edit.action = policy_create->parsed() ? "create" : policy_update->parsed() ? "update" : "delete";
    return rota::cli::RunPolicyCommand(client, output, policy_edit);
  }
  if (exec->parsed()) return rota::cli::RunExec(client, exec_options);
  if (run->parsed()) return rota::cli::RunRun(client, output, run_options);
  if (sweep_cmd->parsed()) {
    sweep_options.show = sweep_show->parsed();
    return rota::cli::RunSweep(client, output, sweep_options);
  }
  if (queue_cmd->parsed()) return rota::cli::RunQueue(client, output, queue_name);
  if (queues_cmd->parsed()) {
    queue_edit.action = queues_create->parsed() ? "create"
                         : queues_set->parsed() ? "set"
                         : queues_delete->parsed() ? "delete" : "list";
    return rota::cli::RunQueues(client, output, queue_edit);
  }
  if (quotas_cmd->parsed()) {
    quota_edit.action = quotas_set->parsed() ? "set" : quotas_delete->parsed() ? "delete" : "list";
    return rota::cli::RunQuotas(client, output, quota_edit);
  }
  if (usage_cmd->parsed()) return rota::cli::RunUsage(client, output.format, usage_options);
  if (energy_cmd->parsed()) {
    usage_options.energy_view = true;
    if (usage_cmd->get_option("--by")->count() == 0 && energy_cmd->get_option("--by")->count() == 0) {
      usage_options.by = "node";
    }
    return rota::cli::RunUsage(client, output.format, usage_options);
  }
  if (power_cmd->parsed()) {
    power_options.action = power_policies->parsed() ? "policies"
                           : power_events->parsed() ? "events"
                           : power_add->parsed()    ? "add"
                           : power_rm->parsed()     ? "rm"
                                                    : "show";
    return rota::cli::RunPower(client, output, power_options);
  }
  if (jobs_cmd->parsed()) {
    jobs_list.mine = jobs_mine;
    jobs_list.state = jobs_state;
    jobs_list.before_given = jobs_before->count() > 0;
    return rota::cli::RunJobs(client, output, jobs_list);
  }
  if (job_metrics->parsed()) return rota::cli::RunJobCommand(client, output, "metrics", job_id);
  if (job_cmd->parsed()) return rota::cli::RunJobCommand(client, output, "show", job_id);
  if (cancel->parsed()) return rota::cli::RunJobCommand(client, output, "cancel", job_id);
  if (logs->parsed()) return rota::cli::RunLogs(client, logs_options);
  if (ssh_nodes->parsed() || ssh_node->parsed() || ssh_key->parsed()) {
    ssh_edit.action = ssh_add->parsed()      ? "add"
                      : ssh_pin->parsed()    ? "pin"
                      : ssh_remove->parsed() ? "remove"
                      : ssh_key->parsed()    ? "key"
                                             : "list";
    return rota::cli::RunSshNodes(client, output, ssh_edit);
  }
  if (secrets_list->parsed() || secret->parsed()) {
    secret_edit.action = secret_create->parsed() ? "create" : secret_rm->parsed() ? "rm" : "list";
    secret_edit.from_file_given = from_file->count() > 0;
    secret_edit.from_literal_given = from_literal->count() > 0;
    return rota::cli::RunSecrets(client, output, secret_edit);
  }
  return 2;
}

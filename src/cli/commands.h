#pragma once
// Client commands. Each returns the process exit status: 0 success, 1 error
// reported on stderr (server unreachable, not found, ...), 2 usage error.

#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"

namespace rota::cli {

struct OutputOptions {
  std::string format = "table";  // "table" or "json"
};

// Print "rota: <message>" on stderr and return the exit status: 1 for errors
// (Fail), 2 for usage errors (Usage).
int Fail(const Status& st);
int Usage(const std::string& message);

// Checks -o; prints the error and returns false on an unknown format.
bool ValidOutput(const OutputOptions& out);

int RunNodes(const ClientOptions& client, const OutputOptions& out);
// rota nodes revoke NAME: deletes the node's own credential (its agent must enrol
// again with the join token, e.g. after a reinstall or a leak).
int RunNodeRevoke(const ClientOptions& client, const OutputOptions& out, const std::string& node);
// rota nodes drain NAME [--reason R] (drain = true) / rota nodes resume NAME.
int RunNodeDrain(const ClientOptions& client, const OutputOptions& out, const std::string& node,
                 bool drain, const std::string& reason);
// rota servers: the servers sharing the store (GET /api/v1/servers).
int RunServers(const ClientOptions& client, const OutputOptions& out);
int RunGpus(const ClientOptions& client, const OutputOptions& out, const std::string& node);

struct TopOptions {
  std::string node;     // only this node
  int frames = 0;       // stop after this many frames (0: until interrupted)
  double refresh_s = 1; // at most one redraw per this many seconds
};
int RunTop(const ClientOptions& client, const OutputOptions& out, const TopOptions& top);

// rota login: password -> session -> a long-lived API token saved in the CLI
// config file (with the server URL).
struct LoginOptions {
  std::string username;  // prompted when empty
  std::string ttl;       // API token lifetime ("" = the server's api_token_max_ttl, 90d by default)
};
int RunLogin(const ClientOptions& client, const LoginOptions& login);
int RunLogout(const ClientOptions& client);
int RunWhoami(const ClientOptions& client, const OutputOptions& out);
int RunUsers(const ClientOptions& client, const OutputOptions& out);

// rota user add|set|rm NAME
struct UserEdit {
  std::string action;  // "add", "set", "rm"
  std::string username, display_name, email, unix_user, role;
  std::vector<std::string> groups;
  bool disable = false, enable = false;
  bool password_stdin = false;  // else: add generates and prints one
};
int RunUserEdit(const ClientOptions& client, const OutputOptions& out, const UserEdit& edit);

// rota passwd [--user NAME]: changes the signed-in user's password (asks the current one
// first) or, for an admin, NAME's (no current password). The server then revokes every
// token of that user, this CLI's too when it was one's own.
int RunPasswd(const ClientOptions& client, const std::string& username);

// rota groups; rota group add|rm NAME [--description D] (admin)
struct GroupEdit {
  std::string action;  // "list", "add", "rm"
  std::string name, description;
};
int RunGroups(const ClientOptions& client, const OutputOptions& out, const GroupEdit& edit);

// rota tokens; rota token create|revoke
struct TokenEdit {
  std::string action;  // "list", "create", "revoke"
  std::string name, ttl, id;
};
int RunTokens(const ClientOptions& client, const OutputOptions& out, const TokenEdit& edit);

// ---- Reservations and policies (reserve_cmd.cc, exec_cmd.cc) ----

// rota reserve: times as reserve::ParseCliTime accepts ("now", "+2h",
// "tomorrow 09:00", "2026-11-23 14:00" local, RFC 3339).
struct ReserveOptions {
  std::string node;
  std::string gpus;  // "0,1"
  int count = 0;
  bool whole_node = false;
  std::string start = "now";
  std::string end, duration;  // exactly one
  std::string title, description;
};
int RunReserve(const ClientOptions& client, const OutputOptions& out, const ReserveOptions& o);

// rota reservations: without --from/--to/--state/--all, current and future ones.
struct ReservationListOptions {
  bool mine = false;
  bool all = false;
  std::string user, node, from, to, state;
  int limit = 0;  // 0: the server's default
};
int RunReservations(const ClientOptions& client, const OutputOptions& out,
                    const ReservationListOptions& o);

// rota reservation show|edit|cancel ID
struct ReservationEdit {
  std::string action;  // "show", "edit", "cancel"
  std::string id;
  std::optional<std::string> start, end, title, description;  // edit
};
int RunReservationCommand(const ClientOptions& client, const OutputOptions& out,
                          const ReservationEdit& e);

// rota policies; rota policy create|update|delete (admin; spec from a JSON or
// YAML file; update/delete take an id or a name).
int RunPolicies(const ClientOptions& client, const OutputOptions& out);
struct PolicyEdit {
  std::string action;  // "create", "update", "delete"
  std::string ref;     // id or name (update, delete)
  std::string file;    // create, update
};
int RunPolicyCommand(const ClientOptions& client, const OutputOptions& out, const PolicyEdit& e);

// rota exec [--node N] -- CMD ARGS...: execvp's CMD with CUDA_VISIBLE_DEVICES
// set to the GPUs the caller holds on the node now (CUDA_DEVICE_ORDER=PCI_BUS_ID).
// Returns only on failure: 1 when no GPUs are held (or the server says no),
// 127 when CMD cannot be run, 2 for usage errors.
struct ExecOptions {
  std::string node;  // "" -> $ROTA_NODE -> hostname
  std::vector<std::string> command;
};
int RunExec(const ClientOptions& client, const ExecOptions& o);
// The node `rota exec` asks about: `flag`, else $ROTA_NODE, else the hostname.
std::string ExecNode(const std::string& flag);

// ---- Enforcement audit log (violations_cmd.cc) ----

// rota violations [ID]: a list, or one violation with its events when `id` is
// set. --from/--to take a duration ago ("2h") or an RFC 3339 time.
struct ViolationsOptions {
  std::string id;
  std::string node, user, from, to;
  bool open = false, resolved = false;
  int limit = 0;  // 0: the server's default
};
int RunViolations(const ClientOptions& client, const OutputOptions& out, const ViolationsOptions& o);

// ---- Jobs (jobs_cmd.cc) ----

// rota run [flags] -- CMD ARGS...  (or -f job.yaml)
struct RunOptions {
  std::string file;  // a job spec (JSON or YAML) instead of the flags
  std::string name, framework = "generic";
  int workers = 0, ps = 0, nodes = 0, gpus_per_task = 0, gpus_per_node = 0;
  bool chief = false;
  std::vector<std::string> nodes_list, labels, env;
  std::vector<std::string> secrets;  // --secret NAME[:ENV_VAR|:/path]
  std::string gpu_model;
  std::string malleable;  // "MIN:MAX" CPU cores: malleable tasks (docs/design-malleable.md)
  std::string workdir, restart, time_limit, stop_after_disconnect;
  int max_restarts = -1;
  bool shell = false, process_per_node = false, wait = false;
  std::string queue;
  std::optional<int> priority;
  bool preemptible = false, spread = false;
  bool preemptible_given = false;  // else the queue's default
  std::vector<std::string> command;
  // Non-empty: an array job ("0-99%10"): {index} in the command, ROTA_ARRAY_INDEX.
  std::string array;
  // Non-empty: a sweep (jobs/sweep.h): --sweep NAME=..., a grid unless
  // sweep_random > 0 trials are drawn (from sweep_seed).
  std::vector<std::string> sweep;
  int sweep_random = 0;
  int64_t sweep_seed = 0;
  int max_running = 0, max_trials = 0, max_failures = 0;
  std::string early_stopping;  // RULE:METRIC[:min|max] (jobs::ParseEarlyStopFlag)
};
// rota sweep -f FILE [--wait] (a job spec with a sweep section) | rota sweep show ID.
struct SweepOptions {
  std::string file, id;
  bool wait = false, show = false;
  // show: the metric the trials are sorted by (best first); "" the first one any
  // trial reported. maximize: higher is better.
  std::string metric;
  bool maximize = false;
};
int RunSweep(const ClientOptions& client, const OutputOptions& out, const SweepOptions& o);
// Prints the job id (-o json: the job); with --wait follows it and exits 0 only
// when it succeeded (an array: when every member did).
int RunRun(const ClientOptions& client, const OutputOptions& out, const RunOptions& o);
// `rota jobs`: newest first, `limit` (1..1000) of them from the `offset`-th,
// older than job `before` when set; a hint under the list names the next page.
struct JobsListOptions {
  bool mine = false;
  std::string state;
  int limit = 100;
  int offset = 0;
  int64_t before = 0;
  bool before_given = false;  // --before was given (0 is not a job id)
};
int RunJobs(const ClientOptions& client, const OutputOptions& out, const JobsListOptions& o);
// action: "show", "cancel" or "metrics" (a job's points). `id`: a job id, or aN for array N (show: its
// members; cancel: every member not ended).
int RunJobCommand(const ClientOptions& client, const OutputOptions& out, const std::string& action,
                  const std::string& id);
// rota queue [--queue NAME]: pending jobs in the scheduler's order.
int RunQueue(const ClientOptions& client, const OutputOptions& out, const std::string& queue);
// rota queues | queues create NAME [flags] | queues set NAME [flags] | queues delete NAME
struct QueueEdit {
  std::string action = "list";  // list, create, set, delete
  std::string name;
  std::optional<int> priority, min_priority, max_priority;
  std::optional<std::string> users, groups, default_time_limit, max_time_limit, description;  // lists: a,b
  std::optional<int64_t> max_gpus;
  std::optional<bool> preemptible;
};
int RunQueues(const ClientOptions& client, const OutputOptions& out, const QueueEdit& e);
// rota quotas | quotas set user|group NAME [flags] | quotas delete user|group NAME
struct QuotaEdit {
  std::string action = "list";  // list, set, delete
  std::string kind, name;       // kind: user | group
  std::optional<int64_t> max_gpus;
  std::optional<double> max_gpu_hours, share;
};
int RunQuotas(const ClientOptions& client, const OutputOptions& out, const QuotaEdit& e);
// rota usage [--by user|group|job|reservation|node|area] [--from] [--to] [--node]
// [--label] [--user] -o table|json|csv; rota energy: the same with energy columns.
struct UsageOptions {
  std::string by = "user";
  std::string from, to, node, label, user;
  bool energy_view = false;
};
int RunUsage(const ClientOptions& client, const std::string& format, const UsageOptions& o);
// rota power [--node N] | power policies | power policy add NAME ... | power policy rm NAME|ID
// | power events [--node N] [--limit N]
struct PowerOptions {
  std::string action = "show";  // "show", "policies", "add", "rm", "events"
  std::string node;
  int limit = 50;
  // add / rm
  std::string name, description, limit_w, budget_w, zone;
  std::vector<std::string> nodes, models, labels, windows;
};
int RunPower(const ClientOptions& client, const OutputOptions& out, const PowerOptions& o);
struct LogsOptions {
  std::string id, task;
  bool use_stderr = false, follow = false;
};
int RunLogs(const ClientOptions& client, const LogsOptions& o);

// ---- Agentless nodes (ssh_nodes_cmd.cc) ----

// rota ssh-nodes | ssh-node add NAME URL [--host-key KEY] | ssh-node pin NAME [--host-key KEY]
// | ssh-node remove NAME | ssh-key
struct SshNodeEdit {
  std::string action;  // "list", "add", "pin", "remove", "key"
  std::string name, url, gpu_model;
  std::string host_key;  // an OpenSSH public key line or SHA256:... fingerprint; "" none
  int gpus = 0;
  std::vector<std::string> labels;  // KEY=VALUE
};
int RunSshNodes(const ClientOptions& client, const OutputOptions& out, const SshNodeEdit& e);

// ---- Secrets (secrets_cmd.cc) ----

// rota secrets | secret create NAME (--from-file F | --from-literal V) [--group G]
// | secret rm NAME
struct SecretEdit {
  std::string action;  // "list", "create", "rm"
  std::string name, from_file, from_literal, group;
  bool from_file_given = false, from_literal_given = false;
};
int RunSecrets(const ClientOptions& client, const OutputOptions& out, const SecretEdit& e);

// Renders the GPU table of `gpus` (array of GPU rows as GET /api/v1/gpus returns).
std::string RenderGpuTable(const api::Json& gpus, bool show_processes);

}  // namespace rota::cli

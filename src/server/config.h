#pragma once
// ServerConfig: the effective configuration of `rota server`, merged from (lowest
// to highest precedence) defaults, a YAML file, ROTA_* environment variables and
// command-line flags. Every value is validated; errors name the key and source.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "accounting/report.h"
#include "common/status.h"

namespace rota::server {

struct ServerConfig {
  std::string listen_address = "127.0.0.1";
  uint16_t listen_port = 8080;
  std::string data_dir = "/var/lib/rota";
  // Where the store is (server/store/store_url.h): sqlite:PATH or a libpq URL
  // (postgresql://...). Empty: <data_dir>/rota.db. The data dir keeps the server's
  // other files either way (join token, auth key, TLS).
  std::string store;
  // Token agents present to join. Empty: generated on first start and kept in
  // <data_dir>/join-token (mode 0600).
  std::string join_token;
  // ---- TLS (docs/operations.md, "TLS") ----
  // auto: HTTPS and WSS unless the listen address is loopback; on: always; off: plain HTTP
  // (a warning at start when the address is not loopback).
  std::string tls = "auto";
  // The certificate chain and key (PEM, reread on SIGHUP). Empty: a private CA and a server
  // certificate generated in <data_dir>/tls on first start (pin and CA printed at start).
  std::string tls_cert_file;
  std::string tls_key_file;
  // More names (DNS or IP) for the generated certificate, beside the host name, localhost,
  // the loopback addresses, the listen address and public_url's host.
  std::vector<std::string> tls_names;
  // The CA (PEM) this server trusts when it forwards a request to the leader of several
  // servers (docs/design-ha.md). Empty: the generated CA of <data_dir>/tls when this server's
  // certificate is generated (give every server of the cluster the same tls/ca.pem and
  // ca.key before its first start), else the system's CAs.
  std::string tls_ca_file;
  int64_t raw_retention_ms = 24LL * 3600 * 1000;
  int64_t aggregate_retention_ms = 30LL * 24 * 3600 * 1000;
  int64_t retention_interval_ms = 10LL * 60 * 1000;
  // A node is unreachable after this many missed sample intervals.
  int missed_heartbeats = 3;
  int http_threads = 2;
  // Open connections the server accepts (agents, API clients, event streams); beyond
  // it a new connection gets 503. The server raises its open-file limit to fit.
  int max_connections = 20000;
  // Of them, kept for agents (connected WebSockets): API clients, event streams and
  // connections not yet upgraded share the rest. -1: half of max_connections.
  int reserved_agent_connections = -1;
  // Non-agent connections one peer address may hold (loopback exempt); 0: no limit.
  int max_connections_per_address = 256;
  uint64_t max_body_bytes = 1 << 20;
  uint64_t max_agent_message_bytes = 4 << 20;
  std::string log_level = "info";
  // Ports handed to job tasks, "FIRST-LAST" (unique per node address).
  uint16_t job_port_first = 29500;
  uint16_t job_port_last = 29999;
  // SIGTERM -> SIGKILL when rota stops a job (cancel, time limit, preemption).
  int64_t job_stop_grace_ms = 10'000;

  // ---- Scheduler (docs/design-sched.md) ----
  std::string backfill = "easy";          // easy | conservative | none | skip
  bool preemption = true;                 // preemptible jobs may be stopped and requeued
  bool defragment = true;                 // ... and moved to make room for a gang (needs preemption)
  int64_t preempt_after_ms = 2 * 60'000;  // a job waits this long before it preempts
  int64_t fairshare_half_life_ms = 7LL * 24 * 3600 * 1000;
  // A running reservation whose GPUs see no process of its owner this long
  // lends them to others' preemptible jobs (0: never).
  int64_t reservation_idle_ms = 30 * 60'000;
  // How a node's cores are divided among malleable tasks: equal | by-request |
  // by-priority (docs/design-malleable.md).
  std::string malleable_policy = "equal";
  // The window of max_gpu_hours quotas (rolling).
  int64_t quota_period_ms = 30LL * 24 * 3600 * 1000;

  // ---- Usage and energy accounting (docs/design-accounting.md) ----
  int64_t accounting_flush_ms = 60'000;  // how often amounts are stored
  // Node labels whose values name areas (Prometheus per-area series).
  std::vector<std::string> area_labels = {"rack", "room"};
  accounting::Prices prices;  // optional cost and CO2 in reports

  // ---- Accounts ----
  // Anonymous callers may read cluster state, reservations and violations.
  bool anonymous_read = false;
  // The lifetime of a session (sign-in) token, and the longest an API token may live
  // (one asked for without a lifetime gets it). Both also bound tokens issued before.
  int64_t session_ttl_ms = 12LL * 3600 * 1000;
  int64_t api_token_max_ttl_ms = 90LL * 24 * 3600 * 1000;
  // argon2id cost: "interactive" (~0.3 s per hash), "moderate" or "min" (tests).
  std::string password_hash_cost = "interactive";
  // Threads that hash and check passwords (never the network threads), and how many
  // checks may wait for them; beyond that a sign-in gets 503 with Retry-After.
  int password_hash_threads = 2;
  int password_hash_queue = 64;
  // Password of the first admin, created when the store has no user. Empty:
  // generated and written to <data_dir>/initial-admin-password (0600).
  std::string admin_password;
  // URL users reach the server at, for links in emails ("" = the listen address).
  std::string public_url;
  // Several servers on one PostgreSQL: how long the leader lease lasts without renewal
  // (leadership/lease_rule.h, TimingForTtl): the failover time after a leader dies.
  int64_t leader_lease_ttl_ms = 4'000;

  // ---- Email (SMTP); empty smtp_url disables mail ----
  std::string smtp_url;                // smtp://host:port or smtps://host:port
  std::string smtp_tls = "auto";       // off | starttls | auto
  std::string smtp_username;
  std::string smtp_password;
  std::string smtp_from = "rota@localhost";
  std::string smtp_ca_file;
  bool smtp_insecure_skip_verify = false;
  int smtp_rate_limit_per_hour = 20;   // per recipient

  // ---- Enforcement defaults (policies may override) ----
  std::string enforcement_mode = "reserved";  // off | reserved | strict
  bool enforcement_dry_run = false;
  int64_t grace_email_ms = 60'000;       // G1: email after
  int64_t grace_term_ms = 5 * 60'000;    // G2: SIGTERM after (from the violation's start)
  int64_t grace_kill_ms = 30'000;        // G3: SIGKILL after the SIGTERM
  std::vector<std::string> exempt_users;     // e.g. root? (none by default)
  std::vector<std::string> exempt_commands;  // e.g. Xorg, /usr/lib/xorg/Xorg, alice:nvtop
  // Processes of uids below this (root, system accounts) are never violations.
  uint32_t enforcement_min_uid = 1000;  // api::kDefaultEnforcementMinUid
};

// Applies one setting by its config-file key ("listen", "data_dir", ...).
// `source` names where it came from for error messages ("file x.yaml", "env ROTA_LISTEN").
Status ApplySetting(ServerConfig* config, const std::string& key, const std::string& value,
                    const std::string& source);

// Merges a YAML file (a flat map of the keys above) into `config`.
Status LoadConfigFile(ServerConfig* config, const std::string& path);
// The same from the file's text; `path` names the file in messages.
Status LoadConfigText(ServerConfig* config, const std::string& text, const std::string& path);

// Merges ROTA_LISTEN, ROTA_DATA_DIR, ROTA_JOIN_TOKEN, ROTA_RAW_RETENTION,
// ROTA_AGGREGATE_RETENTION, ROTA_LOG_LEVEL, ... from `env` (name -> value).
Status ApplyEnv(ServerConfig* config, const std::map<std::string, std::string>& env);

// The current process environment as a map.
std::map<std::string, std::string> ProcessEnv();

// YAML text of the effective config. The join token is shown as "<set>" unless
// `show_secrets`.
std::string ConfigToYaml(const ServerConfig& config, bool show_secrets = false);

// The keys whose effective values differ between `a` and `b` (what a SIGHUP found
// changed), in ConfigKeys() order.
std::vector<std::string> ChangedConfigKeys(const ServerConfig& a, const ServerConfig& b);

// The names of all keys, in a stable order.
const std::vector<std::string>& ConfigKeys();

}  // namespace rota::server

#pragma once
// Agent: the node side of rota. Samples the node every interval, keeps the
// samples in a bounded buffer until the server acks them (so a server outage
// leaves no gap in history), and keeps one WebSocket to the server open,
// reconnecting with exponential backoff.
//
// Commands from the server (api::CommandMsg: warn a user, signal processes) run on
// a worker thread of their own, in arrival order, and are answered with a
// command_result on the connection they came on.
//
// Threading: Run() is the sampling/connection loop on the caller's thread;
// network callbacks arrive on the WebSocket client's thread; commands run on the
// command thread. Shared state is guarded by mu_; the command queue by cmd_mu_
// (lock order: mu_ before cmd_mu_). No callback of the WebSocket client runs under a
// lock of the client, so the callbacks may take mu_ while Run() holds it and calls the client.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/collector.h"
#include "agent/command_executor.h"
#include "agent/power_limiter.h"
#include "agent/reconnect.h"
#include "agent/task_manager.h"
#include "agent/sample_buffer.h"
#include "api/types.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "net/tls.h"

namespace rota::net {
class WsClientLoop;
class WsClient;
}  // namespace rota::net

namespace rota::agent {

struct AgentOptions {
  // http(s):// or ws(s):// base URL of the server, or several separated by commas (servers
  // sharing one store): tried in turn, the next one right after one fails or refuses.
  std::string server_url;
  std::string token;       // join token: enrols the node (may be empty once enrolled)
  // How a wss:// (https://) server is trusted: pin, CA file or the system's CAs.
  net::TlsClientConfig tls;
  // Where the node's own credential is kept (0600): read at start, written when the
  // server enrols the node, presented instead of the join token from then on. "":
  // the agent does not enrol and always presents the join token.
  std::string credential_file;
  // Where the highest leader epoch this node registered under is kept (leader_epoch.h);
  // "": kept in memory only.
  std::string epoch_file;
  int64_t interval_ms = 2000;
  int64_t buffer_ms = 10 * 60 * 1000;
  int64_t min_backoff_ms = 500;
  int64_t max_backoff_ms = 10'000;
  // The connection is given up after this long without anything from the
  // server (a ping is sent at half of it): a frozen server or a dead link is
  // noticed, and tasks' stop_after_disconnect counts from then. 0: never.
  int64_t server_timeout_ms = 20'000;
  size_t max_samples_per_message = 32;
  // Commands waiting for the command thread; more are refused with an error result.
  size_t max_queued_commands = 64;
  // Job tasks: where their state lives (empty: this agent runs no job tasks) and
  // how to start the task shim ({"/path/rota", "task-shim"}).
  std::string task_state_dir;
  std::vector<std::string> task_shim_argv;
  // Enforcement commands never signal or warn processes of uids below this (root
  // and system accounts), whatever the server asks (CommandExecutor).
  uint32_t enforcement_min_uid = api::kDefaultEnforcementMinUid;
};

class Agent {
 public:
  // `info` is what the agent registers; `collector` and `clock` are borrowed.
  Agent(AgentOptions options, api::NodeInfo info, Collector* collector, Clock* clock);
  ~Agent();

  // Applies the server's power limits (borrowed; null: none are applied and the
  // server is told so). Call before Run(); the limiter is used on Run()'s thread,
  // which also restores the GPUs' defaults when Run() ends.
  void set_power_limiter(PowerLimiter* limiter) { power_ = limiter; }

  // Runs until `stop` becomes true (checked at least every 100 ms).
  void Run(const std::atomic<bool>& stop) ROTA_EXCLUDES(mu_);

  // For tests and logs.
  size_t buffered() const;
  uint64_t dropped() const;
  bool registered() const;
  // The monotonic time (clock's MonotonicMs) Run()'s loop last went round: the systemd
  // watchdog's check that the loop is not stuck. 0 before Run(). Thread-safe.
  int64_t last_loop_ms() const { return loop_beat_ms_.load(std::memory_order_relaxed); }

 private:
  void Connect() ROTA_REQUIRES(mu_);
  void SendPending() ROTA_REQUIRES(mu_);
  // WebSocket callbacks (the client's thread; the client holds no lock while they run).
  void OnConnected(uint64_t attempt, const Status& st) ROTA_EXCLUDES(mu_);
  void OnMessage(uint64_t attempt, const std::string& text) ROTA_EXCLUDES(mu_);
  void OnClosed(uint64_t attempt, const Status& reason) ROTA_EXCLUDES(mu_);
  // `answered`: the failed attempt was refused by a follower (reconnect.h).
  void ScheduleReconnect(bool answered) ROTA_REQUIRES(mu_);
  // Queues a command from connection `attempt`.
  void QueueCommand(uint64_t attempt, api::CommandMsg cmd) ROTA_REQUIRES(mu_)
      ROTA_EXCLUDES(cmd_mu_);
  // Sends `text` if connection `attempt` is still the current one.
  void SendOn(uint64_t attempt, std::string text) ROTA_REQUIRES(mu_);
  void CommandLoop() ROTA_EXCLUDES(mu_, cmd_mu_);  // the command thread
  // Applies a pending power_limits message (on Run()'s thread; unlocks mu_ meanwhile).
  void ApplyPowerLimits() ROTA_REQUIRES(mu_);

  const AgentOptions options_;
  const api::NodeInfo info_;
  Collector* const collector_;
  Clock* const clock_;
  std::vector<std::string> ws_urls_;  // AgentConnectUrls(server_url); empty if invalid

  mutable Mutex mu_;
  CondVar cv_;
  SampleBuffer buffer_ ROTA_GUARDED_BY(mu_);
  std::unique_ptr<net::WsClientLoop> loop_;
  std::unique_ptr<net::WsClient> client_ ROTA_GUARDED_BY(mu_);
  uint64_t attempt_ ROTA_GUARDED_BY(mu_) = 0;  // id of the current connection
  bool connecting_ ROTA_GUARDED_BY(mu_) = false;
  bool registered_ ROTA_GUARDED_BY(mu_) = false;
  uint64_t sent_up_to_ ROTA_GUARDED_BY(mu_) = 0;
  int64_t next_connect_ms_ ROTA_GUARDED_BY(mu_) = 0;  // monotonic
  ReconnectState reconnect_ ROTA_GUARDED_BY(mu_);  // server_index: into ws_urls_
  std::string last_error_ ROTA_GUARDED_BY(mu_);
  // The node's own credential ("" until enrolled), and whether the connection
  // being made presents it (else the join token).
  std::string credential_ ROTA_GUARDED_BY(mu_);
  bool presenting_credential_ ROTA_GUARDED_BY(mu_) = false;
  // The highest leader epoch registered under (leader_epoch.h), and the connection refused
  // for an older one (its messages are dropped until it has closed; 0: none).
  uint64_t highest_epoch_ ROTA_GUARDED_BY(mu_) = 0;
  uint64_t stale_attempt_ ROTA_GUARDED_BY(mu_) = 0;
  PowerLimiter* power_ = nullptr;
  std::atomic<int64_t> loop_beat_ms_{0};
  // The latest power_limits and the connection it came on (0: none pending).
  std::optional<api::PowerLimitsMsg> pending_power_ ROTA_GUARDED_BY(mu_);
  uint64_t pending_power_attempt_ ROTA_GUARDED_BY(mu_) = 0;

  const CommandExecutor executor_;
  Mutex cmd_mu_ ROTA_ACQUIRED_AFTER(mu_);
  CondVar cmd_cv_;
  std::deque<std::pair<uint64_t, api::CommandMsg>> commands_ ROTA_GUARDED_BY(cmd_mu_);  // (attempt, command)
  bool cmd_stop_ ROTA_GUARDED_BY(cmd_mu_) = false;
  // Null when options_.task_state_dir is empty. Read by the network thread under
  // mu_, and by Run() without it (Run returns before the destructor starts); the
  // destructor takes it out under mu_.
  std::unique_ptr<TaskManager> tasks_;
  std::thread cmd_thread_;  // started last, joined first
};

// True when a connection attempt was refused by a follower of several servers (its 503
// while it knows no leader, or sends agents to the leader: server/leadership/proxy.cc).
bool IsFollowerRefusal(const Status& st);

// ws://host:port/api/v1/agent/connect from an http(s)/ws(s) base URL.
Result<std::string> AgentConnectUrl(const std::string& server_url);
// The same for each of a comma-separated list of base URLs (spaces around commas allowed).
// InvalidArgument naming the first bad one, or for an empty list.
Result<std::vector<std::string>> AgentConnectUrls(const std::string& server_urls);

}  // namespace rota::agent

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
// (lock order: mu_ before cmd_mu_).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/collector.h"
#include "agent/command_executor.h"
#include "agent/task_manager.h"
#include "agent/sample_buffer.h"
#include "api/types.h"
#include "common/clock.h"
#include "common/status.h"

namespace rota::net {
class WsClientLoop;
class WsClient;
}  // namespace rota::net

namespace rota::agent {

struct AgentOptions {
  std::string server_url;  // http(s):// or ws(s):// base URL of the server
  std::string token;       // join token
  int64_t interval_ms = 2000;
  int64_t buffer_ms = 10 * 60 * 1000;
  int64_t min_backoff_ms = 500;
  int64_t max_backoff_ms = 10'000;
  size_t max_samples_per_message = 32;
  // Commands waiting for the command thread; more are refused with an error result.
  size_t max_queued_commands = 64;
  // Job tasks: where their state lives (empty: this agent runs no job tasks) and
  // how to start the task shim ({"/path/rota", "task-shim"}).
  std::string task_state_dir;
  std::vector<std::string> task_shim_argv;
};

class Agent {
 public:
  // `info` is what the agent registers; `collector` and `clock` are borrowed.
  Agent(AgentOptions options, api::NodeInfo info, Collector* collector, Clock* clock);
  ~Agent();

  // Runs until `stop` becomes true (checked at least every 100 ms).
  void Run(const std::atomic<bool>& stop);

  // For tests and logs.
  size_t buffered() const;
  uint64_t dropped() const;
  bool registered() const;

 private:
  void Connect();                // REQUIRES: mu_ held
  void SendPending();            // REQUIRES: mu_ held
  void OnConnected(uint64_t attempt, const Status& st);
  void OnMessage(uint64_t attempt, const std::string& text);
  void OnClosed(uint64_t attempt, const Status& reason);
  void ScheduleReconnect();      // REQUIRES: mu_ held
  // Queues a command from connection `attempt`. REQUIRES: mu_ held.
  void QueueCommand(uint64_t attempt, api::CommandMsg cmd);
  // Sends `text` if connection `attempt` is still the current one. REQUIRES: mu_ held.
  void SendOn(uint64_t attempt, std::string text);
  void CommandLoop();            // the command thread

  const AgentOptions options_;
  const api::NodeInfo info_;
  Collector* const collector_;
  Clock* const clock_;
  std::string ws_url_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  SampleBuffer buffer_;                          // GUARDED_BY(mu_)
  std::unique_ptr<net::WsClientLoop> loop_;
  std::unique_ptr<net::WsClient> client_;        // GUARDED_BY(mu_)
  uint64_t attempt_ = 0;                         // GUARDED_BY(mu_): id of the current connection
  bool connecting_ = false;                      // GUARDED_BY(mu_)
  bool registered_ = false;                      // GUARDED_BY(mu_)
  uint64_t sent_up_to_ = 0;                      // GUARDED_BY(mu_)
  int64_t next_connect_ms_ = 0;                  // GUARDED_BY(mu_), monotonic
  int64_t backoff_ms_ = 0;                       // GUARDED_BY(mu_)
  std::string last_error_;                       // GUARDED_BY(mu_)

  const CommandExecutor executor_;
  std::mutex cmd_mu_;
  std::condition_variable cmd_cv_;
  std::deque<std::pair<uint64_t, api::CommandMsg>> commands_;  // GUARDED_BY(cmd_mu_): (attempt, command)
  bool cmd_stop_ = false;                                      // GUARDED_BY(cmd_mu_)
  std::unique_ptr<TaskManager> tasks_;  // null when options_.task_state_dir is empty
  std::thread cmd_thread_;  // started last, joined first
};

// ws://host:port/api/v1/agent/connect from an http(s)/ws(s) base URL.
Result<std::string> AgentConnectUrl(const std::string& server_url);

}  // namespace rota::agent

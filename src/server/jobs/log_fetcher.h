#pragma once
// LogFetcher: reads part of a task's log from the node that runs it, without a waiting
// thread. A read is sent to the node (TaskTransport) and completed from the node's answer,
// on the transport's thread, or when its deadline passes, on the fetcher's own timer
// thread — so the HTTP io threads never wait for an agent (three log views used to freeze
// a two-thread server).
//
// An answer counts only from the node the read was sent to: a node cannot answer, or
// complete, another node's log read (a read's id is not a secret; its node is).
//
// Thread-safe. Callbacks run without the fetcher's lock, on a transport thread, the timer
// thread or the caller's thread (a send that fails at once), exactly once each.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "api/task_protocol.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/nodes/task_transport.h"

namespace rota::server {

class LogFetcher {
 public:
  using Done = std::function<void(Result<api::TaskLogMsg>)>;

  // `transport` is borrowed and must outlive the fetcher. At most `max_pending` reads wait
  // at once (more are refused with ResourceExhausted); each waits up to `timeout`.
  LogFetcher(TaskTransport* transport, std::chrono::milliseconds timeout, size_t max_pending);
  // Completes what still waits with Unavailable ("server stopping") and joins the timer.
  ~LogFetcher();
  LogFetcher(const LogFetcher&) = delete;
  LogFetcher& operator=(const LogFetcher&) = delete;

  // Sends `request` (its req id is assigned here) to `node`; `done` gets the answer, or
  // Unavailable (not sent, no answer in time), NotFound (the node's error, e.g. no such
  // task) or ResourceExhausted (too many reads waiting).
  void Fetch(const std::string& node, api::TaskLogsMsg request, Done done) ROTA_EXCLUDES(mu_);

  // An answer from `node` (the transport's log listener). Answers to unknown reads, or from
  // another node than the one asked, are dropped.
  void OnAnswer(const std::string& node, api::TaskLogMsg answer) ROTA_EXCLUDES(mu_);

  size_t pending() const ROTA_EXCLUDES(mu_);
  // Answers dropped because they came from another node than the one asked.
  uint64_t foreign_answers() const ROTA_EXCLUDES(mu_);

 private:
  struct Pending {
    std::string node;
    Done done;
    SteadyTime deadline;
  };
  void TimerLoop() ROTA_EXCLUDES(mu_);

  TaskTransport* const transport_;
  const std::chrono::milliseconds timeout_;
  const size_t max_pending_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  uint64_t next_req_ ROTA_GUARDED_BY(mu_) = 1;
  uint64_t foreign_ ROTA_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Pending> pending_ ROTA_GUARDED_BY(mu_);
  std::thread timer_;
};

}  // namespace rota::server

#pragma once
// TaskManager: runs the server's job task messages (api/task_protocol.h) on a
// thread of its own with a TaskRunner, and reports every task's state: on every
// change, and all of them after each (re)registration so the server can
// reconcile. Tasks found in the state directory at start (a restarted agent)
// are adopted and reported like the others.
//
// Who a task runs as: when the agent runs as root, the task spec's Unix user
// (setgid/initgroups/setuid; root and unknown users are refused); otherwise the
// agent's own user. HOME, USER, LOGNAME and SHELL come from that account unless
// the spec sets them; PATH defaults to /usr/local/bin:/usr/bin:/bin.
//
// Thread-safe: the On* methods may be called from any thread and never block on
// a task.

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <variant>

#include "agent/exit_watcher.h"
#include "agent/metrics_tail.h"
#include "agent/task_runner.h"
#include "api/protocol.h"
#include "common/mutex.h"

namespace rota::agent {

class TaskManager {
 public:
  // Sends one encoded message to the server; false when not connected (the
  // report is then sent again after the next registration).
  // Called on the manager's thread with no lock of the manager held.
  using SendFn = std::function<bool(std::string)>;

  // `shim_argv` and `state_dir` as for TaskRunner. A task's end is reported
  // as soon as its shim exits (ExitWatcher); running tasks are also polled
  // every `poll_ms` (adopted tasks, whose shims are not the agent's children,
  // are seen that way).
  TaskManager(std::vector<std::string> shim_argv, std::string state_dir, SendFn send,
              int64_t poll_ms = 250);
  ~TaskManager();  // stops the thread; tasks keep running
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  void OnStart(api::TaskStartMsg m);
  void OnSignal(api::TaskSignalMsg m);
  void OnLogs(api::TaskLogsMsg m);
  // A new CPU allotment for a malleable task (TaskRunner::Resize); answered with
  // task_resized (its error when it could not be applied: unknown or ended task,
  // stale generation).
  void OnResize(api::TaskResizeMsg m);
  // The agent (re)registered: every task is reported again.
  void OnRegistered();
  // The running tasks of rota jobs that have cgroups (tasks adopted at start
  // included), in task id order. Any thread; a copy of a small map.
  std::vector<TaskCgroups> RunningTaskCgroups() const ROTA_EXCLUDES(cgroups_mu_);
  // The connection to the server was lost (OnRegistered ends the outage). A
  // task whose spec sets stop_after_disconnect_ms gets SIGTERM once the outage
  // lasts that long, and SIGKILL kStopGraceMs later; its end is reported with
  // why (tasks adopted after an agent restart have no such setting).
  void OnDisconnected();
  static constexpr int64_t kStopGraceMs = 10'000;
  // How long the thread works through queued messages before it looks at the
  // tasks again (reports ends and new pids).
  static constexpr int64_t kWorkSliceNs = 5'000'000;

 private:
  using Work = std::variant<api::TaskStartMsg, api::TaskSignalMsg, api::TaskLogsMsg, api::TaskResizeMsg>;
  void Run() ROTA_EXCLUDES(mu_);
  void Start(const api::TaskSpec& spec) ROTA_EXCLUDES(mu_);
  api::TaskReport Report(const std::string& id);
  // Looks at the tasks `ids` and reports what changed (everything with
  // send_all). A task whose process does not exist yet is not reported; returns
  // true while there is one.
  bool Poll(const std::vector<std::string>& ids, bool send_all) ROTA_EXCLUDES(mu_);
  // Sends the metrics task `id` wrote since the last call (task_metrics), until
  // none are left or the server cannot be reached.
  void SendMetrics(const std::string& id, int64_t now_ms);
  // Stops the tasks whose stop_after_disconnect has passed in an outage that
  // began at `since_ms` (-1: connected); returns when it next needs to act
  // (monotonic ms; -1 never).
  int64_t StopDisconnected(int64_t since_ms) ROTA_EXCLUDES(mu_);
  // Adds a task that runs to RunningTaskCgroups (when it has cgroups), or removes one.
  void TrackCgroups(const std::string& id) ROTA_EXCLUDES(cgroups_mu_);
  void UntrackCgroups(const std::string& id) ROTA_EXCLUDES(cgroups_mu_);

  TaskRunner runner_;  // used by the thread only
  SendFn send_;
  const int64_t poll_ms_;
  bool starting_ = false;
  // Thread only. Which tasks a round looks at: every unended one on the full
  // poll (poll_ms), else only those still starting and those whose shim ended.
  std::set<std::string> live_;                   // not yet reported ended
  std::set<std::string> starting_ids_;           // no pid yet
  std::map<pid_t, std::string> shim_ids_;        // watched shims
  int64_t last_full_poll_ms_ = 0;                // task thread only: a started task has no pid yet
  std::map<std::string, api::TaskReport> last_;  // thread only: last report sent per task
  std::map<std::string, api::TaskReport> failed_;  // thread only: tasks that never started
  std::map<std::string, int64_t>
      stop_after_;                           // thread only: running tasks' stop_after_disconnect_ms
  std::map<std::string, int64_t> stopping_;  // thread only: when they were sent SIGTERM
  std::map<std::string, std::string> stopped_why_;  // thread only: reported with their end
  MetricsTail metrics_;                             // thread only

  Mutex mu_;
  CondVar cv_;
  std::deque<Work> work_ ROTA_GUARDED_BY(mu_);
  bool resend_ ROTA_GUARDED_BY(mu_) = true;
  std::vector<pid_t> exited_pids_ ROTA_GUARDED_BY(mu_);  // watched shims that ended
  int64_t disconnected_since_ms_ ROTA_GUARDED_BY(mu_) = -1;  // monotonic; -1 connected
  bool outage_began_ ROTA_GUARDED_BY(mu_) = false;           // wakes the thread to plan the stops
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  mutable Mutex cgroups_mu_;  // taken alone, never with mu_
  std::map<std::string, TaskCgroups> cgroups_ ROTA_GUARDED_BY(cgroups_mu_);  // by task id
  ExitWatcher exits_;   // before thread_: its callback takes mu_
  std::thread thread_;  // last
};

}  // namespace rota::agent

#pragma once
// Launcher: sends the task messages a round of the job service decided on
// (starts, SIGTERM/SIGKILL, resizes of malleable tasks) to the nodes after the service's
// lock is released (never a lock held over I/O), in the order they were
// decided, and says which launches could not be sent, so the service can
// undo them under its lock (JobService::ApplyLaunchFailures). See
// docs/design-jobs.md ("Rounds: decide, write, send").
//
// Thread-safe (stateless but for the transport, which is thread-safe).

#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "api/task_protocol.h"
#include "common/status.h"
#include "jobs/secret_ref.h"

namespace rota::server {

class TaskTransport;

// A message for a node that a round decided on.
struct TaskSend {
  int64_t job_id = 0;  // 0: no job (a stray task of an earlier attempt)
  std::string node;
  std::variant<api::TaskStartMsg, api::TaskSignalMsg, api::TaskResizeMsg> msg;
  // A signal that cannot be sent is logged (INFO) with this before the
  // transport's reason ("job 7: SIGTERM worker-0"); "": not logged.
  std::string log_failure_as;
  // A start's secrets (names): the Launcher fetches their values for this task
  // alone, just before the send, from its SecretSource; the job's owner uses them.
  std::vector<jobs::SecretRef> secrets;
  int64_t owner_id = 0;
};

// Where the Launcher gets secret values (server/secrets/secrets.h). Thread-safe.
class SecretSource {
 public:
  virtual ~SecretSource() = default;
  // The values of `refs` for task `task_id` on `node` of a job owned by `owner_id`.
  virtual Result<std::vector<api::TaskSecret>> ForTask(int64_t owner_id, const std::vector<jobs::SecretRef>& refs,
                                                       const std::string& task_id, const std::string& node) = 0;
};

// A launch of which a start could not be sent. The starts of the same job
// after it in the batch were not sent either (a gang starts all or none).
struct LaunchFailure {
  int64_t job_id = 0;
  std::string failure;         // "cannot start NAME on NODE: why"
  std::set<std::string> sent;  // the job's task ids whose start did go out
  // Trying again cannot help (a secret the job names was deleted, or is no longer
  // its owner's): the job fails instead of waiting for another try.
  bool final = false;
};

class Launcher {
 public:
  // `transport` borrowed; it must outlive the launcher.
  explicit Launcher(TaskTransport* transport) : transport_(transport) {}
  // Where starts naming secrets get their values (borrowed; none: such starts fail).
  // Set before the first Send.
  void set_secrets(SecretSource* secrets) { secrets_ = secrets; }

  // Sends every message in order; returns the launches that failed, in the
  // order of their first failed start. Call without the job service's lock.
  std::vector<LaunchFailure> Send(const std::vector<TaskSend>& sends) const;

 private:
  TaskTransport* const transport_;
  SecretSource* secrets_ = nullptr;
};

}  // namespace rota::server

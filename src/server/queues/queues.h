#pragma once
// Queues: the scheduler's job queues, defined by admins and kept in the store
// (table queues, schema v5). The queue "default" always exists: built in
// (priority 0, job priorities -100..0, open to everyone, not preemptible) until
// an admin changes it; it cannot be deleted.
//
// A queue orders its jobs before lower-priority queues' jobs, bounds the
// priority a job may ask, admits only its users and groups when it names any,
// caps the GPUs its jobs hold at once, and gives jobs their default time limit
// and preemptible flag. See docs/design-sched.md.
//
// Thread-safe: every method may be called from any thread. The queue list is
// cached in memory; writes go through the store.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "jobs/spec.h"
#include "sched/snapshot.h"
#include "server/store/store.h"

namespace rota::server {

inline constexpr size_t kMaxQueues = 256;
inline constexpr size_t kMaxQueueMembers = 1000;

struct QueueDef {
  sched::Queue queue;
  std::string description;
  int64_t created_ms = 0, updated_ms = 0;  // 0 for the built-in default
};

// JSON: {name, description?, priority?, min_priority?, max_priority?, users?,
// groups?, max_gpus?, default_time_limit?: "24h", max_time_limit?, preemptible?}. Unknown keys
// and out-of-range values are InvalidArgument naming the field. Member names are
// trimmed; `check_names` also requires them to be valid user and group names
// (input; stored queues of older versions are read as they are).
Result<QueueDef> QueueFromJson(const api::Json& j, bool check_names = true);
api::Json ToJson(const QueueDef& q);

// The queues of a JSON file, for `rota simulate --queues`: an array of queues
// as QueueFromJson reads them, or GET /api/v1/queues's answer ({"queues": [...]},
// whose built_in, pending and unfinished are ignored). InvalidArgument names the
// entry ("queues[2].max_gpus: ...") or a name given twice; NotFound/IoError for the file.
Result<std::vector<sched::Queue>> QueuesFromJsonFile(const std::string& path);

class Queues {
 public:
  // Borrowed; they must outlive this.
  Queues(store::Store* store, const Clock* clock);

  // Loads the stored queues.
  Status Start();

  // Every queue, "default" first, then by name.
  std::vector<QueueDef> List() const;
  std::vector<sched::Queue> ForScheduler() const;
  Result<QueueDef> Get(const std::string& name) const;

  // Creates (AlreadyExists when it exists) or replaces (NotFound when it does
  // not; "default" may always be replaced) a queue.
  Result<QueueDef> Create(const QueueDef& q);
  Result<QueueDef> Replace(const QueueDef& q);
  // Conflict for "default"; NotFound for an unknown queue. The caller checks
  // that no unfinished job names it.
  Status Delete(const std::string& name);

  // Checks a submission against its queue and fills in what the queue decides:
  // the queue's name, the time limit and preemptible defaults. InvalidArgument
  // for an unknown queue or a priority out of its bounds; PermissionDenied when
  // the queue does not admit the user.
  Status Admit(const std::string& user, const std::vector<std::string>& groups, bool admin,
               jobs::JobSpec* spec) const;
  // Called after a change, on the thread that made it, with no lock of this
  // object held (the scheduler passes at once). Set before serving requests.
  void SetChangeHook(std::function<void()> hook) { change_hook_ = std::move(hook); }

 private:
  Status Store(const QueueDef& q, bool create);

  store::Store* const store_;
  const Clock* const clock_;
  mutable Mutex mu_;
  std::map<std::string, QueueDef> queues_ ROTA_GUARDED_BY(mu_);  // "default" always present
  std::function<void()> change_hook_;
};

}  // namespace rota::server

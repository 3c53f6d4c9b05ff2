#pragma once
// JobService: submitted jobs from pending to their end. It places a pending job
// (jobs::PlaceJob over the ready nodes' free GPUs: GPUs reserved by others and
// GPUs of other jobs are not free), builds its launch plan (jobs::BuildLaunch),
// starts every process through the agents (gang: all or none), follows the
// agents' task reports, restarts the whole gang after a failure when the
// restart policy allows, and stops it on cancel or time limit (SIGTERM, SIGKILL
// after a grace period). Every state change is kept in the store with its
// reason (tables jobs, job_events).
//
// States: pending -> starting -> running -> succeeded | failed | cancelled;
// a failure with restarts left goes back to starting after the backoff.
// See docs/design-jobs.md.
//
// Thread-safe. Task reports are queued and handled on the service's own
// thread, which also places pending jobs and enforces deadlines. A round
// decides under the service's lock and leaves its effects in an outbox: the
// task messages are sent by the Launcher with the lock released, then the
// changed jobs' rows go to the store in one write per round (built and queued
// under the lock, from the jobs as they are then, so a later write never
// carries an older row).

#include <cstdint>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "api/json_writer.h"
#include "api/task_protocol.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "jobs/array.h"
#include "jobs/launch_env.h"
#include "jobs/sweep.h"
#include "jobs/placement.h"
#include "jobs/spec.h"
#include "jobs/states.h"
#include "malleable/core_split.h"
#include "server/jobs/launcher.h"
#include "server/jobs/log_fetcher.h"
#include "server/nodes/cluster_state.h"
#include "server/scheduling/pass_metrics.h"
#include "sched/snapshot.h"
#include "sched/usage.h"
#include "server/reservations/reservations.h"
#include "accounting/ledger.h"
#include "server/store/accounts.h"
#include "server/store/jobs.h"
#include "server/store/store.h"

namespace rota::server {

class TaskTransport;
class Accounts;
struct User;
class Reservations;
class Queues;
class Quotas;

// One process of the current attempt and what its agent last said.
struct JobTask {
  std::string id;  // agent task id: "job-<id>.r<attempt>.<process name>"
  std::string name;
  std::string role;
  uint32_t index = 0;
  std::string node;
  std::string address;
  std::vector<uint32_t> gpus;
  uint16_t port = 0;
  bool runs = true;                // false: holds GPUs only (MPI workers)
  std::string unix_user;           // the account it runs as on its node
  jobs::TaskState state = jobs::TaskState::kCreated;
  int64_t pid = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string error;
  int64_t ended_ms = 0;  // when it ended, by its node's clock (0: running, or lost)
  // A malleable task's CPU allotment as last sent (not stored: a restarted
  // server sends every allotment again, with a generation from its clock).
  double cpus = 0;
  std::string cpuset;
  uint64_t generation = 0;
};

// What a job whose gang is being stopped becomes once every task ended.
enum class StopTo { kNone, kRestart, kReplace, kRequeue, kSucceeded, kFailed, kCancelled };

struct Job {
  int64_t id = 0;
  int64_t owner_id = 0;
  std::string owner;  // username
  jobs::JobSpec spec;
  jobs::JobState state = jobs::JobState::kPending;
  std::string reason;
  uint32_t restart_count = 0;
  std::vector<JobTask> tasks;
  int64_t created_ms = 0, updated_ms = 0;
  std::optional<int64_t> ended_ms;
  int64_t started_ms = 0;        // current attempt started (time limit)
  int64_t retry_at_ms = 0;       // restart / placement retry not before
  int64_t kill_at_ms = 0;        // stopping: SIGKILL at
  StopTo stop_to = StopTo::kNone;  // being stopped: what it becomes once every task ended
  std::string stop_reason;
  // Scheduling (stored).
  int64_t queued_ms = 0;          // last became pending (submitted, requeued); 0: created_ms
  double attained_gpu_ms = 0;     // GPU time of its ended runs (least attained service)
  uint32_t preemptions = 0;
  double lost_gpu_ms = 0;         // GPU time of the runs preemption cut short
  bool run_open = false;          // the current run's GPU time is not yet in attained_gpu_ms
  // The latest preemption was a defragmentation move (not stored: a restarted
  // server treats a job still stopping as plainly preempted).
  bool moving = false;
  // Why it waits, from the latest scheduling pass (pending jobs; not stored).
  std::string wait_reason;
  int64_t estimated_start_ms = 0;  // 0: unknown
  uint32_t position = 0;           // 1-based place among pending jobs
  // Array members (stored, fixed at submission): the array (0: none), the
  // member's index, the array's cap on members holding resources at once.
  int64_t array_id = 0;
  int64_t array_index = 0;
  uint32_t array_cap = 0;
  // Sweep trials (stored): the sweep's budget of failed trials (0: none) and
  // the trial's parameters.
  uint32_t array_max_failures = 0;
  std::map<std::string, std::string> params;

  bool Final() const { return jobs::IsFinal(state); }
  bool Stopping() const { return stop_to != StopTo::kNone; }
};

struct JobEvent {
  int64_t t_ms = 0;
  jobs::JobState state = jobs::JobState::kPending;
  std::string reason;
};

api::Json ToJson(const Job& j, const std::vector<JobEvent>* events = nullptr);
// A row of GET /api/v1/queue: ToJson(j) without "spec" and "tasks", plus "gpus"
// (what the job asks for), written as the same text ToJson(...).dump() gives
// (keys in order) without building a document: the queue can hold 10,000 jobs.
void AppendQueueRow(api::JsonWriter& w, const Job& j);
// An array as the API shows it: {id, name, owner, indices, size, max_running,
// created, counts: {state: members}, spec (the template)}.
api::Json ArrayToJson(const store::ArrayRow& a);
// The "array" field of POST /api/v1/jobs: "0-99%10", or {indices: "0-99",
// max_running?: 10}. InvalidArgument naming the field.
Result<jobs::ArraySpec> ArrayFromJson(const api::Json& j);

struct JobServiceOptions {
  jobs::PortRange ports;
  int64_t stop_grace_ms = 10'000;  // SIGTERM -> SIGKILL
  int64_t tick_ms = 250;
  // Rounds that follow submissions are at least this far apart, so a burst is
  // placed in batches (each pass reads nodes and reservations once).
  int64_t placement_gap_ms = 5;
  // Rounds are paced by a CPU budget (a pass costs more with more jobs: ~30 ms
  // with 10,000 queued): it grows by 1/(pass_cost_factor+1) of the time that
  // passes, up to round_budget_ms, and each round spends what it took; while it
  // is below zero only task reports start a round (a freed GPU is taken at
  // once). Under a burst of submissions into a long queue the service so spends
  // at most about 1/(factor+1) of a core on passes, and the rest on taking the
  // submissions.
  int64_t pass_cost_factor = 4;
  int64_t round_budget_ms = 50;
  // Task reports wait for the next round up to pass_cost_factor times what the
  // last one took, while that is at most this long (cheap rounds: a burst of task
  // ends with a short queue is taken in batches); costlier rounds are not put
  // off for them.
  int64_t report_batch_max_ms = 20;
  // A log read waits this long for its node; at most log_max_pending wait at once.
  int64_t log_timeout_ms = 10'000;
  size_t log_max_pending = 4096;
  // Scheduling (docs/design-sched.md).
  sched::Policy policy;
  // How a node's cores are divided among its malleable tasks (docs/design-malleable.md).
  malleable::Policy malleable_policy = malleable::Policy::kEqual;
  int64_t fairshare_half_life_ms = 7LL * 24 * 3600 * 1000;
  // A running reservation whose GPUs had no process of its owner for this long
  // lends them to others' preemptible jobs (0: never).
  int64_t reservation_idle_ms = 30 * 60'000;
  // How far ahead reservations are planned around.
  int64_t reservation_horizon_ms = 14LL * 24 * 3600 * 1000;
  // The window of max_gpu_hours quotas: jobs that ended in it, and unfinished ones.
  int64_t quota_period_ms = 30LL * 24 * 3600 * 1000;
  // Reasons, positions and estimates of pending jobs are the costly part of
  // a pass with a long queue, and change no decision: with more pending jobs
  // than this, only full ticks (every tick_ms) explain them; the rounds
  // between (after submissions and task reports) keep the last full tick's.
  size_t explain_every_pass_up_to = 256;
  // No thread: the owner moves the service with Step() (tests with a fake
  // clock and a fake transport drive the whole core this way).
  bool manual = false;
};

class Secrets;

class JobService {
 public:
  // All pointers borrowed; they must outlive the service. Registers the
  // gateway's task listeners.
  JobService(store::Store* store, ClusterState* cluster, TaskTransport* gateway,
             Reservations* reservations, Accounts* accounts, Queues* queues, const Quotas* quotas,
             const Clock* clock, JobServiceOptions options = {});
  ~JobService();
  JobService(const JobService&) = delete;
  JobService& operator=(const JobService&) = delete;

  // Where jobs naming secrets are checked at submit and their starts get the
  // values (borrowed; none: such jobs are refused). Call before Start.
  void set_secrets(Secrets* secrets);

  // Loads unfinished jobs and starts the service thread (none when manual).
  Status Start();
  // One round of the service on the caller's thread, at the clock's time: the
  // queued task reports are applied, jobs react to them (restart, stop, end),
  // then a full tick — kill deadlines, time limits, lost nodes, orphans — and
  // a scheduling pass whose starts and stops go out through the transport.
  // The service thread does exactly this; with options.manual only Step does.
  // full = false: a round between full ticks (after an event), without the
  // tick's checks.
  void Step(bool full = true) ROTA_EXCLUDES(mu_);
  // A reservation, queue or quota changed: a pass runs now (coalesced like a
  // submission), with reservations read again, not at the next full tick.
  void OnPolicyChange() ROTA_EXCLUDES(mu_);

  // Validates and stores the job (pending) and returns it. InvalidArgument for a
  // job that can never be placed (names the largest node), an unknown queue or
  // a priority outside the queue's bounds; PermissionDenied when the queue does
  // not admit the owner. The queue's defaults are filled in (Queues::Admit).
  Result<Job> Submit(int64_t owner_id, const std::string& owner, const jobs::JobSpec& spec);
  // Job arrays (jobs_arrays.cc; docs/design-jobs.md, "Job arrays").
  // Submit's checks once for the template, then the array and every member
  // (ordinary pending jobs, jobs::MemberSpec) stored in one write transaction.
  // InvalidArgument as Submit, and for a template jobs::CheckArrayTemplate
  // refuses. Returns the array as stored (counts: every member pending).
  Result<store::ArrayRow> SubmitArray(int64_t owner_id, const std::string& owner, const jobs::JobSpec& spec,
                                      const jobs::ArraySpec& array);
  // A sweep: an array of one member per trial (jobs::Trials), each with its
  // parameters substituted ({lr}) and in ROTA_TRIAL_PARAMS (a JSON object),
  // at most sweep.max_running at once; once sweep.max_failures trials failed,
  // its pending trials are cancelled. As SubmitArray.
  Result<store::ArrayRow> SubmitSweep(int64_t owner_id, const std::string& owner, const jobs::JobSpec& spec,
                                      const jobs::SweepSpec& sweep);
  // The array with its members' counts per state. NotFound.
  Result<store::ArrayRow> GetArray(int64_t id);
  // Arrays newest first (owner_id 0: anyone's), `limit` 1..1000, ids below `before` when > 0.
  Result<std::vector<store::ArrayRow>> ListArrays(int64_t owner_id, int limit, int64_t before);
  // Cancels every member that has not ended (as Cancel, with one store flush
  // for all): PermissionDenied unless owner or admin; NotFound. Returns how
  // many members it cancelled (0 when all had ended).
  Result<int64_t> CancelArray(int64_t user_id, bool admin, int64_t id);
  // Early stopping (early_stopper.h): the running members (running, not being
  // stopped) of each array that has any, by array id.
  std::map<int64_t, std::set<int64_t>> RunningArrayMembers() const ROTA_EXCLUDES(mu_);
  // Stops member `job_id` of array `array_id` through the preemption notice
  // path (the notice, SIGTERM, SIGKILL after the grace): it ends succeeded
  // with `reason` (jobs::kStoppedEarly ...). False when it is not such a
  // member running now (ended, being stopped, or another array's).
  bool StopEarly(int64_t array_id, int64_t job_id, const std::string& reason) ROTA_EXCLUDES(mu_);
  // The GPUs of `node` held by starting or running jobs of users other than
  // `owner_id` that will not make way for a reservation starting at `from_ms`:
  // not preemptible, with no time limit or one ending after it. One entry per
  // GPU (Reservations::JobHolds).
  std::vector<reserve::Busy> HeldGpus(const std::string& node, int64_t owner_id, int64_t from_ms) const
      ROTA_EXCLUDES(mu_);
  // Submit's checks alone (nothing stored): the spec as it would be stored,
  // with its queue's defaults, or the error Submit would answer.
  Result<jobs::JobSpec> CheckSubmission(int64_t owner_id, const std::string& owner, const jobs::JobSpec& spec);
  // Jobs that name `queue` ("" counts as "default"): pending ones, and all not
  // finished. One scan, no copies.
  struct QueueCounts {
    int pending = 0, unfinished = 0;
  };
  QueueCounts CountsIn(const std::string& queue) const;
  // Pending jobs in the scheduler's order (position 1 first), with why they
  // wait: calls `visit` with `limit` of them from `offset` on, under the jobs
  // lock (no copies; `visit` must not call this service); returns how many
  // there are. queue "": every queue.
  size_t VisitQueue(const std::string& queue, size_t offset, size_t limit,
                    const std::function<void(const Job&)>& visit) const;
  // Cancels a job: PermissionDenied unless owner or admin; Conflict when it ended.
  Result<Job> Cancel(int64_t user_id, bool admin, int64_t id);
  // A job as it is now: a running job's attained_gpu_ms counts its current run
  // so far (GPU time shown to people).
  Result<Job> Get(int64_t id, std::vector<JobEvent>* events = nullptr);
  // Which jobs List shows. owner_id 0: everyone's; no state: any. A page is
  // the `limit` (1..1000) newest from the `offset`-th on, below `before`
  // when set; with `after` set instead, the `limit` oldest above it (the page
  // just newer), still shown newest first. Ids as boundaries give exact pages
  // while jobs are submitted; offset does not combine with them.
  struct ListQuery {
    int64_t owner_id = 0;
    std::optional<jobs::JobState> state;
    int limit = 100;
    int64_t offset = 0;
    int64_t before = 0, after = 0;
    int64_t array_id = 0;  // > 0: only its members, lowest index first; -1: no array members
  };
  // *more (when given) says whether more follow in the page's direction
  // (older; newer with `after`). As Get.
  Result<std::vector<Job>> List(const ListQuery& q, bool* more = nullptr);
  // Part of a task's log from its node, given to `done` when the node answers
  // (never waits on the caller's thread: LogFetcher). NotFound for an unknown
  // task; Unavailable when the node does not answer in time. `done` runs once,
  // perhaps before Logs returns, on any thread, without the service's lock.
  void Logs(int64_t id, const std::string& task, const std::string& stream, uint64_t offset,
            uint64_t max_bytes, LogFetcher::Done done);
  // The GPUs of running job processes on `node` with their Unix users (enforcement).
  struct Allocation {
    std::string job_id;
    std::vector<uint32_t> gpus;
    std::string unix_user;
  };
  std::vector<Allocation> AllocationsOn(const std::string& node) const;
  // The job whose current launch placed task `task` on `node`, while the job is not
  // over (the task may have ended); nullopt otherwise. What a node may report
  // metrics for (JobMetrics).
  std::optional<int64_t> JobOfTaskOn(const std::string& node, const std::string& task) const;
  // The GPUs jobs hold, by node (usage accounting): every open run's GPU tasks,
  // [run started, open), and the runs closed at or after `since_ms` (kept for
  // an hour: agents replay samples late) with their end.
  std::map<std::string, std::vector<accounting::Holding>> Holdings(int64_t since_ms) const;
  // Changes whenever a run opens or closes (Holdings would answer differently).
  uint64_t HoldingsVersion() const { return holdings_version_.load(std::memory_order_acquire); }
  // GPU-hours by user and by group: fair-share usage (decayed by the half-life,
  // kept across restarts) and use in the quota period.
  struct Usage {
    std::map<std::string, double> user_fairshare, group_fairshare;
    std::map<std::string, double> user_period, group_period;
  };
  Usage UsageNow() ROTA_EXCLUDES(mu_);
  // What the scheduling passes cost and decided (GET /metrics).
  const scheduling::PassMetrics& pass_metrics() const { return pass_metrics_; }

 private:
  void Run() ROTA_EXCLUDES(mu_);
  // Step's body; `full`: a full tick (else only what submissions need).
  void Round(bool full) ROTA_REQUIRES(mu_);
  // Applies a task report; returns the id of the job whose task changed.
  std::optional<int64_t> HandleReport(const std::string& node, const api::TaskReport& r) ROTA_REQUIRES(mu_);
  // Lets each job react to its tasks' changes (restart, stop, end).
  // `ended`: one of the reports ended a task (a pass may place what it freed).
  void AfterReports(const std::set<int64_t>& jobs, bool ended) ROTA_REQUIRES(mu_);
  // Removes from active_ the ended jobs whose end is committed.
  void DropCommittedEnds() ROTA_REQUIRES(mu_);
  // A full tick (every tick_ms) enforces SIGKILL deadlines and time limits and
  // marks tasks on lost nodes; then a scheduling pass runs when anything may
  // have changed (or on every full tick).
  void Tick(int64_t now_ms, bool full) ROTA_REQUIRES(mu_);
  // One scheduling pass (jobs_sched.cc): snapshot -> sched::Schedule -> starts,
  // preemptions and wait reasons applied.
  void SchedulePass(int64_t now_ms, bool full) ROTA_REQUIRES(mu_);
  void RefreshPassCache(int64_t now_ms) ROTA_REQUIRES(mu_);
  // The pending array members the cap holds back (jobs::HeldByArrayCap), each
  // given its array's wait reason (jobs_arrays.cc).
  std::set<int64_t> HoldArrayMembers(int64_t now_ms) ROTA_REQUIRES(mu_);
  // array_failed_ for the sweeps with unfinished trials and a budget of failures.
  Status LoadArrayFailures() ROTA_EXCLUDES(mu_);
  // SubmitArray's and SubmitSweep's body: one member per index of `array`,
  // with params[i] (when given) for the i-th.
  Result<store::ArrayRow> SubmitMembers(int64_t owner_id, const std::string& owner, const jobs::JobSpec& spec,
                                        const jobs::ArraySpec& array,
                                        const std::vector<std::map<std::string, std::string>>& params,
                                        const std::string& sweep_json, uint32_t max_failures);
  // Reads the GPU time of jobs that ended in the quota period (at most once a minute).
  void RefreshEndedUsage(int64_t now_ms) ROTA_REQUIRES(mu_);
  void Start(Job& job, const std::vector<sched::TaskAlloc>& tasks, int64_t now_ms,
             std::map<std::string, std::set<uint16_t>>& busy_ports) ROTA_REQUIRES(mu_);
  void Preempt(Job& job, const std::string& reason, int64_t now_ms) ROTA_REQUIRES(mu_);
  // Adds the current run's GPU time to the job's attained service.
  void CloseRun(Job& job, int64_t now_ms) ROTA_REQUIRES(mu_);
  // `owners`: the job owners' accounts read in this pass (by id), added to when missing.
  void Launch(Job& job, const std::vector<jobs::PlacedTask>& placed, int64_t now_ms,
              std::map<int64_t, Result<User>>& owners) ROTA_REQUIRES(mu_);
  // `notice`: told to the tasks before SIGTERM (preemption; ROTA_PREEMPT_NOTICE).
  void StopGang(Job& job, StopTo to, const std::string& reason, int64_t now_ms,
                const std::string& notice = "") ROTA_REQUIRES(mu_);
  void Finish(Job& job, jobs::JobState state, const std::string& reason, int64_t now_ms) ROTA_REQUIRES(mu_);
  // InvalidArgument when the owner's (or its primary group's) GPUs-at-once
  // quota is below what the job needs: it could never start.
  Status CheckQuotasCouldEverAdmit(const jobs::JobSpec& spec, const std::string& owner,
                                   const std::vector<std::string>& groups) const;
  void SetState(Job& job, jobs::JobState state, const std::string& reason, int64_t now_ms) ROTA_REQUIRES(mu_);
  void AfterTaskChange(Job& job, int64_t now_ms) ROTA_REQUIRES(mu_);
  // Marks the job's row to be written (and an event when event_state is set,
  // at job.updated_ms) by the round's one store write (WriteRows).
  void Persist(const Job& job, std::optional<jobs::JobState> event_state, const std::string& reason)
      ROTA_REQUIRES(mu_);
  // Queues a task message for the Launcher (sent once mu_ is released).
  void Send(int64_t job_id, const std::string& node, api::TaskSignalMsg m, std::string log_failure_as = "")
      ROTA_REQUIRES(mu_);
  // Queues the marked jobs' rows, built from the jobs as they are now, and
  // their events as one store write (failures are logged; the ends it holds
  // are marked committed when it commits, DropCommittedEnds).
  void WriteRows() ROTA_REQUIRES(mu_);
  // Sends the outbox's messages with mu_ released (taken again before it
  // returns; starts that could not be sent undo their launch,
  // ApplyLaunchFailures, whose KILLs go out the same way), then WriteRows.
  void Act() ROTA_REQUIRES(mu_);
  // A launch whose start could not be sent: what started is killed and the
  // job goes back to pending (retried in 2 s), or ends when it was cancelled
  // meanwhile.
  void ApplyLaunchFailures(const std::vector<LaunchFailure>& failures) ROTA_REQUIRES(mu_);
  // Malleable tasks (jobs_malleable.cc): on every node whose set of live
  // malleable tasks changed since the last round (a start, an end), the node's
  // cores are divided again (malleable::DivideCores); each changed allotment
  // goes into the task's start when that is still in the outbox, else out as a
  // task_resize, and is recorded as a job event.
  void RebalanceMalleable(int64_t now_ms) ROTA_REQUIRES(mu_);
  void RebalanceNode(const std::string& node, const std::vector<std::pair<Job*, JobTask*>>& tasks, int64_t now_ms)
      ROTA_REQUIRES(mu_);
  // Stops the tasks marked lost on nodes that answer again.
  void StopOrphans(const std::map<std::string, NodeView>& nodes, int64_t now_ms) ROTA_REQUIRES(mu_);
  // GPU-hours in the quota period: ended jobs (pass cache) and unfinished ones.
  void PeriodGpuHours(int64_t now_ms, std::map<std::string, double>* user,
                      std::map<std::string, double>* group) const ROTA_REQUIRES(mu_);
  // Stores the fair-share usage (asynchronously unless `wait`).
  void SaveUsage(int64_t now_ms, bool wait) ROTA_REQUIRES(mu_);
  // Ports held by unfinished jobs and found busy by agents, by address.
  std::map<std::string, std::set<uint16_t>> BusyPorts(int64_t now_ms) ROTA_REQUIRES(mu_);

  store::Store* const store_;
  ClusterState* const cluster_;
  int node_listener_ = 0;  // on cluster_: node changes wake a pass (set in Start)
  TaskTransport* const gateway_;
  Reservations* const reservations_;
  Accounts* const accounts_;
  Queues* const queues_;
  const Quotas* const quotas_;
  const Clock* const clock_;
  const JobServiceOptions options_;
  Secrets* secrets_ = nullptr;  // set before Start
  int64_t started_at_ms_ = 0;  // set by Start, before the thread runs

  mutable Mutex mu_;
  CondVar cv_;
  std::map<int64_t, Job> active_ ROTA_GUARDED_BY(mu_);  // unfinished jobs
  // Sweeps with a budget of failed trials: array id -> trials failed so far
  // (counted by Finish; read from the store at Start).
  std::map<int64_t, int64_t> array_failed_ ROTA_GUARDED_BY(mu_);
  std::deque<std::pair<std::string, api::TaskReport>> reports_ ROTA_GUARDED_BY(mu_);
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  bool wake_ ROTA_GUARDED_BY(mu_) = false;
  bool reread_ ROTA_GUARDED_BY(mu_) = false;  // the pass cache is stale: read it again  // a job was submitted; tick now
  bool dirty_ ROTA_GUARDED_BY(mu_) = true;  // something changed since the last pass
  // What passes share, refreshed on full ticks.
  struct PassCache {
    int64_t refreshed_ms = -1;
    std::vector<Reservation> reservations;                 // running and upcoming
    std::map<std::string, std::string> group_of;           // username -> primary group
    std::set<std::string> disabled;                        // disabled accounts: their jobs wait
    store::QueueMembership membership;                     // every user's groups, admins
    bool membership_read = false;                          // once: else queues admit as at submission
    // GPU-ms of the jobs that ended in the quota period, by owner (read every minute),
    // and which of the ended jobs still in active_ that read counted (their end was
    // committed before it): each ended job counts once, from the read or from memory.
    int64_t ended_usage_ms = -1;
    std::map<std::string, double> ended_gpu_ms;
    std::set<int64_t> ended_read;
  };
  PassCache pass_cache_ ROTA_GUARDED_BY(mu_);
  // Fair share: decayed GPU-ms per user and group.
  sched::Usage usage_ ROTA_GUARDED_BY(mu_);  // advanced by sched::AdvanceUsage (as rota simulate)
  int64_t usage_at_ms_ ROTA_GUARDED_BY(mu_) = 0;
  int64_t usage_saved_ms_ ROTA_GUARDED_BY(mu_) = 0;
  // Reservation id -> when its owner last used its GPUs.
  std::map<int64_t, int64_t> reservation_used_ms_ ROTA_GUARDED_BY(mu_);
  // Tasks marked lost because their node stopped answering, by node: stopped
  // when it answers again.
  struct Orphan {
    int64_t job_id = 0;
    int64_t kill_at_ms = 0;  // 0: not told yet; else SIGKILL at
    std::vector<uint32_t> gpus;  // not free for jobs while it is listed
  };
  std::map<std::string, std::map<std::string, Orphan>> orphans_ ROTA_GUARDED_BY(mu_);
  // (node, GPU) -> when a job last let it go.
  std::map<std::pair<std::string, uint32_t>, int64_t> released_ms_ ROTA_GUARDED_BY(mu_);
  // Runs closed lately, by node (Holdings), oldest first.
  std::deque<std::pair<std::string, accounting::Holding>> closed_holdings_ ROTA_GUARDED_BY(mu_);
  std::atomic<uint64_t> holdings_version_{0};
  scheduling::PassMetrics pass_metrics_;  // thread-safe on its own
  // Ports an agent found in use by something else: address -> port -> until (ms).
  std::map<std::string, std::map<uint16_t, int64_t>> foreign_ports_ ROTA_GUARDED_BY(mu_);
  // Owner -> node -> the Unix user an agent found missing there, and until
  // when none of the owner's jobs is placed there (sooner when their account
  // is mapped to another Unix user).
  struct NoAccount {
    std::string unix_user;
    int64_t until_ms = 0;
  };
  static constexpr int64_t kNoAccountMs = 10 * 60'000;
  std::map<std::string, std::map<std::string, NoAccount>> no_account_ ROTA_GUARDED_BY(mu_);
  // Owner -> nodes where none of their jobs goes now (no_account_), ascending; drops the
  // entries whose time is up.
  std::map<std::string, std::vector<std::string>> NodesWithoutAccount(int64_t now_ms) ROTA_REQUIRES(mu_);
  // Drops the no_account_ entries of nodes where the owner's Unix account has been
  // remapped since (a store read per owner: with the pass cache, not every pass).
  void ForgetRemappedAccounts() ROTA_REQUIRES(mu_);
  // What the rounds decided and not yet written or sent: jobs whose rows are
  // to be written with their new events, and task messages.
  std::map<int64_t, std::vector<store::JobEventRow>> outbox_rows_ ROTA_GUARDED_BY(mu_);
  std::vector<TaskSend> outbox_sends_ ROTA_GUARDED_BY(mu_);
  // Active jobs with a malleable group, and each node's live malleable tasks as
  // of the last rebalance.
  std::set<int64_t> malleable_jobs_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> malleable_live_ ROTA_GUARDED_BY(mu_);
  Launcher launcher_;
  // Log reads waiting for their node's answer.
  LogFetcher logs_;
  // Jobs whose end the store committed (filled on the writer thread).
  Mutex ends_mu_ ROTA_ACQUIRED_AFTER(mu_);  // never held while taking mu_
  std::vector<int64_t> ends_committed_ ROTA_GUARDED_BY(ends_mu_);
  std::thread thread_;
};

}  // namespace rota::server

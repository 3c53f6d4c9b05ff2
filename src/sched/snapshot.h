#pragma once
// The scheduler's world as values: a Snapshot goes in, Decisions come out
// (scheduler.h). Nothing here reads a clock, a store or the network: the live
// server and `rota simulate` both build a Snapshot and apply the Decisions.
// Times are milliseconds on one clock of the caller's choosing (`now_ms` says
// where "now" is); durations are milliseconds.
// See docs/design-sched.md.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rota::sched {

using JobId = int64_t;

// A node as the scheduler sees it.
struct Node {
  std::string name;
  std::string gpu_model;  // "A100", "" when unknown
  // The model of each GPU (by index) when they are not all one model (a
  // workstation with two kinds of cards); empty: every GPU is gpu_model.
  std::vector<std::string> gpu_models;
  std::map<std::string, std::string> labels;
  uint32_t gpus = 0;  // GPU indices are 0..gpus-1
  // GPUs no job may get: failed, or running a process that is not a rota job
  // (someone working by hand, as the monitoring sees it). Ascending.
  std::vector<uint32_t> unusable_gpus;
  uint32_t cpus = 0;          // milli-cores (the server's unit; any one unit here); 0: not checked
  uint64_t memory_bytes = 0;  // 0: not checked
  // How many tasks may run at once on the node's job ports (every task takes
  // one); unset: not checked. Nodes with the same port_pool (one address:
  // simulated nodes on one host) share one set of ports: task_slots is then
  // the pool's, the same on each of them.
  std::optional<uint32_t> task_slots;
  std::string port_pool;  // "": the node's own
  // False when the node is unreachable or drained: nothing new starts there.
  bool schedulable = true;
  // Why it is not, for people: "drained: disk swap", "unreachable".
  std::string unschedulable_reason;
};

// What one task of a job holds: GPUs on one node.
struct TaskAlloc {
  std::string node;
  std::vector<uint32_t> gpus;  // ascending
  uint32_t cpus = 0;
  uint64_t memory_bytes = 0;
  bool operator==(const TaskAlloc&) const = default;
};

// A group of identical tasks (a role) of a pending job.
struct TaskDemand {
  uint32_t tasks = 1;
  uint32_t gpus_per_task = 0;
  uint32_t cpus_per_task = 0;          // 0: none asked
  uint64_t memory_per_task = 0;        // 0: none asked
  // "": any; else a part of the model of every GPU of a task, any case. On a
  // node of mixed models a task without one still gets GPUs of one model when
  // the node has enough free of one.
  std::string gpu_model;
  std::map<std::string, std::string> labels;  // every one must match
  std::vector<std::string> nodes;      // non-empty: only these nodes
  // Never these nodes: the job's owner has no Unix account there (an agent
  // refused to start a task of theirs for that). Ascending.
  std::vector<std::string> not_nodes;
  bool operator==(const TaskDemand&) const = default;
};

// What the order of jobs is built from, for running and pending jobs alike.
struct JobMeta {
  JobId id = 0;
  std::string user;
  std::string group;            // the user's primary group ("" none)
  std::string queue = "default";
  int priority = 0;             // within the queue's bounds (checked at submit)
  int64_t submitted_ms = 0;
  int64_t queued_ms = 0;        // when it last became pending (submitted, requeued)
  int64_t time_limit_ms = 0;    // 0: none (backfill then cannot plan around it)
  bool preemptible = false;
  // GPU-milliseconds this job has run so far, over all its runs, the current
  // one up to now included (least attained service orders by it).
  double attained_gpu_ms = 0;
  // Known duration of one whole run: only the simulator's oracle policies
  // (SJF, SRTF) use it; 0 unknown.
  int64_t oracle_duration_ms = 0;
};

struct RunningJob {
  JobMeta meta;
  int64_t started_ms = 0;  // this run
  // When the job is expected to end: started + time limit (or, in the
  // simulator's oracle policies, its real end). 0: unknown.
  int64_t expected_end_ms = 0;
  // False while the job is already being stopped (it still holds its GPUs, but
  // is not a preemption candidate again).
  bool stoppable = true;
  // Being stopped (stoppable false) to restart elsewhere: a defragmentation
  // move. Until it has stopped, each pass keeps a place for it by its demands,
  // and no other job is moved.
  bool moving = false;
  std::vector<TaskAlloc> tasks;
  // What the job asks for, as when it was pending. Defragmentation moves a job
  // only where these demands place it; empty: the job is never moved.
  std::vector<TaskDemand> demands;
};

struct PendingJob {
  JobMeta meta;
  std::vector<TaskDemand> demands;  // all start together or none does
  int64_t not_before_ms = 0;        // restart backoff
  bool spread = false;              // spread tasks over nodes instead of packing
  // Its queue no longer admits its owner (changed since the submission; the
  // shell decides, knowing every group of the owner and who is an admin).
  bool queue_refuses_owner = false;
};

struct Reservation {
  int64_t id = 0;
  std::string user;
  std::string node;
  std::vector<uint32_t> gpus;
  int64_t start_ms = 0, end_ms = 0;
  // The owner has left its GPUs idle long enough that others' preemptible jobs
  // may use them (the shell decides, from monitoring).
  bool owner_idle = false;
};

struct Queue {
  std::string name = "default";
  int priority = 0;              // higher runs first, before fair share
  int min_priority = 0, max_priority = 0;  // bounds of a job's own priority
  std::vector<std::string> users, groups;  // empty both: anyone
  uint32_t max_gpus = 0;         // all jobs of the queue at once; 0: no limit
  int64_t default_time_limit_ms = 0;
  // Longest time limit a job may have; > 0 also requires one (the default
  // fills it when set). Checked at submission.
  int64_t max_time_limit_ms = 0;
  bool preemptible_by_default = false;

  // Whether it admits a user of `groups` (anyone when it names no one; an
  // admin always: the caller's rule).
  bool Admits(const std::string& user, const std::vector<std::string>& user_groups) const {
    if (users.empty() && groups.empty()) return true;
    for (const auto& u : users) {
      if (u == user) return true;
    }
    for (const auto& g : user_groups) {
      for (const auto& mine : groups) {
        if (g == mine) return true;
      }
    }
    return false;
  }
  // Whom it admits, for messages: "users a, b and groups c".
  std::string Members() const {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    return (users.empty() ? "" : "users " + list(users)) + (!users.empty() && !groups.empty() ? " and " : "") +
           (groups.empty() ? "" : "groups " + list(groups));
  }
};

// Limits per user or group. 0: no limit.
struct Quota {
  uint32_t max_gpus = 0;               // at once
  double max_gpu_hours_per_period = 0; // see Snapshot::quota_usage
};

// How jobs are ordered and when later jobs may pass earlier ones.
enum class Order {
  kRota,  // least attained service level, then fair share, priorities and age (docs)
  kFifo,  // submission time
  kSjf,   // oracle duration, shortest first (simulator only)
  kSrtf,  // oracle remaining time, shortest first (simulator only)
  kLas,   // Tiresias discretised 2D-LAS: queues by attained GPU-time, FIFO within
};
enum class Backfill {
  kNone,          // strict: nothing passes the first job that does not fit
  kSkip,          // any later job that fits starts (no protection of the head)
  kEasy,          // later jobs start when they do not delay the first blocked job
  kConservative,  // ... nor any earlier blocked job
};
const char* OrderName(Order o);
const char* BackfillName(Backfill b);

struct Policy {
  Order order = Order::kRota;
  Backfill backfill = Backfill::kEasy;
  // Running preemptible jobs may be stopped for pending jobs that order before
  // them (after waiting preempt_after_ms, once the run has lasted as long), and
  // for reservation owners (at once).
  bool preempt = true;
  int64_t preempt_after_ms = 2 * 60'000;
  // Defragmentation (needs preempt): a job that has waited preempt_after_ms
  // although enough GPUs are free in total, scattered over nodes, may have
  // smaller preemptible jobs moved out of its way: stopped and requeued, only
  // when each of them fits at once on free GPUs elsewhere.
  bool defragment = true;
  bool pack = true;  // default placement; a job may ask to spread
  // LAS levels (kLas and kRota): attained GPU-time thresholds, ascending.
  std::vector<double> las_thresholds_gpu_ms = {3'250'000.0, 7'200'000.0};
  // kRota weights (docs/design-sched.md has the formula).
  double weight_fairshare = 1000;
  double weight_queue = 100;    // per queue priority point
  double weight_job = 10;       // per job priority point
  double weight_age_per_hour = 10;  // unbounded: age eventually wins
  // Blocked jobs planned ahead (estimated start, backfill protection); later
  // ones get a reason without an estimate.
  uint32_t plan_depth = 100;
  // Give every pending job a reason and an estimate (the live server). The
  // simulator turns it off for speed.
  bool explain = true;
};

// Usage for fair share: GPU-milliseconds decayed by the half-life (see
// fairshare.h), and shares. A user or group without an entry has share 1.
struct FairShare {
  std::map<std::string, double> user_usage, group_usage;
  std::map<std::string, double> user_shares, group_shares;
};

struct Snapshot {
  int64_t now_ms = 0;
  Policy policy;
  std::vector<Node> nodes;
  std::vector<RunningJob> running;
  std::vector<PendingJob> pending;
  std::vector<Reservation> reservations;  // current and future
  std::vector<Queue> queues;              // a job naming no known queue waits
  FairShare fairshare;
  std::map<std::string, Quota> user_quotas, group_quotas;
  // GPU-hours used in the current quota period, by user and by group.
  std::map<std::string, double> user_period_gpu_hours, group_period_gpu_hours;
};

struct Start {
  JobId id = 0;
  std::vector<TaskAlloc> tasks;  // demands in order, tasks in order within each
};
struct Preemption {
  JobId id = 0;
  std::string reason;  // "for job 12 (waiting 6 min, orders first)"
  bool move = false;   // defragmentation: it fits at once elsewhere (RunningJob::moving)
};
struct Wait {
  JobId id = 0;
  std::string reason;          // "waiting for 8 free GPUs on one node (largest free block: 5 on gpu-a)"
  int64_t estimated_start_ms = 0;  // 0: unknown
  uint32_t position = 0;       // 1-based place in the order of pending jobs
};

struct Decisions {
  std::vector<Start> starts;
  std::vector<Preemption> preemptions;
  std::vector<Wait> waits;  // in order; empty unless policy.explain
  // Idle reservations whose owner's waiting job took them back (their
  // borrowers are among the preemptions): no longer idle from now.
  std::vector<int64_t> reclaimed;
};

}  // namespace rota::sched

#pragma once
// The live server's side of the scheduler: what the job service knows (jobs,
// node views, reservations, queues, usage) turned into a sched::Snapshot.
// Pure: values in, a snapshot out; no store, clock or locks (the job service
// gathers the inputs under its lock and calls this).
// See docs/design-sched.md ("The live server").

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reserve/reservation.h"
#include "sched/snapshot.h"
#include "server/nodes/cluster_state.h"
#include "server/jobs/jobs.h"

namespace rota::server::scheduling {

// A GPU of a node: (node name, GPU index).
using GpuKey = std::pair<std::string, uint32_t>;

// Who holds a GPU through a job: the job's owner and the Unix user its task
// runs as.
struct GpuHolder {
  std::string owner;
  std::string unix_user;
};
using NodeJobGpus = std::map<uint32_t, GpuHolder>;
// Node -> GPU -> holder, over every job that holds resources.
using JobGpus = std::map<std::string, NodeJobGpus>;

struct SchedulingInput {
  int64_t now_ms = 0;
  sched::Policy policy;
  std::vector<NodeView> nodes;
  const std::map<int64_t, Job>* jobs = nullptr;    // unfinished jobs (borrowed)
  std::vector<reserve::Reservation> reservations;  // running and upcoming
  std::vector<sched::Queue> queues;
  sched::FairShare fairshare;  // usage and shares
  std::map<std::string, sched::Quota> user_quotas, group_quotas;
  // GPU-hours used in the quota period, by user and by group.
  std::map<std::string, double> user_period_gpu_hours, group_period_gpu_hours;
  std::map<std::string, std::string> group_of;  // username -> primary group
  // Owners whose pending jobs are left out (disabled accounts; borrowed, may be null).
  const std::set<std::string>* held_owners = nullptr;
  // Pending jobs left out by id (array members beyond their array's cap,
  // jobs::HeldByArrayCap; borrowed, may be null).
  const std::set<int64_t>* held_jobs = nullptr;
  // Every user's groups and the admins (borrowed; null: queues admit every
  // pending job as at its submission): a pending job whose queue no longer
  // admits its owner waits (sched::PendingJob::queue_refuses_owner).
  const store::QueueMembership* membership = nullptr;
  // Username -> nodes where their Unix account is missing (no job of theirs
  // goes there: TaskDemand::not_nodes), ascending.
  std::map<std::string, std::vector<std::string>> nodes_without_account;
  // Node -> its job ports: how many tasks can run on them at once (those not
  // taken by other programs) and the pool they belong to (its address, shared
  // by the nodes that have it): sched::Node::task_slots and port_pool. A node
  // not named: not checked.
  struct JobPorts {
    uint32_t slots = 0;
    std::string pool;
  };
  std::map<std::string, JobPorts> job_ports;
  std::set<int64_t> idle_reservations;          // owner left them idle long enough
  // When a job last let a GPU go: a process seen on it in a sample taken before
  // then (plus the sample interval) is the job's, not someone's by hand.
  std::map<GpuKey, int64_t> released_ms;
  // Node -> GPUs of tasks the server gave up on (their node stopped answering)
  // whose processes may still run there until they are stopped: never free,
  // whatever the node's samples say.
  std::map<std::string, std::vector<uint32_t>> unconfirmed_gpus;
  // JobGpusByNode(*jobs), when the caller has it already (borrowed; null:
  // BuildSnapshot computes it).
  const JobGpus* job_gpus = nullptr;
};

sched::Snapshot BuildSnapshot(const SchedulingInput& in);

// A job that holds GPUs or processes now: starting, running, or being stopped.
bool HoldsResources(const Job& job);
// True for a job the scheduler may start: pending and not being stopped.
bool Schedulable(const Job& job);
JobGpus JobGpusByNode(const std::map<int64_t, Job>& jobs);

// The GPUs of `view` no job may get now: failed in its latest sample, or
// running a process that is no rota job's (someone working by hand). A process
// on a job's GPU is the job's when it runs as the job's Unix user (or its user
// is unknown). Ascending.
std::vector<uint32_t> UnusableGpus(const NodeView& view, const NodeJobGpus& job_gpus,
                                   const std::map<GpuKey, int64_t>& released_ms);

// True when a GPU of `view` among `gpus` runs a process that is not one of
// another user's jobs on it: the reservation's `owner` (by hand or through a
// job), or anyone by hand, is using it.
bool OwnerUses(const NodeView& view, const std::vector<uint32_t>& gpus, const NodeJobGpus& job_gpus,
               const std::string& owner);

// GPU-milliseconds the job's current run (its tasks) has held since it started:
// each task's GPUs up to `now_ms`, or up to its end when it has ended.
double CurrentRunGpuMs(const Job& job, int64_t now_ms);

}  // namespace rota::server::scheduling

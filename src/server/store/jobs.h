#pragma once
// SQL of jobs (tables jobs and job_events) and of fair-share usage (table
// fairshare_usage). A job's spec and tasks are JSON text, its states names:
// the job service (server/jobs_rows.cc) maps rows to jobs and back. Called
// inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct JobRow {
  int64_t id = 0;  // set by InsertJob
  int64_t owner_id = 0;
  std::string owner;  // the owner's username, read only ("" once the user is gone)
  std::string name;   // written by InsertJob only (it is in the spec)
  std::string spec_json;
  std::string state;
  std::string reason;
  int64_t restart_count = 0;
  std::string tasks_json = "[]";
  int64_t created_ms = 0, updated_ms = 0;
  std::optional<int64_t> ended_ms;
  int64_t queued_ms = 0;
  int64_t attained_gpu_ms = 0, preemptions = 0, lost_gpu_ms = 0;
  // Array members (written by InsertJob only): the array's id (0: not a
  // member), the member's index and the array's cap on members running at once.
  int64_t array_id = 0, array_index = 0, array_cap = 0;
  // Sweep trials: the sweep's budget of failed trials (0: none) and the
  // trial's parameters as a JSON object ("" for other jobs).
  int64_t array_max_failures = 0;
  std::string params_json;
};

// One step of a job's history.
struct JobEventRow {
  int64_t t_ms = 0;
  std::string state, reason;
};

// Inserts a new job and its first event (its state and reason at created_ms);
// returns its id.
Result<int64_t> InsertJob(Db& db, const JobRow& row);
// Writes what changes over a job's life (state, reason, restarts, tasks,
// times, usage) to job row.id; with `event`, appends it to its history.
Status UpdateJob(Db& db, const JobRow& row, const JobEventRow* event);
// What a round of the job service changed about one job: its row as it is
// now and the events since the last write, oldest first.
struct JobUpdate {
  JobRow row;
  std::vector<JobEventRow> events;
};
// UpdateJob for each, in order (one store write per round). Stops at the
// first error and returns it (the caller's savepoint undoes the rest).
Status UpdateJobs(Db& db, const std::vector<JobUpdate>& updates);
// The job, or nullopt when there is none with that id.
Result<std::optional<JobRow>> GetJob(Db& db, int64_t id);
// Its history, oldest first.
Result<std::vector<JobEventRow>> JobEvents(Db& db, int64_t id);
// Which jobs a list shows: owner_id 0 anyone's; state "" any; before > 0 only
// ids below it, after > 0 only ids above it (a page boundary that jobs
// submitted meanwhile do not move, unlike offset).
struct JobListFilter {
  int64_t owner_id = 0;
  std::string state;
  int64_t before = 0, after = 0;
  // > 0: only the members of this array, oldest (lowest index) first; -1: no
  // array members.
  int64_t array_id = 0;
};
// At most `limit` after skipping `offset`: newest first; with filter.after the
// oldest above it first (the page just newer than `after`).
Result<std::vector<JobRow>> ListJobs(Db& db, const JobListFilter& filter, int limit, int64_t offset = 0);
// Jobs that have not ended (succeeded, failed or cancelled).
Result<std::vector<JobRow>> UnfinishedJobs(Db& db);
// GPU-milliseconds attained by the jobs that ended at or after `since_ms`, by
// owner's username (quota periods), and, read at the same instant, the ids of the
// jobs that ended at or after `recent_ms` (none when INT64_MAX): which ended jobs
// the sums count, for a caller that also holds ended jobs whose end may not be
// committed yet.
struct EndedUsage {
  std::map<std::string, double> gpu_ms_by_owner;
  std::set<int64_t> recent_ids;
};
Result<EndedUsage> EndedUsageSince(Db& db, int64_t since_ms, int64_t recent_ms);

// A job array (table job_arrays) and how many of its members are in each state.
struct ArrayRow {
  int64_t id = 0;  // set by InsertArray
  int64_t owner_id = 0;
  std::string owner;  // read only
  std::string name, indices;
  int64_t max_running = 0, size = 0;
  std::string spec_json;  // the template
  int64_t created_ms = 0;
  std::string sweep_json;  // a sweep's definition (jobs/sweep.h), "" for a plain array
  std::map<std::string, int64_t> counts;  // read only: state name -> members
};
// Inserts the array (its members are InsertJob'ed after, naming its id).
Result<int64_t> InsertArray(Db& db, const ArrayRow& row);
// The array with its counts, or nullopt.
Result<std::optional<ArrayRow>> GetArray(Db& db, int64_t id);
// Arrays newest first (owner_id 0: anyone's; before > 0: ids below it), with counts.
Result<std::vector<ArrayRow>> ListArrays(Db& db, int64_t owner_id, int limit, int64_t before = 0);

// Fair-share usage (decayed GPU-ms) by user and by group, as of at_ms.
struct FairShareUsage {
  std::map<std::string, double> user, group;
  int64_t at_ms = 0;  // 0: none stored
};
Result<FairShareUsage> LoadFairShareUsage(Db& db);
// Replaces the stored usage.
Status SaveFairShareUsage(Db& db, const FairShareUsage& usage);

}  // namespace rota::store

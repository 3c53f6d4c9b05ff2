#pragma once
// How jobs are kept in the store (tables jobs, job_events): rows to Job objects and
// back. Internal to the job service (jobs.cc, jobs_rows.cc).

#include "api/codec.h"
#include "common/status.h"
#include "server/jobs.h"
#include "server/store/sqlite.h"

namespace rota::server {

// SELECT of the columns JobFromRow reads; append a WHERE clause.
extern const char* const kJobSelect;
// A stored job from a row of kJobSelect. InvalidArgument for an unreadable spec.
Result<Job> JobFromRow(store::Stmt& s);
// A task as stored in jobs.tasks_json and shown by the API.
api::Json TaskJson(const JobTask& t);
// GPU-milliseconds attained by the jobs that ended at or after `since_ms`, by
// owner's username (quota periods).
Result<std::map<std::string, double>> EndedGpuMsByOwner(store::Db& db, int64_t since_ms);
// Fair-share usage (decayed GPU-ms) by user and by group, as of at_ms.
struct StoredUsage {
  std::map<std::string, double> user, group;
  int64_t at_ms = 0;  // 0: none stored
};
Result<StoredUsage> LoadFairShareUsage(store::Db& db);
// Replaces the stored usage.
Status SaveFairShareUsage(store::Db& db, const StoredUsage& usage);

}  // namespace rota::server

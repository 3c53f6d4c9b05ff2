#pragma once
// How jobs are kept in the store (store/jobs.h): rows to Job objects and back. Internal to the job service (jobs.cc, jobs_rows.cc).

#include "api/codec.h"
#include "common/status.h"
#include "server/jobs/jobs.h"
#include "server/store/jobs.h"

namespace rota::server {

// A stored job from its row. InvalidArgument for an unreadable spec or state.
Result<Job> JobFromRow(const store::JobRow& row);
// The row of a job but its name and spec (written once, at submission; the
// rest is what UpdateJob writes).
store::JobRow RowOf(const Job& job);
// A task as stored in jobs.tasks_json and shown by the API.
api::Json TaskJson(const JobTask& t);

}  // namespace rota::server

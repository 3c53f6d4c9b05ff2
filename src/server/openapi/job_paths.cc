// Jobs, queues and quotas.
// Part of the OpenAPI description (openapi.cc puts it together).

#include <algorithm>

#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server::openapi {

namespace {

// A job's properties; the queue's answer leaves out spec and tasks.
Json JobProperties() {
  const Json state = Enum({"pending", "starting", "running", "succeeded", "failed", "cancelled"});
  return Json{{"id", T("integer")}, {"name", T("string")}, {"owner", T("string")},
              {"state", state}, {"reason", T("string")}, {"restart_count", T("integer")},
              {"framework", Ref("Framework")}, {"spec", Ref("StoredJobSpec")}, {"tasks", Arr(Ref("JobTask"))},
              {"created", Time()}, {"updated", Time()}, {"ended", Time()},
              {"queue", T("string")}, {"priority", T("integer")}, {"preemptible", T("boolean")},
              {"preemptions", T("integer")}, {"lost_gpu_seconds", T("integer")},
              {"gpu_seconds", T("integer")}, {"position", T("integer")},
              {"estimated_start", Time()}, {"stopping", T("boolean")}, {"started", Time()}, {"deadline", Time()}, {"queued", Time()},
              {"array", Closed({{"id", T("integer")}, {"index", T("integer")}})}, {"params", Map(T("string"))},
              {"events", Arr(Closed({{"time", Time()}, {"state", state}, {"reason", T("string")}}))}};
}

void AddJobSchemas(Json& schemas) {
  schemas["Framework"] = Enum({"generic", "tensorflow", "pytorch", "mpi", "jax"});
  schemas["JobTask"] = Closed(
      {{"id", T("string")}, {"name", T("string")}, {"role", T("string")}, {"index", T("integer")},
       {"node", T("string")}, {"address", T("string")}, {"gpus", Arr(T("integer"))}, {"port", T("integer")},
       {"runs", T("boolean")}, {"unix_user", T("string")},
       {"state", Enum({"created", "running", "exited", "lost", "unstarted"})}, {"pid", T("integer")},
       {"exit_code", T("integer")}, {"signal", T("integer")}, {"error", T("string")}, {"ended_ms", T("integer")}},
      {"exit_code", "signal", "error", "ended_ms"});
  const Json restart_policy = Enum({"never", "on-failure", "exit-code"});
  schemas["StoredJobSpec"] = Closed(
      {{"name", T("string")}, {"command", Arr(T("string"))}, {"shell", T("boolean")}, {"env", Map(T("string"))},
       {"workdir", T("string")}, {"framework", Ref("Framework")},
       {"groups", Arr(Closed({{"role", T("string")}, {"replicas", T("integer")}, {"gpus_per_task", T("integer")},
                              {"cpus_per_task", T("integer")}, {"memory", T("integer")},
                              {"node_labels", Map(T("string"))}, {"nodes", Arr(T("string"))},
                              {"gpu_model", T("string")}, {"command", Arr(T("string"))},
                              {"malleable", Closed({{"min_cpus", T("number")}, {"max_cpus", T("number")}})}},
                             {"command", "gpu_model", "malleable"}))},
       {"restart", Closed({{"policy", restart_policy}, {"max_restarts", T("integer")}, {"backoff", T("string")},
                           {"max_backoff", T("string")}})},
       {"process_per_node", T("boolean")}, {"time_limit", T("string")}, {"queue", T("string")},
       {"priority", T("integer")}, {"preemptible", T("boolean")}, {"spread", T("boolean")},
       {"stop_after_disconnect", T("string")}, {"secrets", Arr(T("string"))}},
      {"time_limit", "queue", "priority", "preemptible", "spread", "stop_after_disconnect", "secrets"});
  schemas["TaskGroup"] = Body(
      {{"role", T("string")}, {"replicas", T("integer")}, {"gpus_per_task", T("integer")},
       {"cpus_per_task", T("integer")},
       {"memory", {{"oneOf", Json::array({T("integer"), T("string")})},
                   {"description", "bytes, or a size such as \"16GiB\""}}},
       {"node_labels", Map(T("string"))}, {"nodes", Arr(T("string"))}, {"gpu_model", T("string")},
       {"command", Arr(T("string"))},
       {"malleable", Body({{"min_cpus", T("number")}, {"max_cpus", T("number")}}, {"min_cpus", "max_cpus"})}});
  schemas["JobSpec"] = Body(
      {{"name", T("string")}, {"command", Arr(T("string"))}, {"shell", T("boolean")}, {"env", Map(T("string"))},
       {"workdir", T("string")}, {"framework", Ref("Framework")}, {"groups", Arr(Ref("TaskGroup"))},
       {"restart", Body({{"policy", restart_policy}, {"max_restarts", T("integer")}, {"backoff", T("string")},
                         {"max_backoff", T("string")}},
                        {"policy"})},
       {"time_limit", T("string")}, {"process_per_node", T("boolean")}, {"queue", T("string")},
       {"priority", T("integer")}, {"preemptible", T("boolean")}, {"spread", T("boolean")},
       {"stop_after_disconnect", T("string")},
       {"secrets", {{"type", "array"}, {"items", T("string")},
                    {"description", "secret names: NAME (the file $ROTA_SECRETS_DIR/NAME), NAME:ENV_VAR (also that "
                                    "variable); the submitter must own each (or be in its group)"}}},
       {"array", Ref("JobArrayRequest")}, {"sweep", Ref("Sweep")}},
      {"name", "groups"});
  const std::initializer_list<const char*> job_optional = {"ended", "stopping", "position", "estimated_start",
                                                           "started", "deadline", "queued", "events", "array", "params"};
  schemas["Job"] = Closed(JobProperties(), job_optional);
  Json queued = JobProperties();
  queued.erase("spec");
  queued.erase("tasks");
  queued["gpus"] = T("integer");  // every task's GPUs, summed
  schemas["QueuedJob"] = Closed(std::move(queued), job_optional);
  schemas["PreviewProcess"] = Closed({{"task", T("string")}, {"name", T("string")}, {"role", T("string")},
                                      {"node", T("string")}, {"gpus", Arr(T("integer"))}, {"runs", T("boolean")},
                                      {"argv", Arr(T("string"))}, {"env", Map(T("string"))},
                                      {"files", Arr(T("string"))}});
  schemas["JobPreview"] = Closed({{"processes", Arr(Ref("PreviewProcess"))}, {"note", T("string")}});
  // Job arrays (jobs_arrays_api.cc): counts are members per state (states with none left out).
  const Json array_props = Json{{"id", T("integer")}, {"name", T("string")}, {"owner", T("string")},
                                {"indices", T("string")}, {"size", T("integer")}, {"max_running", T("integer")},
                                {"created", Time()}, {"counts", Map(T("integer"))}, {"spec", Ref("StoredJobSpec")},
                                {"sweep", Ref("Sweep")}};
  schemas["Sweep"] = Body({{"method", Enum({"grid", "random"})},
                           {"parameters", Map(T("object"))},
                           {"count", T("integer")}, {"seed", T("integer")}, {"max_running", T("integer")},
                           {"max_trials", T("integer")}, {"max_failures", T("integer")},
                           {"early_stopping", Ref("EarlyStopping")}},
                          {"parameters"});
  // docs/design-jobs.md "Early stopping": min_trials is the median rule's,
  // reduction and max_step ASHA's.
  schemas["EarlyStopping"] = Body({{"rule", Enum({"median", "asha"})}, {"metric", T("string")},
                                   {"goal", Enum({"min", "max"})}, {"min_step", T("integer")},
                                   {"min_trials", T("integer")}, {"reduction", T("integer")},
                                   {"max_step", T("integer")}},
                                  {"rule", "metric"});
  schemas["JobArray"] = Closed(array_props, {"sweep"});
  Json with_members = array_props;
  // A member: a Job without its spec (the template's, above), with the summary of each
  // metric it reported (job_metrics_api.cc, MetricSummariesToJson).
  Json member = JobProperties();
  member.erase("spec");
  member["metrics"] = Map(Closed({{"last", T("number")}, {"min", T("number")}, {"max", T("number")},
                                  {"count", T("integer")}, {"last_step", T("integer")}},
                                 {"last_step"}));
  Json member_schema = Closed(std::move(member), job_optional);
  Json& required = member_schema["required"];
  required.erase(std::find(required.begin(), required.end(), Json("metrics")));  // only once reported
  schemas["ArrayMember"] = std::move(member_schema);
  with_members["members"] = Arr(Ref("ArrayMember"));
  with_members["truncated"] = T("boolean");
  with_members["cancelled"] = T("integer");
  schemas["JobArrayMembers"] = Closed(std::move(with_members), {"members", "truncated", "cancelled", "sweep"});
  schemas["JobArrayRequest"] = {
      {"oneOf", Json::array({T("string"), Body({{"indices", T("string")}, {"max_running", T("integer")}},
                                               {"indices"})})},
      {"description", "\"0-99\", \"0,3,7-9\", \"1-20:5\" (step), optionally %N: at most N members at once "
                      "(or max_running); at most 100000 members"}};
  schemas["JobMetrics"] = Closed(
      {{"job", T("integer")},
       {"metrics", Arr(Closed({{"task", T("string")}, {"name", T("string")}, {"value", T("number")},
                               {"step", T("integer")}, {"time", Time()}},
                              {"step"}))},
       {"truncated", T("boolean")}},
      {"truncated"});
  schemas["JobLogChunk"] = Closed({{"task", T("string")}, {"stream", Enum({"stdout", "stderr"})},
                                   {"offset", T("integer")}, {"next_offset", T("integer")},
                                   {"size", T("integer")}, {"data", T("string")}});
}

}  // namespace

Json JobPaths(Json& schemas) {
  AddJobSchemas(schemas);
  const Json job = Ref("Job");
  Json id = Json::array({PathParam("id", "integer", "job id")});
  Json logs_params = id;
  logs_params.push_back(QueryParam("task", "string", "process name, e.g. worker-1 (default: the first)"));
  logs_params.push_back(QueryParam("stream", "string", "stdout (default) or stderr"));
  logs_params.push_back(QueryParam("offset", "integer", "byte offset"));
  logs_params.push_back(QueryParam("max_bytes", "integer", "1..1048576 (default 65536)"));
  return Json{
      {"/api/v1/jobs",
       {{"get", Op("Jobs, newest first; truncated: more follow (the next older page: before = the last "
                   "id; with after, the next newer page: after = the first id). before/after pages stay "
                   "exact while jobs are submitted; offset counts from the newest",
                   Closed({{"jobs", Arr(job)}, {"truncated", T("boolean")}}, {"truncated"}), {400, 401},
                   Json::array({QueryParam("mine", "boolean", "only the caller's"),
                                QueryParam("state", "string", "pending, starting, running, succeeded, "
                                                              "failed or cancelled"),
                                QueryParam("limit", "integer", "1..1000 (default 100)"),
                                QueryParam("offset", "integer", "skip this many of the newest (default 0)"),
                                QueryParam("before", "integer", "only jobs with a smaller id (older)"),
                                QueryParam("members", "boolean", "false: array members left out"),
                                QueryParam("after", "integer",
                                           "only jobs with a larger id (newer): the limit oldest of them, "
                                           "shown newest first")}))},
        {"post", WithBody(Answers(201, Op("Submit a job: {name, command, shell?, env?, workdir?, framework?, "
                                          "groups: [{role, replicas, gpus_per_task, cpus_per_task?, memory?, "
                                          "node_labels?, nodes?, gpu_model?, command?}], restart?: {policy, max_restarts?, "
                                          "backoff?, max_backoff?}, time_limit?, process_per_node?, queue?, "
                                          "priority?, preemptible?, spread?, stop_after_disconnect?, array?}; with array "
                                          "(JobArrayRequest) an array job: 201 {array: JobArray}, its members "
                                          "ordinary jobs with {index} substituted in argv and ROTA_ARRAY_INDEX, "
                                          "ROTA_ARRAY_ID in their env; 400 "
                                          "names the field (or the largest node, or the queue's bounds); 403 "
                                          "when the queue does not admit the caller. A pending job's reason "
                                          "says why it waits, with its position and estimated start",
                                          Json{{"oneOf", Json::array({job, Closed({{"array", Ref("JobArray")}})})}},
                                          {400, 401, 403})),
                          Ref("JobSpec"))}}},
      {"/api/v1/jobs/{id}", {{"get", Op("A job with its tasks and state changes", job, {400, 401, 404}, id)}}},
      {"/api/v1/jobs/preview",
       {{"post", WithBody(Op("The processes a job spec would start, with their argv and environment "
                             "(framework variables included), on an example placement; no job is made",
                             Ref("JobPreview"), {400, 401, 403}),
                          Ref("JobSpec"))}}},
      {"/api/v1/jobs/{id}/cancel",
       {{"post", Op("Cancel (owner or admin): SIGTERM, SIGKILL after a grace period; 409 once ended",
                    job, {400, 401, 403, 404, 409}, id)}}},
      {"/api/v1/arrays",
       {{"get", Op("Job arrays, newest first, with their members' counts per state",
                   Closed({{"arrays", Arr(Ref("JobArray"))}}), {400, 401},
                   Json::array({QueryParam("mine", "boolean", "only the caller's"),
                                QueryParam("limit", "integer", "1..1000 (default 100)"),
                                QueryParam("before", "integer", "only arrays with a smaller id")}))}}},
      {"/api/v1/arrays/{id}",
       {{"get", Op("An array with its members (Job without spec), lowest index first; truncated: more follow",
                   Ref("JobArrayMembers"), {400, 401, 404},
                   Json::array({PathParam("id", "integer", "array id"),
                                QueryParam("limit", "integer", "1..1000 (default 100)"),
                                QueryParam("offset", "integer", "skip this many members"),
                                QueryParam("state", "string", "only members in this state")}))}}},
      {"/api/v1/arrays/{id}/cancel",
       {{"post", Op("Cancel every member not ended (owner or admin); cancelled: how many",
                    Ref("JobArrayMembers"), {400, 401, 403, 404},
                    Json::array({PathParam("id", "integer", "array id")}))}}},
      {"/api/v1/jobs/{id}/logs",
       {{"get", Op("Part of a task's log (owner or admin): `data` from `offset`; read on from `next_offset`",
                   Ref("JobLogChunk"), {400, 401, 403, 404, 429, 503}, logs_params)}}},
      {"/api/v1/jobs/{id}/metrics",
       {{"get", Op("The metrics the job's tasks reported (`rota-metric NAME=VALUE [step=N]` lines on stdout or "
                   "in $ROTA_METRICS_FILE), oldest first; truncated: more exist",
                   Ref("JobMetrics"), {400, 401, 404},
                   Json::array({PathParam("id", "integer", "job id"),
                                QueryParam("limit", "integer", "1..10000 (default 10000)")}))}}},
  };
}

Json QueuePaths(Json& schemas) {
  schemas["Queue"] = Closed(
      {{"name", T("string")}, {"description", T("string")}, {"priority", T("integer")},
       {"min_priority", T("integer")}, {"max_priority", T("integer")}, {"users", Arr(T("string"))},
       {"groups", Arr(T("string"))}, {"max_gpus", T("integer")}, {"default_time_limit", T("string")},
       {"max_time_limit", T("string")}, {"preemptible", T("boolean")}, {"built_in", T("boolean")},
       {"pending", T("integer")}, {"unfinished", T("integer")}},
      {"default_time_limit", "max_time_limit"});
  const Json queue_fields = {{"name", T("string")}, {"description", T("string")}, {"priority", T("integer")},
                             {"min_priority", T("integer")}, {"max_priority", T("integer")},
                             {"users", Arr(T("string"))}, {"groups", Arr(T("string"))},
                             {"max_gpus", T("integer")}, {"default_time_limit", T("string")},
                             {"max_time_limit", T("string")}, {"preemptible", T("boolean")}};
  schemas["QueuePage"] = Closed({{"jobs", Arr(Ref("QueuedJob"))}, {"total", T("integer")}});
  const Json queue = Ref("Queue");
  Json name = Json::array({PathParam("name", "string", "queue name")});
  return Json{
      {"/api/v1/queues",
       {{"get", Op("Queues, default first, with their pending and unfinished jobs",
                   Closed({{"queues", Arr(queue)}}), {400, 401})},
        {"post", WithBody(Answers(201, Op("Create a queue (admin): {name, description?, priority?, min_priority?, "
                                          "max_priority?, users?, groups?, max_gpus?, default_time_limit?, "
                                          "max_time_limit?, preemptible?}",
                                          queue, {400, 401, 403, 409})),
                          Body(queue_fields, {"name"}))}}},
      {"/api/v1/queues/{name}",
       {{"get", Op("A queue", queue, {400, 401, 404}, name)},
        {"put", WithBody(Op("Replace a queue (admin); the path names it", queue, {400, 401, 403, 404}, name),
                         Body(queue_fields))},
        {"delete", Answers(204, Op("Delete a queue with no unfinished job (admin); never the default",
                                   T("object"), {401, 403, 404, 409}, name))}}},
      {"/api/v1/queue",
       {{"get", Op("Pending jobs in the scheduler's order (without spec and tasks), each with why it waits, "
                   "its position and estimated start",
                   Ref("QueuePage"), {400, 401, 404},
                   Json::array({QueryParam("queue", "string", "only this queue"),
                                QueryParam("offset", "integer", "skip this many (default 0)"),
                                QueryParam("limit", "integer",
                                           "at most this many (default all); `total` says how many wait")}))}}},
  };
}

Json QuotaPaths(Json& schemas) {
  const Json kind = Enum({"user", "group"});
  schemas["Quota"] = Closed({{"kind", kind}, {"name", T("string")}, {"max_gpus", T("integer")},
                             {"max_gpu_hours", T("number")}, {"share", T("number")}, {"updated", Time()}},
                            {"updated"});
  schemas["QuotaUsage"] = Closed({{"kind", kind}, {"name", T("string")}, {"fairshare_gpu_hours", T("number")},
                                  {"period_gpu_hours", T("number")}});
  schemas["QuotaList"] = Closed({{"quotas", Arr(Ref("Quota"))}, {"period", T("string")},
                                 {"usage", Arr(Ref("QuotaUsage"))}});
  Json params = Json::array({PathParam("kind", "string", "user or group"),
                             PathParam("name", "string", "user or group name")});
  return Json{
      {"/api/v1/quotas",
       {{"get", Op("Quotas (users, then groups), the quota period of max_gpu_hours, and each user's "
                   "and group's usage in GPU-hours",
                   Ref("QuotaList"), {400, 401})}}},
      {"/api/v1/quotas/{kind}/{name}",
       {{"get", Op("A user's or group's quota; 400 for a kind other than user or group", Ref("Quota"),
                   {400, 401, 404}, params)},
        {"put", WithBody(Op("Set a quota (admin): {max_gpus?, max_gpu_hours?, share?}; 0 means no limit; "
                            "404 for an unknown user or group",
                            Ref("Quota"), {400, 401, 403, 404}, params),
                         Body({{"kind", kind}, {"name", T("string")}, {"max_gpus", T("integer")},
                               {"max_gpu_hours", T("number")}, {"share", T("number")},
                               {"updated", T("string")}}))},
        {"delete", Answers(204, Op("Delete a quota (admin)", T("object"), {400, 401, 403, 404}, params))}}},
  };
}

}  // namespace rota::server::openapi

// The API's own description: GET /api/v1/openapi.json (OpenAPI 3.0) and a
// readable page at GET /api/v1/docs that renders it without external assets.

#include <cctype>

#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"

namespace rota::server {
namespace {

using api::Json;

Json Ref(const std::string& name) { return Json{{"$ref", "#/components/schemas/" + name}}; }

Json JsonContent(const Json& schema) {
  return Json{{"application/json", {{"schema", schema}}}};
}

Json ErrorResponses(std::initializer_list<int> codes) {
  Json out = Json::object();
  for (int c : codes) {
    const char* what = c == 400 ? "Bad request" : c == 404 ? "Not found" : c == 401 ? "Unauthenticated"
                                                                        : c == 503 ? "Not ready" : "Error";
    out[std::to_string(c)] = {{"description", what}, {"content", JsonContent(Ref("Error"))}};
  }
  return out;
}

Json Op(const std::string& summary, const Json& ok_schema, std::initializer_list<int> errors,
        Json params = Json::array(), const char* ok_type = "application/json") {
  Json responses = ErrorResponses(errors);
  responses["200"] = {{"description", "OK"}, {"content", {{ok_type, {{"schema", ok_schema}}}}}};
  Json op{{"summary", summary}, {"responses", responses}};
  if (!params.empty()) op["parameters"] = params;
  return op;
}

Json PathParam(const char* name, const char* type, const char* desc) {
  return Json{{"name", name}, {"in", "path"}, {"required", true}, {"description", desc},
              {"schema", {{"type", type}}}};
}

Json QueryParam(const char* name, const char* type, const char* desc) {
  return Json{{"name", name}, {"in", "query"}, {"required", false}, {"description", desc},
              {"schema", {{"type", type}}}};
}

Json Obj(Json props) { return Json{{"type", "object"}, {"properties", std::move(props)}}; }
Json T(const char* type) { return Json{{"type", type}}; }
Json Arr(Json items) { return Json{{"type", "array"}, {"items", std::move(items)}}; }

// Accounts: login, users, groups, tokens (accounts_api.cc).
Json AccountPaths() {
  Json user = Obj({{"id", T("integer")}, {"username", T("string")}, {"display_name", T("string")},
                   {"email", T("string")}, {"unix_user", T("string")}, {"unix_users", T("object")},
                   {"role", {{"type", "string"}, {"enum", {"user", "admin"}}}},
                   {"groups", Arr(T("string"))}, {"disabled", T("boolean")},
                   {"has_password", T("boolean")}, {"created_at", T("string")},
                   {"updated_at", T("string")}});
  Json token = Obj({{"id", T("string")}, {"kind", T("string")}, {"name", T("string")},
                    {"created_at", T("string")}, {"expires_at", T("string")},
                    {"last_used_at", T("string")}, {"token", T("string")}});
  Json name = Json::array({PathParam("name", "string", "username or group name")});
  return Json{
      {"/api/v1/auth/login",
       {{"post", Op("Sign in with username and password; returns a session token", 
                    Obj({{"token", T("string")}, {"token_id", T("string")}, {"expires_at", T("string")},
                         {"user", user}}),
                    {400, 401})}}},
      {"/api/v1/auth/logout", {{"post", Op("End the calling session", T("object"), {401})}}},
      {"/api/v1/auth/whoami", {{"get", Op("The signed-in user", user, {401})}}},
      {"/api/v1/users",
       {{"get", Op("List users (admin)", Obj({{"users", Arr(user)}}), {401, 403})},
        {"post", Op("Create a user (admin)", user, {400, 401, 403, 409})}}},
      {"/api/v1/users/{name}",
       {{"get", Op("A user (itself or admin)", user, {401, 403, 404}, name)},
        {"patch", Op("Change a user: itself (display_name, email, password) or admin (all)", user,
                     {400, 401, 403, 404, 409}, name)},
        {"delete", Op("Delete a user without reservations (admin)", T("object"), {401, 403, 404, 409},
                      name)}}},
      {"/api/v1/groups",
       {{"get", Op("List groups", Obj({{"groups", Arr(T("object"))}}), {401})},
        {"post", Op("Create a group (admin)", T("object"), {400, 401, 403, 409})}}},
      {"/api/v1/groups/{name}",
       {{"delete", Op("Delete a group (admin)", T("object"), {401, 403, 404}, name)}}},
      {"/api/v1/tokens",
       {{"get", Op("The caller's tokens", Obj({{"tokens", Arr(token)}}), {401})},
        {"post", Op("Create an API token {name, ttl}; the secret is in the answer only", token,
                    {400, 401})}}},
      {"/api/v1/tokens/{id}",
       {{"delete", Op("Revoke a token (own; admins: any)", T("object"), {401, 404},
                      Json::array({PathParam("id", "string", "token id")}))}}},
  };
}

// The enforcement audit log (violations_api.cc).
Json ViolationPaths() {
  Json pids = Arr(Obj({{"pid", T("integer")}, {"start_time_ms", T("integer")},
                       {"outcome", T("string")}, {"detail", T("string")}}));
  Json event = Obj({{"id", T("integer")}, {"time", T("string")}, {"t_ms", T("integer")},
                    {"action", T("string")}, {"outcome", T("string")}, {"detail", T("string")},
                    {"pids", pids}});
  Json violation = Obj(
      {{"id", T("integer")}, {"node", T("string")}, {"gpu", T("integer")}, {"gpu_uuid", T("string")},
       {"uid", T("integer")}, {"unix_user", T("string")}, {"user", T("string")},
       {"reservation_id", T("integer")}, {"reservation_owner", T("string")},
       {"mode", {{"type", "string"}, {"enum", {"reserved", "strict"}}}}, {"dry_run", T("boolean")},
       {"state", {{"type", "string"}, {"enum", {"open", "resolved"}}}}, {"opened", T("string")},
       {"opened_ms", T("integer")}, {"closed", T("string")}, {"closed_ms", T("integer")},
       {"processes", Arr(Obj({{"pid", T("integer")}, {"start_time_ms", T("integer")},
                              {"command", T("string")}}))},
       {"resolution", T("string")}, {"last_action", T("string")}, {"events", Arr(event)}});
  Json list_params = Json::array(
      {QueryParam("node", "string", "only this node"),
       QueryParam("user", "string", "offender's Unix user or rota username"),
       QueryParam("state", "string", "open or resolved"),
       QueryParam("from", "string", "RFC 3339: violations open at or after"),
       QueryParam("to", "string", "RFC 3339: violations opened before"),
       QueryParam("limit", "integer", "1..1000 (default 100)"),
       QueryParam("offset", "integer", "rows to skip (default 0)")});
  return Json{
      {"/api/v1/violations",
       {{"get", Op("GPU-usage violations, newest first (audit log)",
                   Obj({{"violations", Arr(violation)}, {"limit", T("integer")},
                        {"offset", T("integer")}, {"next_offset", T("integer")}}),
                   {400, 401}, list_params)}}},
      {"/api/v1/violations/{id}",
       {{"get", Op("A violation with every enforcement step (open, warn, email, term, kill, "
                   "resolve and the agent's outcomes)",
                   violation, {400, 401, 404},
                   Json::array({PathParam("id", "integer", "violation id")}))}}},
  };
}

// Reservations and policies (reservations_api.cc, policies_api.cc).
Json ReservationPaths() {
  Json reservation = Obj(
      {{"id", T("integer")}, {"owner", T("string")}, {"owner_id", T("integer")},
       {"node", T("string")}, {"gpus", Arr(T("integer"))}, {"gpu_uuids", Arr(T("string"))},
       {"title", T("string")}, {"description", T("string")}, {"start", T("string")},
       {"end", T("string")}, {"start_ms", T("integer")}, {"end_ms", T("integer")},
       {"state", {{"type", "string"}, {"enum", {"upcoming", "running", "ended", "cancelled"}}}},
       {"created", T("string")}, {"updated", T("string")}, {"cancelled", T("string")},
       {"enforcement", T("object")}, {"avg_util_gpu", T("number")}, {"avg_util_mem", T("number")},
       {"idle_notified", T("string")},
       {"live", Obj({{"avg_util_gpu", T("number")}, {"avg_util_mem", T("number")},
                     {"samples", T("integer")}, {"idle_since", T("string")}})}});
  Json policy = Obj(
      {{"id", T("integer")}, {"name", T("string")}, {"description", T("string")},
       {"subjects", Obj({{"users", Arr(T("string"))}, {"groups", Arr(T("string"))}})},
       {"targets", Obj({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}})},
       {"windows", Obj({{"zone", T("string")},
                        {"allow", Arr(Obj({{"days", Arr(T("string"))}, {"from", T("string")},
                                           {"to", T("string")}}))}})},
       {"max_duration", T("string")}, {"max_ahead", T("string")}, {"max_gpus", T("integer")},
       {"weekly_gpu_hours", T("number")}, {"enforcement", T("object")},
       {"idle", Obj({{"threshold_pct", T("number")}, {"after", T("string")}, {"release", T("boolean")}})},
       {"created", T("string")}, {"updated", T("string")}});
  Json id = Json::array({PathParam("id", "integer", "reservation id")});
  Json pid = Json::array({PathParam("id", "integer", "policy id")});
  Json list_params = Json::array(
      {QueryParam("mine", "boolean", "only the caller's"), QueryParam("user", "string", "only this user's"),
       QueryParam("node", "string", "only on this node"),
       QueryParam("from", "string", "RFC 3339: overlapping [from, to)"),
       QueryParam("to", "string", "RFC 3339"),
       QueryParam("state", "string", "upcoming, running, ended or cancelled"),
       QueryParam("limit", "integer", "1..1000 (default 100): the latest-starting, in start order")});
  return Json{
      {"/api/v1/reservations",
       {{"get", Op("Reservations: the `limit` latest-starting that match, in start order; "
                   "truncated when more matched",
                   Obj({{"reservations", Arr(reservation)}, {"truncated", T("boolean")}}),
                   {400, 401}, list_params)},
        {"post", Op("Reserve GPUs of one node: {node, gpus | gpu_uuids | count | whole_node: true, "
                    "start, end (RFC 3339), title, description?, enforcement?}; 409 names the "
                    "conflicting reservations, 403 the refusing policy and rule",
                    reservation, {400, 401, 403, 404, 409})}}},
      {"/api/v1/reservations/held",
       {{"get", Op("The caller's GPUs on a node now (rota exec)",
                   Obj({{"node", T("string")}, {"user", T("string")}, {"gpus", Arr(T("integer"))},
                        {"gpu_uuids", Arr(T("string"))}, {"reservations", Arr(reservation)}}),
                   {400, 401, 404}, Json::array({QueryParam("node", "string", "node name (required)")}))}}},
      {"/api/v1/reservations/{id}",
       {{"get", Op("A reservation (live utilisation while running)", reservation, {400, 401, 404}, id)},
        {"patch", Op("Edit {start?, end?, title?, description?, enforcement?} (owner or admin)",
                     reservation, {400, 401, 403, 404, 409}, id)},
        {"delete", Op("Cancel (upcoming) or end now (running) (owner or admin)", reservation,
                      {400, 401, 403, 404, 409}, id)}}},
      {"/api/v1/policies",
       {{"get", Op("Reservation policies", Obj({{"policies", Arr(policy)}}), {401})},
        {"post", Op("Create a policy (admin)", policy, {400, 401, 403, 409})}}},
      {"/api/v1/policies/{id}",
       {{"get", Op("A policy", policy, {400, 401, 404}, pid)},
        {"put", Op("Replace a policy (admin)", policy, {400, 401, 403, 404, 409}, pid)},
        {"delete", Op("Delete a policy (admin)", T("object"), {401, 403, 404}, pid)}}},
  };
}

Json JobSchema() {
  Json task = Obj({{"id", T("string")}, {"name", T("string")}, {"role", T("string")},
                   {"index", T("integer")}, {"node", T("string")}, {"address", T("string")},
                   {"gpus", Arr(T("integer"))}, {"port", T("integer")}, {"runs", T("boolean")},
                   {"unix_user", T("string")},
                   {"state", T("string")}, {"pid", T("integer")}, {"exit_code", T("integer")},
                   {"signal", T("integer")}, {"error", T("string")}});
  Json job = Obj({{"id", T("integer")}, {"name", T("string")}, {"owner", T("string")},
                  {"state", T("string")}, {"reason", T("string")}, {"restart_count", T("integer")},
                  {"framework", T("string")}, {"spec", T("object")}, {"tasks", Arr(task)},
                  {"created", T("string")}, {"updated", T("string")}, {"ended", T("string")},
                  {"queue", T("string")}, {"priority", T("integer")}, {"preemptible", T("boolean")},
                  {"preemptions", T("integer")}, {"lost_gpu_seconds", T("integer")},
                  {"gpu_seconds", T("integer")}, {"position", T("integer")},
                  {"estimated_start", T("string")}, {"stopping", T("boolean")},
                  {"events", Arr(Obj({{"time", T("string")}, {"state", T("string")},
                                      {"reason", T("string")}}))}});
  return job;
}

Json JobPaths() {
  const Json job = JobSchema();
  Json id = Json::array({PathParam("id", "integer", "job id")});
  Json logs_params = id;
  logs_params.push_back(QueryParam("task", "string", "process name, e.g. worker-1 (default: the first)"));
  logs_params.push_back(QueryParam("stream", "string", "stdout (default) or stderr"));
  logs_params.push_back(QueryParam("offset", "integer", "byte offset"));
  logs_params.push_back(QueryParam("max_bytes", "integer", "1..1048576 (default 65536)"));
  return Json{
      {"/api/v1/jobs",
       {{"get", Op("Jobs, newest first", Obj({{"jobs", Arr(job)}}), {400, 401},
                   Json::array({QueryParam("mine", "boolean", "only the caller's"),
                                QueryParam("state", "string", "pending, starting, running, succeeded, "
                                                              "failed or cancelled"),
                                QueryParam("limit", "integer", "1..1000 (default 100)")}))},
        {"post", Op("Submit a job: {name, command, shell?, env?, workdir?, framework?, groups: "
                    "[{role, replicas, gpus_per_task, cpus_per_task?, memory?, node_labels?, nodes?, "
                    "command?}], restart?: {policy, max_restarts?, backoff?, max_backoff?}, "
                    "time_limit?, process_per_node?, queue?, priority?, preemptible?, spread?, "
                    "stop_after_disconnect?}; 400 "
                    "names the field (or the largest node, or the queue's bounds); 403 when the queue "
                    "does not admit the caller. A pending job's reason says why it waits, with its "
                    "position and estimated start",
                    job, {400, 401, 403})}}},
      {"/api/v1/jobs/{id}", {{"get", Op("A job with its tasks and state changes", job, {400, 401, 404}, id)}}},
      {"/api/v1/jobs/preview",
       {{"post", Op("The processes a job spec would start, with their argv and environment "
                    "(framework variables included), on an example placement; no job is made",
                    Obj({{"processes",
                          Arr(Obj({{"task", T("string")}, {"name", T("string")},
                                   {"role", T("string")}, {"node", T("string")},
                                   {"gpus", Arr(T("integer"))}, {"runs", T("boolean")},
                                   {"argv", Arr(T("string"))}, {"env", T("object")},
                                   {"files", Arr(T("string"))}}))},
                         {"note", T("string")}}),
                    {400, 401})}}},
      {"/api/v1/jobs/{id}/cancel",
       {{"post", Op("Cancel (owner or admin): SIGTERM, SIGKILL after a grace period; 409 once ended",
                    job, {400, 401, 403, 404, 409}, id)}}},
      {"/api/v1/jobs/{id}/logs",
       {{"get", Op("Part of a task's log (owner or admin)",
                   Obj({{"task", T("string")}, {"stream", T("string")}, {"offset", T("integer")},
                        {"next_offset", T("integer")}, {"size", T("integer")},
                        {"data", T("string")}}),
                   {400, 401, 403, 404, 503}, logs_params)}}},
  };
}

Json QueuePaths() {
  const Json job = JobSchema();
  Json queue = Obj({{"name", T("string")}, {"description", T("string")}, {"priority", T("integer")},
                    {"min_priority", T("integer")}, {"max_priority", T("integer")},
                    {"users", Arr(T("string"))}, {"groups", Arr(T("string"))}, {"max_gpus", T("integer")},
                    {"default_time_limit", T("string")}, {"preemptible", T("boolean")},
                    {"built_in", T("boolean")}, {"pending", T("integer")}, {"unfinished", T("integer")}});
  Json name = Json::array({PathParam("name", "string", "queue name")});
  return Json{
      {"/api/v1/queues",
       {{"get", Op("Queues, default first, with their pending and unfinished jobs", Obj({{"queues", Arr(queue)}}),
                   {401})},
        {"post", Op("Create a queue (admin): {name, description?, priority?, min_priority?, max_priority?, "
                    "users?, groups?, max_gpus?, default_time_limit?, preemptible?}",
                    queue, {400, 401, 403, 409})}}},
      {"/api/v1/queues/{name}",
       {{"get", Op("A queue", queue, {401, 404}, name)},
        {"put", Op("Replace a queue (admin); the path names it", queue, {400, 401, 403, 404}, name)},
        {"delete", Op("Delete a queue with no unfinished job (admin); never the default", T("object"),
                      {401, 403, 404, 409}, name)}}},
      {"/api/v1/queue",
       {{"get", Op("Pending jobs in the scheduler's order, each with why it waits, its position and "
                   "estimated start",
                   Obj({{"jobs", Arr(job)}, {"total", T("integer")}}), {400, 401, 404},
                   Json::array({QueryParam("queue", "string", "only this queue"),
                                QueryParam("offset", "integer", "skip this many (default 0)"),
                                QueryParam("limit", "integer", "at most this many (default all); `total` says how many wait")}))}}},
  };
}

Json QuotaPaths() {
  Json quota = Obj({{"kind", T("string")}, {"name", T("string")}, {"max_gpus", T("integer")},
                    {"max_gpu_hours", T("number")}, {"share", T("number")}, {"updated", T("string")}});
  Json params = Json::array({PathParam("kind", "string", "user or group"),
                             PathParam("name", "string", "user or group name")});
  return Json{
      {"/api/v1/quotas",
       {{"get", Op("Quotas (users, then groups), the quota period of max_gpu_hours, and each user's "
                   "and group's usage in GPU-hours",
                   Obj({{"quotas", Arr(quota)}, {"period", T("string")},
                        {"usage", Arr(Obj({{"kind", T("string")}, {"name", T("string")},
                                           {"fairshare_gpu_hours", T("number")},
                                           {"period_gpu_hours", T("number")}}))}}),
                   {400, 401})}}},
      {"/api/v1/quotas/{kind}/{name}",
       {{"get", Op("A user's or group's quota", quota, {401, 404}, params)},
        {"put", Op("Set a quota (admin): {max_gpus?, max_gpu_hours?, share?}; 0 means no limit; "
                   "404 for an unknown user or group",
                   quota, {400, 401, 403, 404}, params)},
        {"delete", Op("Delete a quota (admin)", T("object"), {401, 403, 404}, params)}}},
  };
}

Json UsagePaths() {
  Json shares = Obj({{"counter", T("number")}, {"integrated", T("number")}, {"estimated", T("number")}});
  auto figures = [&](bool keyed) {
    Json f = Obj({{"gpu_hours", T("number")}, {"busy_gpu_hours", T("number")}, {"used_gpu_hours", T("number")},
                  {"avg_util_pct", T("number")}, {"idle_gpu_hours", T("number")},
                  {"reserved_idle_gpu_hours", T("number")}, {"energy_kwh", T("number")},
                  {"idle_energy_kwh", T("number")}, {"unmeasured_gpu_hours", T("number")},
                  {"energy_method", T("string")}, {"energy_shares", shares}, {"cost", T("number")},
                  {"currency", T("string")}, {"co2_kg", T("number")}});
    if (keyed) f["properties"]["key"] = T("string");
    return f;
  };
  return Json{
      {"/api/v1/usage",
       {{"get", Op("GPU time, utilisation and energy summed by user, group, job, reservation, node or area "
                   "(hours starting in [from, to)); energy_method says how the energy was measured "
                   "(counter, integrated, estimated, mixed, none); non-admins get only their own figures",
                   Obj({{"by", T("string")}, {"from", T("string")}, {"to", T("string")}, {"label", T("string")},
                        {"user", T("string")}, {"rows", Arr(figures(true))}, {"total", figures(false)}}),
                   {400, 401, 403},
                   {QueryParam("by", "string", "user (default), group, job, reservation, node or area"),
                    QueryParam("from", "string", "RFC 3339 (default: 30 days before to)"),
                    QueryParam("to", "string", "RFC 3339 (default: now)"),
                    QueryParam("node", "string", "only this node"),
                    QueryParam("label", "string", "by=area: the node label naming areas (default: the first "
                                                  "of the server's area_labels)"),
                    QueryParam("user", "string", "only this user (admins; others get only their own)")})}}},
  };
}

Json PowerPaths() {
  Json scope = Obj({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}, {"labels", T("object")}});
  Json window = Obj({{"days", Arr(T("string"))}, {"from", T("string")}, {"to", T("string")}});
  Json policy = Obj({{"id", T("integer")}, {"name", T("string")}, {"description", T("string")},
                     {"kind", {{"type", "string"}, {"enum", {"limit", "budget"}}}}, {"watts", T("number")},
                     {"limit", T("number")}, {"budget", T("number")}, {"scope", scope},
                     {"windows", Obj({{"zone", T("string")}, {"allow", Arr(window)}})},
                     {"created", T("string")}, {"updated", T("string")}});
  Json gpu = Obj({{"node", T("string")}, {"index", T("integer")}, {"uuid", T("string")}, {"model", T("string")},
                  {"min_w", T("number")}, {"max_w", T("number")}, {"default_w", T("number")},
                  {"target_w", T("number")}, {"in_force_w", T("number")}, {"power_w", T("number")},
                  {"busy", T("boolean")}, {"policies", Arr(T("string"))}, {"reason", T("string")},
                  {"outcome", T("string")}, {"detail", T("string")}, {"reported", T("string")}});
  Json budget = Obj({{"policy", T("string")}, {"budget_w", T("number")}, {"gpus", T("integer")},
                     {"busy", T("integer")}, {"left_out", T("integer")}, {"min_total_w", T("number")},
                     {"assigned_w", T("number")}, {"feasible", T("boolean")}});
  Json event = Obj({{"id", T("integer")}, {"time", T("string")}, {"action", T("string")}, {"node", T("string")},
                    {"gpu", T("integer")}, {"uuid", T("string")}, {"limit_w", T("number")},
                    {"previous_w", T("number")}, {"requested_w", T("number")}, {"policy", T("string")},
                    {"actor", T("string")}, {"detail", T("string")}});
  Json id = Json::array({PathParam("id", "integer", "power policy id")});
  return Json{
      {"/api/v1/power",
       {{"get", Op("Every GPU's power range, the limit the policies give it (target_w; null: its default), "
                   "the limit in force, its draw and the agent's last outcome (set, restored, unchanged, "
                   "refused, error) with why; the active budgets and how they are divided",
                   Obj({{"planned", T("string")}, {"gpus", Arr(gpu)}, {"budgets", Arr(budget)}}), {401})}}},
      {"/api/v1/power/policies",
       {{"get", Op("Power policies", Obj({{"policies", Arr(policy)}}), {401})},
        {"post", Op("Create a power policy (admin): {name, description?, scope?: {nodes?, gpu_models?, labels?}, "
                    "limit (W per GPU) | budget (W for all GPUs in scope), windows?: {zone?, allow: [{days, "
                    "from, to}]}}; 400 for limits outside a GPU's range, unknown nodes or labels, no GPU in "
                    "scope, overlapping windows; 409 for a taken name or a second budget on the same GPUs "
                    "at the same time",
                    policy, {400, 401, 403, 409})}}},
      {"/api/v1/power/policies/{id}",
       {{"get", Op("A power policy", policy, {401, 404}, id)},
        {"put", Op("Replace a power policy (admin); checked as on create", policy, {400, 401, 403, 404, 409}, id)},
        {"delete", Op("Delete a power policy (admin); its GPUs get their default back", T("object"),
                      {401, 403, 404}, id)}}},
      {"/api/v1/power/events",
       {{"get", Op("The power audit log, newest first: limits set, restored, refused or failed on each GPU, "
                   "and policy changes with the admin who made them",
                   Obj({{"events", Arr(event)}}), {400, 401},
                   {QueryParam("node", "string", "only this node"),
                    QueryParam("from", "string", "RFC 3339: events at or after"),
                    QueryParam("to", "string", "RFC 3339: events before"),
                    QueryParam("limit", "integer", "at most this many (1..1000, default 100)")})}}},
  };
}

Json SshNodePaths() {
  Json node = Obj({{"name", T("string")}, {"url", T("string")}, {"gpus", T("integer")},
                   {"gpu_model", T("string")}, {"labels", T("object")}, {"created_ms", T("integer")},
                   {"reachable", T("boolean")}, {"tasks", T("integer")}, {"error", T("string")}});
  return Json{
      {"/api/v1/ssh-nodes",
       {{"get", Op("Agentless nodes reached over SSH, reachable or why not", Obj({{"ssh_nodes", Arr(node)}}),
                   {401})},
        {"post", Op("Declare an agentless node (admin): {name, url: ssh://user@host[:port], gpus?, "
                    "gpu_model?, labels?}; a root login runs tasks as each job's owner (setpriv), "
                    "another login only that user's; 409 when the name is taken",
                    node, {400, 401, 403, 409, 503})}}},
      {"/api/v1/ssh-nodes/{name}",
       {{"delete", Op("Forget an agentless node (admin); 409 while tasks run there", T("object"),
                      {401, 403, 404, 409},
                      Json::array({PathParam("name", "string", "node name")}))}}},
      {"/api/v1/ssh-key",
       {{"get", Op("The server's SSH public key, to authorise on agentless nodes (admin)",
                   Obj({{"public_key", T("string")}}), {401, 403, 503})}}},
  };
}

// "getNodesByNameGpusByIndexMetrics" for GET /api/v1/nodes/{name}/gpus/{index}/metrics: a
// stable, unique operationId for generated clients, derived from the method and the path.
std::string OperationId(const std::string& method, const std::string& path) {
  std::string id = method;
  std::string rest = path.rfind("/api/v1/", 0) == 0 ? path.substr(8) : path.substr(1);
  bool upper = true;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '{') {
      id += "By";
      upper = true;
    } else if (c == '/' || c == '-' || c == '_' || c == '}') {
      upper = true;
    } else {
      id += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return id;
}

// Fills what every operation needs and the route tables leave implicit: an operationId, 401
// where a caller must be signed in (every route but health, sign-in and the spec itself), and
// 400 where nothing else in 4xx applies (a request line the server cannot route is refused).
void CompleteOperations(Json& paths) {
  for (auto& [path, item] : paths.items()) {
    for (auto& [method, op] : item.items()) {
      if (!op.contains("operationId")) op["operationId"] = OperationId(method, path);
      Json& responses = op["responses"];
      const bool open = path == "/api/v1/auth/login" || path == "/api/v1/openapi.json" ||
                        path == "/api/v1/docs" || path == "/healthz" || path == "/readyz";
      if (!open && !responses.contains("401")) {
        responses["401"] = {{"description", "Unauthenticated"},
                            {"content", JsonContent(Ref("Error"))}};
      }
      bool has_4xx = false;
      for (auto& [code, _] : responses.items()) has_4xx |= code.size() == 3 && code[0] == '4';
      if (!has_4xx) {
        responses["400"] = {{"description", "Malformed request"},
                            {"content", JsonContent(Ref("Error"))}};
      }
    }
  }
}

Json BuildSpec() {
  Json range = Json::array({QueryParam("from", "string", "RFC 3339 start (default: to - 1h)"),
                            QueryParam("to", "string", "RFC 3339 end (default: now)"),
                            QueryParam("step", "string", "bucket size, e.g. 10s, 1m (default: auto, <= 1000 points)")});
  Json gpu_range = range;
  gpu_range.insert(gpu_range.begin(), PathParam("index", "integer", "GPU index on the node"));
  gpu_range.insert(gpu_range.begin(), PathParam("name", "string", "node name"));
  Json node_range = range;
  node_range.insert(node_range.begin(), PathParam("name", "string", "node name"));

  Json schemas = {
      {"Error", Obj({{"error", Obj({{"code", T("string")}, {"message", T("string")}})}})},
      {"GpuProcess", Obj({{"pid", T("integer")}, {"type", T("string")}, {"gpu_memory_bytes", T("integer")},
                          {"uid", T("integer")}, {"user", T("string")}, {"command", T("string")},
                          {"start_time_ms", T("integer")}, {"cpu_percent", T("number")},
                          {"rss_bytes", T("integer")}, {"cgroup", T("string")}})},
      {"Gpu", Obj({{"node", T("string")}, {"index", T("integer")}, {"uuid", T("string")},
                   {"name", T("string")}, {"pci_bus_id", T("string")},
                   {"state", {{"type", "string"}, {"enum", {"ok", "failed", "unreachable"}}}},
                   {"util_gpu_pct", T("integer")}, {"util_memory_pct", T("integer")},
                   {"memory_used_bytes", T("integer")}, {"memory_total_bytes", T("integer")},
                   {"temperature_c", T("integer")}, {"power_mw", T("integer")},
                   {"power_limit_mw", T("integer")}, {"energy_mj", T("integer")},
                   {"sm_clock_mhz", T("integer")}, {"mem_clock_mhz", T("integer")},
                   {"fan_pct", T("integer")}, {"users", Arr(T("string"))},
                   {"processes", Arr(Ref("GpuProcess"))}, {"time", T("string")}})},
      {"Node", Obj({{"name", T("string")}, {"node_id", T("string")}, {"hostname", T("string")},
                    {"addresses", Arr(T("string"))}, {"cpus", T("integer")},
                    {"memory_bytes", T("integer")}, {"labels", T("object")},
                    {"state", {{"type", "string"}, {"enum", {"ready", "unreachable"}}}},
                    {"connected", T("boolean")}, {"last_seen", T("string")},
                    {"unreachable_reason", T("string")}, {"gpu_status", T("string")},
                    {"gpu_count", T("integer")}, {"failed_gpu_count", T("integer")},
                    {"gpus", Arr(T("object"))}, {"latest", T("object")}})},
      {"Series", Obj({{"node", T("string")}, {"gpu", T("integer")}, {"from", T("string")},
                      {"to", T("string")}, {"step_ms", T("integer")}, {"source", T("string")},
                      {"points", Arr(Obj({{"time", T("string")}, {"avg", T("object")}, {"max", T("object")}}))}})},
  };

  Json paths = {
      {"/healthz", {{"get", Op("Liveness", Obj({{"status", T("string")}}), {})}}},
      {"/readyz", {{"get", Op("Readiness", Obj({{"status", T("string")}}), {503})}}},
      {"/metrics", {{"get", Op("Prometheus metrics", T("string"), {}, Json::array(), "text/plain")}}},
      {"/api/v1/nodes",
       {{"get", Op("List nodes", Obj({{"nodes", Arr(Ref("Node"))}}), {},
                   Json::array({QueryParam("state", "string", "ready or unreachable")}))}}},
      {"/api/v1/nodes/{name}",
       {{"get", Op("A node with its latest sample", Ref("Node"), {404},
                   Json::array({PathParam("name", "string", "node name")}))}}},
      {"/api/v1/gpus",
       {{"get", Op("List GPUs with current processes and users", Obj({{"gpus", Arr(Ref("Gpu"))}}), {404},
                   Json::array({QueryParam("node", "string", "only this node")}))}}},
      {"/api/v1/nodes/{name}/metrics",
       {{"get", Op("Node CPU/memory/load history, downsampled", Ref("Series"), {400, 404}, node_range)}}},
      {"/api/v1/nodes/{name}/gpus/{index}/metrics",
       {{"get", Op("GPU history, downsampled (avg and max per bucket)", Ref("Series"), {400, 404}, gpu_range)}}},
      {"/api/v1/stream",
       {{"get", Op("Live node and GPU updates (server-sent events: node, sample)", T("string"), {},
                   Json::array({QueryParam("node", "string", "only this node")}), "text/event-stream")}}},
      {"/api/v1/agent/connect",
       {{"get", Op("Agent WebSocket (protocol v1); Authorization: Bearer <join token>", T("string"),
                   {401})}}},
  };
  paths.update(AccountPaths());
  paths.update(ViolationPaths());
  paths.update(ReservationPaths());
  paths.update(JobPaths());
  paths.update(QueuePaths());
  paths.update(QuotaPaths());
  paths.update(SshNodePaths());
  paths.update(UsagePaths());
  paths.update(PowerPaths());
  CompleteOperations(paths);
  return Json{{"openapi", "3.0.3"},
              {"servers", Json::array({{{"url", "/"}, {"description", "this server"}}})},
              {"info", {{"title", "rota API"}, {"version", "1"},
                        {"description", "GPU cluster manager: nodes, GPUs, metrics history, live updates."}}},
              {"paths", paths},
              {"security", Json::array({{{"bearer", Json::array()}}})},
              {"components",
               {{"schemas", schemas},
                {"securitySchemes",
                 {{"bearer", {{"type", "http"}, {"scheme", "bearer"},
                              {"description", "Session token (POST /api/v1/auth/login) or API "
                                              "token (POST /api/v1/tokens)"}}}}}}}};
}

const char kDocsPage[] = R"HTML(<!doctype html>
<html><head><meta charset="utf-8"><title>rota API</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;color:#222}
.op{border:1px solid #ddd;border-radius:6px;margin:.6rem 0;padding:.5rem .8rem}
.m{display:inline-block;min-width:3.5rem;font-weight:bold;color:#0a6}
code{background:#f4f4f4;padding:0 .3rem}td{padding:0 .6rem 0 0;vertical-align:top}</style></head>
<body><h1>rota API</h1><p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a></p>
<div id="ops">loading…</div>
<script>
fetch('/api/v1/openapi.json').then(r=>r.json()).then(spec=>{
  const el=document.getElementById('ops'); el.textContent='';
  for (const [path,item] of Object.entries(spec.paths)) for (const [m,op] of Object.entries(item)) {
    const d=document.createElement('div'); d.className='op';
    const h=document.createElement('div');
    const ms=document.createElement('span'); ms.className='m'; ms.textContent=m.toUpperCase();
    const c=document.createElement('code'); c.textContent=path;
    h.append(ms,c,document.createTextNode(' — '+(op.summary||''))); d.append(h);
    if (op.parameters) { const t=document.createElement('table');
      for (const p of op.parameters) { const r=t.insertRow();
        r.insertCell().textContent=p.name+' ('+p.in+')'; r.insertCell().textContent=p.description||''; }
      d.append(t); }
    const codes=document.createElement('div'); codes.textContent='responses: '+Object.keys(op.responses).join(', ');
    d.append(codes); el.append(d);
  }
});
</script></body></html>
)HTML";

}  // namespace

Status RegisterOpenApiRoutes(net::HttpServer& http, ApiContext&) {
  static const std::string spec = BuildSpec().dump(2);
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/openapi.json", [](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, spec);
  }));
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/docs", [](const net::HttpRequest&) {
    net::HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = kDocsPage;
    return r;
  }));
  return Status::Ok();
}

}  // namespace rota::server

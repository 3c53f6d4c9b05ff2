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
    const char* what = c == 400   ? "Bad request"
                       : c == 401 ? "Unauthenticated"
                       : c == 403 ? "Forbidden"
                       : c == 404 ? "Not found"
                       : c == 409 ? "Conflict"
                       : c == 426 ? "Upgrade required"
                       : c == 503 ? "Not ready"
                                  : "Error";
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
Json Time() { return Json{{"type", "string"}, {"format", "date-time"}}; }
Json Nullable(Json schema) {
  schema["nullable"] = true;
  return schema;
}
// {name: value} with any names (labels, environment, metrics by name).
Json Map(Json values) { return Json{{"type", "object"}, {"additionalProperties", std::move(values)}}; }
// Any JSON object (kept as given, e.g. a reservation's enforcement settings).
Json AnyObject() { return Json{{"type", "object"}, {"additionalProperties", true}}; }
Json Enum(std::initializer_list<const char*> values) {
  Json e = Json::array();
  for (const char* v : values) e.push_back(v);
  return Json{{"type", "string"}, {"enum", std::move(e)}};
}
// Watts as a number (250) or text ("250W", "2.4 kW").
Json Watts() { return Json{{"oneOf", Json::array({T("number"), T("string")})}}; }

// An object as the server writes it: every property required but `optional` (written only when
// set); others may appear. Closed forbids them.
Json Open(Json props, std::initializer_list<const char*> optional = {}) {
  Json required = Json::array();
  for (const auto& [key, _] : props.items()) {
    bool opt = false;
    for (const char* o : optional) opt = opt || key == o;
    if (!opt) required.push_back(key);
  }
  Json o = Obj(std::move(props));
  if (!required.empty()) o["required"] = std::move(required);
  return o;
}
// An object the server always writes with exactly these properties.
Json Closed(Json props, std::initializer_list<const char*> optional = {}) {
  Json o = Open(std::move(props), optional);
  o["additionalProperties"] = false;
  return o;
}
// A request body: these properties, `required` among them, nothing else (the server refuses
// unknown fields).
Json Body(Json props, std::initializer_list<const char*> required = {}) {
  Json o = Obj(std::move(props));
  if (required.size() > 0) {
    o["required"] = Json::array();
    for (const char* r : required) o["required"].push_back(r);
  }
  o["additionalProperties"] = false;
  return o;
}

Json WithBody(Json op, const Json& schema) {
  op["requestBody"] = {{"required", true}, {"content", JsonContent(schema)}};
  return op;
}
// The operation answers 201 (same body as the 200 it replaces), 204 (no body) or 101 (a
// WebSocket).
Json Answers(int code, Json op) {
  Json ok = op["responses"]["200"];
  op["responses"].erase("200");
  if (code == 204) ok = {{"description", "No content"}};
  else if (code == 101) ok = {{"description", "Switching protocols: the WebSocket"}};
  else ok["description"] = "Created";
  op["responses"][std::to_string(code)] = std::move(ok);
  return op;
}

// The agents' WebSocket answers 101 (OpenAPI 3.0 cannot describe what follows); any failure is
// an Error ("default" stands in for the 2xx an operation must have).
Json AgentSocket(Json op) {
  op = Answers(101, std::move(op));
  op["responses"]["default"] = {{"description", "Any other failure"}, {"content", JsonContent(Ref("Error"))}};
  return op;
}

// Weekly windows as a request gives them (policies and power policies).
Json WindowsBody() {
  return Body({{"zone", T("string")},
               {"allow", Arr(Body({{"days", Arr(T("string"))}, {"from", T("string")}, {"to", T("string")}},
                                  {"days"}))}},
              {"allow"});
}

// Accounts: login, users, groups, tokens (accounts_api.cc).
Json AccountPaths(Json& schemas) {
  schemas["User"] = Closed({{"id", T("integer")}, {"username", T("string")}, {"display_name", T("string")},
                            {"email", T("string")}, {"unix_user", T("string")}, {"unix_users", Map(T("string"))},
                            {"role", Enum({"user", "admin"})}, {"groups", Arr(T("string"))},
                            {"disabled", T("boolean")}, {"has_password", T("boolean")},
                            {"created_at", Time()}, {"updated_at", Time()}});
  schemas["Group"] = Closed({{"name", T("string")}, {"description", T("string")}, {"members", Arr(T("string"))},
                             {"created_at", Time()}},
                            {"created_at"});
  schemas["ApiToken"] = Closed({{"id", T("string")}, {"kind", Enum({"session", "api"})}, {"name", T("string")},
                                {"created_at", Time()}, {"expires_at", Nullable(Time())},
                                {"last_used_at", Nullable(Time())}, {"token", T("string")}},
                               {"token"});
  schemas["LoginRequest"] =
      Body({{"username", T("string")}, {"password", T("string")}}, {"username", "password"});
  schemas["Session"] = Closed({{"token", T("string")}, {"token_id", T("string")}, {"expires_at", Time()},
                               {"user", Ref("User")}});
  const Json user = Ref("User");
  const Json user_fields = {{"username", T("string")}, {"password", T("string")}, {"display_name", T("string")},
                            {"email", T("string")}, {"unix_user", T("string")}, {"unix_users", Map(T("string"))},
                            {"role", Enum({"user", "admin"})}, {"groups", Arr(T("string"))},
                            {"disabled", T("boolean")}};
  Json name = Json::array({PathParam("name", "string", "username or group name")});
  return Json{
      {"/api/v1/auth/login",
       {{"post", WithBody(Op("Sign in with username and password; returns a session token", Ref("Session"),
                             {400, 401}),
                          Ref("LoginRequest"))}}},
      {"/api/v1/auth/logout",
       {{"post", Op("End the calling session", Closed({{"status", T("string")}}), {401})}}},
      {"/api/v1/auth/whoami", {{"get", Op("The signed-in user", user, {401})}}},
      {"/api/v1/users",
       {{"get", Op("List users (admin)", Closed({{"users", Arr(user)}}), {401, 403})},
        {"post", WithBody(Answers(201, Op("Create a user (admin)", user, {400, 401, 403, 409})),
                          Body(user_fields, {"username"}))}}},
      {"/api/v1/users/{name}",
       {{"get", Op("A user (itself or admin)", user, {401, 403, 404}, name)},
        {"patch", WithBody(Op("Change a user: itself (display_name, email, password) or admin (all)", user,
                              {400, 401, 403, 404, 409}, name),
                           Body(user_fields))},
        {"delete", Answers(204, Op("Delete a user without reservations (admin)", T("object"),
                                   {401, 403, 404, 409}, name))}}},
      {"/api/v1/groups",
       {{"get", Op("List groups", Closed({{"groups", Arr(Ref("Group"))}}), {401})},
        {"post", WithBody(Answers(201, Op("Create a group (admin); members are set on the users", Ref("Group"),
                                          {400, 401, 403, 409})),
                          Body({{"name", T("string")}, {"description", T("string")}}, {"name"}))}}},
      {"/api/v1/groups/{name}",
       {{"delete", Answers(204, Op("Delete a group (admin)", T("object"), {401, 403, 404}, name))}}},
      {"/api/v1/tokens",
       {{"get", Op("The caller's tokens", Closed({{"tokens", Arr(Ref("ApiToken"))}}), {401})},
        {"post", WithBody(Answers(201, Op("Create an API token {name, ttl}; the secret is in the answer only",
                                          Ref("ApiToken"), {400, 401})),
                          Body({{"name", T("string")}, {"ttl", T("string")}}))}}},
      {"/api/v1/tokens/{id}",
       {{"delete", Answers(204, Op("Revoke a token (own; admins: any)", T("object"), {401, 404},
                                   Json::array({PathParam("id", "string", "token id")})))}}},
  };
}

// The enforcement audit log (violations_api.cc).
Json ViolationPaths(Json& schemas) {
  Json pid = Closed({{"pid", T("integer")}, {"start_time_ms", T("integer")}, {"outcome", T("string")},
                     {"detail", T("string")}},
                    {"outcome", "detail"});
  schemas["ViolationEvent"] = Closed({{"id", T("integer")}, {"time", Time()}, {"t_ms", T("integer")},
                                      {"action", T("string")}, {"outcome", T("string")}, {"detail", T("string")},
                                      {"pids", Arr(pid)}});
  schemas["ViolationProcess"] =
      Closed({{"pid", T("integer")}, {"start_time_ms", T("integer")}, {"command", T("string")}});
  schemas["Violation"] = Closed(
      {{"id", T("integer")}, {"node", T("string")}, {"gpu", T("integer")}, {"gpu_uuid", T("string")},
       {"uid", Nullable(T("integer"))}, {"unix_user", T("string")}, {"user", Nullable(T("string"))},
       {"reservation_id", Nullable(T("integer"))}, {"reservation_owner", Nullable(T("string"))},
       {"mode", Enum({"reserved", "strict"})}, {"dry_run", T("boolean")},
       {"state", Enum({"open", "resolved"})}, {"opened", Time()}, {"opened_ms", T("integer")},
       {"closed", Nullable(Time())}, {"closed_ms", Nullable(T("integer"))},
       {"processes", Arr(Ref("ViolationProcess"))}, {"resolution", T("string")}, {"last_action", T("string")},
       {"events", Arr(Ref("ViolationEvent"))}},
      {"events"});
  schemas["ViolationList"] = Closed({{"violations", Arr(Ref("Violation"))}, {"limit", T("integer")},
                                     {"offset", T("integer")}, {"next_offset", T("integer")}},
                                    {"next_offset"});
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
       {{"get", Op("GPU-usage violations, newest first (audit log); next_offset while more may follow",
                   Ref("ViolationList"), {400, 401, 503}, list_params)}}},
      {"/api/v1/violations/{id}",
       {{"get", Op("A violation with every enforcement step (open, warn, email, term, kill, "
                   "resolve and the agent's outcomes)",
                   Ref("Violation"), {400, 401, 404, 503},
                   Json::array({PathParam("id", "integer", "violation id")}))}}},
  };
}

// Reservations and policies (reservations_api.cc, policies_api.cc).
Json ReservationPaths(Json& schemas) {
  schemas["ReservationLive"] = Closed({{"avg_util_gpu", T("number")}, {"avg_util_mem", T("number")},
                                       {"samples", T("integer")}, {"idle_since", Time()}},
                                      {"idle_since"});
  schemas["Reservation"] = Closed(
      {{"id", T("integer")}, {"owner", T("string")}, {"owner_id", T("integer")},
       {"node", T("string")}, {"gpus", Arr(T("integer"))}, {"gpu_uuids", Arr(T("string"))},
       {"title", T("string")}, {"description", T("string")}, {"start", Time()},
       {"end", Time()}, {"start_ms", T("integer")}, {"end_ms", T("integer")},
       {"state", Enum({"upcoming", "running", "ended", "cancelled"})},
       {"created", Time()}, {"updated", Time()}, {"cancelled", Time()},
       {"enforcement", AnyObject()}, {"avg_util_gpu", T("number")}, {"avg_util_mem", T("number")},
       {"idle_notified", Time()}, {"live", Ref("ReservationLive")}},
      {"cancelled", "avg_util_gpu", "avg_util_mem", "idle_notified", "live"});
  schemas["ReservationRequest"] = Body(
      {{"node", T("string")}, {"gpus", Arr(T("integer"))}, {"gpu_uuids", Arr(T("string"))},
       {"count", T("integer")}, {"whole_node", T("boolean")}, {"start", Time()}, {"end", Time()},
       {"title", T("string")}, {"description", T("string")}, {"enforcement", AnyObject()}},
      {"node", "start", "end", "title"});
  schemas["PolicyWindow"] = Closed({{"days", Arr(T("string"))}, {"from", T("string")}, {"to", T("string")}});
  schemas["WeeklyWindows"] = Closed({{"zone", T("string")}, {"allow", Arr(Ref("PolicyWindow"))}});
  schemas["Policy"] = Closed(
      {{"id", T("integer")}, {"name", T("string")}, {"description", T("string")},
       {"subjects", Closed({{"users", Arr(T("string"))}, {"groups", Arr(T("string"))}})},
       {"targets", Closed({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}})},
       {"windows", Ref("WeeklyWindows")},
       {"max_duration", T("string")}, {"max_ahead", T("string")}, {"max_gpus", T("integer")},
       {"weekly_gpu_hours", T("number")}, {"enforcement", AnyObject()},
       {"idle", Closed({{"threshold_pct", T("number")}, {"after", T("string")}, {"release", T("boolean")}})},
       {"created", Time()}, {"updated", Time()}},
      {"windows", "max_duration", "max_ahead", "max_gpus", "weekly_gpu_hours", "idle"});
  schemas["PolicySpec"] = Body(
      {{"name", T("string")}, {"description", T("string")},
       {"subjects", Body({{"users", Arr(T("string"))}, {"groups", Arr(T("string"))}})},
       {"targets", Body({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}})},
       {"windows", WindowsBody()}, {"max_duration", T("string")}, {"max_ahead", T("string")},
       {"max_gpus", T("integer")}, {"weekly_gpu_hours", T("number")}, {"enforcement", AnyObject()},
       {"idle", Body({{"threshold_pct", T("number")}, {"after", T("string")}, {"release", T("boolean")}},
                     {"after"})},
       {"id", T("integer")}, {"created", T("string")}, {"updated", T("string")}},
      {"name"});
  const Json reservation = Ref("Reservation");
  const Json policy = Ref("Policy");
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
                   Closed({{"reservations", Arr(reservation)}, {"truncated", T("boolean")}}),
                   {400, 401}, list_params)},
        {"post", WithBody(Answers(201, Op("Reserve GPUs of one node: {node, gpus | gpu_uuids | count | "
                                          "whole_node: true, start, end (RFC 3339), title, description?, "
                                          "enforcement?}; 409 names the conflicting reservations, 403 the "
                                          "refusing policy and rule",
                                          reservation, {400, 401, 403, 404, 409})),
                          Ref("ReservationRequest"))}}},
      {"/api/v1/reservations/held",
       {{"get", Op("The caller's GPUs on a node now (rota exec)",
                   Closed({{"node", T("string")}, {"user", T("string")}, {"gpus", Arr(T("integer"))},
                           {"gpu_uuids", Arr(T("string"))}, {"reservations", Arr(reservation)}}),
                   {400, 401, 404}, Json::array({QueryParam("node", "string", "node name (required)")}))}}},
      {"/api/v1/reservations/{id}",
       {{"get", Op("A reservation (live utilisation while running)", reservation, {400, 401, 404}, id)},
        {"patch", WithBody(Op("Edit {start?, end?, title?, description?, enforcement?} (owner or admin)",
                              reservation, {400, 401, 403, 404, 409}, id),
                           Body({{"start", Time()}, {"end", Time()}, {"title", T("string")},
                                 {"description", T("string")}, {"enforcement", AnyObject()}}))},
        {"delete", Op("Cancel (upcoming) or end now (running) (owner or admin)", reservation,
                      {400, 401, 403, 404, 409}, id)}}},
      {"/api/v1/policies",
       {{"get", Op("Reservation policies", Closed({{"policies", Arr(policy)}}), {401})},
        {"post", WithBody(Answers(201, Op("Create a policy (admin)", policy, {400, 401, 403, 409})),
                          Ref("PolicySpec"))}}},
      {"/api/v1/policies/{id}",
       {{"get", Op("A policy", policy, {400, 401, 404}, pid)},
        {"put", WithBody(Op("Replace a policy (admin)", policy, {400, 401, 403, 404, 409}, pid),
                         Ref("PolicySpec"))},
        {"delete", Answers(204, Op("Delete a policy (admin)", T("object"), {400, 401, 403, 404}, pid))}}},
  };
}

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
              {"estimated_start", Time()}, {"stopping", T("boolean")},
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
                              {"command", Arr(T("string"))}},
                             {"command"}))},
       {"restart", Closed({{"policy", restart_policy}, {"max_restarts", T("integer")}, {"backoff", T("string")},
                           {"max_backoff", T("string")}})},
       {"process_per_node", T("boolean")}, {"time_limit", T("string")}, {"queue", T("string")},
       {"priority", T("integer")}, {"preemptible", T("boolean")}, {"spread", T("boolean")},
       {"stop_after_disconnect", T("string")}},
      {"time_limit", "queue", "priority", "preemptible", "spread", "stop_after_disconnect"});
  schemas["TaskGroup"] = Body(
      {{"role", T("string")}, {"replicas", T("integer")}, {"gpus_per_task", T("integer")},
       {"cpus_per_task", T("integer")},
       {"memory", {{"oneOf", Json::array({T("integer"), T("string")})},
                   {"description", "bytes, or a size such as \"16GiB\""}}},
       {"node_labels", Map(T("string"))}, {"nodes", Arr(T("string"))}, {"command", Arr(T("string"))}});
  schemas["JobSpec"] = Body(
      {{"name", T("string")}, {"command", Arr(T("string"))}, {"shell", T("boolean")}, {"env", Map(T("string"))},
       {"workdir", T("string")}, {"framework", Ref("Framework")}, {"groups", Arr(Ref("TaskGroup"))},
       {"restart", Body({{"policy", restart_policy}, {"max_restarts", T("integer")}, {"backoff", T("string")},
                         {"max_backoff", T("string")}},
                        {"policy"})},
       {"time_limit", T("string")}, {"process_per_node", T("boolean")}, {"queue", T("string")},
       {"priority", T("integer")}, {"preemptible", T("boolean")}, {"spread", T("boolean")},
       {"stop_after_disconnect", T("string")}},
      {"name", "groups"});
  const std::initializer_list<const char*> job_optional = {"ended", "stopping", "position", "estimated_start",
                                                           "events"};
  schemas["Job"] = Closed(JobProperties(), job_optional);
  Json queued = JobProperties();
  queued.erase("spec");
  queued.erase("tasks");
  schemas["QueuedJob"] = Closed(std::move(queued), job_optional);
  schemas["PreviewProcess"] = Closed({{"task", T("string")}, {"name", T("string")}, {"role", T("string")},
                                      {"node", T("string")}, {"gpus", Arr(T("integer"))}, {"runs", T("boolean")},
                                      {"argv", Arr(T("string"))}, {"env", Map(T("string"))},
                                      {"files", Arr(T("string"))}});
  schemas["JobPreview"] = Closed({{"processes", Arr(Ref("PreviewProcess"))}, {"note", T("string")}});
  schemas["JobLogChunk"] = Closed({{"task", T("string")}, {"stream", Enum({"stdout", "stderr"})},
                                   {"offset", T("integer")}, {"next_offset", T("integer")},
                                   {"size", T("integer")}, {"data", T("string")}});
}

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
       {{"get", Op("Jobs, newest first", Closed({{"jobs", Arr(job)}}), {400, 401},
                   Json::array({QueryParam("mine", "boolean", "only the caller's"),
                                QueryParam("state", "string", "pending, starting, running, succeeded, "
                                                              "failed or cancelled"),
                                QueryParam("limit", "integer", "1..1000 (default 100)")}))},
        {"post", WithBody(Answers(201, Op("Submit a job: {name, command, shell?, env?, workdir?, framework?, "
                                          "groups: [{role, replicas, gpus_per_task, cpus_per_task?, memory?, "
                                          "node_labels?, nodes?, command?}], restart?: {policy, max_restarts?, "
                                          "backoff?, max_backoff?}, time_limit?, process_per_node?, queue?, "
                                          "priority?, preemptible?, spread?, stop_after_disconnect?}; 400 "
                                          "names the field (or the largest node, or the queue's bounds); 403 "
                                          "when the queue does not admit the caller. A pending job's reason "
                                          "says why it waits, with its position and estimated start",
                                          job, {400, 401, 403})),
                          Ref("JobSpec"))}}},
      {"/api/v1/jobs/{id}", {{"get", Op("A job with its tasks and state changes", job, {400, 401, 404}, id)}}},
      {"/api/v1/jobs/preview",
       {{"post", WithBody(Op("The processes a job spec would start, with their argv and environment "
                             "(framework variables included), on an example placement; no job is made",
                             Ref("JobPreview"), {400, 401}),
                          Ref("JobSpec"))}}},
      {"/api/v1/jobs/{id}/cancel",
       {{"post", Op("Cancel (owner or admin): SIGTERM, SIGKILL after a grace period; 409 once ended",
                    job, {400, 401, 403, 404, 409}, id)}}},
      {"/api/v1/jobs/{id}/logs",
       {{"get", Op("Part of a task's log (owner or admin): `data` from `offset`; read on from `next_offset`",
                   Ref("JobLogChunk"), {400, 401, 403, 404, 503}, logs_params)}}},
  };
}

Json QueuePaths(Json& schemas) {
  schemas["Queue"] = Closed(
      {{"name", T("string")}, {"description", T("string")}, {"priority", T("integer")},
       {"min_priority", T("integer")}, {"max_priority", T("integer")}, {"users", Arr(T("string"))},
       {"groups", Arr(T("string"))}, {"max_gpus", T("integer")}, {"default_time_limit", T("string")},
       {"preemptible", T("boolean")}, {"built_in", T("boolean")}, {"pending", T("integer")},
       {"unfinished", T("integer")}},
      {"default_time_limit"});
  const Json queue_fields = {{"name", T("string")}, {"description", T("string")}, {"priority", T("integer")},
                             {"min_priority", T("integer")}, {"max_priority", T("integer")},
                             {"users", Arr(T("string"))}, {"groups", Arr(T("string"))},
                             {"max_gpus", T("integer")}, {"default_time_limit", T("string")},
                             {"preemptible", T("boolean")}};
  schemas["QueuePage"] = Closed({{"jobs", Arr(Ref("QueuedJob"))}, {"total", T("integer")}});
  const Json queue = Ref("Queue");
  Json name = Json::array({PathParam("name", "string", "queue name")});
  return Json{
      {"/api/v1/queues",
       {{"get", Op("Queues, default first, with their pending and unfinished jobs",
                   Closed({{"queues", Arr(queue)}}), {401})},
        {"post", WithBody(Answers(201, Op("Create a queue (admin): {name, description?, priority?, min_priority?, "
                                          "max_priority?, users?, groups?, max_gpus?, default_time_limit?, "
                                          "preemptible?}",
                                          queue, {400, 401, 403, 409})),
                          Body(queue_fields, {"name"}))}}},
      {"/api/v1/queues/{name}",
       {{"get", Op("A queue", queue, {401, 404}, name)},
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
       {{"get", Op("A user's or group's quota", Ref("Quota"), {401, 404}, params)},
        {"put", WithBody(Op("Set a quota (admin): {max_gpus?, max_gpu_hours?, share?}; 0 means no limit; "
                            "404 for an unknown user or group",
                            Ref("Quota"), {400, 401, 403, 404}, params),
                         Body({{"kind", kind}, {"name", T("string")}, {"max_gpus", T("integer")},
                               {"max_gpu_hours", T("number")}, {"share", T("number")},
                               {"updated", T("string")}}))},
        {"delete", Answers(204, Op("Delete a quota (admin)", T("object"), {401, 403, 404}, params))}}},
  };
}

Json UsagePaths(Json& schemas) {
  Json shares = Closed({{"counter", T("number")}, {"integrated", T("number")}, {"estimated", T("number")}});
  auto figures = [&](bool keyed) {
    Json f = Closed({{"gpu_hours", T("number")}, {"busy_gpu_hours", T("number")}, {"used_gpu_hours", T("number")},
                  {"avg_util_pct", T("number")}, {"idle_gpu_hours", T("number")},
                  {"reserved_idle_gpu_hours", T("number")}, {"energy_kwh", T("number")},
                  {"cpu_energy_kwh", T("number")}, {"total_energy_kwh", T("number")},
                  {"idle_energy_kwh", T("number")}, {"unmeasured_gpu_hours", T("number")},
                  {"energy_method", Enum({"counter", "integrated", "estimated", "mixed", "none"})},
                  {"energy_shares", shares}, {"cost", T("number")}, {"currency", T("string")},
                  {"co2_kg", T("number")}},
                 {"energy_shares", "cost", "currency", "co2_kg"});
    if (keyed) {
      f["properties"]["key"] = T("string");
      f["required"].push_back("key");
    }
    return f;
  };
  schemas["UsageFigures"] = figures(false);
  schemas["UsageReportRow"] = figures(true);
  schemas["UsageReport"] = Closed({{"by", Enum({"user", "group", "job", "reservation", "node", "area"})},
                                  {"from", Time()}, {"to", Time()}, {"label", T("string")}, {"user", T("string")},
                                  {"rows", Arr(Ref("UsageReportRow"))}, {"total", Ref("UsageFigures")}},
                                 {"label", "user"});
  return Json{
      {"/api/v1/usage",
       {{"get", Op("GPU time, utilisation and energy summed by user, group, job, reservation, node or area "
                   "(hours starting in [from, to)); energy_kwh is the GPUs' energy and energy_method says "
                   "how it was measured (counter, integrated, estimated, mixed, none); cpu_energy_kwh is "
                   "the CPU packages' (RAPL), total_energy_kwh both, and cost and co2_kg count both; "
                   "non-admins get only their own figures",
                   Ref("UsageReport"),
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

Json PowerPaths(Json& schemas) {
  schemas["PowerScope"] = Closed({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))},
                                  {"labels", Map(T("string"))}});
  schemas["PowerPolicy"] = Closed(
      {{"id", T("integer")}, {"name", T("string")}, {"description", T("string")},
       {"kind", Enum({"limit", "budget"})}, {"watts", T("number")}, {"limit", T("number")},
       {"budget", T("number")}, {"scope", Ref("PowerScope")}, {"windows", Ref("WeeklyWindows")},
       {"created", Time()}, {"updated", Time()}},
      {"limit", "budget", "windows"});
  schemas["PowerPolicySpec"] = Body(
      {{"name", T("string")}, {"description", T("string")},
       {"scope",
        Body({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}, {"labels", Map(T("string"))}})},
       {"limit", Watts()}, {"budget", Watts()}, {"windows", WindowsBody()}, {"id", T("integer")},
       {"kind", Enum({"limit", "budget"})}, {"watts", T("number")}, {"created", T("string")},
       {"updated", T("string")}},
      {"name"});
  const Json watts = Nullable(T("number"));
  schemas["PowerGpu"] = Closed(
      {{"node", T("string")}, {"index", T("integer")}, {"uuid", T("string")}, {"model", T("string")},
       {"min_w", watts}, {"max_w", watts}, {"default_w", watts}, {"target_w", watts}, {"in_force_w", watts},
       {"power_w", watts}, {"busy", T("boolean")}, {"policies", Arr(T("string"))}, {"reason", T("string")},
       {"outcome", Enum({"", "set", "restored", "unchanged", "refused", "error"})}, {"detail", T("string")},
       {"reported", Nullable(Time())}});
  schemas["PowerBudget"] = Closed({{"policy", T("string")}, {"budget_w", T("number")}, {"gpus", T("integer")},
                                   {"busy", T("integer")}, {"left_out", T("integer")},
                                   {"min_total_w", T("number")}, {"assigned_w", T("number")},
                                   {"feasible", T("boolean")}});
  schemas["PowerState"] = Closed({{"planned", Nullable(Time())}, {"gpus", Arr(Ref("PowerGpu"))},
                                  {"budgets", Arr(Ref("PowerBudget"))}});
  schemas["PowerEvent"] = Closed(
      {{"id", T("integer")}, {"time", Time()}, {"action", T("string")}, {"node", T("string")},
       {"gpu", Nullable(T("integer"))}, {"uuid", T("string")}, {"limit_w", watts}, {"previous_w", watts},
       {"requested_w", watts}, {"policy", T("string")}, {"actor", T("string")}, {"detail", T("string")}});
  const Json policy = Ref("PowerPolicy");
  Json id = Json::array({PathParam("id", "integer", "power policy id")});
  return Json{
      {"/api/v1/power",
       {{"get", Op("Every GPU's power range, the limit the policies give it (target_w; null: its default), "
                   "the limit in force, its draw and the agent's last outcome (set, restored, unchanged, "
                   "refused, error) with why; the active budgets and how they are divided",
                   Ref("PowerState"), {401})}}},
      {"/api/v1/power/policies",
       {{"get", Op("Power policies", Closed({{"policies", Arr(policy)}}), {401})},
        {"post", WithBody(Answers(201, Op("Create a power policy (admin): {name, description?, scope?: {nodes?, "
                                          "gpu_models?, labels?}, limit (W per GPU) | budget (W for all GPUs in "
                                          "scope), windows?: {zone?, allow: [{days, from, to}]}}; 400 for limits "
                                          "outside a GPU's range, unknown nodes or labels, no GPU in scope, "
                                          "overlapping windows; 409 for a taken name or a second budget on the "
                                          "same GPUs at the same time",
                                          policy, {400, 401, 403, 409})),
                          Ref("PowerPolicySpec"))}}},
      {"/api/v1/power/policies/{id}",
       {{"get", Op("A power policy", policy, {400, 401, 404}, id)},
        {"put", WithBody(Op("Replace a power policy (admin); checked as on create", policy,
                            {400, 401, 403, 404, 409}, id),
                         Ref("PowerPolicySpec"))},
        {"delete", Answers(204, Op("Delete a power policy (admin); its GPUs get their default back", T("object"),
                                   {400, 401, 403, 404}, id))}}},
      {"/api/v1/power/events",
       {{"get", Op("The power audit log, newest first: limits set, restored, refused or failed on each GPU, "
                   "and policy changes with the admin who made them",
                   Closed({{"events", Arr(Ref("PowerEvent"))}}), {400, 401},
                   {QueryParam("node", "string", "only this node"),
                    QueryParam("from", "string", "RFC 3339: events at or after"),
                    QueryParam("to", "string", "RFC 3339: events before"),
                    QueryParam("limit", "integer", "at most this many (1..1000, default 100)")})}}},
  };
}

Json SshNodePaths(Json& schemas) {
  const Json fields = {{"name", T("string")}, {"url", T("string")}, {"gpus", T("integer")},
                       {"gpu_model", T("string")}, {"labels", Map(T("string"))}, {"created_ms", T("integer")}};
  Json node = fields;
  node["reachable"] = T("boolean");
  node["tasks"] = T("integer");
  node["error"] = T("string");
  schemas["SshNode"] = Closed(std::move(node), {"error"});
  return Json{
      {"/api/v1/ssh-nodes",
       {{"get", Op("Agentless nodes reached over SSH, reachable or why not",
                   Closed({{"ssh_nodes", Arr(Ref("SshNode"))}}), {400, 401})},
        {"post", WithBody(Answers(201, Op("Declare an agentless node (admin): {name, url: ssh://user@host[:port], "
                                          "gpus?, gpu_model?, labels?}; a root login runs tasks as each job's "
                                          "owner (setpriv), another login only that user's; 409 when the name "
                                          "is taken. The answer is the node as declared (not probed yet)",
                                          Closed(fields), {400, 401, 403, 409, 503})),
                          Body({{"name", T("string")}, {"url", T("string")}, {"gpus", T("integer")},
                                {"gpu_model", T("string")}, {"labels", Map(T("string"))}},
                               {"name", "url"}))}}},
      {"/api/v1/ssh-nodes/{name}",
       {{"delete", Answers(204, Op("Forget an agentless node (admin); 409 while tasks run there", T("object"),
                                   {401, 403, 404, 409},
                                   Json::array({PathParam("name", "string", "node name")})))}}},
      {"/api/v1/ssh-key",
       {{"get", Op("The server's SSH public key, to authorise on agentless nodes (admin)",
                   Closed({{"public_key", T("string")}}), {401, 403, 503})}}},
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
      {"Error", Closed({{"error", Closed({{"code", T("string")}, {"message", T("string")}})}})},
      {"GpuProcess", Closed({{"pid", T("integer")}, {"type", Enum({"compute", "graphics"})},
                             {"gpu_memory_bytes", T("integer")}, {"uid", T("integer")}, {"user", T("string")},
                             {"command", T("string")}, {"start_time_ms", T("integer")},
                             {"cpu_percent", T("number")}, {"rss_bytes", T("integer")}, {"cgroup", T("string")}},
                            {"gpu_memory_bytes", "uid", "user", "command", "start_time_ms", "cpu_percent",
                             "rss_bytes", "cgroup"})},
      {"GpuInfo", Closed({{"index", T("integer")}, {"uuid", T("string")}, {"name", T("string")},
                          {"pci_bus_id", T("string")}, {"memory_total_bytes", T("integer")},
                          {"power_limit_mw", T("integer")}, {"power_min_mw", T("integer")},
                          {"power_max_mw", T("integer")}, {"power_default_mw", T("integer")}},
                         {"memory_total_bytes", "power_limit_mw", "power_min_mw", "power_max_mw",
                          "power_default_mw"})},
      {"HostSample", Closed({{"cpu_percent", T("number")}, {"per_core_percent", Arr(T("number"))},
                             {"mem_total_bytes", T("integer")}, {"mem_available_bytes", T("integer")},
                             {"load1", T("number")}, {"load5", T("number")}, {"load15", T("number")},
                             {"cpu_energy_mj", T("integer")}, {"cpu_busy_usec", T("integer")},
                             {"cpu_tasks", Arr(Closed({{"id", T("string")}, {"job_id", T("integer")},
                                                       {"usage_usec", T("integer")}}))}},
                            {"cpu_energy_mj", "cpu_busy_usec", "cpu_tasks"})},
      {"SeriesPoint", Closed({{"time", Time()}, {"t_ms", T("integer")}, {"samples", T("integer")},
                              {"avg", Map(T("number"))}, {"max", Map(T("number"))}, {"last", Map(T("number"))}},
                             {"last"})},
      {"Series", Closed({{"node", T("string")}, {"gpu", T("integer")}, {"from", Time()}, {"to", Time()},
                         {"step_ms", T("integer")}, {"resolution", Enum({"raw", "1m"})},
                         {"points", Arr(Ref("SeriesPoint"))}},
                        {"gpu"})},
  };
  // A GPU's readings, each absent when the GPU does not report it (GPU rows and node samples).
  const Json readings = {{"failed", T("boolean")}, {"error", T("string")},
                         {"memory_total_bytes", T("integer")}, {"memory_used_bytes", T("integer")},
                         {"util_gpu_pct", T("integer")}, {"util_memory_pct", T("integer")},
                         {"temperature_c", T("integer")}, {"power_mw", T("integer")},
                         {"power_limit_mw", T("integer")}, {"energy_mj", T("integer")},
                         {"sm_clock_mhz", T("integer")}, {"mem_clock_mhz", T("integer")},
                         {"fan_pct", T("integer")}};
  const auto optional_readings = {"failed", "error", "memory_total_bytes", "memory_used_bytes", "util_gpu_pct",
                                  "util_memory_pct", "temperature_c", "power_mw", "power_limit_mw", "energy_mj",
                                  "sm_clock_mhz", "mem_clock_mhz", "fan_pct", "time"};
  Json gpu = readings;
  gpu.update(Json{{"node", T("string")}, {"index", T("integer")}, {"uuid", T("string")}, {"name", T("string")},
                  {"pci_bus_id", T("string")}, {"state", Enum({"ok", "failed", "unreachable"})},
                  {"users", Arr(T("string"))}, {"processes", Arr(Ref("GpuProcess"))}, {"time", Time()}});
  schemas["Gpu"] = Closed(std::move(gpu), optional_readings);
  Json sample_gpu = readings;
  sample_gpu.update(Json{{"index", T("integer")}, {"uuid", T("string")}, {"processes", Arr(Ref("GpuProcess"))}});
  // Inline (a nullable $ref is not expressible in OpenAPI 3.0).
  const Json latest = Nullable(Closed({{"time", Time()}, {"time_ms", T("integer")}, {"host", Ref("HostSample")},
                                       {"gpus", Arr(Closed(std::move(sample_gpu), optional_readings))}}));
  schemas["Node"] = Closed(
      {{"name", T("string")}, {"node_id", T("string")}, {"hostname", T("string")},
       {"addresses", Arr(T("string"))}, {"cpus", T("integer")}, {"memory_bytes", T("integer")},
       {"labels", Map(T("string"))}, {"gpus", Arr(Ref("GpuInfo"))}, {"gpu_status", T("string")},
       {"agent_version", T("string")}, {"sample_interval_ms", T("integer")}, {"cpu_energy_status", T("string")},
       {"state", Enum({"ready", "unreachable"})}, {"connected", T("boolean")},
       {"last_seen", Nullable(Time())}, {"state_since", Nullable(Time())},
       {"unreachable_reason", T("string")}, {"gpu_count", T("integer")}, {"failed_gpu_count", T("integer")},
       {"latest", latest}},
      {"cpu_energy_status", "unreachable_reason", "latest"});

  Json paths = {
      {"/healthz", {{"get", Op("Liveness", Closed({{"status", T("string")}}), {})}}},
      {"/readyz", {{"get", Op("Readiness", Closed({{"status", T("string")}, {"nodes", T("integer")},
                                                   {"connected_agents", T("integer")}}),
                              {503})}}},
      {"/metrics", {{"get", Op("Prometheus metrics", T("string"), {}, Json::array(), "text/plain")}}},
      {"/api/v1/nodes",
       {{"get", Op("List nodes (without latest)", Closed({{"nodes", Arr(Ref("Node"))}}), {},
                   Json::array({QueryParam("state", "string", "ready or unreachable")}))}}},
      {"/api/v1/nodes/{name}",
       {{"get", Op("A node with its latest sample (null before the first)", Ref("Node"), {404},
                   Json::array({PathParam("name", "string", "node name")}))}}},
      {"/api/v1/gpus",
       {{"get", Op("List GPUs with current processes and users", Closed({{"gpus", Arr(Ref("Gpu"))}}), {404},
                   Json::array({QueryParam("node", "string", "only this node")}))}}},
      {"/api/v1/nodes/{name}/metrics",
       {{"get", Op("Node CPU/memory/load history, downsampled", Ref("Series"), {400, 404}, node_range)}}},
      {"/api/v1/nodes/{name}/gpus/{index}/metrics",
       {{"get", Op("GPU history, downsampled (avg and max per bucket)", Ref("Series"), {400, 404}, gpu_range)}}},
      {"/api/v1/stream",
       {{"get", Op("Live node and GPU updates (server-sent events: node, as GET /api/v1/nodes; sample, "
                   "{node, time?, host?: HostSample, gpus: [Gpu]})",
                   T("string"), {404}, Json::array({QueryParam("node", "string", "only this node")}),
                   "text/event-stream")}}},
      {"/api/v1/agent/connect",
       {{"get", AgentSocket(Op("Agent WebSocket (protocol v1); Authorization: Bearer <join token>",
                               T("string"), {401, 426}))}}},
  };
  paths.update(AccountPaths(schemas));
  paths.update(ViolationPaths(schemas));
  paths.update(ReservationPaths(schemas));
  paths.update(JobPaths(schemas));
  paths.update(QueuePaths(schemas));
  paths.update(QuotaPaths(schemas));
  paths.update(SshNodePaths(schemas));
  paths.update(UsagePaths(schemas));
  paths.update(PowerPaths(schemas));
  CompleteOperations(paths);
  return Json{{"openapi", "3.0.3"},
              {"servers", Json::array({{{"url", "/"}, {"description", "this server"}}})},
              {"info", {{"title", "rota API"}, {"version", "1"},
                        {"description", "GPU cluster manager: nodes, GPUs, metrics history, live updates."},
                        {"license", {{"name", "Apache-2.0"},
                                     {"url", "https://www.apache.org/licenses/LICENSE-2.0"}}}}},
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

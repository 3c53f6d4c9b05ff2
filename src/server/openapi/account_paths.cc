// Accounts (login, users, groups, tokens) and the enforcement audit log.
// Part of the OpenAPI description (openapi.cc puts it together).

#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server::openapi {

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
  schemas["AuthEvent"] = Closed({{"id", T("integer")}, {"at", Time()},
                                 {"action", Enum({"login_throttled", "password_changed", "password_reset"})},
                                 {"address", T("string")}, {"username", T("string")}, {"actor", T("string")},
                                 {"detail", T("string")}});
  const Json user = Ref("User");
  Json patch_fields = {{"password", T("string")}, {"current_password", T("string")},
                       {"display_name", T("string")}, {"email", T("string")}, {"unix_user", T("string")},
                       {"unix_users", Map(T("string"))}, {"role", Enum({"user", "admin"})},
                       {"groups", Arr(T("string"))}, {"disabled", T("boolean")}};
  const Json user_fields = {{"username", T("string")}, {"password", T("string")}, {"display_name", T("string")},
                            {"email", T("string")}, {"unix_user", T("string")}, {"unix_users", Map(T("string"))},
                            {"role", Enum({"user", "admin"})}, {"groups", Arr(T("string"))},
                            {"disabled", T("boolean")}};
  Json name = Json::array({PathParam("name", "string", "username or group name")});
  return Json{
      {"/api/v1/auth/login",
       {{"post", WithBody(Op("Sign in with username and password; returns a session token. Failed sign-ins "
                             "are throttled per address and per account: 429 with Retry-After; 503 with "
                             "Retry-After while password checks are busy",
                             Ref("Session"), {400, 401, 429, 503}),
                          Ref("LoginRequest"))}}},
      {"/api/v1/auth/events",
       {{"get", Op("The accounts trail, newest first (admin): throttled sign-ins, password changes and resets",
                   Closed({{"events", Arr(Ref("AuthEvent"))}}), {400, 401, 403},
                   Json::array({QueryParam("limit", "integer", "at most this many (1..1000, default 100)"),
                                QueryParam("before", "integer", "only entries with a smaller id (paging)")}))}}},
      {"/api/v1/auth/logout",
       {{"post", Op("End the calling session", Closed({{"status", T("string")}}), {401})}}},
      {"/api/v1/auth/whoami", {{"get", Op("The signed-in user", user, {401})}}},
      {"/api/v1/users",
       {{"get", Op("List users (admin)", Closed({{"users", Arr(user)}}), {401, 403})},
        {"post", WithBody(Answers(201, Op("Create a user (admin)", user, {400, 401, 403, 409, 503})),
                          Body(user_fields, {"username"}))}}},
      {"/api/v1/users/{name}",
       {{"get", Op("A user (itself or admin)", user, {401, 403, 404}, name)},
        {"patch", WithBody(Op("Change a user: itself (display_name, email, password) or admin (all). A new "
                              "password for oneself needs current_password (403 when wrong; throttled like a "
                              "sign-in); an admin setting another user's does not. Every token of the user "
                              "then ends, API tokens too",
                              user, {400, 401, 403, 404, 409, 429, 503}, name),
                           Body(patch_fields))},
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
        {"post", WithBody(Answers(201, Op("Create an API token {name, ttl}; the secret is in the answer only. "
                                          "ttl is at most the server's api_token_max_ttl (90d by default), "
                                          "which is also what a token without one gets",
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

}  // namespace rota::server::openapi
